//! The agent's voice: its answer cut into sentences as the model writes
//! it, each synthesized as soon as it is whole, and played at real-time
//! pace so what was heard is known to the sample.
//!
//! Rules: a sentence ends at `.`, `!`, `?` or `;` followed by white space,
//! or at a line break; the first piece of an answer also ends at its first
//! clause, a `,` or `:` followed by white space after a word, so the agent
//! starts speaking before a long first sentence is whole (a reply's
//! "Yes," or "Well," is said while the rest is synthesized). What is left
//! when the answer ends is the last sentence. Sentences are synthesized one after another through the
//! synthesis router (its offline check first) on a task of their own, the
//! next while the one before plays, so sentences follow each other
//! without a gap when synthesis is faster than speech. Audio goes out in
//! 20 ms frames of 16 kHz mono, one frame per 20 ms of the clock, without
//! the synthesizer's silence around each piece beyond 40 ms before and
//! 160 ms after it (Kokoro-82M pads a piece with about a second), so a
//! stop takes effect within one frame (and cancels the synthesis under
//! way). What was played is the sentences played to their end and, of
//! the sentence cut short, its words in proportion to the part of its
//! audio that was played.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_core::CancellationToken;
use oscova_core::provider::speech::{SpeechProviderConfig, SynthesisRequest};
use oscova_speech::SpeechRouters;
use oscova_speech::wav::decode_wav;
use tokio::sync::mpsc;

use super::{VoiceEvent, VoiceOutput};

/// Samples per output frame: 20 ms at 16 kHz.
pub(super) const FRAME: usize = 320;
const FRAME_TIME: Duration = Duration::from_millis(20);

/// Splits text as it streams into whole sentences (the first piece at
/// its first clause).
#[derive(Debug, Default)]
pub(super) struct Sentences {
    pending: String,
    /// Pieces cut so far.
    cut: usize,
}

impl Sentences {
    /// Adds `delta`; returns the sentences it completed.
    pub(super) fn push(&mut self, delta: &str) -> Vec<String> {
        self.pending.push_str(delta);
        let mut done = Vec::new();
        loop {
            let chars: Vec<(usize, char)> = self.pending.char_indices().collect();
            let first = self.cut == 0;
            let cut = chars.windows(2).find_map(|pair| {
                let ((_, c), (next_at, next)) = (pair[0], pair[1]);
                let ends = matches!(c, '.' | '!' | '?' | ';') && next.is_whitespace();
                let clause = first
                    && matches!(c, ',' | ':')
                    && next.is_whitespace()
                    && self.pending[..next_at].chars().any(char::is_alphanumeric);
                (ends || clause || c == '\n').then_some(next_at)
            });
            let Some(at) = cut else { break };
            let sentence = self.pending[..at].trim().to_owned();
            self.pending = self.pending[at..].to_owned();
            if !sentence.is_empty() {
                self.cut += 1;
                done.push(sentence);
            }
        }
        done
    }

    /// What is left, as the last sentence.
    pub(super) fn finish(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.pending);
        let rest = rest.trim();
        (!rest.is_empty()).then(|| rest.to_owned())
    }
}

/// What the speaker played so far.
#[derive(Debug, Default, Clone)]
pub(super) struct Played {
    /// Sentences played to their end, joined by spaces.
    pub(super) text: String,
    /// The sentence playing now, and how much of its audio was played.
    current: Option<(String, usize, usize)>,
}

impl Played {
    /// What was heard: whole sentences, then the words of the one cut
    /// short in proportion to its audio played.
    pub(super) fn heard(&self) -> String {
        let mut heard = self.text.clone();
        if let Some((sentence, played, total)) = &self.current {
            let words: Vec<&str> = sentence.split_whitespace().collect();
            let n = if *total == 0 {
                0
            } else {
                (words.len() * played).div_euclid(*total)
            };
            if n > 0 {
                if !heard.is_empty() {
                    heard.push(' ');
                }
                heard.push_str(&words[..n].join(" "));
            }
        }
        heard
    }
}

/// A running speaker: give it sentences, then `close`; `stop` cuts it off.
pub(super) struct Speaker {
    sentences: mpsc::UnboundedSender<String>,
    stop: CancellationToken,
    played: Arc<Mutex<Played>>,
    done: tokio::task::JoinHandle<()>,
}

