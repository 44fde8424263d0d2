//! Recognizing a turn, speculatively from the moment the person goes quiet.
//!
//! Rules: the loop keeps the recent input audio (the turn under way, and
//! a few seconds before one). When the person goes quiet (the turn-taking's
//! `Quiet`, a short silence before it counts as a pause), the turn so far
//! is recognized on a task of its own (a guess), one guess at a time; a
//! pause (speech stopped) the turn did not end at starts one too, unless
//! one runs for it already. If the turn then ends where that silence
//! began, its transcript is the guess's, so the recognition overlaps the
//! silence that ends the turn (and Smart Turn's verdict); if the person
//! speaks again the guess is cancelled and the turn is recognized whole
//! when it ends, from the turn-taking's own audio.
//!
//! With `VoiceOptions::partials`, while the person speaks, the turn's
//! audio (from its pre-roll) is also fed to a recognition stream opened at its start, for partial
//! transcripts (best effort: a stream that cannot open or fails only
//! means no partials). Feeding stops at a pause, so a guess never shares
//! the recognizer with a stream step decoding silence, and goes on from
//! where it stopped if the person speaks again. At the turn's end the
//! stream is cancelled (a decode under way stops within whisper.cpp's
//! next step, so the recognizer is free for the final): whisper's stream hears its whole window
//! again at its end (its window is only cut at committed sentence ends,
//! past 15 s), so its final transcript would cost what a one-shot
//! recognition of the turn costs, after any step still in flight.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use oscova_core::CancellationToken;
use oscova_core::provider::speech::{RecognitionRequest, SpeechError, Transcript};
use oscova_speech::SpeechRouters;
use oscova_speech::stream::{PartialTranscript, StreamAudio, StreamEvents, StreamRequest};
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

/// The turn's recognition stream, fed while the person speaks.
struct Listening {
    /// The stream's request token: cancelling it stops a decode under way
    /// (dropping the stream alone would let it run to its end, holding
    /// the recognizer the turn's final recognition waits for).
    cancel: CancellationToken,
    audio: StreamAudio,
    events: StreamEvents,
    /// The input's sample index up to which the stream was fed.
    fed: u64,
    /// The last partial handed out.
    told: Option<(String, String)>,
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
    /// The turn's stream, and whether the person is pausing (not fed).
    stream: Option<Listening>,
    pausing: bool,
}

/// A sample as 16-bit PCM.
fn pcm(sample: f32) -> i16 {
    (sample.clamp(-1.0, 1.0) * 32767.0).round() as i16
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
        samples: audio.iter().map(|s| pcm(*s)).collect(),
    });
    let request = RecognitionRequest::new(&options.recognition, &wav)
        .offline(options.offline)
        .cancel(cancel);
    routers.recognition().recognize(request).await
}

impl Hearing {
    /// Keeps `samples`, the next of the input (and feeds the turn's
    /// stream while the person speaks).
    pub(super) fn push(&mut self, samples: &[f32]) {
        self.audio.extend(samples);
        if self.turn.is_none() {
            let keep = sample(KEPT) as usize;
            let extra = self.audio.len().saturating_sub(keep);
            self.audio.drain(..extra);
            self.base += extra as u64;
        }
        self.feed();
    }

    /// Feeds the stream what it has not had of the input, unless the
    /// person is pausing; a stream that refuses audio is dropped.
    fn feed(&mut self) {
        if self.pausing {
            return;
        }
        let Some(listening) = &mut self.stream else {
            return;
        };
        let from = (listening.fed.max(self.base) - self.base) as usize;
        if from >= self.audio.len() {
            return;
        }
        let frames: Vec<i16> = self.audio.range(from..).map(|s| pcm(*s)).collect();
        listening.fed = self.base + self.audio.len() as u64;
        if let Err(error) = listening.audio.push(&frames) {
            tracing::warn!(%error, "the turn's recognition stream refused audio");
            self.stop_stream();
        }
    }

    /// Speech started (a turn, or the same turn again) at `at`: a guess
    /// made at a pause is stale; a new turn opens its recognition stream
    /// (fed from its pre-roll).
    pub(super) async fn started(
        &mut self,
        at: Duration,
        routers: &SpeechRouters,
        options: &VoiceOptions,
    ) {
        self.drop_guess();
        self.pausing = false;
        if self.turn.is_none() {
            let turn = sample(at);
            self.turn = Some(turn);
            if !options.partials {
                return;
            }
            let request = StreamRequest::new(options.recognition.clone()).offline(options.offline);
            let cancel = request.cancel.clone();
            match routers.recognition().open_stream(request).await {
                Ok(stream) => {
                    let (audio, events) = stream.split();
                    self.stream = Some(Listening {
                        cancel,
                        audio,
                        events,
                        fed: turn.saturating_sub(sample(options.turn.pre_roll)),
                        told: None,
                    });
                }
                Err(error) => {
                    tracing::warn!(%error, "no recognition stream for the turn: no partials");
                }
            }
        }
        self.feed();
    }

