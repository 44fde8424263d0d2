//! Checking bytes for WAV audio by their header alone, before a provider or
//! a file sees them.
//!
//! Rules: only the header is read, never the samples, so a check costs the
//! same for any length, and audio the local decoder would refuse (a rate it
//! does not resample, an encoding a remote service takes) still passes. A
//! file is WAV if it starts with `RIFF....WAVE` and hound accepts its
//! header; anything else gets a reason a person can act on ("it is empty",
//! "it looks like text"). The duration counts only the frames actually
//! present, since a streamed or cut-off file declares more data than it
//! holds.

use std::fmt;
use std::io::Cursor;

/// What the first bytes of some data say it is, by its magic bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AudioKind {
    /// No bytes at all.
    Empty,
    /// A RIFF/WAVE file (its header is not checked; see [`check_wav_header`]).
    Wav,
    /// MP3 audio (an ID3 tag or an MPEG frame sync).
    Mp3,
    /// An Ogg container.
    Ogg,
    /// FLAC audio.
    Flac,
    /// An MP4/M4A container.
    Mp4,
    /// UTF-8 text without NUL bytes.
    Text,
    /// None of the above.
    Unknown,
}

impl fmt::Display for AudioKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Empty => "empty",
            Self::Wav => "WAV audio",
            Self::Mp3 => "MP3 audio",
            Self::Ogg => "Ogg audio",
            Self::Flac => "FLAC audio",
            Self::Mp4 => "MP4/M4A media",
            Self::Text => "text",
            Self::Unknown => "of an unknown kind",
        })
    }
}

/// Guesses what `bytes` are from their first bytes (at most 512 are read).
///
/// ```
/// use oscova_speech::wav::{AudioKind, Pcm16kMono, encode_wav, sniff_audio};
///
/// assert_eq!(sniff_audio(&encode_wav(&Pcm16kMono::default())), AudioKind::Wav);
/// assert_eq!(sniff_audio(b"ID3\x04\0\0\0"), AudioKind::Mp3);
/// assert_eq!(sniff_audio(b"hello, world"), AudioKind::Text);
/// assert_eq!(sniff_audio(b""), AudioKind::Empty);
/// ```
pub fn sniff_audio(bytes: &[u8]) -> AudioKind {
    if bytes.is_empty() {
        return AudioKind::Empty;
    }
    if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WAVE" {
        return AudioKind::Wav;
    }
    let head = &bytes[..bytes.len().min(512)];
    if head.starts_with(b"ID3") || head.starts_with(&[0xFF, 0xFB]) {
        AudioKind::Mp3
    } else if head.starts_with(b"OggS") {
        AudioKind::Ogg
    } else if head.starts_with(b"fLaC") {
        AudioKind::Flac
    } else if head.get(4..8) == Some(b"ftyp") {
        AudioKind::Mp4
    } else if looks_like_text(head) {
        AudioKind::Text
    } else {
        AudioKind::Unknown
    }
}

/// UTF-8 without NUL bytes (a character cut at the end still counts).
fn looks_like_text(head: &[u8]) -> bool {
    !head.contains(&0)
        && match std::str::from_utf8(head) {
            Ok(_) => true,
            Err(e) => e.error_len().is_none(),
        }
}

/// The facts a WAV header gives.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct WavHeader {
    /// Samples per second, per channel.
    pub sample_rate: u32,
    /// The number of channels.
    pub channels: u16,
    /// Bits per sample.
    pub bits_per_sample: u16,
    /// How long the frames actually present play, in seconds.
    pub duration_seconds: f64,
}

/// Why bytes are not usable WAV audio. Its text completes a sentence such
/// as "`x` is not a WAV file (…)", for example "it looks like text".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WavHeaderError {
    /// No bytes at all.
    #[error("it is empty")]
    Empty,
    /// No `RIFF....WAVE` start; the kind is a guess at what they are.
    #[error("{}", not_wav(*.0))]
    NotWav(AudioKind),
    /// A RIFF/WAVE start with a header hound cannot read.
    #[error("its WAV header cannot be read: {source}")]
    Unreadable {
        /// What the WAV reader said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A header declaring no sample rate or no channels.
    #[error("its header declares no samples per second or no channels")]
    NoSamples,
}

fn not_wav(kind: AudioKind) -> String {
    match kind {
        AudioKind::Unknown | AudioKind::Wav | AudioKind::Empty => {
            "it does not start with a RIFF/WAVE header".to_owned()
        }
        kind => format!("it looks like {kind}"),
    }
}

