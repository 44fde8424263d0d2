//! Content blocks: what a tool result holds besides its text.
//!
//! Rules: a result's [`content`](crate::ToolResult::content) is its text
//! for the model and always comes first; [`blocks`](crate::ToolResult::blocks)
//! follow it, in the order the tool added them. Bytes are kept as bytes
//! and written as base64 only where a format needs text (JSON, MCP). The
//! MIME type is the tool's word and is not checked against the bytes.
//! Every text field of a block (text, a resource's URI and text) goes
//! through the host's redaction like the result's content; bytes do not,
//! since a secret cannot be found in them by matching text.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One block of a tool result after its text: more text, an image, audio
/// or an embedded resource.
///
/// ```
/// use oscova_core::tool::ContentBlock;
/// let png = ContentBlock::image(vec![0x89, b'P', b'N', b'G'], "image/png");
/// assert_eq!(png.kind(), "image");
/// assert_eq!(png.mime_type(), Some("image/png"));
/// ```
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text for the model.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// The encoded image (PNG, JPEG, ...), base64 in JSON.
        #[serde(with = "base64_bytes")]
        data: Vec<u8>,
        /// Its MIME type, such as `image/png`.
        mime_type: String,
    },
    /// A sound.
    Audio {
        /// The encoded sound (WAV, MP3, ...), base64 in JSON.
        #[serde(with = "base64_bytes")]
        data: Vec<u8>,
        /// Its MIME type, such as `audio/wav`.
        mime_type: String,
    },
    /// A resource embedded in the result: a URI with its text or bytes.
    Resource(EmbeddedResource),
}

/// A resource embedded in a result: what it is (`uri`) and what it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The resource's URI (`file:///...`, `https://...`, or the tool's own
    /// scheme).
    pub uri: String,
    /// Its MIME type, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its contents.
    #[serde(flatten)]
    pub contents: ResourceContents,
}

/// What an embedded resource holds.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceContents {
    /// Text.
    Text(String),
    /// Bytes, base64 in JSON.
    Blob(#[serde(with = "base64_bytes")] Vec<u8>),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// An image block.
    pub fn image(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Self::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block.
    pub fn audio(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        Self::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded resource holding text.
    ///
    /// ```
    /// use oscova_core::tool::ContentBlock;
    /// let r = ContentBlock::resource_text("file:///notes.md", Some("text/markdown"), "# Notes");
    /// assert_eq!(r.kind(), "resource");
    /// ```
    pub fn resource_text(
        uri: impl Into<String>,
        mime_type: Option<&str>,
        text: impl Into<String>,
    ) -> Self {
        Self::Resource(EmbeddedResource {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            contents: ResourceContents::Text(text.into()),
        })
    }

    /// An embedded resource holding bytes.
    pub fn resource_blob(
        uri: impl Into<String>,
        mime_type: Option<&str>,
        data: impl Into<Vec<u8>>,
    ) -> Self {
        Self::Resource(EmbeddedResource {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            contents: ResourceContents::Blob(data.into()),
        })
    }

    /// The block's kind as MCP names it: `text`, `image`, `audio` or
    /// `resource`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Text { .. } => "text",
            Self::Image { .. } => "image",
            Self::Audio { .. } => "audio",
            Self::Resource(_) => "resource",
        }
    }

    /// The MIME type of an image, audio or resource block.
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            Self::Text { .. } => None,
            Self::Image { mime_type, .. } | Self::Audio { mime_type, .. } => Some(mime_type),
            Self::Resource(r) => r.mime_type.as_deref(),
        }
    }

    /// The bytes of an image, audio or blob resource block.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Image { data, .. } | Self::Audio { data, .. } => Some(data),
            Self::Resource(EmbeddedResource {
                contents: ResourceContents::Blob(data),
                ..
            }) => Some(data),
            _ => None,
        }
    }

    /// The text of a text block or a text resource.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text { text } => Some(text),
            Self::Resource(EmbeddedResource {
                contents: ResourceContents::Text(text),
                ..
            }) => Some(text),
            _ => None,
        }
    }

    /// Calls `f` on every text field (text, a resource's URI and text), to
    /// rewrite it: how redaction reaches every text a block carries.
    pub fn for_each_text_mut(&mut self, mut f: impl FnMut(&mut String)) {
        match self {
            Self::Text { text } => f(text),
            Self::Image { .. } | Self::Audio { .. } => {}
            Self::Resource(r) => {
                f(&mut r.uri);
                if let ResourceContents::Text(text) = &mut r.contents {
                    f(text);
                }
            }
        }
    }

    /// The bytes as standard base64 (with padding), as MCP and JSON carry
    /// them; `None` for a block without bytes.
    pub fn base64(&self) -> Option<String> {
        self.bytes().map(encode_base64)
    }
}

