//! Turn-taking over a live stream: when the person starts speaking, pauses,
//! and ends their turn.
//!
//! Rules: audio arrives as 16 kHz mono samples in pieces of any size and is
//! judged in 32 ms frames by Silero VAD ([`SileroVad`]): a frame is voiced
//! at or above the threshold and silent below it minus 0.15 (the package's
//! hysteresis); in between it continues what came before. Speech starts
//! once voiced frames add up to [`TurnOptions::min_speech`] with no silence
//! of 100 ms among them, so a cough, a click or a short "mm-hm" starts
//! nothing (and cannot interrupt the agent); the event carries the time its
//! first voiced frame began. Speech stops after a silence of
//! [`TurnOptions::pause`]; before that, a silence of [`TurnOptions::quiet`]
//! is announced as [`VoiceActivity::Quiet`] (the person may be pausing: a
//! host can start recognizing the turn so far) and speech that goes on
//! after it, before the pause, as [`VoiceActivity::Resumed`]. The turn
//! then ends by the host's rule
//! ([`TurnEnd`]): a fixed silence, or Smart Turn's verdict at each pause,
//! with a longer silence ending a turn it judged incomplete. Smart Turn
//! hears the turn up to its last voiced frame, so its verdict does not
//! wait for the pause: it is asked one frame after the `Quiet` and kept
//! for the pause, unless the person spoke again in between (then the turn
//! is judged afresh at the pause). Speech that
//! resumes before the end continues the same turn. A turn's audio runs from
//! [`TurnOptions::pre_roll`] before its first voiced frame to its last one
//! (plus one frame), so recognition hears the whole of it. Times count
//! samples from the stream's start, never the clock, so a recording played
//! faster than real time gives the same events.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use super::turn::SmartTurn;
use super::vad::{FRAME, SileroVad};
use oscova_core::provider::speech::SpeechError;

const RATE: u64 = 16_000;
/// The silence that cuts a run of voiced frames short before it counts as
/// speech.
const CANDIDATE_GAP: Duration = Duration::from_millis(100);
/// How far below the threshold a frame must be to count as silence.
const HYSTERESIS: f32 = 0.15;

/// How a turn's end is decided.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum TurnEnd {
    /// The turn ends after this much silence.
    Silence(Duration),
    /// At each pause (speech stopped), Smart Turn judges the turn so far;
    /// complete (probability above 0.5) ends it there, and a pause that
    /// lasts `max_silence` ends it whatever Smart Turn said.
    SmartTurn {
        /// The silence after which a turn Smart Turn judged incomplete
        /// ends anyway.
        max_silence: Duration,
    },
}

/// The turn-taking settings of one stream (see the module rules).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct TurnOptions {
    /// A frame at or above this speech probability is voiced (0.5).
    pub threshold: f32,
    /// Voiced audio shorter than this is not speech (250 ms).
    pub min_speech: Duration,
    /// The silence after which speech has stopped (240 ms).
    pub pause: Duration,
    /// The silence after which the person may be pausing (64 ms):
    /// [`VoiceActivity::Quiet`]; none when it is not shorter than
    /// [`pause`](Self::pause).
    pub quiet: Duration,
    /// Audio kept before a turn's first voiced frame (300 ms).
    pub pre_roll: Duration,
    /// How the turn ends (Smart Turn, ending an incomplete turn after 2 s
    /// of silence).
    pub end: TurnEnd,
}

impl Default for TurnOptions {
    fn default() -> Self {
        Self {
            threshold: 0.5,
            min_speech: Duration::from_millis(250),
            pause: Duration::from_millis(240),
            quiet: Duration::from_millis(64),
            pre_roll: Duration::from_millis(300),
            end: TurnEnd::SmartTurn {
                max_silence: Duration::from_secs(2),
            },
        }
    }
}

impl TurnOptions {
    /// Sets [`min_speech`](Self::min_speech).
    pub fn with_min_speech(mut self, min_speech: Duration) -> Self {
        self.min_speech = min_speech;
        self
    }

    /// Sets [`pause`](Self::pause).
    pub fn with_pause(mut self, pause: Duration) -> Self {
        self.pause = pause;
        self
    }

    /// Sets [`quiet`](Self::quiet).
    pub fn with_quiet(mut self, quiet: Duration) -> Self {
        self.quiet = quiet;
        self
    }

    /// Sets [`end`](Self::end).
    pub fn with_end(mut self, end: TurnEnd) -> Self {
        self.end = end;
        self
    }

    /// Sets [`threshold`](Self::threshold).
    pub fn with_threshold(mut self, threshold: f32) -> Self {
        self.threshold = threshold;
        self
    }
}

