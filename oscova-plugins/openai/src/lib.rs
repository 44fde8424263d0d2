//! The `oscova.openai` plugin: an `openai` model provider for OpenAI's chat
//! completions API and any server that speaks it (vLLM, llama.cpp,
//! LM Studio, Ollama's `/v1`, ...).
//!
//! # 1. Link the plugin
//!
//! Add the crate and name its plugin when the host is built; its
//! `configure` registers [`OpenAiProvider`] under the type key `"openai"`.
//!
//! ```
//! use oscova_core::prelude::*;
//! use oscova_plugin_openai::OpenAiPlugin;
//!
//! let host = PluginHost::builder()
//!     .plugins(oscova_core::linked_plugins![OpenAiPlugin])
//!     .build()?;
//! let provider = oscova_agent::chat::model_provider(&host, "openai").expect("registered");
//! assert_eq!(provider.display_name(), "OpenAI-compatible chat completions");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # 2. Configure it
//!
//! A [`ModelProviderConfig`](oscova_core::provider::model::ModelProviderConfig)
//! of type `"openai"` picks the model and, optionally, the endpoint
//! (default [`DEFAULT_OPENAI_ENDPOINT`]; a trailing `/v1` is accepted).
//! Every other entry of `options` is added to the request body
//! (`temperature`, `max_tokens`, ...), except `strict_tools: false`, which
//! turns off strict function calling for servers that reject it.
//!
//! # 3. Chat with the user's tools
//!
//! `oscova_agent::chat::run_chat` (crate `oscova-agent`, feature `chat`)
//! sends the conversation and the scope's tools, runs the calls the model
//! asks for, and repeats until the model answers. The key is sent as a bearer token and never appears in
//! errors or `Debug` output.
//!
//! ```no_run
//! use oscova_agent::chat::{ChatEvent, ChatLoopOptions, model_provider, run_chat};
//! use oscova_core::prelude::*;
//! use oscova_core::provider::model::{ChatMessage, ModelProviderConfig};
//! use oscova_core::SecretString;
//! use oscova_plugin_openai::OpenAiPlugin;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let host = PluginHost::builder()
//!     .also_load(oscova_core::linked_plugins![OpenAiPlugin])
//!     .build()?;
//! let provider = model_provider(&host, "openai").ok_or("no openai provider")?;
//! let scope = host.user_scope(UserInfo::new("alice"));
//! let mut config = ModelProviderConfig::new("openai");
//! config.model = Some("gpt-4o-mini".into());
//! let key = SecretString::from(std::env::var("OPENAI_API_KEY")?);
//! let mut messages = vec![ChatMessage::user("What can you do?")];
//! let options = ChatLoopOptions::new().on_event(|event| {
//!     if let ChatEvent::Text(text) = event {
//!         print!("{text}");
//!     }
//! });
//! run_chat(&scope, &*provider, &config, &mut messages)
//!     .api_key(&key)
//!     .options(options)
//!     .await?;
//! # Ok(())
//! # }
//! ```

mod api;
mod provider;
mod sse;

pub use provider::{DEFAULT_OPENAI_ENDPOINT, OPENAI_PROVIDER_KEY, OpenAiProvider};

use oscova_core::prelude::*;

/// The plugin: registers [`OpenAiProvider`].
#[plugin(
    id = "oscova.openai",
    name = "OpenAI-compatible models",
    description = "Chat completions with function tools, streamed or whole.",
    framework = ">=0.1"
)]
#[derive(Debug, Default)]
pub struct OpenAiPlugin;

impl AgentPlugin for OpenAiPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_model_provider(|ctx: &ProviderContext| OpenAiProvider::new(ctx.http_client()));
    }
}
