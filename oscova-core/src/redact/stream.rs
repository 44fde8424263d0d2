//! Redacting text that arrives in pieces, such as a streamed model answer.
//!
//! Rules: what [`RedactStream::push`] returns never holds a known secret,
//! in any form the redactors match, even one split across pieces. Text is
//! held back from the earliest position where a secret could still be
//! starting, until more text shows it is not one, or the stream is
//! finished; so the tail held back is never longer than the longest form
//! of a known secret. [`RedactStream::finish`] returns the rest, redacted.
//! Nothing is ever dropped: concatenating every returned piece gives the
//! whole text, redacted.

use std::fmt;

use super::{Redactor, covered_spans};

/// Redacts a text that arrives in pieces with one or more [`Redactor`]s.
///
/// ```
/// use oscova_core::{redact::RedactStream, redact::Redactor};
///
/// let redactor = Redactor::new();
/// redactor.add("sk-live-0123456789");
/// let mut stream = RedactStream::new([redactor]);
/// let mut shown = stream.push("the key is sk-li");
/// assert_eq!(shown, "the key is "); // `sk-li` may be the start of the key
/// shown += &stream.push("ve-0123456789, keep it");
/// shown += &stream.finish();
/// assert_eq!(shown, "the key is [REDACTED], keep it");
/// ```
pub struct RedactStream {
    redactors: Vec<Redactor>,
    held: String,
}

impl fmt::Debug for RedactStream {
    // The held text may be the start of a secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedactStream")
            .field("redactors", &self.redactors.len())
            .field("held_bytes", &self.held.len())
            .finish()
    }
}

impl RedactStream {
    /// A stream redacting with every one of `redactors`, in order.
    pub fn new(redactors: impl IntoIterator<Item = Redactor>) -> Self {
        Self {
            redactors: redactors.into_iter().collect(),
            held: String::new(),
        }
    }

    /// Adds the next piece; returns what can be shown now, redacted (maybe
    /// nothing), and holds back a tail that could be the start of a secret.
    pub fn push(&mut self, piece: &str) -> String {
        self.held.push_str(piece);
        let cut = self.safe_len();
        let shown: String = self.held.drain(..cut).collect();
        self.redact(&shown)
    }

    /// Everything still held back, redacted; the stream is then empty and
    /// can be used again.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.held);
        self.redact(&rest)
    }

    /// How much of the held text no later piece can turn into a secret.
    fn safe_len(&self) -> usize {
        let mut cut = self.held.len();
        let mut spans = Vec::new();
        for redactor in self.redactors.iter().filter(|r| !r.is_empty()) {
            let (found, partial) = redactor.with_secrets(|s| covered_spans(&self.held, s));
            spans.extend(found);
            if let Some(start) = partial {
                cut = cut.min(start);
            }
        }
        // An occurrence that the cut would split is held back whole, so it
        // is redacted as one.
        while let Some(&(start, _)) = spans.iter().find(|(s, e)| *s < cut && cut < *e) {
            cut = start;
        }
        while !self.held.is_char_boundary(cut) {
            cut -= 1;
        }
        cut
    }

    fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for redactor in &self.redactors {
            if let std::borrow::Cow::Owned(clean) = redactor.redact(&text) {
                text = clean;
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(secrets: &[&str]) -> RedactStream {
        let redactor = Redactor::new();
        for secret in secrets {
            redactor.add(secret);
        }
        RedactStream::new([redactor])
    }

    /// Every way of cutting the text into two or three pieces gives the
    /// same redacted whole, and no piece shows a fragment of the secret.
    #[test]
    fn a_secret_split_anywhere_is_still_redacted() {
        let secret = "sk-live-Ab12 Cd34";
        let texts = [
            format!("answer: {secret}."),
            format!("url: https://h/?k={}", "sk-live-Ab12+Cd34"),
            format!(
                "host: {}.example",
                secret.to_ascii_lowercase().replace(' ', "%20")
            ),
            format!("{secret}{secret} end é"),
        ];
        for text in &texts {
            let whole = {
                let mut s = stream(&[secret]);
                let mut out = s.push(text);
                out += &s.finish();
                out
            };
            assert!(!whole.contains("Ab12"), "{whole}");
            let boundaries: Vec<usize> = (0..=text.len())
                .filter(|i| text.is_char_boundary(*i))
                .collect();
            for &a in &boundaries {
                for &b in boundaries.iter().filter(|b| **b >= a) {
                    let mut s = stream(&[secret]);
                    let pieces = [&text[..a], &text[a..b], &text[b..]];
                    let mut out = String::new();
                    for piece in pieces {
                        let shown = s.push(piece);
                        assert!(
                            !shown.to_ascii_lowercase().contains("ab12"),
                            "{shown:?} from {pieces:?}"
                        );
                        out += &shown;
                    }
                    out += &s.finish();
                    assert_eq!(out, whole, "{pieces:?}");
                }
            }
        }
    }

    #[test]
    fn text_that_cannot_be_a_secret_is_shown_at_once() {
        let mut s = stream(&["sk-live-0123"]);
        assert_eq!(s.push("hello "), "hello ");
        assert_eq!(s.push("world s"), "world ");
        assert_eq!(s.push("o"), "so");
        assert_eq!(s.finish(), "");
        let mut none = RedactStream::new([]);
        assert_eq!(none.push("sk-live-0123"), "sk-live-0123");
        assert!(format!("{s:?}").contains("held_bytes"));
    }
}
