//! Providers that count how often they are entered and do nothing else.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_speech::{
    BoxFuture, ProviderTypeKey, RecognitionRequest, SpeechError, SpeechRecognitionProvider,
    SpeechSynthesisProvider, SynthesisRequest, SynthesizedAudio, Transcript,
};

/// A recognition and synthesis provider under any key that counts calls.
#[derive(Clone)]
pub struct Spy {
    pub key: &'static str,
    pub local_by_design: bool,
    /// What it answers: recognition gives this text, synthesis these bytes.
    pub answer: &'static str,
    pub calls: Arc<AtomicUsize>,
}

impl Spy {
    pub fn new(key: &'static str) -> Self {
        Self {
            key,
            local_by_design: false,
            answer: "",
            calls: Arc::default(),
        }
    }

    pub fn answering(mut self, answer: &'static str) -> Self {
        self.answer = answer;
        self
    }

    pub fn local_by_design(mut self) -> Self {
        self.local_by_design = true;
        self
    }

    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl SpeechRecognitionProvider for Spy {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(self.key)
    }
    fn display_name(&self) -> &str {
        self.key
    }
    fn default_is_local_endpoint(&self) -> bool {
        self.local_by_design
    }
    fn recognize<'a>(
        &'a self,
        _: RecognitionRequest<'a>,
    ) -> BoxFuture<'a, Result<Transcript, SpeechError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let text = self.answer.to_owned();
        Box::pin(async move { Ok(Transcript::new(text)) })
    }
}

impl SpeechSynthesisProvider for Spy {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(self.key)
    }
    fn display_name(&self) -> &str {
        self.key
    }
    fn default_is_local_endpoint(&self) -> bool {
        self.local_by_design
    }
    fn synthesize<'a>(
        &'a self,
        _: SynthesisRequest<'a>,
    ) -> BoxFuture<'a, Result<SynthesizedAudio, SpeechError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let wav = self.answer.as_bytes().to_vec();
        Box::pin(async move { Ok(SynthesizedAudio { wav }) })
    }
}
