//! Fake model and speech providers: scripted answers, every request
//! recorded.
//!
//! Rules: a fake answers from its script in order and fails, with an error
//! saying so, when the script is used up (a test that expected fewer calls
//! learns it); clones share the script and the record, so a test keeps one
//! clone to look at while the host holds another. A recognizer given
//! progress reports it on every call, in order, before it answers, as a
//! provider that decodes long audio window by window does.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatResponse, ModelError, ModelProvider, ToolCallRequest,
};
use oscova_core::provider::speech::{
    RecognitionProgress, RecognitionRequest, SpeechError, SpeechRecognitionProvider,
    SpeechSynthesisProvider, SynthesisRequest, SynthesizedAudio, Transcript,
};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};
use serde_json::Value;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A chat request as the fake model saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenChat {
    /// The model asked for.
    pub model: String,
    /// The conversation sent.
    pub messages: Vec<ChatMessage>,
    /// The wire names of the tools offered.
    pub tools: Vec<String>,
}

#[derive(Debug, Default)]
struct ModelState {
    replies: VecDeque<ChatResponse>,
    seen: Vec<SeenChat>,
}

/// A model provider that answers from a script.
///
/// ```
/// use oscova_test_kit::FakeModel;
/// use serde_json::json;
///
/// let model = FakeModel::new("fake")
///     .reply_tool_call("acme__search__find", json!({"query": "plans"}))
///     .reply_text("Found two plans.");
/// assert_eq!(model.remaining(), 2);
/// ```
#[derive(Debug, Clone)]
pub struct FakeModel {
    key: &'static str,
    state: Arc<Mutex<ModelState>>,
}

impl FakeModel {
    /// A fake with type key `key` and an empty script.
    pub fn new(key: &'static str) -> Self {
        Self {
            key,
            state: Arc::default(),
        }
    }

    /// Queues an answer of plain text.
    pub fn reply_text(self, text: impl Into<String>) -> Self {
        self.reply(ChatResponse {
            message: ChatMessage::assistant(text, Vec::new()),
            finish_reason: Some("stop".into()),
            usage: None,
        })
    }

    /// Queues an answer that calls tool `name` with `arguments`.
    pub fn reply_tool_call(self, name: impl Into<String>, arguments: Value) -> Self {
        let id = format!("call_{}", self.remaining() + 1);
        self.reply(ChatResponse {
            message: ChatMessage::assistant(
                "",
                vec![ToolCallRequest {
                    id,
                    name: name.into(),
                    arguments,
                }],
            ),
            finish_reason: Some("tool_calls".into()),
            usage: None,
        })
    }

    /// Queues this answer.
    pub fn reply(self, response: ChatResponse) -> Self {
        lock(&self.state).replies.push_back(response);
        self
    }

    /// How many scripted answers are left.
    pub fn remaining(&self) -> usize {
        lock(&self.state).replies.len()
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<SeenChat> {
        lock(&self.state).seen.clone()
    }
}

impl ModelProvider for FakeModel {
    fn type_key(&self) -> ProviderTypeKey {
        self.key.into()
    }

    fn display_name(&self) -> &str {
        "Fake model (oscova-test-kit)"
    }

    fn default_is_local_endpoint(&self) -> bool {
        true
    }

    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let mut state = lock(&self.state);
        state.seen.push(SeenChat {
            model: request.model.to_owned(),
            messages: request.messages.to_vec(),
            tools: request.tools.iter().map(|t| t.name.clone()).collect(),
        });
        let answer = state.replies.pop_front().ok_or_else(|| {
            ModelError::Other(format!(
                "the fake model `{}` has no scripted answer left (request {})",
                self.key,
                state.seen.len()
            ))
        });
        Box::pin(std::future::ready(answer))
    }
}

#[derive(Debug, Default)]
struct SpeechState {
    answers: VecDeque<String>,
    seen: Vec<String>,
    audio_seen: Vec<usize>,
    progress: Vec<RecognitionProgress>,
}

/// A speech recognizer that hears what its script says, whatever the audio.
///
/// ```
/// use oscova_test_kit::FakeRecognizer;
///
/// let ears = FakeRecognizer::new("fake-ears").hears("open the door");
/// assert_eq!(ears.remaining(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct FakeRecognizer {
    key: &'static str,
    state: Arc<Mutex<SpeechState>>,
}

impl FakeRecognizer {
    /// A fake with type key `key` and an empty script.
    pub fn new(key: &'static str) -> Self {
        Self {
            key,
            state: Arc::default(),
        }
    }

    /// Queues a transcript.
    pub fn hears(self, text: impl Into<String>) -> Self {
        lock(&self.state).answers.push_back(text.into());
        self
    }

