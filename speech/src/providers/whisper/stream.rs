//! Whisper's streaming form: a growing window of the stream's audio,
//! heard again every step, with a stable committed prefix by
//! whisper-streaming's LocalAgreement-2 policy (`crate::stream::Agreement`).
//!
//! Rules: the model is loaded when the stream opens (so a missing model
//! is the open's error, and the first partial waits for no load). The
//! worker is a tokio task: it waits for `stream_step_ms` of new audio
//! (default 1000 ms), takes whatever else has arrived too (a slow machine
//! catches up by hearing more at once, never by queueing steps), and
//! decodes the window on the blocking pool under the provider's decode
//! permits, with the committed text before the window (its last 200
//! characters) as the prompt, its tokens bounded by the window's length
//! and without the temperature fallback but for the last decode (see
//! `Engine::words`). Each decode's words go through the
//! agreement; a partial (committed text, tentative tail) follows every
//! decode. Before a decode the window is cut at the end of the last
//! committed sentence once it is longer than `stream_trim_seconds`
//! (default 15 s), and never left over 30 s (Whisper's window): cut at
//! the last committed word, else the tentative words are committed and
//! cut after, else the oldest audio is dropped. At the audio's end the
//! window is heard once more if anything arrived since its last decode,
//! the tail is committed, and the final transcript is the committed words
//! (segments one per sentence, with times). A cancelled stream stops
//! within whisper.cpp's next step.

use std::sync::Arc;

use oscova_core::CancellationToken;
use oscova_core::provider::speech::{SpeechError, Transcript, TranscriptSegment};

use super::engine::{AudioCtx, Decode, Engine};
use super::error::WhisperFailure;
use super::{Inner, audio_ctx, language, not_installed, threads};
use crate::error::EngineError;
use crate::stream::{
    Agreement, PartialTranscript, RecognitionStream, SAMPLE_RATE, StreamFeed, StreamInput,
    StreamRequest, Word, join_words as joined,
};

/// Whisper's window: no decode hears more than this.
const MAX_WINDOW_SECONDS: f64 = 30.0;
/// The committed text before the window that a decode is prompted with.
const PROMPT_CHARS: usize = 200;

/// How a stream steps and trims, from the configuration's options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Steps {
    /// New audio that starts a decode, in samples.
    step: usize,
    /// Window length from which it is cut at a committed sentence end, in
    /// seconds.
    trim_seconds: f64,
}

impl Steps {
    /// The default step, in milliseconds.
    pub(super) const STEP_MS: u64 = 1000;
    /// The default trimming length, in seconds.
    pub(super) const TRIM_SECONDS: u64 = 15;

