//! Where the speech tools get their routers.
//!
//! Rules: a toolset factory cannot see the host (its context has the user,
//! credentials, the HTTP client and the spawn policy, but not the host's
//! published providers), and `SpeechRouters::from_host` needs a host that
//! exists only after `build`. So the plugin value carries a shared slot:
//! the host may fill it with its own routers (built from the host, so
//! plugin speech providers are routed too) before or after `build`, and
//! every clone of the plugin, every user scope and every call sees the
//! routers in the slot at the moment of the call. Until the slot is
//! filled, calls use routers with the built-in providers only, built once
//! for all users on the first user scope, from that context's spawn
//! policy and HTTP client (which are the host's).

use std::fmt;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use oscova_core::{AgentPluginContext, PluginHost};
use oscova_speech::{
    FliteSynthesizer, OpenAiSpeech, PocketsphinxRecognizer, SpeechRecognitionRouter, SpeechRouters,
    SpeechSynthesisRouter,
};

/// The routers of one plugin value and all its clones.
#[derive(Clone, Default)]
pub(crate) struct RouterSlot {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    /// What the host set, if anything.
    host: RwLock<Option<Arc<SpeechRouters>>>,
    /// The built-in-only routers, built on first need.
    builtin: OnceLock<Arc<SpeechRouters>>,
}

impl RouterSlot {
    /// Replaces the routers every later call uses.
    pub(crate) fn set(&self, routers: Arc<SpeechRouters>) {
        *self
            .shared
            .host
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(routers);
    }

    /// Whether the host set routers.
    pub(crate) fn is_set(&self) -> bool {
        self.shared
            .host
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The built-in-only routers, built by the first toolset factory that
    /// asks and shared by all later ones.
    pub(crate) fn fallback(&self, ctx: &AgentPluginContext) -> Arc<SpeechRouters> {
        Arc::clone(self.shared.builtin.get_or_init(|| builtin_routers(ctx)))
    }

    /// The routers for a call starting now: the host's, else `fallback`.
    pub(crate) fn current(&self, fallback: &Arc<SpeechRouters>) -> Arc<SpeechRouters> {
        let host = self
            .shared
            .host
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        host.unwrap_or_else(|| Arc::clone(fallback))
    }
}

impl fmt::Debug for RouterSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouterSlot")
            .field("host_routers", &self.is_set())
            .finish_non_exhaustive()
    }
}

/// `flite`, `pocketsphinx` and one `openai` shared by both directions, as
/// `SpeechRouters::from_host` builds them, less the plugin providers.
fn builtin_routers(ctx: &AgentPluginContext) -> Arc<SpeechRouters> {
    let openai = Arc::new(OpenAiSpeech::new(ctx.http_client()));
    let recognition = SpeechRecognitionRouter::builder()
        .builtin(PocketsphinxRecognizer::new())
        .builtin_shared(Arc::clone(&openai))
        .build();
    let synthesis = SpeechSynthesisRouter::builder()
        .builtin(FliteSynthesizer::new().with_policy(ctx.spawn_policy().clone()))
        .builtin_shared(openai)
        .build();
    Arc::new(SpeechRouters::new(recognition, synthesis))
}

/// The routers a host would build for itself, for [`RouterSlot::set`].
pub(crate) fn host_routers(host: &PluginHost) -> Arc<SpeechRouters> {
    Arc::new(SpeechRouters::from_host(host))
}