    /// Reports `seconds_done` of `seconds_total` on every call, in order,
    /// before it answers (to a caller that asked for progress).
    ///
    /// ```
    /// use oscova_test_kit::FakeRecognizer;
    ///
    /// // Two windows of a 40-second recording, then all of it.
    /// let ears = FakeRecognizer::new("fake-ears")
    ///     .reports_progress([0.0, 30.0, 40.0], 40.0)
    ///     .hears("open the door");
    /// # drop(ears);
    /// ```
    pub fn reports_progress(
        self,
        seconds_done: impl IntoIterator<Item = f64>,
        seconds_total: f64,
    ) -> Self {
        lock(&self.state).progress = seconds_done
            .into_iter()
            .map(|done| RecognitionProgress::new(done, seconds_total))
            .collect();
        self
    }

    /// How many scripted transcripts are left.
    pub fn remaining(&self) -> usize {
        lock(&self.state).answers.len()
    }

    /// The size in bytes of every audio it was given, in order.
    pub fn audio_sizes(&self) -> Vec<usize> {
        lock(&self.state).audio_seen.clone()
    }
}

impl SpeechRecognitionProvider for FakeRecognizer {
    fn type_key(&self) -> ProviderTypeKey {
        self.key.into()
    }

    fn display_name(&self) -> &str {
        "Fake recognizer (oscova-test-kit)"
    }

    fn default_is_local_endpoint(&self) -> bool {
        true
    }

    fn recognize<'a>(
        &'a self,
        request: RecognitionRequest<'a>,
    ) -> BoxFuture<'a, Result<Transcript, SpeechError>> {
        let mut state = lock(&self.state);
        state.audio_seen.push(request.audio.len());
        for progress in &state.progress {
            request.report_progress(*progress);
        }
        let answer = match state.answers.pop_front() {
            Some(text) => Ok(Transcript::new(text)),
            None => Err(SpeechError::Provider {
                message: format!(
                    "the fake recognizer `{}` has no scripted transcript left",
                    self.key
                ),
                source: None,
            }),
        };
        Box::pin(std::future::ready(answer))
    }
}

/// A speech synthesizer that speaks silence: a valid 16 kHz mono WAV with
/// 10 ms per character, so a test can check that audio came back and how
/// long it is.
///
/// ```
/// use oscova_test_kit::FakeSynthesizer;
///
/// let wav = FakeSynthesizer::silence_for("hi");
/// assert_eq!(&wav[..4], b"RIFF");
/// assert_eq!(wav.len(), 44 + 2 * 160 * 2);
/// ```
#[derive(Debug, Clone)]
pub struct FakeSynthesizer {
    key: &'static str,
    voices: Vec<String>,
    state: Arc<Mutex<SpeechState>>,
}

impl FakeSynthesizer {
    /// A fake with type key `key` and one voice, `fake`.
    pub fn new(key: &'static str) -> Self {
        Self {
            key,
            voices: vec!["fake".into()],
            state: Arc::default(),
        }
    }

    /// Every text it was asked to speak, in order.
    pub fn texts(&self) -> Vec<String> {
        lock(&self.state).seen.clone()
    }

    /// The WAV it returns for `text`.
    pub fn silence_for(text: &str) -> Vec<u8> {
        const RATE: u32 = 16_000;
        let samples = u32::try_from(text.chars().count())
            .unwrap_or(u32::MAX / 320)
            .saturating_mul(RATE / 100);
        let data = samples.saturating_mul(2);
        let mut wav = Vec::with_capacity(44 + data as usize);
        wav.extend_from_slice(b"RIFF");
        wav.extend_from_slice(&(36 + data).to_le_bytes());
        wav.extend_from_slice(b"WAVEfmt ");
        wav.extend_from_slice(&16u32.to_le_bytes());
        wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
        wav.extend_from_slice(&1u16.to_le_bytes()); // mono
        wav.extend_from_slice(&RATE.to_le_bytes());
        wav.extend_from_slice(&(RATE * 2).to_le_bytes());
        wav.extend_from_slice(&2u16.to_le_bytes());
        wav.extend_from_slice(&16u16.to_le_bytes());
        wav.extend_from_slice(b"data");
        wav.extend_from_slice(&data.to_le_bytes());
        wav.resize(44 + data as usize, 0);
        wav
    }
}

impl SpeechSynthesisProvider for FakeSynthesizer {
    fn type_key(&self) -> ProviderTypeKey {
        self.key.into()
    }

    fn display_name(&self) -> &str {
        "Fake synthesizer (oscova-test-kit)"
    }

    fn default_is_local_endpoint(&self) -> bool {
        true
    }

    fn voices(&self) -> Vec<String> {
        self.voices.clone()
    }

    fn synthesize<'a>(
        &'a self,
        request: SynthesisRequest<'a>,
    ) -> BoxFuture<'a, Result<SynthesizedAudio, SpeechError>> {
        lock(&self.state).seen.push(request.text.to_owned());
        let answer = match request.voice {
            Some(voice) if !self.voices.iter().any(|v| v == voice) => {
                Err(SpeechError::UnknownVoice {
                    voice: voice.to_owned(),
                    known: self.voices.clone(),
                })
            }
            _ => Ok(SynthesizedAudio {
                wav: Self::silence_for(request.text),
            }),
        };
        Box::pin(std::future::ready(answer))
    }
}