    /// The person has been quiet since `at`, their last voiced frame's
    /// end (they may be pausing): the turn so far is to be guessed at;
    /// the stream waits.
    pub(super) fn quiet(&mut self, at: Duration) {
        self.paused(at);
    }

    /// Speech went on after a quiet that was no pause: the guess at it
    /// is stale; the stream goes on.
    pub(super) fn resumed(&mut self) {
        self.drop_guess();
        self.pausing = false;
        self.feed();
    }

    /// The person paused, their last voiced frame ending `at`: the turn
    /// so far is to be guessed at, unless it ends now or a guess at this
    /// pause is under way or pending (from when it was quiet); the stream
    /// waits.
    pub(super) fn paused(&mut self, at: Duration) {
        self.pausing = true;
        if self.pending == Some(at) || self.guess.as_ref().is_some_and(|g| g.at == at) {
            return;
        }
        self.drop_guess();
        self.pending = self.turn.map(|_| at);
    }

    /// The stream's newest partial transcript, if it is new.
    pub(super) fn partial(&mut self) -> Option<PartialTranscript> {
        let listening = self.stream.as_mut()?;
        let partial = listening.events.latest_partial()?;
        let key = (partial.committed.clone(), partial.tentative.clone());
        if listening.told.as_ref() == Some(&key) || partial.text().trim().is_empty() {
            return None;
        }
        listening.told = Some(key);
        Some(partial)
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
        self.pausing = false;
        // Cancelled (see the module's rules).
        self.stop_stream();
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

    /// Cancels the turn's stream, a decode under way with it.
    fn stop_stream(&mut self) {
        if let Some(listening) = self.stream.take() {
            listening.cancel.cancel();
        }
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
        self.stop_stream();
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
        hearing.started(ms(400), &routers, &options).await;
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
    async fn a_guess_begun_when_quiet_is_the_pause_s_and_speech_after_it_cancels_it() {
        let (counting, routers, options) = setup();
        let mut hearing = Hearing::default();
        hearing.started(ms(0), &routers, &options).await;
        hearing.push(&vec![0.1; 24_000]);
        hearing.quiet(ms(1_000));
        hearing.guess(&routers, &options);
        tokio::task::yield_now().await;
        // The pause that follows, with the same end of speech, keeps it.
        hearing.paused(ms(1_000));
        hearing.guess(&routers, &options);
        let (heard, _) = hearing
            .ended(ms(1_000), &[0.0; 100], &routers, &options)
            .await;
        assert_eq!(heard.unwrap().text, (16_000 + 512).to_string());
        assert_eq!(counting.0.lock().unwrap().len(), 1, "one guess");

        // Quiet, then speech again before a pause: the guess is cancelled.
        hearing.started(ms(1_500), &routers, &options).await;
        hearing.push(&vec![0.1; 16_000]);
        hearing.quiet(ms(2_400));
        hearing.guess(&routers, &options);
        tokio::task::yield_now().await;
        hearing.resumed();
        hearing.push(&vec![0.1; 8_000]);
        let (heard, _) = hearing
            .ended(ms(3_000), &[0.0; 200], &routers, &options)
            .await;
        assert_eq!(heard.unwrap().text, "200", "heard whole");
        let tokens = counting.0.lock().unwrap();
        assert_eq!(tokens.len(), 3);
        assert!(tokens[1].is_cancelled() && !tokens[2].is_cancelled());
    }

    #[tokio::test]
    async fn speech_after_the_pause_cancels_the_guess() {
        let (counting, routers, options) = setup();
        let mut hearing = Hearing::default();
        hearing.started(ms(0), &routers, &options).await;
        hearing.push(&vec![0.1; 16_000]);
        hearing.paused(ms(1_000));
        hearing.guess(&routers, &options);
        // The guess reaches the recognizer.
        tokio::task::yield_now().await;
        hearing.started(ms(1_200), &routers, &options).await;
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
        hearing.started(ms(200), &routers, &options).await;
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
