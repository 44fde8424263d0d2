//! Cutting a body into pieces where a client's parser is most likely to
//! go wrong. The cuts depend only on the bytes, so a failure repeats.

use std::collections::BTreeSet;

/// Cuts `data` into pieces at awkward places: inside every multi-byte
/// UTF-8 character, inside every `data:`, `"arguments"` and `"status"`,
/// right before every `\n` (so `\r` and `\n` part), and every 7 bytes
/// besides. The pieces joined are `data`.
///
/// ```
/// use oscova_test_kit::http::awkward;
///
/// let body = "data: {\"x\": \"é\"}\r\n\r\n".as_bytes();
/// let pieces = awkward(body);
/// assert!(pieces.len() > 3);
/// assert_eq!(pieces.concat(), body);
/// ```
pub fn awkward(data: &[u8]) -> Vec<Vec<u8>> {
    let mut cuts = BTreeSet::new();
    for (i, b) in data.iter().enumerate() {
        if *b >= 0xC0 {
            cuts.insert(i + 1);
        }
        if *b == b'\n' {
            cuts.insert(i);
        }
        if i % 7 == 0 {
            cuts.insert(i);
        }
    }
    for needle in [&b"data:"[..], b"\"arguments\"", b"\"status\""] {
        for i in 0..data.len().saturating_sub(needle.len()) {
            if &data[i..i + needle.len()] == needle {
                cuts.insert(i + 2);
            }
        }
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    for cut in cuts {
        if cut > start && cut < data.len() {
            pieces.push(data[start..cut].to_vec());
            start = cut;
        }
    }
    pieces.push(data[start..].to_vec());
    pieces
}