/// The standard base64 alphabet (RFC 4648, section 4).
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding, the encoding MCP uses for bytes.
///
/// ```
/// assert_eq!(oscova_core::tool::encode_base64(b"foob"), "Zm9vYg==");
/// ```
pub fn encode_base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        let sextets = chunk.len() + 1;
        for i in 0..4 {
            if i < sextets {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 (padding optional). Anything else is refused:
/// characters outside the alphabet (white space included), a length no
/// encoding has, and unused bits that are not zero.
///
/// ```
/// use oscova_core::tool::decode_base64;
/// assert_eq!(decode_base64("Zm9vYg==").unwrap(), b"foob");
/// assert_eq!(decode_base64("Zm9vYg").unwrap(), b"foob");
/// assert!(decode_base64("Zm9v Yg").is_err());
/// ```
pub fn decode_base64(text: &str) -> Result<Vec<u8>, InvalidBase64> {
    let text = text.trim_end_matches('=').as_bytes();
    if text.len() % 4 == 1 {
        return Err(InvalidBase64(format!(
            "{} symbols is no whole number of bytes",
            text.len()
        )));
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    for (index, chunk) in text.chunks(4).enumerate() {
        let mut n = 0u32;
        for (i, &symbol) in chunk.iter().enumerate() {
            let value = sextet(symbol).ok_or_else(|| {
                InvalidBase64(format!(
                    "invalid symbol {:?} at offset {}",
                    char::from(symbol),
                    index * 4 + i
                ))
            })?;
            n |= u32::from(value) << (18 - 6 * i);
        }
        let bytes = chunk.len() - 1;
        // The bits after the last whole byte must be zero.
        if bytes < 3 && n << (8 * bytes) & 0x00ff_ffff != 0 {
            return Err(InvalidBase64(format!(
                "invalid last symbol at offset {}",
                index * 4 + chunk.len() - 1
            )));
        }
        out.extend((0..bytes).map(|i| (n >> (16 - 8 * i)) as u8));
    }
    Ok(out)
}

/// The value of one base64 symbol.
fn sextet(symbol: u8) -> Option<u8> {
    match symbol {
        b'A'..=b'Z' => Some(symbol - b'A'),
        b'a'..=b'z' => Some(symbol - b'a' + 26),
        b'0'..=b'9' => Some(symbol - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Text that is not standard base64.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid base64: {0}")]
pub struct InvalidBase64(String);

// Bytes print as their length and MIME type: a 2 MB image in a debug log
// helps nobody.
impl fmt::Debug for ContentBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Text { text } => f.debug_struct("Text").field("text", text).finish(),
            Self::Image { data, mime_type } => f
                .debug_struct("Image")
                .field("bytes", &data.len())
                .field("mime_type", mime_type)
                .finish(),
            Self::Audio { data, mime_type } => f
                .debug_struct("Audio")
                .field("bytes", &data.len())
                .field("mime_type", mime_type)
                .finish(),
            Self::Resource(r) => f.debug_tuple("Resource").field(r).finish(),
        }
    }
}

impl fmt::Debug for ResourceContents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Text(text) => f.debug_tuple("Text").field(text).finish(),
            Self::Blob(data) => write!(f, "Blob({} bytes)", data.len()),
        }
    }
}

mod base64_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::encode_base64(bytes))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
        super::decode_base64(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod base64_tests {
    use super::{decode_base64, encode_base64};

    #[test]
    fn rfc_4648_vectors_both_ways() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode_base64(plain.as_bytes()), coded);
            assert_eq!(decode_base64(coded).unwrap(), plain.as_bytes(), "{coded}");
            let bare = coded.trim_end_matches('=');
            assert_eq!(decode_base64(bare).unwrap(), plain.as_bytes(), "{bare}");
        }
    }

    #[test]
    fn every_byte_and_length_round_trips() {
        let bytes: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).collect();
        for len in 0..bytes.len() {
            let coded = encode_base64(&bytes[..len]);
            assert_eq!(coded.len() % 4, 0);
            assert_eq!(decode_base64(&coded).unwrap(), &bytes[..len], "{len}");
        }
        assert!(encode_base64(&[0xfb, 0xff]).contains(['+', '/']));
    }

    #[test]
    fn anything_else_is_refused() {
        for bad in [
            "Z",
            "Zm9vY",
            "Zm9v Yg==",
            "Zm9v\nYg",
            "Zm-v",
            "Zh==",
            "Zm9=",
            "Zg=x",
            "é",
        ] {
            assert!(decode_base64(bad).is_err(), "{bad:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_round_trip_through_json_with_base64_bytes() {
        let blocks = vec![
            ContentBlock::text("hi"),
            ContentBlock::image(vec![1, 2, 3], "image/png"),
            ContentBlock::audio(b"RIFF".to_vec(), "audio/wav"),
            ContentBlock::resource_text("file:///a.txt", Some("text/plain"), "a"),
            ContentBlock::resource_blob("file:///b.bin", None, vec![0xff]),
        ];
        let value = serde_json::to_value(&blocks).unwrap();
        assert_eq!(
            value,
            json!([
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "AQID", "mime_type": "image/png"},
                {"type": "audio", "data": "UklGRg==", "mime_type": "audio/wav"},
                {"type": "resource", "uri": "file:///a.txt", "mime_type": "text/plain", "text": "a"},
                {"type": "resource", "uri": "file:///b.bin", "blob": "/w=="},
            ])
        );
        let back: Vec<ContentBlock> = serde_json::from_value(value).unwrap();
        assert_eq!(back, blocks);
    }

    #[test]
    fn bad_base64_is_an_error_not_a_panic() {
        let err = serde_json::from_value::<ContentBlock>(
            json!({"type": "image", "data": "**", "mime_type": "image/png"}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("invalid base64"), "{err}");
    }

    #[test]
    fn debug_shows_sizes_not_bytes() {
        let block = ContentBlock::image(vec![0; 4096], "image/png");
        assert_eq!(
            format!("{block:?}"),
            r#"Image { bytes: 4096, mime_type: "image/png" }"#
        );
    }
}