/// What happened in the stream, in order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum VoiceActivity {
    /// The person started (or, within a turn, resumed) speaking; `at` is
    /// when the first voiced frame began.
    SpeechStarted {
        /// Since the stream began.
        at: Duration,
    },
    /// The person has been silent for [`TurnOptions::quiet`] since `at`,
    /// within a turn: they may go on ([`Resumed`](Self::Resumed)) or pause
    /// ([`SpeechStopped`](Self::SpeechStopped) with the same `at`).
    Quiet {
        /// When the last voiced frame ended.
        at: Duration,
    },
    /// After a [`Quiet`](Self::Quiet), before it became a pause, the person
    /// went on speaking.
    Resumed {
        /// When the voiced frame that went on began.
        at: Duration,
    },
    /// The person paused: silence for [`TurnOptions::pause`] since `at`.
    SpeechStopped {
        /// When the last voiced frame ended.
        at: Duration,
    },
    /// The person finished their turn.
    TurnEnded {
        /// When its last voiced frame ended.
        at: Duration,
        /// Its audio (see the module rules), 16 kHz mono.
        audio: Vec<f32>,
        /// Smart Turn's probability that it was complete, when Smart Turn
        /// ended it.
        complete: Option<f32>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No speech.
    Idle,
    /// Voiced frames since `start` (frame index), not yet `min_speech`.
    Candidate { start: u64, voiced: u64, gap: u64 },
    /// Speaking; `turn_start` is the turn's first voiced frame.
    Speaking,
    /// Silent since `since` (frame index); `judged`: Smart Turn was asked
    /// in this pause.
    Paused { since: u64, judged: bool },
}

/// Turn-taking over one stream (see the module rules).
pub struct TurnDetector {
    vad: SileroVad,
    smart_turn: Option<Arc<SmartTurn>>,
    options: TurnOptions,
    pending: Vec<f32>,
    /// Frames judged so far.
    frames: u64,
    voiced: bool,
    phase: Phase,
    /// Smart Turn's probability for the turn as it stood when its last
    /// voiced frame was the one before this frame index (asked in the
    /// silence after a `Quiet`, for the pause).
    early: Option<(u64, f32)>,
    /// Audio before the turn (pre-roll), then the turn's.
    history: VecDeque<f32>,
    turn: Vec<f32>,
    /// The turn's first voiced frame, and the frame after its last.
    turn_start: u64,
    turn_end: u64,
}

impl std::fmt::Debug for TurnDetector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnDetector")
            .field("options", &self.options)
            .field("frames", &self.frames)
            .field("phase", &self.phase)
            .finish_non_exhaustive()
    }
}

fn frames_in(duration: Duration) -> u64 {
    (duration.as_micros() as u64 * RATE).div_ceil(1_000_000 * FRAME as u64)
}

fn time_of(frame: u64) -> Duration {
    Duration::from_micros(frame * FRAME as u64 * 1_000_000 / RATE)
}

impl TurnDetector {
    pub(crate) fn new(
        vad: SileroVad,
        smart_turn: Option<Arc<SmartTurn>>,
        options: TurnOptions,
    ) -> Self {
        Self {
            vad,
            smart_turn,
            options,
            pending: Vec::with_capacity(FRAME),
            frames: 0,
            voiced: false,
            phase: Phase::Idle,
            early: None,
            history: VecDeque::new(),
            turn: Vec::new(),
            turn_start: 0,
            turn_end: 0,
        }
    }

    /// The settings.
    pub fn options(&self) -> &TurnOptions {
        &self.options
    }

    /// How much audio was judged so far.
    pub fn position(&self) -> Duration {
        time_of(self.frames)
    }

    /// Whether the person is speaking now (speech started, not yet
    /// stopped).
    pub fn is_speaking(&self) -> bool {
        self.phase == Phase::Speaking
    }

    /// Judges `samples` (16 kHz mono in [-1, 1], following what came
    /// before) and returns what happened (blocking: about a millisecond of
    /// inference per 32 ms of audio, and a Smart Turn inference in each
    /// silence within a turn that reaches a frame past the `Quiet`).
    pub fn push(&mut self, samples: &[f32]) -> Result<Vec<VoiceActivity>, SpeechError> {
        let mut events = Vec::new();
        let mut rest = samples;
        while !rest.is_empty() {
            let take = (FRAME - self.pending.len()).min(rest.len());
            self.pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.pending.len() == FRAME {
                let mut frame = [0f32; FRAME];
                frame.copy_from_slice(&self.pending);
                self.pending.clear();
                self.frame(&frame, &mut events)?;
            }
        }
        Ok(events)
    }

