//! The one error type of the time tools.
//!
//! Rules: every message is written for the model that made the call: it
//! names the input that was wrong and shows a form that would work, so the
//! model can retry without asking the user. An input is quoted through
//! [`shown`], at most [`MAX_QUOTED_CHARS`] characters of it, so a huge
//! argument does not come back whole in the error.

use std::fmt;

/// Why a time tool could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeError {
    /// A time-zone name that is not in the IANA database.
    #[error("unknown time zone `{name}`{}", Suggestions(.suggestions))]
    UnknownZone {
        /// The name as given (quoted short, as `shown` cuts it).
        name: String,
        /// Close matches from the database, best first (may be empty).
        suggestions: Vec<String>,
    },
    /// A time that could not be read.
    #[error(
        "could not read the time `{input}` ({reason}); write it like `2024-03-10T14:30`, \
         `2024-03-10T14:30:00+01:00`, `2024-03-10T14:30[Europe/Berlin]`, `2024-03-10` or `now`"
    )]
    BadTime {
        /// The time as given (quoted short, as `shown` cuts it).
        input: String,
        /// What the parser said.
        reason: String,
    },
    /// A duration that could not be read.
    #[error(
        "could not read the duration `{input}` ({reason}); write it in ISO 8601 like `PT1H30M` \
         or `P2DT3H`, or in words like `1 hour 30 minutes` or `-2 days`"
    )]
    BadDuration {
        /// The duration as given (quoted short, as `shown` cuts it).
        input: String,
        /// What the parser said.
        reason: String,
    },
    /// The arithmetic left the supported range (years -9999 to 9999) or
    /// mixed units that need a time zone to be resolved.
    #[error("cannot compute {what}: {reason}")]
    Arithmetic {
        /// What was being computed.
        what: String,
        /// Why it failed.
        reason: String,
    },
}

/// The most characters of an input an error quotes.
pub(crate) const MAX_QUOTED_CHARS: usize = 100;

/// `input` as an error quotes it: whole when short, else its first
/// [`MAX_QUOTED_CHARS`] characters and how long it was.
pub(crate) fn shown(input: &str) -> String {
    use oscova_core::text::{Limit, prefix};
    match prefix(input, Limit::Chars(MAX_QUOTED_CHARS)) {
        kept if kept.len() == input.len() => input.to_owned(),
        kept => format!("{kept}… ({} characters)", input.chars().count()),
    }
}

struct Suggestions<'a>(&'a [String]);

impl fmt::Display for Suggestions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("; use an IANA name such as `Europe/Berlin`, `America/New_York` or `UTC`")?;
        if let Some((first, rest)) = self.0.split_first() {
            write!(f, ". Close matches: `{first}`")?;
            for name in rest {
                write!(f, ", `{name}`")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_inputs_are_quoted_cut() {
        assert_eq!(shown("Europe/Berlni"), "Europe/Berlni");
        let long = "é".repeat(100_000);
        let quoted = shown(&long);
        assert!(quoted.ends_with("… (100000 characters)"), "{quoted}");
        assert_eq!(quoted.chars().count(), MAX_QUOTED_CHARS + 21);
    }

    #[test]
    fn unknown_zone_lists_matches() {
        let e = TimeError::UnknownZone {
            name: "Europe/Berlni".into(),
            suggestions: vec!["Europe/Berlin".into(), "Europe/Berne".into()],
        };
        let text = e.to_string();
        assert!(
            text.starts_with("unknown time zone `Europe/Berlni`"),
            "{text}"
        );
        assert!(
            text.ends_with("Close matches: `Europe/Berlin`, `Europe/Berne`"),
            "{text}"
        );
    }
}
