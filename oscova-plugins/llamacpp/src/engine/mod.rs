//! The one model of the process, on a thread of its own.
//!
//! Rules: llama.cpp's backend is process-wide, so there is one engine per
//! process, started at the first request ([`Engine::global`]); it owns the
//! loaded model and one context, and answers requests one at a time, in
//! the order they arrive, for every provider, session and user of the
//! process (a request waits in the queue while another is answered). A
//! request for another model file, or other context settings, replaces
//! the loaded one after the request in hand. Events go back on a channel
//! per request; a request whose receiver is gone, or whose token is
//! cancelled, stops at the next token. Nothing here panics on a request:
//! every failure (a file that is not a GGUF, a template that does not
//! render, a prompt longer than the context) is an [`EngineError`] on
//! that request, and the engine goes on.

mod answer;
mod bench;
mod cache;
mod sample;
mod text;

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Mutex, OnceLock};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::token::LlamaToken;
use oscova_core::CancellationToken;
use oscova_core::provider::model::{ChatMessage, ToolSpec};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

pub(crate) use answer::Outcome;
use cache::Cache;

/// How the model runs; from the provider's configuration.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    /// Threads for generation and prompt reading.
    pub(crate) threads: u32,
    /// Context size in tokens (0: the model's training context).
    pub(crate) context: u32,
    /// Tokens read per batch.
    pub(crate) batch: u32,
    /// The most tokens one answer may have.
    pub(crate) max_tokens: u32,
    /// 0 is greedy.
    pub(crate) temperature: f32,
    /// The random seed when sampling with a temperature.
    pub(crate) seed: u32,
    /// Bytes of saved conversations' KV caches kept.
    pub(crate) cache_bytes: usize,
    /// After tool results, the model may call more tools (else it answers).
    pub(crate) follow_up_calls: bool,
}

/// One request.
pub(crate) struct Job {
    /// The GGUF file.
    pub(crate) model: PathBuf,
    /// How to run it.
    pub(crate) settings: Settings,
    /// The conversation.
    pub(crate) messages: Vec<ChatMessage>,
    /// The tools offered.
    pub(crate) tools: Vec<ToolSpec>,
    /// Where events go.
    pub(crate) events: UnboundedSender<Event>,
    /// Stops the answer.
    pub(crate) cancel: CancellationToken,
    /// What to do.
    pub(crate) task: Task,
}

/// What a job asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Task {
    /// Answer the conversation.
    Answer,
    /// Measure as llama-bench does: read `prompt` tokens in batches into
    /// an empty context, then generate `generate` tokens one at a time.
    Bench {
        /// Tokens read.
        prompt: u32,
        /// Tokens generated.
        generate: u32,
    },
}

