//! [`AgentHostBuilder`]: what an [`AgentHost`] is made of (the plugin
//! host, the store, the models, the extensions and the run settings).
//!
//! Rules: setters only record; `build` is the one place the parts are
//! checked, and it refuses a host whose sessions could not run:
//! every model configuration (`model`, `model_with_key`) must name a
//! model provider the plugin host built ([`AgentHostError`]), found as a
//! run finds it (`crate::chat::model_provider`). A host with no model
//! configuration builds: a session may choose its model later.

use std::sync::Arc;

use oscova_core::provider::model::ModelProviderConfig;
use oscova_core::{ExposeSecret, PluginHost, SecretString};

use super::deliver::LiveSessions;
use super::extension::{Extension, ExtensionFactory, factory_of, factory_with};
use super::host::{AgentHost, HostParts};
use super::specs::ExportedSpecs;
use crate::chat::{DEFAULT_MAX_ROUNDS, model_provider, model_provider_keys};
use crate::profile::SchemaProfile;
use crate::session::SessionStore;
use crate::session::compaction::CompactionSettings;

/// Builds an [`AgentHost`].
pub struct AgentHostBuilder {
    parts: HostParts,
}

impl std::fmt::Debug for AgentHostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentHostBuilder").finish_non_exhaustive()
    }
}

impl AgentHostBuilder {
    /// A builder over `plugins` and `store` with the defaults.
    pub(super) fn new(plugins: PluginHost, store: Arc<dyn SessionStore>) -> Self {
        Self {
            parts: HostParts {
                specs: ExportedSpecs::new(&plugins, SchemaProfile::OpenAi),
                plugins,
                store,
                models: Vec::new(),
                extensions: Vec::new(),
                system_prompt: String::new(),
                offline: false,
                max_turns: DEFAULT_MAX_ROUNDS,
                profile: SchemaProfile::OpenAi,
                stream: true,
                compaction: None,
                live: LiveSessions::default(),
            },
        }
    }

    /// Adds a model configuration; the first is the sessions' default.
    /// Its provider must be one the plugin host built:
    /// [`build`](Self::build) refuses it otherwise.
    pub fn model(mut self, config: ModelProviderConfig) -> Self {
        self.parts.models.push((config, None));
        self
    }

    /// Adds a model configuration with the API key its provider is called
    /// with; the key is redacted in every session's tool results, as the
    /// host's secrets are. Its provider must be one the plugin host built,
    /// as for [`model`](Self::model).
    pub fn model_with_key(
        mut self,
        config: ModelProviderConfig,
        api_key: Option<SecretString>,
    ) -> Self {
        if let Some(key) = &api_key {
            self.parts.plugins.redactor().add(key.expose_secret());
        }
        self.parts.models.push((config, api_key));
        self
    }

    /// Adds an extension every session gets, made by a shared factory.
    pub fn add_extension_factory(mut self, factory: ExtensionFactory) -> Self {
        self.parts.extensions.push(factory);
        self
    }

    /// Adds an extension every session gets, made with `T::default()`.
    pub fn add_extension<T: Extension + Default>(mut self) -> Self {
        self.parts.extensions.push(factory_of::<T>());
        self
    }

    /// Adds an extension every session gets, made by `make`.
    pub fn add_extension_with<T: Extension>(
        mut self,
        make: impl Fn() -> T + Send + Sync + 'static,
    ) -> Self {
        self.parts.extensions.push(factory_with(make));
        self
    }

    /// The base of the system prompt (empty by default).
    pub fn system_prompt(mut self, text: impl Into<String>) -> Self {
        self.parts.system_prompt = text.into();
        self
    }

    /// Requires offline operation: a model endpoint that is not on this
    /// machine is refused before any request, nested calls included.
    pub fn offline(mut self, offline: bool) -> Self {
        self.parts.offline = offline;
        self
    }

    /// The most model calls one run makes (default 8).
    pub fn max_turns(mut self, turns: usize) -> Self {
        self.parts.max_turns = turns;
        self
    }

    /// Asks for streamed answers (default) or whole ones.
    pub fn stream(mut self, stream: bool) -> Self {
        self.parts.stream = stream;
        self
    }