    /// `options.stream_step_ms` (100 to 10000) and
    /// `options.stream_trim_seconds` (5 to 28).
    pub(super) fn from_options(
        options: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<Self, SpeechError> {
        let step_ms = ranged(
            options.get("stream_step_ms"),
            "stream_step_ms",
            Self::STEP_MS,
            100,
            10_000,
        )?;
        let trim = ranged(
            options.get("stream_trim_seconds"),
            "stream_trim_seconds",
            Self::TRIM_SECONDS,
            5,
            28,
        )?;
        Ok(Self {
            step: usize::try_from(step_ms * u64::from(SAMPLE_RATE) / 1000).unwrap_or(usize::MAX),
            trim_seconds: trim as f64,
        })
    }
}

fn ranged(
    value: Option<&serde_json::Value>,
    name: &str,
    default: u64,
    low: u64,
    high: u64,
) -> Result<u64, SpeechError> {
    let Some(value) = value else {
        return Ok(default);
    };
    value
        .as_u64()
        .filter(|n| (low..=high).contains(n))
        .ok_or_else(|| {
            SpeechError::provider(format!(
                "the whisper option `{name}` must be an integer from {low} to {high}, not {value}"
            ))
        })
}

/// Opens a stream on `inner`'s model for `request`.
pub(super) async fn open(
    inner: Arc<Inner>,
    request: StreamRequest,
) -> Result<RecognitionStream, SpeechError> {
    let config = &request.config;
    let located = super::model::locate(config.model.as_deref()).map_err(not_installed)?;
    let language = language(config.language.as_deref())?;
    let threads = threads(config.options.get("threads"), inner.threads)?;
    let audio_ctx: AudioCtx = audio_ctx(config.options.get("audio_ctx"))?;
    let steps = Steps::from_options(&config.options)?;
    let loader = Arc::clone(&inner);
    let engine = tokio::task::spawn_blocking(move || loader.engine(&located))
        .await
        .map_err(|source| EngineError::Task { source })??;
    if let Some(code) = language.as_deref().filter(|c| *c != "en")
        && !engine.is_multilingual()
    {
        return Err(WhisperFailure::EnglishOnly {
            model: engine.name().to_owned(),
            language: code.to_owned(),
        }
        .into());
    }
    let decode = Decode {
        threads,
        language,
        audio_ctx,
    };
    let (stream, feed) = RecognitionStream::channel(&request);
    let worker = Worker {
        inner,
        engine,
        decode,
        steps,
        cancel: request.cancel.child_token(),
        window: Vec::new(),
        offset: 0.0,
        fresh: 0,
        heard: 0,
        agreement: Agreement::default(),
    };
    tokio::spawn(worker.run(feed));
    Ok(stream)
}

struct Worker {
    inner: Arc<Inner>,
    engine: Arc<Engine>,
    decode: Decode,
    steps: Steps,
    /// Cancels a running decode when the stream is cancelled.
    cancel: CancellationToken,
    /// The window's samples, in [-1, 1].
    window: Vec<f32>,
    /// Where the window starts, in seconds from the stream's start.
    offset: f64,
    /// Samples that arrived since the last decode.
    fresh: usize,
    /// Samples the stream has had in all.
    heard: usize,
    agreement: Agreement,
}

impl Worker {
    async fn run(mut self, mut feed: StreamFeed) {
        let result = self.hear(&mut feed).await;
        if result.is_err() {
            self.cancel.cancel();
        }
        feed.finish(result);
    }

    async fn hear(&mut self, feed: &mut StreamFeed) -> Result<Transcript, SpeechError> {
        let mut ended = false;
        loop {
            while !ended && self.fresh < self.steps.step {
                ended = self.take(feed.recv().await)?;
            }
            while !ended && let Some(input) = feed.try_recv() {
                ended = self.take(input)?;
            }
            if self.fresh > 0 {
                self.trim();
                let words = self.hear_window(feed, ended).await?;
                self.agreement.insert(words);
            }
            if ended {
                break;
            }
            feed.partial(PartialTranscript {
                committed: joined(self.agreement.committed()),
                tentative: joined(self.agreement.tentative()),
                audio_seconds: self.heard as f64 / f64::from(SAMPLE_RATE),
            });
        }
        if self.heard == 0 {
            return Err(SpeechError::InvalidAudio(
                "the stream ended with no audio; push some speech before finishing".into(),
            ));
        }
        self.agreement.commit_tentative();
        Ok(transcript(self.agreement.committed()))
    }

    /// Takes one input; whether the audio ended.
    fn take(&mut self, input: StreamInput) -> Result<bool, SpeechError> {
        match input {
            StreamInput::Audio(samples) => {
                self.fresh += samples.len();
                self.heard += samples.len();
                self.window
                    .extend(samples.iter().map(|s| f32::from(*s) / 32_768.0));
                Ok(false)
            }
            StreamInput::End => Ok(true),
            StreamInput::Cancelled => Err(SpeechError::Cancelled),
        }
    }

    fn window_seconds(&self) -> f64 {
        self.window.len() as f64 / f64::from(SAMPLE_RATE)
    }

