//! The token texts whisper.cpp reads from a model file, from CTranslate2's
//! `vocabulary.txt`.
//!
//! Rules: `vocabulary.txt` holds one token a line in id order, written in
//! GPT-2's byte-level alphabet (each byte shown as a printable character,
//! `Ġ` for a space); whisper.cpp wants each token's raw bytes. Only the
//! ordinary tokens are written, those before `<|endoftext|>`: whisper.cpp
//! numbers the special tokens itself from the model's vocabulary size,
//! exactly as for the files OpenAI's `convert-pt-to-ggml.py` writes (50,256
//! tokens for English-only models, 50,257 for multilingual ones). A line
//! with a character outside the alphabet is an error naming its line.

/// The token that ends the ordinary vocabulary.
const END_OF_TEXT: &str = "<|endoftext|>";

/// GPT-2's `bytes_to_unicode`, inverted: the byte each printable character
/// of the byte-level alphabet stands for.
fn char_to_byte(c: char) -> Option<u8> {
    let code = u32::from(c);
    let printable = |b: u32| {
        (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b)
    };
    if code < 256 {
        return printable(code).then_some(code as u8);
    }
    // The other bytes, in order, were given the characters from U+0100 on.
    let index = code - 256;
    (0u32..256)
        .filter(|b| !printable(*b))
        .nth(index as usize)
        .map(|b| b as u8)
}

/// A byte-level token's raw bytes.
pub(crate) fn token_bytes(token: &str) -> Option<Vec<u8>> {
    token.chars().map(char_to_byte).collect()
}

/// Why `vocabulary.txt` could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum VocabError {
    #[error("vocabulary.txt has no `{END_OF_TEXT}` line")]
    NoEndOfText,
    #[error("line {line} of vocabulary.txt is not a byte-level BPE token")]
    BadToken { line: usize },
}

/// The vocabulary: the ordinary tokens' bytes and the total line count
/// (ordinary and special tokens).
#[derive(Debug)]
pub(crate) struct Vocabulary {
    pub(crate) tokens: Vec<Vec<u8>>,
    pub(crate) total: usize,
}

/// Parses `vocabulary.txt`.
pub(crate) fn parse(text: &str) -> Result<Vocabulary, VocabError> {
    let lines: Vec<&str> = text
        .strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .collect();
    let end = lines
        .iter()
        .position(|l| *l == END_OF_TEXT)
        .ok_or(VocabError::NoEndOfText)?;
    let tokens = lines[..end]
        .iter()
        .enumerate()
        .map(|(i, l)| token_bytes(l).ok_or(VocabError::BadToken { line: i + 1 }))
        .collect::<Result<_, _>>()?;
    Ok(Vocabulary {
        tokens,
        total: lines.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alphabet_covers_every_byte_once() {
        let mut seen = [false; 256];
        for code in (0x21..0x7f)
            .chain(0xa1..0xad)
            .chain(0xae..0x100)
            .chain(0x100..0x144)
        {
            let c = char::from_u32(code).unwrap();
            let byte = char_to_byte(c).unwrap_or_else(|| panic!("U+{code:04X}"));
            assert!(!seen[usize::from(byte)], "byte {byte} twice");
            seen[usize::from(byte)] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(char_to_byte('\u{144}'), None);
        assert_eq!(char_to_byte(' '), None);
    }

    #[test]
    fn tokens_decode_to_their_bytes() {
        assert_eq!(token_bytes("hello").unwrap(), b"hello");
        assert_eq!(token_bytes("Ġthe").unwrap(), b" the");
        assert_eq!(token_bytes("Ċ").unwrap(), b"\n");
        assert_eq!(token_bytes("ĉ").unwrap(), b"\t");
        assert_eq!(token_bytes("Ā").unwrap(), [0]);
        // "é" in UTF-8 is C3 A9, shown as "Ã©".
        assert_eq!(token_bytes("Ã©").unwrap(), "é".as_bytes());
        assert_eq!(token_bytes("Ġ").unwrap(), b" ");
        assert!(token_bytes("a b").is_none());
    }

    #[test]
    fn only_tokens_before_end_of_text_are_kept() {
        let vocab = parse("!\nĠthe\n<|endoftext|>\n<|startoftranscript|>\n").unwrap();
        assert_eq!(vocab.tokens, [b"!".to_vec(), b" the".to_vec()]);
        assert_eq!(vocab.total, 4);
        assert_eq!(parse("a\nb\n").unwrap_err(), VocabError::NoEndOfText);
        assert_eq!(
            parse("a\nb c\n<|endoftext|>").unwrap_err(),
            VocabError::BadToken { line: 2 }
        );
    }
}
