//! What `speech` needs to know about WAV bytes: whether they are WAV at
//! all, and how long they play.
//!
//! Rules: only the header is read, so a check costs the same for any
//! length, and a provider that takes audio the local decoder would refuse
//! (a remote service) still gets it. Bytes that are not WAV get a reason a
//! person can act on ("it is empty", "it looks like text"). The duration
//! counts only the frames actually present, since a streamed or cut-off
//! file declares more data than it holds. The speech plugin makes the same
//! checks in its own private module.

use std::io::Cursor;

/// The header facts `say` reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct WavInfo {
    /// How long the audio plays.
    pub(super) duration_seconds: f64,
}

/// Reads the header of `bytes`, or says why they are not WAV audio.
pub(super) fn inspect(bytes: &[u8]) -> Result<WavInfo, String> {
    if bytes.is_empty() {
        return Err("it is empty".to_owned());
    }
    if bytes.len() < 12 || &bytes[..4] != b"RIFF" || &bytes[8..12] != b"WAVE" {
        return Err(describe(bytes));
    }
    let header = |e: hound::Error| format!("its WAV header cannot be read: {e}");
    let reader = hound::WavReader::new(Cursor::new(bytes)).map_err(header)?;
    let spec = reader.spec();
    let declared = u64::from(reader.duration());
    let data_start = reader.into_inner().position();
    if spec.sample_rate == 0 || spec.channels == 0 {
        return Err("its header declares no samples per second or no channels".to_owned());
    }
    let frame_bytes = u64::from(spec.channels) * u64::from(spec.bits_per_sample.div_ceil(8));
    let present = (bytes.len() as u64).saturating_sub(data_start) / frame_bytes.max(1);
    let frames = present.min(declared);
    Ok(WavInfo {
        duration_seconds: frames as f64 / f64::from(spec.sample_rate),
    })
}

/// Why bytes without a RIFF/WAVE header are not WAV, guessing what they are.
fn describe(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(512)];
    let kind = if head.starts_with(b"ID3") || head.starts_with(&[0xFF, 0xFB]) {
        "it looks like MP3 audio"
    } else if head.starts_with(b"OggS") {
        "it looks like Ogg audio"
    } else if head.starts_with(b"fLaC") {
        "it looks like FLAC audio"
    } else if looks_like_text(head) {
        "it looks like text"
    } else {
        "it does not start with a RIFF/WAVE header"
    };
    kind.to_owned()
}

/// UTF-8 without NUL bytes (a character cut at the end still counts).
fn looks_like_text(head: &[u8]) -> bool {
    !head.contains(&0)
        && match std::str::from_utf8(head) {
            Ok(_) => true,
            Err(e) => e.error_len().is_none(),
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 16-bit mono WAV header declaring `declared` samples, followed by
    /// `present` samples.
    fn wav(rate: u32, declared: u32, present: usize) -> Vec<u8> {
        let data = declared * 2;
        let mut out = Vec::new();
        out.extend_from_slice(b"RIFF");
        out.extend_from_slice(&(36 + data).to_le_bytes());
        out.extend_from_slice(b"WAVEfmt ");
        out.extend_from_slice(&16u32.to_le_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&1u16.to_le_bytes());
        out.extend_from_slice(&rate.to_le_bytes());
        out.extend_from_slice(&(rate * 2).to_le_bytes());
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&16u16.to_le_bytes());
        out.extend_from_slice(b"data");
        out.extend_from_slice(&data.to_le_bytes());
        out.extend(std::iter::repeat_n(0u8, present * 2));
        out
    }

    #[test]
    fn the_duration_counts_the_frames_present() {
        let info = inspect(&wav(16_000, 8_000, 8_000)).unwrap();
        assert!((info.duration_seconds - 0.5).abs() < 1e-9);
        let cut = inspect(&wav(16_000, 16_000, 4_000)).unwrap();
        assert!((cut.duration_seconds - 0.25).abs() < 1e-9);
    }

    #[test]
    fn other_bytes_get_a_reason() {
        assert_eq!(inspect(b"").unwrap_err(), "it is empty");
        assert_eq!(inspect(b"hello, world").unwrap_err(), "it looks like text");
        assert_eq!(
            inspect(b"ID3\x04\0\0\0").unwrap_err(),
            "it looks like MP3 audio"
        );
        assert!(
            inspect(b"RIFF\0\0\0\0WAVEjunk")
                .unwrap_err()
                .contains("header")
        );
    }
}