    /// Cuts the window so it starts at `at` (seconds from the stream's
    /// start), if that is inside it.
    fn cut(&mut self, at: f64) {
        if at <= self.offset {
            return;
        }
        let samples = ((at - self.offset) * f64::from(SAMPLE_RATE)) as usize;
        let samples = samples.min(self.window.len());
        self.window.drain(..samples);
        self.offset += samples as f64 / f64::from(SAMPLE_RATE);
    }

    /// The window's trimming (see the module's rules).
    fn trim(&mut self) {
        let end = self.offset + self.window_seconds();
        let start = trimmed_start(
            self.offset,
            end,
            self.steps.trim_seconds,
            &mut self.agreement,
        );
        self.cut(start);
    }

    /// The committed text before the window, its last characters.
    fn prompt(&self) -> String {
        let before: Vec<Word> = self
            .agreement
            .committed()
            .iter()
            .take_while(|w| w.end <= self.offset)
            .cloned()
            .collect();
        let text = joined(&before);
        let mut start = text.len().saturating_sub(PROMPT_CHARS);
        while !text.is_char_boundary(start) {
            start += 1;
        }
        text[start..].to_owned()
    }

    /// Decodes the window; its words with times from the stream's start.
    /// `last`: the audio has ended (the decode may fall back to higher
    /// temperatures, see `Engine::words`).
    async fn hear_window(
        &mut self,
        feed: &StreamFeed,
        last: bool,
    ) -> Result<Vec<Word>, SpeechError> {
        self.fresh = 0;
        let permit = tokio::select! {
            biased;
            () = feed.cancel_token().cancelled() => return Err(SpeechError::Cancelled),
            permit = Arc::clone(&self.inner.permits).acquire_owned() => permit
                .map_err(|_| SpeechError::provider("the whisper provider is shutting down"))?,
        };
        let engine = Arc::clone(&self.engine);
        let decode = self.decode.clone();
        let samples = self.window.clone();
        let prompt = self.prompt();
        let token = self.cancel.clone();
        let task = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            engine.words(&samples, &decode, &prompt, last, &token)
        });
        let words = tokio::select! {
            biased;
            () = feed.cancel_token().cancelled() => {
                self.cancel.cancel();
                return Err(SpeechError::Cancelled);
            }
            joined = task => joined.map_err(|source| EngineError::Task { source })??,
        };
        let offset = self.offset;
        Ok(words
            .into_iter()
            .map(|(text, start, end)| Word {
                text,
                start: offset + start,
                end: offset + end,
            })
            .collect())
    }
}

/// Where a window from `start` to `end` (seconds from the stream's start)
/// should start before its next decode: at the last committed sentence
/// end once it is longer than `trim_seconds`; if it is still over 30 s, at
/// the last committed word, else after the tentative words (committed
/// for it), else its last 30 s.
fn trimmed_start(start: f64, end: f64, trim_seconds: f64, agreement: &mut Agreement) -> f64 {
    let mut start = start;
    if end - start > trim_seconds
        && let Some(sentence) = agreement.last_sentence_end(start)
    {
        start = start.max(sentence.min(end));
    }
    if end - start > MAX_WINDOW_SECONDS {
        start = start.max(agreement.last_end().min(end));
    }
    if end - start > MAX_WINDOW_SECONDS && !agreement.tentative().is_empty() {
        agreement.commit_tentative();
        start = start.max(agreement.last_end().min(end));
    }
    if end - start > MAX_WINDOW_SECONDS {
        start = end - MAX_WINDOW_SECONDS;
    }
    start
}

/// The final transcript: the committed words, one segment per sentence.
fn transcript(words: &[Word]) -> Transcript {
    let mut segments = Vec::new();
    let mut sentence: Vec<Word> = Vec::new();
    for word in words {
        let ends = word.ends_sentence();
        sentence.push(word.clone());
        if ends {
            segments.push(segment(&sentence));
            sentence.clear();
        }
    }
    if !sentence.is_empty() {
        segments.push(segment(&sentence));
    }
    Transcript {
        text: joined(words),
        segments,
    }
}

