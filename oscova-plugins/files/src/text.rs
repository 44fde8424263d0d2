//! Turning file bytes into text for the model.
//!
//! Rules: a NUL byte means binary, which the tools refuse rather than
//! return as noise; a byte range that starts or ends inside a UTF-8
//! character is trimmed to whole characters (the caller reports the range
//! actually returned, so the next offset continues exactly); whatever is
//! still not UTF-8 is decoded lossily and flagged. A file name shown in
//! a tool's text goes through [`escaped`], so a name cannot start a new
//! line of the listing or carry terminal escapes or bidirectional
//! overrides; the details keep the exact name (JSON escapes it).

use std::borrow::Cow;
use std::fmt::Write;

/// Whether the bytes look binary.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes.contains(&0)
}

/// Text decoded from a byte range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decoded {
    pub(crate) text: String,
    /// Bytes dropped at the front (the tail of a character cut by the offset).
    pub(crate) skipped_front: usize,
    /// Bytes dropped at the back (the head of a character cut by the length).
    pub(crate) cut_back: usize,
    /// Some bytes were not UTF-8 and became U+FFFD.
    pub(crate) lossy: bool,
}

/// Decodes `bytes`; `more_after` says whether the file goes on after them.
pub(crate) fn decode(bytes: &[u8], more_after: bool) -> Decoded {
    let skipped_front = bytes
        .iter()
        .take(3)
        .take_while(|b| (**b & 0b1100_0000) == 0b1000_0000)
        .count();
    let body = bytes.get(skipped_front..).unwrap_or_default();
    let cut_back = if more_after { incomplete_tail(body) } else { 0 };
    let body = body.get(..body.len() - cut_back).unwrap_or_default();
    match std::str::from_utf8(body) {
        Ok(text) => Decoded {
            text: text.to_owned(),
            skipped_front,
            cut_back,
            lossy: false,
        },
        Err(_) => Decoded {
            text: String::from_utf8_lossy(body).into_owned(),
            skipped_front,
            cut_back,
            lossy: true,
        },
    }
}

/// How many trailing bytes start a character that is not complete.
fn incomplete_tail(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => bytes.len() - e.valid_up_to(),
        _ => 0,
    }
}

/// `name` with every control character (`\n`, `\r`, `\t`, ESC, DEL, the
/// C1 range) and every bidirectional control written as an escape
/// (`\n`, `\u{1b}`), so one name stays one line that reads as it is.
pub(crate) fn escaped(name: &str) -> Cow<'_, str> {
    let special = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !name.chars().any(special) {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if special(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `line` cut to at most `max` characters, marked when cut.
pub(crate) fn clip(line: &str, max: usize) -> String {
    oscova_core::text::cut(line.trim(), oscova_core::text::Limit::Chars(max)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_characters_are_trimmed() {
        let bytes = "aé€b".as_bytes(); // 1 + 2 + 3 + 1 bytes
        let d = decode(bytes.get(2..5).unwrap(), true); // tail of é, first two of €
        assert_eq!(d.skipped_front, 1);
        assert_eq!(d.cut_back, 2);
        assert_eq!(d.text, "");
        let d = decode(bytes.get(1..).unwrap(), false);
        assert_eq!(d.text, "é€b");
        assert!(!d.lossy);
    }

    #[test]
    fn invalid_bytes_are_lossy() {
        let d = decode(b"caf\xe9 ok", false);
        assert!(d.lossy);
        assert_eq!(d.text, "caf\u{fffd} ok");
    }

    #[test]
    fn names_with_control_characters_stay_one_line() {
        assert_eq!(escaped("plain name.txt"), "plain name.txt");
        assert_eq!(escaped("a\nb.txt"), "a\\nb.txt");
        assert_eq!(escaped("x\r\t\u{1b}[31m"), "x\\r\\t\\u{1b}[31m");
        assert_eq!(escaped("evil\u{202e}txt.exe"), "evil\\u{202e}txt.exe");
        assert_eq!(escaped("caf\u{e9}"), "caf\u{e9}");
    }

    #[test]
    fn clipping_is_char_safe() {
        assert_eq!(clip("  ééé  ", 2), "éé…");
        assert_eq!(clip("ab", 2), "ab");
        assert!(looks_binary(b"a\0b"));
    }
}
