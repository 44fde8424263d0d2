//! The read-speech clips of Debian's `pocketsphinx-testdata` (five LibriVox
//! sentences of "Sense and Sensibility", 24.7 s in all, 16 kHz mono 16-bit
//! WAV), with their reference transcriptions; the clips joined into audio
//! longer than Whisper's 30-second window; and the word-error scoring the
//! recognition tests use.
//!
//! `scripts/ensure-system-packages.sh` installs the package; a test that
//! finds it missing panics saying so.

use crate::text::{word_errors, words};

/// Where `pocketsphinx-testdata` installs the clips.
pub const DIR: &str = "/usr/share/pocketsphinx/test/data/librivox";

/// The clips' sample rate.
pub const SAMPLE_RATE: u32 = 16_000;

/// One clip: its id, WAV bytes and reference words.
#[derive(Debug, Clone)]
pub struct Clip {
    /// The clip's id (its file name without `.wav`).
    pub id: String,
    /// The WAV file's bytes.
    pub wav: Vec<u8>,
    /// What is said, lowercase, as the package transcribes it.
    pub reference: String,
}

/// The five clips, in the order of the package's `transcription` file.
pub fn clips() -> Vec<Clip> {
    let transcription =
        std::fs::read_to_string(format!("{DIR}/transcription")).unwrap_or_else(|e| {
            panic!(
                "{DIR}/transcription: {e}; install the Debian package pocketsphinx-testdata \
             (scripts/ensure-system-packages.sh does)"
            )
        });
    transcription
        .lines()
        .filter_map(|line| {
            // `<s> words </s> (id)`
            let (text, id) = line.rsplit_once(" (")?;
            let id = id.trim_end_matches(')').to_owned();
            let reference = text
                .replace("<s>", "")
                .replace("</s>", "")
                .trim()
                .to_owned();
            let wav = std::fs::read(format!("{DIR}/{id}.wav")).ok()?;
            Some(Clip { id, wav, reference })
        })
        .collect()
}

/// Clips joined end to end into one recording.
#[derive(Debug, Clone)]
pub struct Joined {
    /// The recording as a 16 kHz mono 16-bit WAV file.
    pub wav: Vec<u8>,
    /// What is said in it, the clips' references in order.
    pub reference: String,
    /// Its length in seconds.
    pub seconds: f64,
}

/// The clips, in order and then again from the first, joined until the
/// recording lasts at least `min_seconds` (whole clips only): 40.1 s for
/// `35.0`, the five clips and the first three again.
///
/// ```no_run
/// let long = oscova_test_support::librivox::joined(35.0);
/// assert!(long.seconds > 35.0 && long.seconds < 45.0);
/// ```
pub fn joined(min_seconds: f64) -> Joined {
    let clips = clips();
    assert!(!clips.is_empty(), "no clips in {DIR}");
    let mut samples: Vec<u8> = Vec::new();
    let mut reference = Vec::new();
    for clip in clips.iter().cycle() {
        if samples.len() as f64 / 2.0 / f64::from(SAMPLE_RATE) >= min_seconds {
            break;
        }
        samples.extend_from_slice(pcm(&clip.wav));
        reference.push(clip.reference.as_str());
    }
    Joined {
        wav: wav(&samples),
        reference: reference.join(" "),
        seconds: samples.len() as f64 / 2.0 / f64::from(SAMPLE_RATE),
    }
}

/// The bytes of a WAV file's `data` chunk (the clips are PCM, so these
/// are its samples).
fn pcm(wav: &[u8]) -> &[u8] {
    assert!(wav.len() >= 12 && &wav[..4] == b"RIFF" && &wav[8..12] == b"WAVE");
    let mut at = 12;
    while at + 8 <= wav.len() {
        let id = &wav[at..at + 4];
        let size = u32::from_le_bytes([wav[at + 4], wav[at + 5], wav[at + 6], wav[at + 7]]);
        let size = usize::try_from(size).unwrap();
        if id == b"data" {
            return &wav[at + 8..(at + 8 + size).min(wav.len())];
        }
        at += 8 + size + size % 2;
    }
    panic!("a clip has no data chunk");
}

/// A 16 kHz mono 16-bit WAV file of `data` (little-endian samples).
fn wav(data: &[u8]) -> Vec<u8> {
    let len = u32::try_from(data.len()).unwrap();
    let mut out = Vec::with_capacity(44 + data.len());
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&SAMPLE_RATE.to_le_bytes());
    out.extend_from_slice(&(SAMPLE_RATE * 2).to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(data);
    out
}

/// The words of an English transcript, normalised for scoring as
/// Whisper's own evaluation does in spirit: case, punctuation and hyphens
/// set aside, and the spoken forms of abbreviations Whisper writes
/// ("Mr." for "mister").
///
/// ```
/// use oscova_test_support::librivox::normalised;
///
/// assert_eq!(normalised("Mr. Dashwood's ill-disposed"), ["mister", "dashwood's", "ill", "disposed"]);
/// ```
pub fn normalised(text: &str) -> Vec<String> {
    words(&text.replace('-', " "))
        .into_iter()
        .map(|w| match w.as_str() {
            "mr" => "mister".to_owned(),
            "mrs" => "missus".to_owned(),
            "dr" => "doctor".to_owned(),
            _ => w,
        })
        .collect()
}

/// Word errors of `heard` against `reference`, and the reference's length.
///
/// ```
/// use oscova_test_support::librivox::score;
///
/// assert_eq!(score("he was not an ill disposed young man", "He was not an ill-disposed man."), (1, 8));
/// ```
pub fn score(reference: &str, heard: &str) -> (usize, usize) {
    let reference = normalised(reference);
    (word_errors(&reference, &normalised(heard)), reference.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wav_written_here_reads_back() {
        let data: Vec<u8> = (0..100u8).collect();
        let file = wav(&data);
        assert_eq!(file.len(), 144);
        assert_eq!(pcm(&file), &data[..]);
    }
}
