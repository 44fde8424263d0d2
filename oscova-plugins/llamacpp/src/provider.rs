//! The `llamacpp` model provider: chat on the embedded engine.
//!
//! Rules: local by design (`default_is_local_endpoint` is true and the
//! provider takes no endpoint: a configured one is refused, since nothing
//! would be sent there), so `--offline` always allows it. The model is the
//! request's, else [`DEFAULT_MODEL`]: a catalog name (installed by
//! [`crate::download`]) or a path to a GGUF file. Options are read and
//! checked on every request; an unknown option or a value out of range is
//! an error naming it, never ignored. Streaming sends text as it is
//! decided and a `ToolCallStarted` as each call is complete (its
//! arguments are valid by then). Cancelling the request's token, or
//! dropping its future, stops the engine at its next token.

use oscova_core::process::ProcessSpawnPolicy;
use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatResponse, ChatStreamEvent, ModelDownloadProvider, ModelError,
    ModelProvider, ModelProviderConfig, TokenUsage, ToolCallRequest,
};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};
use tokio::sync::mpsc::unbounded_channel;

use crate::catalog::{self, DEFAULT_MODEL, MODELS_DIR};
use crate::engine::{Engine, EngineError, Event, Job, Outcome, Settings, Task};
use crate::names::Names;

/// The provider type key, `"llamacpp"`.
pub const LLAMACPP_PROVIDER_KEY: &str = "llamacpp";

/// The options `[providers.llamacpp]` takes, with what each means.
pub const OPTIONS: [(&str, &str); 9] = [
    (
        "threads",
        "threads for reading and generating (default: the machine's cores)",
    ),
    (
        "context",
        "context size in tokens (default 8192, at most the model's)",
    ),
    ("batch", "prompt tokens read per batch (default 512)"),
    (
        "max_tokens",
        "the most tokens one answer may have (default 1024)",
    ),
    ("temperature", "0 is greedy (the default); above 0 samples"),
    ("seed", "the random seed when sampling (default 0)"),
    (
        "cache_mib",
        "MiB of other conversations' KV caches kept (default 256; 0 keeps none)",
    ),
    (
        MODELS_DIR,
        "where catalog models are installed (default: the cache's oscova/llamacpp)",
    ),
    (
        "follow_up_calls",
        "after tool results, let the model call more tools instead of answering (default false)",
    ),
];

/// The embedded model provider.
///
/// ```
/// use oscova_core::provider::model::{ModelProvider, ModelProviderConfig, check_offline};
/// use oscova_plugin_llamacpp::LlamaCppProvider;
///
/// let provider = LlamaCppProvider::default();
/// assert_eq!(provider.type_key(), "llamacpp");
/// assert!(check_offline(&ModelProviderConfig::new("llamacpp"), &provider, true).is_ok());
/// assert_eq!(provider.default_model().as_deref(), Some("qwen2.5-coder-0.5b"));
/// ```
#[derive(Clone)]
pub struct LlamaCppProvider {
    pub(crate) spawn: ProcessSpawnPolicy,
}

impl std::fmt::Debug for LlamaCppProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlamaCppProvider").finish_non_exhaustive()
    }
}

impl Default for LlamaCppProvider {
    /// A provider whose downloads run under the default spawn policy.
    fn default() -> Self {
        Self::new(ProcessSpawnPolicy::new())
    }
}

impl LlamaCppProvider {
    /// A provider whose downloads start `pip` under `spawn`.
    pub fn new(spawn: ProcessSpawnPolicy) -> Self {
        Self { spawn }
    }

