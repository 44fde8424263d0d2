//! Recognizing a turn, speculatively from its first pause.
//!
//! Rules: the loop keeps the recent input audio (the turn under way, and
//! a few seconds before one). When the person pauses (speech stopped) the
//! turn so far is recognized at once, on a task of its own, while the
//! turn-taking still decides whether the turn is over (Smart Turn judging
//! it unfinished waits for more silence). If the turn then ends where
//! that pause began, its transcript is the one under way, so a turn that
//! ends on the longer silence is heard as soon as it ends; if the person
//! speaks again the guess is dropped and the turn is recognized whole
//! when it ends, from the turn-taking's own audio.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use oscova_core::provider::speech::{RecognitionRequest, SpeechError, Transcript};
use oscova_speech::SpeechRouters;
use oscova_speech::wav::{Pcm16kMono, encode_wav};

use super::VoiceOptions;

const RATE: u64 = 16_000;
/// Audio kept before a turn: more than its pre-roll and the time speech
/// takes to count as speech.
const KEPT: Duration = Duration::from_secs(3);
/// The turn-taking's frame (Silero's 32 ms): a turn's audio runs to the
/// end of the frame after its last voiced one.
const TAIL: u64 = oscova_speech::voice::FRAME as u64;

/// A recognition under way for the turn as it was at a pause.
struct Guess {
    /// Where the pause began.
    at: Duration,
    began: Instant,
    task: tokio::task::JoinHandle<Result<Transcript, SpeechError>>,
}

/// The recent input, and the guess for the turn under way.
#[derive(Default)]
pub(super) struct Hearing {
    audio: VecDeque<f32>,
    /// The stream's sample index of `audio[0]`.
    base: u64,
    /// The turn's first voiced sample.
    turn: Option<u64>,
    guess: Option<Guess>,
}

fn sample(at: Duration) -> u64 {
    (at.as_micros() as u64 * RATE) / 1_000_000
}

/// Recognizes the 16 kHz mono `audio` through `routers`.
async fn recognize(
    routers: &SpeechRouters,
    options: &VoiceOptions,
    audio: &[f32],
) -> Result<Transcript, SpeechError> {
    let wav = encode_wav(&Pcm16kMono {
        samples: audio
            .iter()
            .map(|s| (s.clamp(-1.0, 1.0) * 32767.0).round() as i16)
            .collect(),
    });
    let request = RecognitionRequest::new(&options.recognition, &wav).offline(options.offline);
    routers.recognition().recognize(request).await
}

impl Hearing {
    /// Keeps `samples`, the next of the input.
    pub(super) fn push(&mut self, samples: &[f32]) {
        self.audio.extend(samples);
        if self.turn.is_none() {
            let keep = sample(KEPT) as usize;
            let extra = self.audio.len().saturating_sub(keep);
            self.audio.drain(..extra);
            self.base += extra as u64;
        }
    }

    /// Speech started (a turn, or the same turn again) at `at`: a guess
    /// made at a pause is stale.
    pub(super) fn started(&mut self, at: Duration) {
        self.drop_guess();
        if self.turn.is_none() {
            self.turn = Some(sample(at));
        }
    }

    /// The person paused, their last voiced frame ending `at`: recognize
    /// the turn so far.
    pub(super) fn paused(
        &mut self,
        at: Duration,
        routers: &Arc<SpeechRouters>,
        options: &VoiceOptions,
    ) {
        self.drop_guess();
        let Some(turn) = self.turn else { return };
        let pre_roll = sample(options.turn.pre_roll);
        let from = turn.saturating_sub(pre_roll).max(self.base) - self.base;
        let to = ((sample(at) + TAIL).saturating_sub(self.base) as usize).min(self.audio.len());
        if from as usize >= to {
            return;
        }
        let audio: Vec<f32> = self.audio.range(from as usize..to).copied().collect();
        let routers = routers.clone();
        let options = options.clone();
        let task = tokio::spawn(async move { recognize(&routers, &options, &audio).await });
        self.guess = Some(Guess {
            at,
            began: Instant::now(),
            task,
        });
    }

    /// The turn ended, its speech ending `at`, with `audio`: its
    /// transcript (the guess made at that pause, or `audio` recognized
    /// now), and how long recognizing took.
    pub(super) async fn ended(
        &mut self,
        at: Duration,
        audio: &[f32],
        routers: &SpeechRouters,
        options: &VoiceOptions,
    ) -> (Result<Transcript, SpeechError>, Duration) {
        self.turn = None;
        self.push(&[]);
        if let Some(guess) = self.guess.take() {
            if guess.at == at {
                let result = match guess.task.await {
                    Ok(result) => result,
                    Err(error) => Err(SpeechError::Provider {
                        message: format!("the recognition task stopped: {error}"),
                        source: None,
                    }),
                };
                return (result, guess.began.elapsed());
            }
            guess.task.abort();
        }
        let began = Instant::now();
        let result = recognize(routers, options, audio).await;
        (result, began.elapsed())
    }

    fn drop_guess(&mut self) {
        if let Some(guess) = self.guess.take() {
            guess.task.abort();
        }
    }
}

impl Drop for Hearing {
    fn drop(&mut self) {
        self.drop_guess();
    }
}
