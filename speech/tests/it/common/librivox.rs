//! The read-speech clips of Debian's `pocketsphinx-testdata` (five LibriVox
//! sentences of "Sense and Sensibility", 24.7 s in all, 16 kHz mono), with
//! their reference transcriptions, and the word-error scoring the WER
//! tests use.

use oscova_test_support::text::{word_errors, words};

/// Where `pocketsphinx-testdata` installs the clips.
pub const DIR: &str = "/usr/share/pocketsphinx/test/data/librivox";

/// One clip: its id, WAV bytes and reference words.
pub struct Clip {
    pub id: String,
    pub wav: Vec<u8>,
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

/// The words of an English transcript, normalised for scoring as
/// Whisper's own evaluation does in spirit: case, punctuation and hyphens
/// set aside, and the spoken forms of abbreviations Whisper writes
/// ("Mr." for "mister").
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
pub fn score(reference: &str, heard: &str) -> (usize, usize) {
    let reference = normalised(reference);
    (word_errors(&reference, &normalised(heard)), reference.len())
}
