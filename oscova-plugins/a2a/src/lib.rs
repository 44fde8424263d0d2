//! The `oscova.a2a` plugin: A2A 1.0 agents named in configuration, called
//! as tools.
//!
//! | wire name | does |
//! |---|---|
//! | `oscova_a2a__a2a__agents` | lists the configured agents with their cards' descriptions and skills |
//! | `oscova_a2a__a2a__send` | sends a message (`agent`, `message`, optional `context_id`, `task_id`, `files` from the user's root, `wait_secs`) and returns the answer, or the task's id and state when it runs longer than the wait |
//! | `oscova_a2a__a2a__status` | a task's state, and its result once it has one; without a task id, every task still pending for the user |
//! | `oscova_a2a__a2a__cancel` | asks the agent to cancel a task |
//!
//! The protocol is A2A 1.0 as the official `a2a-sdk` 1.3.0 serves it: the
//! card at `URL/.well-known/agent-card.json` and its `supportedInterfaces`,
//! then JSON-RPC (`SendMessage`, `GetTask`, `CancelTask`) or HTTP+JSON
//! (`/message:send`, `/tasks/ID`, `/tasks/ID:cancel`), whichever the card
//! lists first, with the `A2A-Version: 1.0` header. A long task is followed
//! within the call's wait by streaming (`SendStreamingMessage`, when the
//! card says the agent streams) or else by polling `GetTask`, then by
//! `status` calls (and, for a host that runs [`follow::Follower`], by
//! `SubscribeToTask`, push webhooks or polls after the call). The
//! protocol's types (the card, messages, webhooks, the methods with their
//! JSON-RPC names and HTTP+JSON requests, the error codes) are
//! `oscova_a2a::model`'s, the ones the Oscova server serves; answers are
//! read as JSON, so what an agent sends beyond them reaches the results.
//!
//! ```no_run
//! use oscova_core::prelude::*;
//! use oscova_plugin_a2a::{A2aConfig, A2aPlugin, AgentConfig};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let mut config = A2aConfig::default();
//! config.agents.insert(
//!     "research".into(),
//!     AgentConfig::new("http://127.0.0.1:9999").credential_header("Authorization", "research.bearer"),
//! );
//! let host = PluginHost::builder()
//!     .no_linked_plugins()
//!     .plugin_instance(A2aPlugin::new(config)?)
//!     .build()?;
//! let scope = host.user_scope(UserInfo::new("alice"));
//! let answer = scope
//!     .invoke("oscova_a2a__a2a__send", json!({"agent": "research", "message": "hello"}))
//!     .await;
//! println!("{}", answer.content);
//! # Ok(()) }
//! ```
//!
//! Boundaries (each checked before any connection, pinned by the tests in
//! `tests/it/`): an agent not on this machine is refused when `offline` is
//! set; a call made while handling a message that already made `max_hops`
//! hops is refused, and every message sent carries its hop count in its
//! metadata ([`hops`]); a credential the user has not set is an error
//! result naming it. A card is a remote text: the interface it names must
//! be on the configured URL's scheme, host and port, or the agent is
//! refused, so a card cannot send the user's credential elsewhere.
//!
//! The plugin starts nothing between calls (no background work, as the
//! plugin contract says): a task the agent is still working on is
//! followed by the model's `status` calls. With
//! [`A2aConfig::pending_dir`], running tasks are kept per user in a file,
//! each with the session whose call sent it, and `status` without a task
//! id polls them, after a restart too. Delivering a long task's result to
//! that session as a follow-up message is host work this crate offers as
//! a library: [`follow::Follower`], which a host runs (`oscova chat` and
//! `oscova serve` do).

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod card;
mod config;
mod error;
pub mod follow;
pub mod hops;
mod outgoing;
mod peer;
mod pending;
mod stream;
mod task;
mod toolset;

use std::sync::Arc;

use oscova_core::prelude::*;

pub use config::{
    A2aConfig, AgentConfig, ConfigError, DEFAULT_MAX_HOPS, DEFAULT_TIMEOUT, DEFAULT_WAIT,
};
pub use error::ClientError;
pub use outgoing::MAX_FILE_BYTES;
pub use peer::MAX_ANSWER;
pub use pending::MAX_TASKS as MAX_PENDING_TASKS;
pub use toolset::A2aToolset;

/// The plugin id.
pub const PLUGIN_ID: &str = "oscova.a2a";

/// The `oscova.a2a` plugin. Linked without configuration (its `Default`),
/// it contributes nothing; with agents, the four tools to every user.
#[plugin(
    id = "oscova.a2a",
    name = "A2A agents",
    framework = ">=0.1",
    description = "Call A2A 1.0 agents named in configuration: list, send, status, cancel."
)]
#[derive(Debug, Clone, Default)]
pub struct A2aPlugin {
    config: Arc<A2aConfig>,
}

impl A2aPlugin {
    /// The plugin over `config`, checked ([`A2aConfig::check`]).
    pub fn new(config: A2aConfig) -> Result<Self, ConfigError> {
        config.check()?;
        Ok(Self {
            config: Arc::new(config),
        })
    }

    /// Its configuration.
    pub fn config(&self) -> &A2aConfig {
        &self.config
    }
}

impl AgentPlugin for A2aPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        if self.config.agents.is_empty() {
            return;
        }
        let config = self.config.clone();
        builder.add_toolset(move |ctx: &AgentPluginContext| A2aToolset::new(ctx, config.clone()));
    }
}
