//! The `oscova.ollama` plugin: an `ollama` model provider for a local
//! [Ollama](https://ollama.com) server: chat with tools, the installed
//! model list, and model downloads with progress.
//!
//! # 1. Link the plugin
//!
//! Its `configure` registers [`OllamaProvider`] under the type key
//! `"ollama"`. The provider is local by design, so it passes the offline
//! check unless the configuration says otherwise.
//!
//! ```
//! use oscova_core::prelude::*;
//! use oscova_core::provider::model::{ModelProviderConfig, check_offline};
//! use oscova_plugin_ollama::OllamaPlugin;
//!
//! let host = PluginHost::builder()
//!     .plugins(oscova_core::linked_plugins![OllamaPlugin])
//!     .build()?;
//! let provider = oscova_agent::chat::model_provider(&host, "ollama").expect("registered");
//! let config = ModelProviderConfig::new("ollama"); // http://127.0.0.1:11434
//! assert!(check_offline(&config, &*provider, true).is_ok());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # 2. Download a model
//!
//! The provider's download side lists the catalog (installed models, plus
//! names listed in the configuration's `catalog` option) and pulls a model
//! with progress; cancelling the token stops the transfer.
//!
//! ```no_run
//! use oscova_core::CancellationToken;
//! use oscova_core::provider::model::{ModelProvider, ModelProviderConfig, check_offline};
//! use oscova_plugin_ollama::OllamaProvider;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let provider = OllamaProvider::default();
//! let config = ModelProviderConfig::new("ollama");
//! check_offline(&config, &provider, true)?; // hosts check before every request
//! let downloads = provider.downloads().ok_or("cannot download")?;
//! let progress = |p: oscova_core::provider::model::DownloadProgress| {
//!     println!("{} {:?}/{:?}", p.status, p.completed, p.total);
//! };
//! downloads
//!     .download(&config, None, "llama3.2", &progress, CancellationToken::new())
//!     .await?;
//! # Ok(())
//! # }
//! ```
//!
//! # 3. Chat with the user's tools
//!
//! ```no_run
//! use oscova_agent::chat::{ChatLoopOptions, model_provider, run_chat};
//! use oscova_core::prelude::*;
//! use oscova_core::provider::model::{ChatMessage, ModelProviderConfig};
//! use oscova_plugin_ollama::OllamaPlugin;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let host = PluginHost::builder()
//!     .also_load(oscova_core::linked_plugins![OllamaPlugin])
//!     .build()?;
//! let provider = model_provider(&host, "ollama").ok_or("no ollama provider")?;
//! let scope = host.user_scope(UserInfo::new("alice"));
//! let mut config = ModelProviderConfig::new("ollama");
//! config.model = Some("llama3.2".into());
//! let mut messages = vec![ChatMessage::user("What time is it in Tokyo?")];
//! let options = ChatLoopOptions::new().offline(true);
//! let outcome = run_chat(&scope, &*provider, &config, &mut messages)
//!     .options(options)
//!     .await?;
//! println!("{}", outcome.message.content);
//! # Ok(())
//! # }
//! ```
//!
//! Other entries of the configuration's `options` go into the `/api/chat`
//! body as they are (`options`, `keep_alive`, `think`, ...); `insecure:
//! true` is passed to pulls.

mod api;
mod download;
mod lines;
mod provider;

pub use provider::{DEFAULT_OLLAMA_ENDPOINT, OLLAMA_PROVIDER_KEY, OllamaProvider};

use oscova_core::prelude::*;

/// The plugin: registers [`OllamaProvider`].
#[plugin(
    id = "oscova.ollama",
    name = "Ollama",
    description = "Local models through Ollama: chat with tools, model list, downloads.",
    framework = ">=0.1"
)]
#[derive(Debug, Default)]
pub struct OllamaPlugin;

impl AgentPlugin for OllamaPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_model_provider(|ctx: &ProviderContext| OllamaProvider::new(ctx.http_client()));
    }
}