    /// Compacts a session after a run when its context passes the
    /// window minus the reserve of `settings` (off by default; see
    /// [`AgentSession::compact`](super::AgentSession::compact)).
    pub fn compaction(mut self, settings: impl Into<Option<CompactionSettings>>) -> Self {
        self.parts.compaction = settings.into();
        self
    }

    /// The profile tool schemas are exported in (default `openai`).
    pub fn profile(mut self, profile: SchemaProfile) -> Self {
        self.parts.profile = profile;
        self
    }

    /// The host.
    ///
    /// # Errors
    ///
    /// [`AgentHostError::UnknownModelProvider`] when a model configuration
    /// names a provider type key the plugin host did not build (its plugin
    /// is not linked or not loaded): every such key, with the keys the
    /// plugin host has. Without the check the host would build and its
    /// first prompt fail far from the mistake. A host with no model
    /// configuration builds.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use std::sync::Arc;
    /// use oscova_agent::session::MemoryStore;
    /// use oscova_agent::session::agent::{AgentHost, AgentHostError};
    /// use oscova_core::PluginHost;
    /// use oscova_core::provider::model::ModelProviderConfig;
    ///
    /// // No plugin linked, so no model provider.
    /// let plugins = PluginHost::builder().no_linked_plugins().build()?;
    /// let refused = AgentHost::builder(plugins.clone(), Arc::new(MemoryStore::new()))
    ///     .model(ModelProviderConfig::new("ollama").model("llama3.2"))
    ///     .build()
    ///     .unwrap_err();
    /// assert!(matches!(refused, AgentHostError::UnknownModelProvider { .. }));
    /// assert!(refused.to_string().starts_with(
    ///     "model provider `ollama` is configured, but the plugin host built no model \
    ///      provider by that key (it has none)"
    /// ));
    ///
    /// // Without a model configuration it builds: sessions choose one later.
    /// let agents = AgentHost::builder(plugins, Arc::new(MemoryStore::new())).build()?;
    /// # let _ = agents;
    /// # Ok(())
    /// # }
    /// ```
    pub fn build(mut self) -> Result<AgentHost, AgentHostError> {
        let mut unknown: Vec<String> = Vec::new();
        for (config, _) in &self.parts.models {
            let key = config.provider.as_str();
            if model_provider(&self.parts.plugins, key).is_none()
                && !unknown.iter().any(|k| k == key)
            {
                unknown.push(key.to_owned());
            }
        }
        if !unknown.is_empty() {
            return Err(AgentHostError::UnknownModelProvider {
                available: model_provider_keys(&self.parts.plugins),
                unknown,
            });
        }
        self.parts.specs = ExportedSpecs::new(&self.parts.plugins, self.parts.profile);
        Ok(AgentHost {
            inner: Arc::new(self.parts),
        })
    }
}

/// Why [`AgentHostBuilder::build`] refused to build an [`AgentHost`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentHostError {
    /// A model configuration names a provider the plugin host did not
    /// build: no loaded plugin registered a model provider with that type
    /// key.
    #[error(
        "{} configured, but the plugin host built no model provider by {} ({}): \
         link the plugin that registers it and name it in `linked_plugins!`, or \
         configure a provider the host has",
        configured(unknown),
        if unknown.len() == 1 { "that key" } else { "those keys" },
        has(available)
    )]
    UnknownModelProvider {
        /// The type keys asked for that the plugin host does not have, in
        /// the order they were configured.
        unknown: Vec<String>,
        /// The model provider type keys the plugin host has, sorted.
        available: Vec<String>,
    },
}

impl AgentHostError {
    /// A short code for the kind of error, as [`AgentError::kind`]
    /// gives one (`unknown_provider`, as for a provider a session asks
    /// for).
    ///
    /// [`AgentError::kind`]: super::AgentError::kind
    pub fn kind(&self) -> &'static str {
        match self {
            Self::UnknownModelProvider { .. } => "unknown_provider",
        }
    }
}

fn quoted(keys: &[String]) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn configured(unknown: &[String]) -> String {
    match unknown {
        [one] => format!("model provider `{one}` is"),
        many => format!("model providers {} are", quoted(many)),
    }
}

fn has(available: &[String]) -> String {
    if available.is_empty() {
        "it has none".to_owned()
    } else {
        format!("it has {}", quoted(available))
    }
}