impl Speaker {
    /// Starts speaking through `routers`' synthesis router with `config`, sending frames and
    /// events to `output`.
    pub(super) fn start(
        routers: Arc<SpeechRouters>,
        config: SpeechProviderConfig,
        offline: bool,
        output: mpsc::Sender<VoiceOutput>,
    ) -> Self {
        let (sentences, rx) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        let played = Arc::new(Mutex::new(Played::default()));
        let done = tokio::spawn(speak(
            routers,
            config,
            offline,
            rx,
            output,
            stop.clone(),
            played.clone(),
        ));
        Self {
            sentences,
            stop,
            played,
            done,
        }
    }

    /// Queues a sentence.
    pub(super) fn say(&self, sentence: String) {
        let _ = self.sentences.send(sentence);
    }

    /// No more sentences: the speaker ends after the last one.
    pub(super) fn close(&mut self) {
        let (closed, _) = mpsc::unbounded_channel();
        self.sentences = closed;
    }

    /// Whether it has played everything it was given and was closed.
    pub(super) fn is_finished(&self) -> bool {
        self.done.is_finished()
    }

    /// Stops it now; what was heard.
    pub(super) async fn stop(self) -> String {
        self.stop.cancel();
        let _ = self.done.await;
        let played = self.played.lock().unwrap_or_else(|p| p.into_inner());
        played.heard()
    }

    /// Waits for the end of the last sentence; what was heard.
    pub(super) async fn finished(self) -> String {
        let _ = self.done.await;
        let played = self.played.lock().unwrap_or_else(|p| p.into_inner());
        played.heard()
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

async fn speak(
    routers: Arc<SpeechRouters>,
    config: SpeechProviderConfig,
    offline: bool,
    sentences: mpsc::UnboundedReceiver<String>,
    output: mpsc::Sender<VoiceOutput>,
    stop: CancellationToken,
    played: Arc<Mutex<Played>>,
) {
    // One sentence synthesized ahead of the one playing, and the next
    // under way.
    let (ready, mut synthesized) = mpsc::channel(1);
    let _synthesizing = AbortOnDrop(tokio::spawn(synthesize(
        routers,
        config,
        offline,
        sentences,
        output.clone(),
        stop.clone(),
        ready,
    )));
    let mut clock = tokio::time::interval(FRAME_TIME);
    clock.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let (sentence, samples): (String, Vec<i16>) = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            next = synthesized.recv() => match next {
                Some(next) => next,
                None => return,
            },
        };
        let total = samples.len();
        set_current(&played, Some((sentence.clone(), 0, total)));
        for (i, frame) in samples.chunks(FRAME).enumerate() {
            tokio::select! {
                biased;
                () = stop.cancelled() => return,
                _ = clock.tick() => {}
            }
            if output
                .send(VoiceOutput::Audio(frame.to_vec()))
                .await
                .is_err()
            {
                return;
            }
            let done = ((i + 1) * FRAME).min(total);
            set_current(&played, Some((sentence.clone(), done, total)));
        }
        let mut p = played.lock().unwrap_or_else(|p| p.into_inner());
        if !p.text.is_empty() {
            p.text.push(' ');
        }
        p.text.push_str(&sentence);
        p.current = None;
    }
}

/// Synthesizes the sentences in order, handing each one's samples to the
/// player; a sentence that fails is reported and skipped.
async fn synthesize(
    routers: Arc<SpeechRouters>,
    config: SpeechProviderConfig,
    offline: bool,
    mut sentences: mpsc::UnboundedReceiver<String>,
    output: mpsc::Sender<VoiceOutput>,
    stop: CancellationToken,
    ready: mpsc::Sender<(String, Vec<i16>)>,
) {
    loop {
        let sentence = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            next = sentences.recv() => match next {
                Some(sentence) => sentence,
                None => return,
            },
        };
        let request = SynthesisRequest::new(&config, &sentence)
            .offline(offline)
            .cancel(stop.clone());
        let audio = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            audio = routers.synthesis().synthesize(request) => audio,
        };
        let samples = match audio.map_err(|e| e.to_string()).and_then(|a| {
            decode_wav(&a.wav)
                .map(|pcm| trim_silence(pcm.samples))
                .map_err(|e| e.to_string())
        }) {
            Ok(samples) => samples,
            Err(error) => {
                tracing::warn!(%error, "a sentence could not be synthesized; it is skipped");
                let _ = output
                    .send(VoiceOutput::Event(VoiceEvent::SpeechFailed {
                        sentence,
                        error,
                    }))
                    .await;
                continue;
            }
        };
        let handed = tokio::select! {
            biased;
            () = stop.cancelled() => return,
            sent = ready.send((sentence, samples)) => sent,
        };
        if handed.is_err() {
            return;
        }
    }
}

