//! Recognizing a turn, speculatively from its first pause.
//!
//! Rules: the loop keeps the recent input audio (the turn under way, and
//! a few seconds before one). When the person pauses (speech stopped) and
//! the turn did not end with it (Smart Turn judged it unfinished and waits
//! for more silence), the turn so far is recognized on a task of its own
//! (a guess), one guess at a time. If the turn then ends where that pause
//! began, its transcript is the guess's, so a turn that ends on the
//! longer silence is heard as soon as it ends; if the person speaks again
//! the guess is cancelled and the turn is recognized whole when it ends,
//! from the turn-taking's own audio.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use oscova_core::CancellationToken;
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
    cancel: CancellationToken,
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
    /// A pause to guess at (where it began), once no guess runs.
    pending: Option<Duration>,
    guess: Option<Guess>,
    /// A cancelled guess still finishing its step.
    stale: Option<tokio::task::JoinHandle<Result<Transcript, SpeechError>>>,
}

fn sample(at: Duration) -> u64 {
    (at.as_micros() as u64 * RATE) / 1_000_000
}

/// Recognizes the 16 kHz mono `audio` through `routers`.
async fn recognize(
    routers: &SpeechRouters,
    options: &VoiceOptions,
    audio: &[f32],
    cancel: CancellationToken,
) -> Result<Transcript, SpeechError> {
    let wav = encode_wav(&Pcm16kMono {
        samples: audio
            .iter()
            .map(|s| (s.clamp(-1.0, 1.0) * 32767.0).round() as i16)
            .collect(),
    });
    let request = RecognitionRequest::new(&options.recognition, &wav)
        .offline(options.offline)
        .cancel(cancel);
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

    /// The person paused, their last voiced frame ending `at`: the turn
    /// so far is to be guessed at, unless it ends now.
    pub(super) fn paused(&mut self, at: Duration) {
        self.drop_guess();
        self.pending = self.turn.map(|_| at);
    }

    /// Starts the pending guess, once no cancelled one still runs.
    pub(super) fn guess(&mut self, routers: &Arc<SpeechRouters>, options: &VoiceOptions) {
        if self.stale.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        self.stale = None;
        let (Some(at), Some(turn)) = (self.pending.take(), self.turn) else {
            return;
        };
        let pre_roll = sample(options.turn.pre_roll);
        let from = turn.saturating_sub(pre_roll).max(self.base) - self.base;
        let to = ((sample(at) + TAIL).saturating_sub(self.base) as usize).min(self.audio.len());
        if from as usize >= to {
            return;
        }
        let audio: Vec<f32> = self.audio.range(from as usize..to).copied().collect();
        let routers = routers.clone();
        let options = options.clone();
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        let task = tokio::spawn(async move { recognize(&routers, &options, &audio, token).await });
        self.guess = Some(Guess {
            at,
            began: Instant::now(),
            cancel,
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
        self.pending = None;
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
            guess.cancel.cancel();
        }
        let began = Instant::now();
        let result = recognize(routers, options, audio, CancellationToken::new()).await;
        (result, began.elapsed())
    }

    fn drop_guess(&mut self) {
        self.pending = None;
        if let Some(guess) = self.guess.take() {
            guess.cancel.cancel();
            self.stale = Some(guess.task);
        }
    }
}

impl Drop for Hearing {
    fn drop(&mut self) {
        self.drop_guess();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use oscova_core::prelude::*;
    use oscova_core::provider::speech::{SpeechProviderConfig, SpeechRecognitionProvider};
    use oscova_core::provider::{BoxFuture, ProviderTypeKey};

    use super::*;

    /// Hears how many samples it was given; keeps each request's token.
    #[derive(Clone, Default)]
    struct Counting(Arc<Mutex<Vec<CancellationToken>>>);

    impl SpeechRecognitionProvider for Counting {
        fn type_key(&self) -> ProviderTypeKey {
            "counting".into()
        }
        fn display_name(&self) -> &str {
            "Counting"
        }
        fn default_is_local_endpoint(&self) -> bool {
            true
        }
        fn recognize<'a>(
            &'a self,
            request: RecognitionRequest<'a>,
        ) -> BoxFuture<'a, Result<Transcript, SpeechError>> {
            Box::pin(async move {
                self.0.lock().unwrap().push(request.cancel.clone());
                let pcm = oscova_speech::wav::decode_wav(request.audio)
                    .map_err(|e| SpeechError::InvalidAudio(e.to_string()))?;
                Ok(Transcript {
                    text: pcm.samples.len().to_string(),
                    segments: Vec::new(),
                })
            })
        }
    }

    #[plugin(id = "test.counting")]
    #[derive(Default)]
    struct CountingPlugin(Counting);

    impl AgentPlugin for CountingPlugin {
        fn configure(&self, builder: &mut AgentPluginBuilder) {
            let counting = self.0.clone();
            builder.add_speech_recognition_provider(move |_: &ProviderContext| counting.clone());
        }
    }

    fn setup() -> (Counting, Arc<SpeechRouters>, VoiceOptions) {
        let counting = Counting::default();
        let host = PluginHost::builder()
            .no_linked_plugins()
            .plugin_instance(CountingPlugin(counting.clone()))
            .build()
            .unwrap();
        let routers = Arc::new(SpeechRouters::from_host(&host));
        let options = VoiceOptions::default()
            .with_recognition(SpeechProviderConfig::new("counting"))
            .with_offline(true);
        (counting, routers, options)
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[tokio::test]
    async fn a_turn_that_ends_at_its_pause_is_heard_from_the_guess() {
        let (counting, routers, options) = setup();
        let mut hearing = Hearing::default();
        hearing.push(&vec![0.1; 16_000]);
        hearing.started(ms(400));
        hearing.push(&vec![0.1; 8_000]);
        hearing.paused(ms(1_000));
        hearing.guess(&routers, &options);
        // The turn-taking's audio differs: the transcript is the guess's,
        // from 300 ms of pre-roll to the frame after the pause began.
        let (heard, _) = hearing
            .ended(ms(1_000), &[0.0; 100], &routers, &options)
            .await;
        assert_eq!(heard.unwrap().text, (16_000 + 512 - 1_600).to_string());
        assert_eq!(counting.0.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn speech_after_the_pause_cancels_the_guess() {
        let (counting, routers, options) = setup();
        let mut hearing = Hearing::default();
        hearing.started(ms(0));
        hearing.push(&vec![0.1; 16_000]);
        hearing.paused(ms(1_000));
        hearing.guess(&routers, &options);
        // The guess reaches the recognizer.
        tokio::task::yield_now().await;
        hearing.started(ms(1_200));
        hearing.push(&vec![0.1; 16_000]);
        let (heard, _) = hearing
            .ended(ms(1_900), &[0.0; 100], &routers, &options)
            .await;
        assert_eq!(heard.unwrap().text, "100");
        let tokens = counting.0.lock().unwrap();
        assert_eq!(tokens.len(), 2, "the guess, then the whole turn");
        assert!(tokens[0].is_cancelled() && !tokens[1].is_cancelled());
    }

    #[tokio::test]
    async fn a_turn_that_ends_elsewhere_is_heard_whole_and_no_guess_waits_for_none() {
        let (counting, routers, options) = setup();
        let mut hearing = Hearing::default();
        // A pause with no turn under way guesses nothing.
        hearing.paused(ms(100));
        hearing.guess(&routers, &options);
        hearing.started(ms(200));
        hearing.push(&vec![0.1; 16_000]);
        // The turn ends with its pause, before a guess started.
        hearing.paused(ms(900));
        let (heard, _) = hearing
            .ended(ms(900), &[0.0; 320], &routers, &options)
            .await;
        assert_eq!(heard.unwrap().text, "320");
        assert_eq!(counting.0.lock().unwrap().len(), 1);
        // Before a turn, only the last few seconds are kept.
        hearing.push(&vec![0.0; 16_000 * 10]);
        assert_eq!(hearing.audio.len(), sample(KEPT) as usize);
    }
}
