//! [`AgentHostBuilder`]: what an [`AgentHost`] is made of (the plugin
//! host, the store, the models, the extensions and the run settings).
//!
//! Rules: setters only record; `build` makes the parts into a host.

use std::sync::Arc;

use oscova_core::provider::model::ModelProviderConfig;
use oscova_core::{ExposeSecret, PluginHost, SecretString};

use super::deliver::LiveSessions;
use super::extension::{Extension, ExtensionFactory, factory_of, factory_with};
use super::host::{AgentHost, HostParts};
use super::specs::ExportedSpecs;
use crate::chat::DEFAULT_MAX_ROUNDS;
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
    /// Its provider must be one the plugin host built.
    pub fn model(mut self, config: ModelProviderConfig) -> Self {
        self.parts.models.push((config, None));
        self
    }

    /// Adds a model configuration with the API key its provider is called
    /// with; the key is redacted in every session's tool results, as the
    /// host's secrets are.
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
    /// [`AgentSession::compact`]).
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
    pub fn build(mut self) -> AgentHost {
        self.parts.specs = ExportedSpecs::new(&self.parts.plugins, self.parts.profile);
        AgentHost {
            inner: Arc::new(self.parts),
        }
    }
}
