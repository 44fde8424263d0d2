//! What the tools need to know about a WAV file before or after a provider
//! sees it.
//!
//! Rules: the header is read, never the samples, so checking costs the same
//! for any length. A file is WAV if it starts with `RIFF....WAVE` and hound
//! accepts its header; anything else gets a reason a person can act on
//! ("it is empty", "it looks like text"). The duration counts only the
//! frames actually present, since a streamed or cut-off file declares more
//! data than it holds.

use std::io::Cursor;

/// The header facts reported in `details`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WavInfo {
    pub(crate) sample_rate: u32,
    pub(crate) channels: u16,
    pub(crate) bits_per_sample: u16,
    pub(crate) duration_seconds: f64,
}

/// Reads the header of `bytes`, or says why it is not WAV audio.
pub(crate) fn inspect(bytes: &[u8]) -> Result<WavInfo, String> {
    if bytes.is_empty() {
        return Err("it is empty".to_owned());
    }
    if bytes.len() < 12 || &bytes[..4] != b"RIFF" || &bytes[8..12] != b"WAVE" {
        return Err(describe(bytes));
    }
    let header = |e: hound::Error| format!("its WAV header cannot be read: {e}");
    let data_start = hound::WavReader::new(Cursor::new(bytes))
        .map_err(header)?
        .into_inner()
        .position();
    let reader = hound::WavReader::new(Cursor::new(bytes)).map_err(header)?;
    let spec = reader.spec();
    if spec.sample_rate == 0 || spec.channels == 0 {
        return Err("its header declares no samples per second or no channels".to_owned());
    }
    let frame_bytes = u64::from(spec.channels) * u64::from(spec.bits_per_sample.div_ceil(8));
    let present = (bytes.len() as u64).saturating_sub(data_start) / frame_bytes.max(1);
    let frames = present.min(u64::from(reader.duration()));
    Ok(WavInfo {
        sample_rate: spec.sample_rate,
        channels: spec.channels,
        bits_per_sample: spec.bits_per_sample,
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
    } else if head.get(4..8) == Some(b"ftyp") {
        "it looks like MP4/M4A media"
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
    use oscova_speech::{Pcm16kMono, encode_wav};

    #[test]
    fn a_wav_header_gives_rate_and_duration() {
        let wav = encode_wav(&Pcm16kMono {
            samples: vec![0; 8_000],
        });
        let info = inspect(&wav).unwrap();
        assert_eq!(info.sample_rate, 16_000);
        assert_eq!(info.channels, 1);
        assert_eq!(info.bits_per_sample, 16);
        assert!((info.duration_seconds - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_declared_length_past_the_end_counts_only_present_frames() {
        let mut wav = encode_wav(&Pcm16kMono {
            samples: vec![0; 1_600],
        });
        // A streamed or cut-off file: the header promises far more data.
        wav[40..44].copy_from_slice(&0x7FFF_FFFEu32.to_le_bytes());
        let info = inspect(&wav).unwrap();
        assert!((info.duration_seconds - 0.1).abs() < 1e-9, "{info:?}");
    }

    #[test]
    fn other_files_are_named() {
        assert_eq!(inspect(b"").unwrap_err(), "it is empty");
        assert_eq!(inspect(b"hello there\n").unwrap_err(), "it looks like text");
        assert_eq!(
            inspect(b"ID3\x04\0\0\0\0").unwrap_err(),
            "it looks like MP3 audio"
        );
        assert_eq!(
            inspect(b"OggS\0\x02").unwrap_err(),
            "it looks like Ogg audio"
        );
        assert!(
            inspect(b"RIFF\x04\0\0\0WAVEjunk")
                .unwrap_err()
                .starts_with("its WAV header cannot be read")
        );
        assert_eq!(
            inspect(&[0x00, 0xFF, 0xFE, 0x80, 0x81]).unwrap_err(),
            "it does not start with a RIFF/WAVE header"
        );
    }
}