/// Reads the header of `bytes`, or says why they are not WAV audio. The
/// samples are not decoded; see [`decode_wav`](crate::wav::decode_wav) for that.
///
/// ```
/// use oscova_speech::wav::{Pcm16kMono, check_wav_header, encode_wav};
///
/// let wav = encode_wav(&Pcm16kMono { samples: vec![0; 8_000] });
/// let header = check_wav_header(&wav)?;
/// assert_eq!((header.sample_rate, header.channels), (16_000, 1));
/// assert_eq!(header.duration_seconds, 0.5);
///
/// let err = check_wav_header(b"hello there\n").unwrap_err();
/// assert_eq!(err.to_string(), "it looks like text");
/// # Ok::<(), oscova_speech::wav::WavHeaderError>(())
/// ```
///
/// # Errors
///
/// [`WavHeaderError`]: no bytes, no RIFF/WAVE start (with a guess at what
/// the bytes are), a header hound cannot read, or one without a sample rate
/// or channels.
pub fn check_wav_header(bytes: &[u8]) -> Result<WavHeader, WavHeaderError> {
    match sniff_audio(bytes) {
        AudioKind::Wav => {}
        AudioKind::Empty => return Err(WavHeaderError::Empty),
        other => return Err(WavHeaderError::NotWav(other)),
    }
    let reader =
        hound::WavReader::new(Cursor::new(bytes)).map_err(|e| WavHeaderError::Unreadable {
            source: Box::new(e),
        })?;
    let spec = reader.spec();
    let declared = u64::from(reader.duration());
    let data_start = reader.into_inner().position();
    if spec.sample_rate == 0 || spec.channels == 0 {
        return Err(WavHeaderError::NoSamples);
    }
    let frame_bytes = u64::from(spec.channels) * u64::from(spec.bits_per_sample.div_ceil(8));
    let present = (bytes.len() as u64).saturating_sub(data_start) / frame_bytes.max(1);
    let frames = present.min(declared);
    Ok(WavHeader {
        sample_rate: spec.sample_rate,
        channels: spec.channels,
        bits_per_sample: spec.bits_per_sample,
        duration_seconds: frames as f64 / f64::from(spec.sample_rate),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wav::{Pcm16kMono, encode_wav};

    /// A 16-bit mono WAV header declaring `declared` samples, followed by
    /// `present` samples.
    fn wav(rate: u32, declared: u32, present: usize) -> Vec<u8> {
        let mut out = encode_wav(&Pcm16kMono {
            samples: vec![0; present],
        });
        out[24..28].copy_from_slice(&rate.to_le_bytes());
        out[28..32].copy_from_slice(&(rate * 2).to_le_bytes());
        out[40..44].copy_from_slice(&(declared * 2).to_le_bytes());
        out
    }

    fn reason(bytes: &[u8]) -> String {
        check_wav_header(bytes).unwrap_err().to_string()
    }

    #[test]
    fn a_wav_header_gives_rate_and_duration() {
        let info = check_wav_header(&wav(16_000, 8_000, 8_000)).unwrap();
        assert_eq!(info.sample_rate, 16_000);
        assert_eq!(info.channels, 1);
        assert_eq!(info.bits_per_sample, 16);
        assert!((info.duration_seconds - 0.5).abs() < 1e-9);
        let slow = check_wav_header(&wav(8_000, 8_000, 8_000)).unwrap();
        assert!((slow.duration_seconds - 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_duration_counts_only_the_frames_present() {
        let cut = check_wav_header(&wav(16_000, 16_000, 4_000)).unwrap();
        assert!((cut.duration_seconds - 0.25).abs() < 1e-9);
        // A streamed file: the header promises far more data.
        let mut streamed = wav(16_000, 1_600, 1_600);
        streamed[40..44].copy_from_slice(&0x7FFF_FFFEu32.to_le_bytes());
        let info = check_wav_header(&streamed).unwrap();
        assert!((info.duration_seconds - 0.1).abs() < 1e-9, "{info:?}");
    }

    #[test]
    fn other_bytes_get_a_reason() {
        assert_eq!(reason(b""), "it is empty");
        assert_eq!(reason(b"hello there\n"), "it looks like text");
        assert_eq!(reason(b"ID3\x04\0\0\0\0"), "it looks like MP3 audio");
        assert_eq!(reason(&[0xFF, 0xFB, 0x90, 0x00]), "it looks like MP3 audio");
        assert_eq!(reason(b"OggS\0\x02"), "it looks like Ogg audio");
        assert_eq!(reason(b"fLaC\0\0\0\x22"), "it looks like FLAC audio");
        assert_eq!(
            reason(b"\0\0\0\x20ftypM4A \0\0\0\0"),
            "it looks like MP4/M4A media"
        );
        assert_eq!(
            reason(&[0x00, 0xFF, 0xFE, 0x80, 0x81]),
            "it does not start with a RIFF/WAVE header"
        );
        // Too short to hold the WAVE tag: judged by what it looks like.
        assert_eq!(reason(b"RIFF"), "it looks like text");
    }

    #[test]
    fn a_riff_wave_start_with_a_bad_header_says_so() {
        assert!(reason(b"RIFF\x04\0\0\0WAVEjunk").starts_with("its WAV header cannot be read"));
        assert!(reason(b"RIFF\0\0\0\0WAVEjunk").starts_with("its WAV header cannot be read"));
    }

    #[test]
    fn text_cut_inside_a_character_is_still_text() {
        let mut long = "é".repeat(300).into_bytes();
        long.truncate(511);
        assert_eq!(sniff_audio(&long), AudioKind::Text);
        assert_eq!(sniff_audio(b"a\0b"), AudioKind::Unknown);
    }
}