/// A sample at or above this (about -40 dBFS) is sound, not silence.
const SOUND: u16 = 330;
/// Silence kept before a piece's first sound: 40 ms.
const LEAD: usize = 640;
/// Silence kept after a piece's last sound: 160 ms, the gap between two
/// pieces.
const TAIL: usize = 2_560;

/// `samples` without the silence a synthesizer put around the speech
/// beyond [`LEAD`] before and [`TAIL`] after it (Kokoro-82M puts about
/// 0.4 s before a piece and 0.5 s after); nothing when it is all silence.
fn trim_silence(mut samples: Vec<i16>) -> Vec<i16> {
    let loud = |s: &i16| s.unsigned_abs() >= SOUND;
    let Some(first) = samples.iter().position(loud) else {
        return Vec::new();
    };
    let last = samples.iter().rposition(loud).unwrap_or(first);
    samples.truncate((last + 1 + TAIL).min(samples.len()));
    samples.drain(..first.saturating_sub(LEAD));
    samples
}

fn set_current(played: &Mutex<Played>, current: Option<(String, usize, usize)>) {
    played.lock().unwrap_or_else(|p| p.into_inner()).current = current;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_cut_as_the_text_streams() {
        let mut s = Sentences::default();
        assert!(s.push("Hello there").is_empty());
        assert_eq!(s.push(". How are"), ["Hello there."]);
        assert_eq!(s.push(" you? I'm fine, 3.5 times"), ["How are you?"]);
        assert!(s.push(" over").is_empty());
        assert_eq!(s.push("\nNext"), ["I'm fine, 3.5 times over"]);
        assert_eq!(s.finish().as_deref(), Some("Next"));
        assert_eq!(s.finish(), None);
    }

    #[test]
    fn the_first_piece_ends_at_its_first_clause() {
        let mut s = Sentences::default();
        assert!(s.push("Yes").is_empty());
        assert_eq!(s.push(", I heard you all, every word, and"), ["Yes,"]);
        // Only the first piece is cut at a clause.
        assert!(s.push(" then, as you said,").is_empty());
        assert_eq!(
            s.push(" we went. Next"),
            ["I heard you all, every word, and then, as you said, we went."]
        );
        // No word before the comma: no clause.
        let mut c = Sentences::default();
        assert!(c.push("- , and so").is_empty());
        // A number's comma is no clause.
        let mut n = Sentences::default();
        assert!(n.push("It costs 3,500 dollars in all").is_empty());
        assert_eq!(n.finish().as_deref(), Some("It costs 3,500 dollars in all"));
    }

    #[test]
    fn a_piece_is_played_without_the_silence_around_it() {
        let mut samples = vec![0i16; 6_400];
        samples.extend([5, -20, 4_000, -9_000, 300, 12_000, 7]);
        samples.extend(vec![3i16; 8_000]);
        let trimmed = trim_silence(samples);
        assert_eq!(trimmed.len(), LEAD + 4 + TAIL);
        assert_eq!(trimmed[LEAD..LEAD + 4], [4_000, -9_000, 300, 12_000]);
        // Little silence is kept as it is.
        assert_eq!(trim_silence(vec![0, 500, 0]), [0, 500, 0]);
        assert!(trim_silence(vec![0; 3_200]).is_empty());
        assert!(trim_silence(Vec::new()).is_empty());
    }

    #[test]
    fn what_was_heard_counts_the_words_of_the_part_played() {
        let mut played = Played {
            text: "One two.".to_owned(),
            current: Some(("Three four five six.".to_owned(), 50, 100)),
        };
        assert_eq!(played.heard(), "One two. Three four");
        played.current = Some(("Seven eight.".to_owned(), 10, 100));
        assert_eq!(played.heard(), "One two.");
    }
}
