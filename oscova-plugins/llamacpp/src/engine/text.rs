//! Token bytes to text: a character split between tokens waits for its
//! last byte; bytes that can never be UTF-8 become U+FFFD.

/// Token bytes to text, holding a character split between tokens.
#[derive(Debug, Default)]
pub(super) struct Utf8 {
    pending: Vec<u8>,
    before: Vec<u8>,
}

impl Utf8 {
    /// The complete characters `bytes` finishes.
    pub(super) fn push(&mut self, bytes: &[u8]) -> String {
        self.before.clone_from(&self.pending);
        self.pending.extend_from_slice(bytes);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            // Bytes that can never be UTF-8 are replaced.
            Err(_) => {
                let text = String::from_utf8_lossy(&self.pending).into_owned();
                self.pending.clear();
                return text;
            }
        };
        let rest = self.pending.split_off(valid);
        String::from_utf8(std::mem::replace(&mut self.pending, rest)).unwrap_or_default()
    }

    /// Takes back the last push (a token that was not taken).
    pub(super) fn unpush(&mut self) {
        std::mem::swap(&mut self.pending, &mut self.before);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_characters_wait_for_their_last_byte() {
        let mut utf8 = Utf8::default();
        let bytes = "é".as_bytes();
        assert_eq!(utf8.push(&bytes[..1]), "");
        assert_eq!(utf8.push(&bytes[1..]), "é");
        assert_eq!(utf8.push(b"\xff"), "\u{fffd}");
    }
}
