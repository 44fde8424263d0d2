//! Cleaning server and network text before it enters an error.
//!
//! Rules: text a server or the network stack supplies may echo the API key
//! (an "Incorrect API key provided: sk-..." answer) and may be megabytes
//! long (an HTML error page). Every such text passes through [`Scrub`]
//! before it enters an error: the key replaced by
//! [`REDACTED`](crate::redact::REDACTED), then the text cut to [`MAX_EXCERPT`]
//! characters. Cutting counts characters, never bytes, so it cannot split
//! one.

use crate::redact::Redactor;
use crate::{ExposeSecret, SecretString};

/// The longest excerpt of server text kept in an error, in characters.
pub const MAX_EXCERPT: usize = 400;

/// Cleans text for errors: the call's API key redacted, the length bounded.
///
/// One is made per call, from the key that call sends; its `Debug` output
/// shows no key.
///
/// ```
/// use oscova_core::SecretString;
/// use oscova_core::http::backend::Scrub;
///
/// let key = SecretString::from("sk-live-abcdef");
/// let scrub = Scrub::new(Some(&key));
/// assert_eq!(
///     scrub.text("Incorrect API key provided: sk-live-abcdef."),
///     "Incorrect API key provided: [REDACTED]."
/// );
/// assert!(!format!("{scrub:?}").contains("sk-live"));
/// ```
#[derive(Debug, Clone)]
pub struct Scrub {
    redactor: Redactor,
}

impl Scrub {
    /// A scrubber that hides `api_key`, if there is one.
    pub fn new(api_key: Option<&SecretString>) -> Self {
        let redactor = Redactor::new();
        if let Some(key) = api_key {
            redactor.add(key.expose_secret());
        }
        Self { redactor }
    }

    /// `text` with the key redacted, then cut by [`excerpt`].
    pub fn text(&self, text: &str) -> String {
        let clean = self.redactor.redact(text);
        excerpt(&clean)
    }
}

/// The first [`MAX_EXCERPT`] characters of `text`, ending in `…` when cut.
///
/// For text that holds no secret (an offending line of a stream, say);
/// server text that might echo a key goes through [`Scrub::text`].
///
/// ```
/// use oscova_core::http::backend::{MAX_EXCERPT, excerpt};
///
/// assert_eq!(excerpt("short"), "short");
/// let cut = excerpt(&"é".repeat(1000));
/// assert_eq!(cut.chars().count(), MAX_EXCERPT + 1);
/// assert!(cut.ends_with('…'));
/// ```
pub fn excerpt(text: &str) -> String {
    crate::text::cut(text, crate::text::Limit::Chars(MAX_EXCERPT)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrub_hides_the_key_and_cuts_long_text() {
        let key = SecretString::from("sk-live-abcdef");
        let scrub = Scrub::new(Some(&key));
        assert_eq!(
            scrub.text("Incorrect API key provided: sk-live-abcdef."),
            "Incorrect API key provided: [REDACTED]."
        );
        let long = "é".repeat(1000);
        let cut = scrub.text(&long);
        assert_eq!(cut.chars().count(), MAX_EXCERPT + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn text_at_the_limit_is_kept_whole() {
        let exact = "x".repeat(MAX_EXCERPT);
        assert_eq!(excerpt(&exact), exact);
        assert_eq!(Scrub::new(None).text("no key here"), "no key here");
    }
}