fn segment(words: &[Word]) -> TranscriptSegment {
    TranscriptSegment {
        start_seconds: words.first().map_or(0.0, |w| w.start),
        end_seconds: words.last().map_or(0.0, |w| w.end),
        text: joined(words),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, json};

    #[test]
    fn steps_come_from_the_options_within_their_ranges() {
        let steps = Steps::from_options(&Map::new()).unwrap();
        assert_eq!(steps.step, 16_000);
        assert_eq!(steps.trim_seconds, 15.0);
        let mut options = Map::new();
        options.insert("stream_step_ms".into(), json!(250));
        options.insert("stream_trim_seconds".into(), json!(8));
        let steps = Steps::from_options(&options).unwrap();
        assert_eq!(steps.step, 4_000);
        assert_eq!(steps.trim_seconds, 8.0);
        for (key, bad) in [
            ("stream_step_ms", json!(50)),
            ("stream_step_ms", json!("500")),
            ("stream_trim_seconds", json!(29)),
            ("stream_trim_seconds", json!(-1)),
        ] {
            let mut options = Map::new();
            options.insert(key.into(), bad.clone());
            let err = Steps::from_options(&options).unwrap_err();
            assert!(err.to_string().contains(key), "{bad}: {err}");
        }
    }

    fn agreement(text: &str, start: f64) -> Agreement {
        let mut a = Agreement::default();
        let words: Vec<Word> = text
            .split_whitespace()
            .enumerate()
            .map(|(i, t)| Word {
                text: t.into(),
                start: start + i as f64,
                end: start + i as f64 + 0.5,
            })
            .collect();
        a.insert(words.clone());
        a.insert(words);
        a
    }

    #[test]
    fn windows_are_cut_at_sentence_ends_and_never_over_30_seconds() {
        // Under the trimming length: kept whole.
        let mut a = agreement("One two. Three", 0.0);
        assert_eq!(trimmed_start(0.0, 14.0, 15.0, &mut a), 0.0);
        // Over it: cut after "two." (1.5 s).
        assert_eq!(trimmed_start(0.0, 16.0, 15.0, &mut a), 1.5);
        // No sentence end: kept, up to 30 s.
        let mut a = agreement("one two three", 0.0);
        assert_eq!(trimmed_start(0.0, 29.0, 15.0, &mut a), 0.0);
        // Over 30 s: cut at the last committed word.
        assert_eq!(trimmed_start(0.0, 31.0, 15.0, &mut a), 2.5);
        // Nothing committed: the tentative words are committed and cut.
        let mut a = Agreement::default();
        a.insert(vec![Word {
            text: "hmm".into(),
            start: 3.0,
            end: 3.5,
        }]);
        assert_eq!(trimmed_start(0.0, 31.0, 15.0, &mut a), 3.5);
        assert_eq!(joined(a.committed()), "hmm");
        // Nothing heard at all: the last 30 s.
        let mut a = Agreement::default();
        assert_eq!(trimmed_start(2.0, 40.0, 15.0, &mut a), 10.0);
        // A window that starts after the committed text stays put.
        let mut a = agreement("Done.", 0.0);
        assert_eq!(trimmed_start(5.0, 25.0, 15.0, &mut a), 5.0);
    }

    #[test]
    fn the_final_transcript_has_a_segment_per_sentence() {
        let w = |text: &str, start: f64| Word {
            text: text.into(),
            start,
            end: start + 0.3,
        };
        let t = transcript(&[
            w("Hello", 0.0),
            w("there.", 0.5),
            w("How", 1.0),
            w("so", 1.5),
        ]);
        assert_eq!(t.text, "Hello there. How so");
        assert_eq!(t.segments.len(), 2);
        assert_eq!(t.segments[0].text, "Hello there.");
        assert_eq!(t.segments[1].start_seconds, 1.0);
        assert!((t.segments[1].end_seconds - 1.8).abs() < 1e-9);
    }
}
