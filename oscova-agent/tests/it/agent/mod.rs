//! The session agent over a real plugin host, a real session store and a
//! scripted model provider registered by a plugin (the HTTP back ends are
//! tested in their own crates).

mod boundaries;
mod build;
mod compact;
mod dispatch;
mod guard;
mod prompts;
mod recover;
mod retry;
mod run;
mod waits;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use oscova_agent::session::agent::{
    AgentError, AgentHost, AgentHostBuilder, Extension, SessionApi,
};
use oscova_agent::session::{MemoryStore, SessionStore};
use oscova_core::prelude::*;
use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ChatResponse, ChatStreamEvent, ModelError, ModelProvider,
    ModelProviderConfig, TokenUsage, ToolCallRequest, ToolSpec,
};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};
use serde_json::Value;

/// Tools of the plugin host.
pub struct NotesToolset;

#[toolset]
impl NotesToolset {
    /// Returns the text.
    pub fn echo(
        /// The text.
        text: String,
    ) -> String {
        text
    }

    /// Reports progress, then answers.
    pub fn progress(&self, invocation: &ToolInvocation) -> String {
        invocation.report(ToolProgress::message("half way"));
        "done".to_owned()
    }

    /// Notes the text, one note at a time.
    #[tool(sequential)]
    pub fn note(
        /// The text.
        text: String,
    ) -> String {
        text
    }

    /// Says goodbye and ends the run.
    pub fn bye() -> ToolResult {
        ToolResult::text("bye").terminating()
    }

    /// Runs a shell command (pretend).
    pub fn bash(
        /// The command.
        command: String,
    ) -> String {
        format!("ran {command}")
    }
}

pub const ECHO: &str = "test_agent__notes__echo";
pub const BASH: &str = "test_agent__notes__bash";
pub const PROGRESS: &str = "test_agent__notes__progress";
pub const NOTE: &str = "test_agent__notes__note";
pub const BYE: &str = "test_agent__notes__bye";

/// What the scripted model answers and what it was sent.
#[derive(Default)]
pub struct Script {
    pub replies: Mutex<VecDeque<ChatMessage>>,
    pub seen: Mutex<Vec<(Vec<ChatMessage>, Vec<ToolSpec>)>>,
    pub calls: AtomicUsize,
    /// The usage every answer reports (none unless a test sets it).
    pub usage: Mutex<Option<TokenUsage>>,
}

impl Script {
    pub fn new(replies: impl IntoIterator<Item = ChatMessage>) -> Arc<Self> {
        Arc::new(Self {
            replies: Mutex::new(replies.into_iter().collect()),
            ..Self::default()
        })
    }

    pub fn seen(&self, i: usize) -> (Vec<ChatMessage>, Vec<ToolSpec>) {
        self.seen.lock().unwrap()[i].clone()
    }

    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

/// A model provider answering from a [`Script`].
pub struct ScriptedModel(pub Arc<Script>);

impl ModelProvider for ScriptedModel {
    fn type_key(&self) -> ProviderTypeKey {
        "scripted".into()
    }

    fn display_name(&self) -> &str {
        "Scripted"
    }

    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let script = &self.0;
            script.calls.fetch_add(1, Ordering::SeqCst);
            script
                .seen
                .lock()
                .unwrap()
                .push((request.messages.to_vec(), request.tools.to_vec()));
            let Some(message) = script.replies.lock().unwrap().pop_front() else {
                return Err(ModelError::Other("script ended".into()));
            };
            if let Some(sink) = request.stream {
                for piece in message.content.split_inclusive(' ') {
                    sink(ChatStreamEvent::Text(piece.to_owned()));
                }
            }
            Ok(ChatResponse {
                message,
                finish_reason: Some("stop".into()),
                usage: *script.usage.lock().unwrap(),
            })
        })
    }
}

/// The plugin giving the host its tools and the scripted model.
#[plugin(id = "test.agent")]
#[derive(Default)]
pub struct AgentTestPlugin {
    script: Arc<Script>,
}

impl AgentPlugin for AgentTestPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| NotesToolset);
        let script = self.script.clone();
        builder.add_model_provider(move |_: &oscova_core::ProviderContext| {
            ScriptedModel(script.clone())
        });
    }
}

impl AgentTestPlugin {
    pub fn with(script: &Arc<Script>) -> Self {
        Self {
            script: script.clone(),
        }
    }
}

pub fn plugin_host(script: &Arc<Script>) -> PluginHost {
    PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(AgentTestPlugin::with(script))
        .build()
        .unwrap()
}

pub fn model() -> ModelProviderConfig {
    let mut config = ModelProviderConfig::new("scripted");
    config.model = Some("m1".into());
    config
}

/// An agent host over the script, a fresh memory store and the model.
pub fn agents(script: &Arc<Script>) -> (AgentHostBuilder, Arc<dyn SessionStore>) {
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    (
        AgentHost::builder(plugin_host(script), store.clone()).model(model()),
        store,
    )
}

pub fn call(id: &str, name: &str, arguments: Value) -> ToolCallRequest {
    ToolCallRequest {
        id: id.into(),
        name: name.into(),
        arguments,
    }
}

/// A shared log handlers write to.
pub type Log = Arc<Mutex<Vec<String>>>;

pub fn log() -> Log {
    Arc::default()
}

pub fn entries(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

type Setup = Arc<dyn Fn(&mut SessionApi) -> Result<(), AgentError> + Send + Sync>;

/// An extension whose activation is the test's closure.
pub struct Probe {
    name: String,
    setup: Setup,
}

impl Extension for Probe {
    fn name(&self) -> &str {
        &self.name
    }

    fn activate(&mut self, api: &mut SessionApi) -> Result<(), AgentError> {
        (self.setup)(api)
    }
}

/// A factory of [`Probe`]s named `name` activated by `setup`.
pub fn probe(
    name: &str,
    setup: impl Fn(&mut SessionApi) -> Result<(), AgentError> + Send + Sync + 'static,
) -> impl Fn() -> Probe + Send + Sync + 'static {
    let name = name.to_owned();
    let setup: Setup = Arc::new(setup);
    move || Probe {
        name: name.clone(),
        setup: setup.clone(),
    }
}