    async fn complete(&self, request: ChatRequest<'_>) -> Result<ChatResponse, ModelError> {
        let names = Names::new(request.tools);
        let (job, mut events) = job(&request, &names, Task::Answer)?;
        Engine::global().submit(job);
        let mut calls = Vec::new();
        let outcome = loop {
            let event = tokio::select! {
                biased;
                () = request.cancel.cancelled() => return Err(ModelError::Cancelled),
                event = events.recv() => event,
            };
            match event {
                Some(Event::Text(text)) => {
                    if let Some(sink) = request.stream {
                        sink(ChatStreamEvent::Text(text));
                    }
                }
                Some(Event::Call { name, arguments }) => {
                    let name = names.wire(&name);
                    let id = call_id();
                    if let Some(sink) = request.stream {
                        sink(ChatStreamEvent::ToolCallStarted {
                            id: id.clone(),
                            name: name.clone(),
                        });
                    }
                    calls.push(ToolCallRequest {
                        id,
                        name,
                        arguments,
                    });
                }
                Some(Event::Done(outcome)) => break outcome.map_err(model_error)?,
                None => return Err(ModelError::Other("the llamacpp engine stopped".into())),
            }
        };
        Ok(response(outcome, calls))
    }

    /// Measures the engine as llama.cpp's `llama-bench` does, for the
    /// configured model and threads: reads `prompt` tokens in batches into
    /// an empty context, then generates `generate` tokens one at a time.
    /// Returns the milliseconds of each part.
    pub async fn measure(
        &self,
        config: &ModelProviderConfig,
        prompt: u32,
        generate: u32,
    ) -> Result<(f64, f64), ModelError> {
        let model = config
            .model
            .clone()
            .unwrap_or_else(|| DEFAULT_MODEL.to_owned());
        let request = ChatRequest {
            config,
            api_key: None,
            model: &model,
            messages: &[],
            tools: &[],
            stream: None,
            cancel: Default::default(),
        };
        let (job, mut events) = job(
            &request,
            &Names::default(),
            Task::Bench { prompt, generate },
        )?;
        Engine::global().submit(job);
        while let Some(event) = events.recv().await {
            if let Event::Done(outcome) = event {
                let outcome = outcome.map_err(model_error)?;
                return Ok((outcome.prompt_ms, outcome.generate_ms));
            }
        }
        Err(ModelError::Other("the llamacpp engine stopped".into()))
    }
}

/// The job for `request`, and where its events arrive.
fn job(
    request: &ChatRequest<'_>,
    names: &Names,
    task: Task,
) -> Result<(Job, tokio::sync::mpsc::UnboundedReceiver<Event>), ModelError> {
    if let Some(endpoint) = &request.config.endpoint {
        return Err(ModelError::Other(format!(
            "the llamacpp provider runs the model in this process and takes no endpoint \
             (`{endpoint}` is configured); remove it, or use the `openai` provider for a \
             llama.cpp server"
        )));
    }
    let model = match request.model.trim() {
        "" => DEFAULT_MODEL,
        model => model,
    };
    let path = catalog::resolve(request.config, model)?;
    let settings = settings(request.config)?;
    let (events, receiver) = unbounded_channel();
    let job = Job {
        model: path,
        settings,
        messages: names.messages(request.messages),
        tools: names.tools(request.tools),
        events,
        cancel: request.cancel.clone(),
        task,
    };
    Ok((job, receiver))
}

