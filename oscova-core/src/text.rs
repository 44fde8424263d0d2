//! Cutting text to a length, and folding it onto one line, once for every
//! message the project builds.
//!
//! Rules: a cut never splits a character; a cut text ends with `…`; a text
//! that fits comes back unchanged (borrowed). Limits count either bytes
//! (for wire and log sizes) or characters (for what a person reads), and
//! say which. A folded text has no line break: each one, with the blanks
//! around it, is one space.

use std::borrow::Cow;

/// How long a text may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// At most this many bytes of UTF-8 (the marker not counted).
    Bytes(usize),
    /// At most this many characters (the marker not counted).
    Chars(usize),
}

/// The longest start of `text` within `limit`: `text` itself when it fits.
///
/// ```
/// use oscova_core::text::{Limit, prefix};
///
/// assert_eq!(prefix("héllo", Limit::Bytes(2)), "h"); // `é` is two bytes
/// assert_eq!(prefix("héllo", Limit::Chars(2)), "hé");
/// assert_eq!(prefix("hi", Limit::Chars(5)), "hi");
/// ```
pub fn prefix(text: &str, limit: Limit) -> &str {
    let end = match limit {
        Limit::Bytes(max) if text.len() <= max => return text,
        Limit::Bytes(max) => (0..=max).rev().find(|&i| text.is_char_boundary(i)),
        Limit::Chars(max) => match text.char_indices().nth(max) {
            None => return text,
            Some((at, _)) => Some(at),
        },
    };
    text.get(..end.unwrap_or(0)).unwrap_or_default()
}

/// `text` cut to `limit`, ending with `…` when it was cut.
///
/// ```
/// use oscova_core::text::{Limit, cut};
///
/// assert_eq!(cut("short", Limit::Chars(10)), "short");
/// assert_eq!(cut("a longer line", Limit::Chars(6)), "a long…");
/// assert_eq!(cut("ééé", Limit::Bytes(3)), "é…");
/// ```
pub fn cut(text: &str, limit: Limit) -> Cow<'_, str> {
    let start = prefix(text, limit);
    if start.len() == text.len() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("{start}…"))
    }
}

/// `text` on one line: every line break (`\n`, `\r`), with the blanks
/// around it, becomes one space, blank lines vanish, and the ends are
/// trimmed. A text already so comes back borrowed.
///
/// ```
/// use oscova_core::text::one_line;
///
/// assert_eq!(one_line("  Reads a file.\r\n\n  Never writes. "), "Reads a file. Never writes.");
/// assert_eq!(one_line("as is"), "as is");
/// assert_eq!(one_line(" \n "), "");
/// ```
pub fn one_line(text: &str) -> Cow<'_, str> {
    let trimmed = text.trim();
    if !trimmed.contains(['\n', '\r']) {
        return Cow::Borrowed(trimmed);
    }
    let lines: Vec<&str> = trimmed
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    Cow::Owned(lines.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_never_split_a_character() {
        let text = "aé€😀z";
        for max in 0..=text.len() + 1 {
            let p = prefix(text, Limit::Bytes(max));
            assert!(p.len() <= max && text.starts_with(p), "{max}: {p:?}");
        }
        for max in 0..=6 {
            let p = prefix(text, Limit::Chars(max));
            assert_eq!(p.chars().count(), max.min(5));
        }
    }

    #[test]
    fn only_a_cut_text_is_marked_and_only_it_allocates() {
        assert!(matches!(
            cut("fits", Limit::Bytes(4)),
            Cow::Borrowed("fits")
        ));
        assert_eq!(cut("fits!", Limit::Bytes(4)), "fits…");
        assert_eq!(cut("", Limit::Chars(0)), "");
        assert_eq!(cut("x", Limit::Chars(0)), "…");
    }

    #[test]
    fn a_folded_text_has_no_line_break_and_only_a_changed_one_allocates() {
        for text in ["a\rb", "a\nb", "a \r\n b", "\na\n\n\nb\r", "a\u{2028}b"] {
            let folded = one_line(text);
            assert!(!folded.contains(['\n', '\r']), "{text:?} → {folded:?}");
            assert!(
                folded.starts_with('a') && folded.ends_with('b'),
                "{folded:?}"
            );
        }
        assert_eq!(one_line("a\rb"), "a b");
        assert!(matches!(one_line(" same "), Cow::Borrowed("same")));
        assert!(matches!(one_line("two\nlines"), Cow::Owned(_)));
    }
}
