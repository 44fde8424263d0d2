//! Where a known secret occurs in text, in every form the host's own code
//! derives from it.
//!
//! Rules: a secret matches where the text spells it byte for byte, except
//! that each byte may also appear
//!
//! - percent-encoded, `%XX` with hex digits in either case (URL
//!   serialisation and form encoding, which encode different sets of
//!   characters, so any byte may or may not be encoded);
//! - as `+` when the byte is a space (form encoding);
//! - as `/` when the byte is `\` (URL parsers turn one into the other in
//!   `http` and `https` URLs);
//! - in the other ASCII case (URL parsing lower-cases host names, and names
//!   are compared without case anyway).
//!
//! The forms mix freely within one occurrence. A match starts and ends on
//! character boundaries, so replacing it never splits a character.

/// What trying a secret at one position found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// An occurrence ending (exclusive) at this byte offset.
    Match(usize),
    /// No occurrence starts here.
    No,
    /// The text ends while an occurrence is still possible: more text
    /// could complete it.
    Partial,
}

/// Whether an occurrence of a secret starting with `first` could start at
/// byte `byte`; cheap, to skip most positions.
fn may_start(byte: u8, first: u8) -> bool {
    byte.eq_ignore_ascii_case(&first)
        || byte == b'%'
        || (first == b' ' && byte == b'+')
        || (first == b'\\' && byte == b'/')
}

fn hex(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

/// The ways `secret_byte` can be spelled at `at`: each entry is the offset
/// after it. `partial` is set when the text ends inside a possible spelling.
fn steps(text: &[u8], at: usize, secret_byte: u8, partial: &mut bool, out: &mut Vec<usize>) {
    let Some(&byte) = text.get(at) else {
        *partial = true;
        return;
    };
    if byte.eq_ignore_ascii_case(&secret_byte)
        || (secret_byte == b' ' && byte == b'+')
        || (secret_byte == b'\\' && byte == b'/')
    {
        out.push(at + 1);
    }
    if byte == b'%' {
        match (text.get(at + 1), text.get(at + 2)) {
            (Some(&high), Some(&low)) => {
                if let (Some(high), Some(low)) = (hex(high), hex(low))
                    && ((high << 4) | low).eq_ignore_ascii_case(&secret_byte)
                {
                    out.push(at + 3);
                }
            }
            (None, _) => *partial = true,
            (Some(&high), None) => *partial |= hex(high).is_some(),
        }
    }
}

/// Tries `secret` at byte `start` of `text`. With several ways to spell
/// it, the longest occurrence is reported.
pub(super) fn match_at(text: &str, start: usize, secret: &str) -> Found {
    let bytes = text.as_bytes();
    let mut partial = false;
    let mut current = vec![start];
    let mut next = Vec::new();
    for &secret_byte in secret.as_bytes() {
        next.clear();
        for &at in &current {
            steps(bytes, at, secret_byte, &mut partial, &mut next);
        }
        if next.is_empty() {
            return if partial { Found::Partial } else { Found::No };
        }
        next.sort_unstable();
        next.dedup();
        std::mem::swap(&mut current, &mut next);
    }
    let end = current
        .iter()
        .rev()
        .copied()
        .find(|end| text.is_char_boundary(*end));
    match end {
        Some(end) if text.is_char_boundary(start) => Found::Match(end),
        _ => Found::No,
    }
}

/// Adds every occurrence of `secret` in `text` to `spans`, as byte ranges
/// in order (occurrences may overlap), and returns where the first
/// occurrence that the end of the text cuts short starts, if any.
pub(super) fn occurrences(
    text: &str,
    secret: &str,
    spans: &mut Vec<(usize, usize)>,
) -> Option<usize> {
    let &first = secret.as_bytes().first()?;
    let mut first_partial = None;
    for (start, &byte) in text.as_bytes().iter().enumerate() {
        if !may_start(byte, first) {
            continue;
        }
        match match_at(text, start, secret) {
            Found::Match(end) => spans.push((start, end)),
            Found::Partial => {
                first_partial.get_or_insert(start);
            }
            Found::No => {}
        }
    }
    first_partial
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_byte_may_take_any_derived_form() {
        let cases: &[(&str, &str, Found)] = &[
            ("abcd", "abcd", Found::Match(4)),
            ("abcd", "ABCD", Found::Match(4)),
            ("abcd", "%61bcd", Found::Match(6)),
            ("abcd", "%61%62%63%64", Found::Match(12)),
            ("a b!", "a+b%21", Found::Match(6)),
            ("a b!", "a%20b!", Found::Match(6)),
            ("a\\b!", "a/b!", Found::Match(4)),
            ("a%2Fb", "a%2Fb", Found::Match(5)),
            ("a%2Fb", "a%252Fb", Found::Match(7)),
            ("é-key", "%C3%A9-key", Found::Match(10)),
            ("é-key", "%c3%a9-KEY", Found::Match(10)),
            ("abcd", "abce", Found::No),
            ("abcd", "%6", Found::Partial),
            ("abcd", "ab", Found::Partial),
            ("abcd", "ab%", Found::Partial),
            ("abcd", "ab%6", Found::Partial),
            ("abcd", "ab%6x", Found::No),
        ];
        for (secret, text, found) in cases {
            assert_eq!(match_at(text, 0, secret), *found, "{secret:?} in {text:?}");
        }
    }
}