/// The engine settings from the configuration's options.
pub(crate) fn settings(config: &ModelProviderConfig) -> Result<Settings, ModelError> {
    for key in config.options.keys() {
        if !OPTIONS.iter().any(|(known, _)| known == key) {
            let known: Vec<&str> = OPTIONS.iter().map(|(k, _)| *k).collect();
            return Err(ModelError::Other(format!(
                "unknown llamacpp option `{key}`; the options are: {}",
                known.join(", ")
            )));
        }
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let threads = int(config, "threads", cores.min(64), 1..=256)?;
    let context = int(config, "context", 8192, 256..=1 << 20)?;
    let batch = int(config, "batch", 512, 1..=8192)?;
    let max_tokens = int(config, "max_tokens", 1024, 1..=1 << 20)?;
    let seed = int(config, "seed", 0, 0..=u64::from(u32::MAX))?;
    let cache_mib = int(config, "cache_mib", 256, 0..=1 << 20)?;
    let temperature = match config.options.get("temperature") {
        None => 0.0,
        Some(value) => match value.as_f64() {
            Some(t) if (0.0..=5.0).contains(&t) => t as f32,
            _ => {
                return Err(ModelError::Other(format!(
                    "llamacpp option `temperature` must be a number from 0 to 5, not {value}"
                )));
            }
        },
    };
    let follow_up_calls = match config.options.get("follow_up_calls") {
        None => false,
        Some(value) => value.as_bool().ok_or_else(|| {
            ModelError::Other(format!(
                "llamacpp option `follow_up_calls` must be true or false, not {value}"
            ))
        })?,
    };
    Ok(Settings {
        threads: threads as u32,
        context: context as u32,
        batch: batch as u32,
        max_tokens: max_tokens as u32,
        temperature,
        seed: seed as u32,
        cache_bytes: (cache_mib as usize).saturating_mul(1 << 20),
        follow_up_calls,
    })
}

fn int(
    config: &ModelProviderConfig,
    key: &str,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, ModelError> {
    match config.options.get(key) {
        None => Ok(default),
        Some(value) => value.as_u64().filter(|n| range.contains(n)).ok_or_else(|| {
            ModelError::Other(format!(
                "llamacpp option `{key}` must be a whole number from {} to {}, not {value}",
                range.start(),
                range.end()
            ))
        }),
    }
}

fn model_error(error: EngineError) -> ModelError {
    match error {
        EngineError::Cancelled => ModelError::Cancelled,
        EngineError::TooLong { tokens, context } => ModelError::Other(format!(
            "the conversation is {tokens} tokens, more than the model's context of {context}; \
             compact the session (/compact) or raise `context` in [providers.llamacpp]"
        )),
        EngineError::Other(message) => ModelError::Other(message),
    }
}

fn response(outcome: Outcome, calls: Vec<ToolCallRequest>) -> ChatResponse {
    ChatResponse {
        message: ChatMessage::assistant(outcome.content, calls),
        finish_reason: Some(outcome.finish.to_owned()),
        usage: Some(TokenUsage {
            input_tokens: Some(outcome.prompt_tokens as u64),
            output_tokens: Some(outcome.output_tokens as u64),
            cached_input_tokens: Some(outcome.cached_tokens as u64),
        }),
    }
}

/// A call id unique in the process.
fn call_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    static BASE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    format!(
        "call_{:x}{:04x}",
        base & 0xffff_ffff,
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

impl ModelProvider for LlamaCppProvider {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(LLAMACPP_PROVIDER_KEY)
    }

    fn display_name(&self) -> &str {
        "llama.cpp (embedded)"
    }

    fn default_is_local_endpoint(&self) -> bool {
        true
    }

    fn default_model(&self) -> Option<String> {
        Some(DEFAULT_MODEL.to_owned())
    }

    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(self.complete(request))
    }

    fn downloads(&self) -> Option<&dyn ModelDownloadProvider> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn options_are_checked_and_unknown_ones_named() {
        let mut config = ModelProviderConfig::new("llamacpp");
        let defaults = settings(&config).unwrap();
        assert_eq!(
            (defaults.context, defaults.batch, defaults.max_tokens),
            (8192, 512, 1024)
        );
        assert_eq!(defaults.temperature, 0.0);
        config.options.insert("threads".into(), json!(0));
        let error = settings(&config).unwrap_err().to_string();
        assert!(
            error.contains("`threads` must be a whole number from 1 to 256, not 0"),
            "{error}"
        );
        config.options.clear();
        config.options.insert("treads".into(), json!(2));
        assert!(
            settings(&config)
                .unwrap_err()
                .to_string()
                .contains("unknown llamacpp option `treads`")
        );
        config.options.clear();
        config.options.insert("temperature".into(), json!("hot"));
        assert!(settings(&config).is_err());
    }

    #[test]
    fn an_endpoint_is_refused_before_anything_runs() {
        let mut config = ModelProviderConfig::new("llamacpp");
        config.endpoint = Some("http://127.0.0.1:8080".into());
        let request = ChatRequest {
            config: &config,
            api_key: None,
            model: "qwen2.5-coder-0.5b",
            messages: &[],
            tools: &[],
            stream: None,
            cancel: Default::default(),
        };
        let error = job(&request, &Names::default(), Task::Answer)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("takes no endpoint"), "{error}");
    }

    #[test]
    fn call_ids_differ() {
        assert_ne!(call_id(), call_id());
    }
}