/// What comes back for a job.
#[derive(Debug)]
pub(crate) enum Event {
    /// More answer text.
    Text(String),
    /// A call was decided.
    Call {
        /// The tool.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
    /// The end, with the answer or why there is none.
    Done(Result<Outcome, EngineError>),
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EngineError {
    /// The request was cancelled.
    Cancelled,
    /// The prompt does not fit the context.
    TooLong {
        /// The prompt's tokens.
        tokens: usize,
        /// The context's.
        context: u32,
    },
    /// Anything else, said.
    Other(String),
}

/// The process's engine.
pub(crate) struct Engine {
    jobs: Mutex<Sender<Job>>,
}

impl Engine {
    /// The engine, started at the first call.
    pub(crate) fn global() -> &'static Engine {
        static ENGINE: OnceLock<Engine> = OnceLock::new();
        ENGINE.get_or_init(|| {
            let (jobs, queue) = channel::<Job>();
            let spawned = std::thread::Builder::new()
                .name("oscova-llamacpp".into())
                .spawn(move || serve(queue));
            if let Err(error) = spawned {
                tracing::error!(%error, "the llamacpp engine thread could not start");
            }
            Engine {
                jobs: Mutex::new(jobs),
            }
        })
    }

    /// Queues `job`; its events (ending with [`Event::Done`]) arrive on its
    /// channel.
    pub(crate) fn submit(&self, job: Job) {
        let sent = match self.jobs.lock() {
            Ok(jobs) => jobs.send(job).map_err(|e| e.0),
            Err(poisoned) => poisoned.into_inner().send(job).map_err(|e| e.0),
        };
        if let Err(job) = sent {
            let _ = job.events.send(Event::Done(Err(EngineError::Other(
                "the llamacpp engine is not running".into(),
            ))));
        }
    }
}

/// The engine thread: loads models as jobs ask for them, answers jobs.
fn serve(queue: Receiver<Job>) {
    llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default().with_logs_enabled(false));
    let backend = match LlamaBackend::init() {
        Ok(backend) => backend,
        Err(error) => {
            let message = format!("llama.cpp did not start: {error}");
            for job in queue {
                let _ = job
                    .events
                    .send(Event::Done(Err(EngineError::Other(message.clone()))));
            }
            return;
        }
    };
    let mut next = queue.recv().ok();
    while let Some(job) = next.take() {
        let path = job.model.clone();
        let params = LlamaModelParams::default();
        let model = match LlamaModel::load_from_file(&backend, &path, &params) {
            Ok(model) => model,
            Err(error) => {
                job.fail(EngineError::Other(format!(
                    "cannot load the model `{}`: {error} (is it a GGUF file?)",
                    path.display()
                )));
                next = queue.recv().ok();
                continue;
            }
        };
        let loaded = match answer::Loaded::new(&model) {
            Ok(loaded) => loaded,
            Err(error) => {
                job.fail(error);
                next = queue.recv().ok();
                continue;
            }
        };
        let mut slot: Option<Slot<'_>> = None;
        let mut job = job;
        loop {
            if slot
                .as_ref()
                .is_none_or(|s| s.settings.differs_for_context(&job.settings))
            {
                slot = None;
                match Slot::new(&backend, &model, &job.settings) {
                    Ok(new) => slot = Some(new),
                    Err(error) => {
                        let _ = job.events.send(Event::Done(Err(error)));
                    }
                }
            }
            if let Some(slot) = slot.as_mut() {
                slot.settings.adopt(&job.settings);
                answer::run(&loaded, slot, job);
            }
            match queue.recv() {
                Ok(following) if following.model == path => job = following,
                Ok(following) => {
                    next = Some(following);
                    break;
                }
                Err(_) => return,
            }
        }
    }
}

impl Job {
    fn fail(self, error: EngineError) {
        let _ = self.events.send(Event::Done(Err(error)));
    }
}

impl Settings {
    /// Whether a context made for `self` cannot serve `other`.
    fn differs_for_context(&self, other: &Settings) -> bool {
        self.threads != other.threads || self.context != other.context || self.batch != other.batch
    }

    /// Takes the settings that do not need a new context.
    fn adopt(&mut self, other: &Settings) {
        self.max_tokens = other.max_tokens;
        self.temperature = other.temperature;
        self.seed = other.seed;
        self.cache_bytes = other.cache_bytes;
        self.follow_up_calls = other.follow_up_calls;
    }
}

/// The context and what it holds.
pub(crate) struct Slot<'m> {
    ctx: LlamaContext<'m>,
    /// The tokens in the context's sequence 0, in order.
    tokens: Vec<LlamaToken>,
    /// Saved conversations.
    cache: Cache,
    settings: Settings,
}

impl<'m> Slot<'m> {
    fn new(
        backend: &LlamaBackend,
        model: &'m LlamaModel,
        settings: &Settings,
    ) -> Result<Self, EngineError> {
        let trained = model.n_ctx_train();
        let context = match settings.context {
            0 => trained,
            n => n.min(trained),
        };
        let threads = i32::try_from(settings.threads.max(1)).unwrap_or(1);
        let params = LlamaContextParams::default()
            .with_n_ctx(std::num::NonZeroU32::new(context))
            .with_n_batch(settings.batch)
            .with_n_ubatch(settings.batch)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let ctx = model.new_context(backend, params).map_err(|e| {
            EngineError::Other(format!(
                "cannot make a context of {context} tokens for the model: {e}"
            ))
        })?;
        Ok(Self {
            ctx,
            tokens: Vec::new(),
            cache: Cache::new(settings.cache_bytes),
            settings: settings.clone(),
        })
    }
}