    /// Ends the stream: a turn in progress ends where its speech did.
    pub fn finish(&mut self) -> Vec<VoiceActivity> {
        let mut events = Vec::new();
        match self.phase {
            Phase::Speaking => {
                self.turn_end = self.frames;
                events.push(VoiceActivity::SpeechStopped {
                    at: time_of(self.turn_end),
                });
                events.push(self.end_turn(None));
            }
            Phase::Paused { .. } => events.push(self.end_turn(None)),
            Phase::Idle | Phase::Candidate { .. } => {}
        }
        self.phase = Phase::Idle;
        events
    }

    fn frame(
        &mut self,
        frame: &[f32; FRAME],
        events: &mut Vec<VoiceActivity>,
    ) -> Result<(), SpeechError> {
        let p = self.vad.probability(frame)?;
        let index = self.frames;
        self.frames += 1;
        if p >= self.options.threshold {
            self.voiced = true;
        } else if p < self.options.threshold - HYSTERESIS {
            self.voiced = false;
        }
        let voiced = self.voiced;
        let min_speech = frames_in(self.options.min_speech).max(1);
        match self.phase {
            Phase::Idle => {
                self.keep_before_turn(frame);
                if voiced {
                    self.phase = Phase::Candidate {
                        start: index,
                        voiced: 1,
                        gap: 0,
                    };
                    self.start_if_long_enough(min_speech, events);
                }
            }
            Phase::Candidate {
                start,
                voiced: n,
                gap,
            } => {
                self.keep_before_turn(frame);
                if voiced {
                    self.phase = Phase::Candidate {
                        start,
                        voiced: n + 1,
                        gap: 0,
                    };
                    self.start_if_long_enough(min_speech, events);
                } else if gap + 1 >= frames_in(CANDIDATE_GAP) {
                    self.phase = Phase::Idle;
                } else {
                    self.phase = Phase::Candidate {
                        start,
                        voiced: n,
                        gap: gap + 1,
                    };
                }
            }
            Phase::Speaking => {
                self.turn.extend_from_slice(frame);
                if voiced {
                    self.turn_end = index + 1;
                } else {
                    self.phase = Phase::Paused {
                        since: index,
                        judged: false,
                    };
                    self.pause_check(index, events)?;
                }
            }
            Phase::Paused { .. } => {
                self.turn.extend_from_slice(frame);
                if voiced {
                    // The same turn goes on.
                    self.turn_end = index + 1;
                    if self.stopped_announced(index) {
                        events.push(VoiceActivity::SpeechStarted { at: time_of(index) });
                    } else if self.quiet_announced(index) {
                        events.push(VoiceActivity::Resumed { at: time_of(index) });
                    }
                    self.phase = Phase::Speaking;
                } else {
                    self.pause_check(index, events)?;
                }
            }
        }
        Ok(())
    }

    /// Whether `SpeechStopped` went out for the pause running at `index`.
    fn stopped_announced(&self, index: u64) -> bool {
        match self.phase {
            Phase::Paused { since, .. } => index - since >= frames_in(self.options.pause),
            _ => false,
        }
    }

    /// Whether `Quiet` went out for the pause running at `index`.
    fn quiet_announced(&self, index: u64) -> bool {
        match self.phase {
            Phase::Paused { since, .. } => {
                let quiet = self.quiet_frames();
                quiet.is_some_and(|quiet| index - since >= quiet)
            }
            _ => false,
        }
    }

    /// The silent frames that make a `Quiet`, if it comes before the pause.
    fn quiet_frames(&self) -> Option<u64> {
        let quiet = frames_in(self.options.quiet).max(1);
        (quiet < frames_in(self.options.pause).max(1)).then_some(quiet)
    }

    fn keep_before_turn(&mut self, frame: &[f32; FRAME]) {
        self.history.extend(frame.iter().copied());
        let keep = frames_in(self.options.pre_roll) as usize * FRAME
            + match self.phase {
                Phase::Candidate { start, .. } => (self.frames - start) as usize * FRAME,
                _ => 0,
            };
        while self.history.len() > keep {
            self.history.pop_front();
        }
    }

    fn start_if_long_enough(&mut self, min_speech: u64, events: &mut Vec<VoiceActivity>) {
        let Phase::Candidate { start, voiced, .. } = self.phase else {
            return;
        };
        if voiced < min_speech {
            return;
        }
        self.turn = self.history.drain(..).collect();
        self.turn_start = start;
        self.turn_end = self.frames;
        self.phase = Phase::Speaking;
        events.push(VoiceActivity::SpeechStarted { at: time_of(start) });
    }

