//! [`TokenKey`]: the operator's key that seals the token store's rows.
//!
//! Rules: 32 bytes, given as 64 hexadecimal digits or as base64 (the
//! standard or URL-safe alphabet, padded or not), from the environment
//! (`OSCOVA_TOKEN_KEY`) or handed in by the host, never kept beside the
//! tokens. Each row is sealed with ChaCha20-Poly1305 (`ring`) under a
//! fresh random 96-bit nonce, with the row's (server, user, server URL)
//! as associated data: a row copied to another user or server, or a
//! server whose URL changed, does not open. A key is never printed
//! (`Debug` shows none of it).

use base64::Engine as _;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

/// The environment variable the `oscova` CLI reads the key from.
pub const TOKEN_KEY_ENV: &str = "OSCOVA_TOKEN_KEY";

/// The key that seals OAuth tokens at rest.
///
/// ```
/// use oscova_plugin_mcp::TokenKey;
///
/// let key = TokenKey::parse(&"ab".repeat(32)).unwrap();
/// assert!(format!("{key:?}").contains(".."));
/// assert!(TokenKey::parse("too short").is_err());
/// ```
pub struct TokenKey {
    key: LessSafeKey,
}

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKey(..)")
    }
}

/// Why a key was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the token key must be 32 bytes, as 64 hexadecimal digits or base64 (make one with `openssl rand -hex 32`)"
)]
#[non_exhaustive]
pub struct TokenKeyError;

impl TokenKey {
    /// A key from 64 hexadecimal digits or base64 of 32 bytes.
    ///
    /// # Errors
    ///
    /// [`TokenKeyError`] for anything else (the text is not repeated).
    pub fn parse(text: &str) -> Result<Self, TokenKeyError> {
        let text = text.trim();
        let bytes = hex(text)
            .or_else(|| {
                let engines = [
                    &base64::engine::general_purpose::STANDARD,
                    &base64::engine::general_purpose::STANDARD_NO_PAD,
                    &base64::engine::general_purpose::URL_SAFE,
                    &base64::engine::general_purpose::URL_SAFE_NO_PAD,
                ];
                engines.iter().find_map(|e| e.decode(text).ok())
            })
            .filter(|b| b.len() == 32)
            .ok_or(TokenKeyError)?;
        Self::from_bytes(&bytes)
    }

    /// A key from its 32 bytes.
    ///
    /// # Errors
    ///
    /// [`TokenKeyError`] when there are not 32 of them.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, TokenKeyError> {
        let unbound = UnboundKey::new(&CHACHA20_POLY1305, bytes).map_err(|_| TokenKeyError)?;
        Ok(Self {
            key: LessSafeKey::new(unbound),
        })
    }

    /// The key in `OSCOVA_TOKEN_KEY`, if it is set.
    ///
    /// # Errors
    ///
    /// [`TokenKeyError`] when it is set but not a key.
    pub fn from_env() -> Result<Option<Self>, TokenKeyError> {
        match std::env::var(TOKEN_KEY_ENV) {
            Ok(text) if !text.trim().is_empty() => Self::parse(&text).map(Some),
            _ => Ok(None),
        }
    }

    /// `plain` sealed: the nonce, then the ciphertext and its tag.
    pub(crate) fn seal(&self, aad: &[u8], plain: &[u8]) -> Option<Vec<u8>> {
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new().fill(&mut nonce).ok()?;
        let mut sealed = plain.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(aad),
                &mut sealed,
            )
            .ok()?;
        let mut out = nonce.to_vec();
        out.append(&mut sealed);
        Some(out)
    }

    /// What [`seal`](Self::seal) sealed with this key and `aad`, else
    /// `None` (another key, another row, or altered).
    pub(crate) fn open(&self, aad: &[u8], sealed: &[u8]) -> Option<Vec<u8>> {
        if sealed.len() < NONCE_LEN {
            return None;
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut body = body.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(aad), &mut body)
            .ok()?;
        Some(plain.to_vec())
    }
}

/// 64 hexadecimal digits as 32 bytes.
fn hex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    (0..32)
        .map(|i| u8::from_str_radix(text.get(i * 2..i * 2 + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_from_hex_or_base64_of_32_bytes_only() {
        let hex_key = "0f".repeat(32);
        assert!(TokenKey::parse(&hex_key).is_ok());
        let b64 = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
        assert!(TokenKey::parse(&b64).is_ok());
        assert!(TokenKey::parse(b64.trim_end_matches('=')).is_ok());
        for bad in ["", "zz".repeat(32).as_str(), "0f0f", &"0f".repeat(33)] {
            assert_eq!(TokenKey::parse(bad).err(), Some(TokenKeyError), "{bad}");
        }
        let sixteen = base64::engine::general_purpose::STANDARD.encode([7u8; 16]);
        assert!(TokenKey::parse(&sixteen).is_err());
    }

    #[test]
    fn a_sealed_row_opens_only_with_its_key_and_its_own_associated_data() {
        let key = TokenKey::parse(&"01".repeat(32)).unwrap();
        let sealed = key.seal(b"notes\0alice", b"the refresh token").unwrap();
        assert!(
            !sealed.windows(b"refresh".len()).any(|w| w == b"refresh"),
            "not in the clear"
        );
        assert_eq!(
            key.open(b"notes\0alice", &sealed).as_deref(),
            Some(&b"the refresh token"[..])
        );
        assert!(key.open(b"notes\0bob", &sealed).is_none(), "another user");
        let other = TokenKey::parse(&"02".repeat(32)).unwrap();
        assert!(
            other.open(b"notes\0alice", &sealed).is_none(),
            "another key"
        );
        let mut altered = sealed.clone();
        if let Some(last) = altered.last_mut() {
            *last ^= 1;
        }
        assert!(key.open(b"notes\0alice", &altered).is_none(), "altered");
        assert_ne!(
            key.seal(b"a", b"same").unwrap(),
            key.seal(b"a", b"same").unwrap(),
            "a fresh nonce each time"
        );
    }
}