    /// In a pause at frame `index`: announces the stop, asks Smart Turn,
    /// ends the turn when the rule says so.
    fn pause_check(
        &mut self,
        index: u64,
        events: &mut Vec<VoiceActivity>,
    ) -> Result<(), SpeechError> {
        let Phase::Paused { since, judged } = self.phase else {
            return Ok(());
        };
        let silent = index + 1 - since;
        let pause = frames_in(self.options.pause).max(1);
        if Some(silent) == self.quiet_frames() {
            events.push(VoiceActivity::Quiet {
                at: time_of(self.turn_end),
            });
        }
        if silent == pause {
            events.push(VoiceActivity::SpeechStopped {
                at: time_of(self.turn_end),
            });
        }
        match self.options.end {
            TurnEnd::Silence(silence) => {
                if silent >= frames_in(silence).max(pause) {
                    events.push(self.end_turn(None));
                }
            }
            TurnEnd::SmartTurn { max_silence } => {
                // One frame after the `Quiet`, so that event has gone out
                // before the inference.
                let ask_early = self.quiet_frames().is_some_and(|q| silent == q + 1);
                if ask_early
                    && silent < pause
                    && let Some(model) = self.smart_turn.clone()
                {
                    let p = model.probability(self.turn_audio())?;
                    self.early = Some((self.turn_end, p));
                }
                if silent >= pause && !judged {
                    self.phase = Phase::Paused {
                        since,
                        judged: true,
                    };
                    if let Some(model) = self.smart_turn.clone() {
                        let p = match self.early.take() {
                            Some((end, p)) if end == self.turn_end => p,
                            _ => model.probability(self.turn_audio())?,
                        };
                        if p > 0.5 {
                            events.push(self.end_turn(Some(p)));
                            return Ok(());
                        }
                    }
                }
                if silent >= frames_in(max_silence).max(pause) {
                    events.push(self.end_turn(None));
                }
            }
        }
        Ok(())
    }

    /// The turn's audio up to the frame after its last voiced one.
    fn turn_audio(&self) -> &[f32] {
        let pre = self.turn.len() as u64 / FRAME as u64
            - (self.frames - self.turn_start).min(self.turn.len() as u64 / FRAME as u64);
        let frames = pre + (self.turn_end + 1).min(self.frames) - self.turn_start;
        let len = (frames as usize * FRAME).min(self.turn.len());
        &self.turn[..len]
    }

    fn end_turn(&mut self, complete: Option<f32>) -> VoiceActivity {
        let audio = self.turn_audio().to_vec();
        let at = time_of(self.turn_end);
        self.early = None;
        self.turn.clear();
        self.history.clear();
        self.phase = Phase::Idle;
        VoiceActivity::TurnEnded {
            at,
            audio,
            complete,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::voice::VoiceModels;

    /// Smart Turn is asked one frame after the `Quiet`, before the pause,
    /// and the pause ends the turn with that verdict.
    #[test]
    fn smart_turn_is_asked_before_the_pause() {
        let _cores = oscova_test_support::cores::cores_blocking();
        let models = VoiceModels::load().unwrap_or_else(|e| {
            panic!("the voice models are needed: {e} (run scripts/ensure-voice-models.sh)")
        });
        let mut detector = models.detector(TurnOptions::default()).unwrap();
        let clip = &oscova_test_support::librivox::clips()[0];
        let speech: Vec<f32> = crate::wav::decode_wav(&clip.wav)
            .unwrap()
            .samples
            .iter()
            .map(|s| f32::from(*s) / 32768.0)
            .collect();
        let mut audio = vec![0.0; 8_000];
        audio.extend(speech);
        audio.extend(vec![0.0; 16_000 * 3]);
        let quiet = frames_in(detector.options.quiet);
        // Frame by frame: each time Smart Turn is asked, how far into a
        // silence; then the verdict that ended the turn.
        let mut asked = Vec::new();
        let mut verdict = None;
        for frame in audio.chunks_exact(FRAME) {
            let before = detector.early;
            for event in detector.push(frame).unwrap() {
                if let VoiceActivity::TurnEnded { complete, .. } = event {
                    verdict = Some(complete);
                }
            }
            if verdict.is_some() {
                break;
            }
            if detector.early != before
                && let (Some((_, p)), Phase::Paused { since, .. }) =
                    (detector.early, detector.phase)
            {
                asked.push((detector.frames - since, p));
            }
        }
        assert!(!asked.is_empty(), "Smart Turn was asked before the pause");
        assert!(
            asked.iter().all(|(silent, _)| *silent == quiet + 1),
            "asked one frame after the Quiet: {asked:?}"
        );
        let early = asked.last().map(|(_, p)| *p);
        assert_eq!(
            verdict,
            Some(early),
            "the pause ended the turn with the last one"
        );
    }
}
