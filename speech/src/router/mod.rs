//! The speech routers: one generic router, [`Router`], over either
//! direction ([`SpeechRecognitionRouter`], [`SpeechSynthesisRouter`]),
//! built by one generic [`RouterBuilder`]; [`SpeechRouters`] is the pair
//! a host builds once.
//!
//! Rules: everything that can be decided ahead is decided when a router is
//! built. Candidates are ranked then — built-in providers before plugin
//! providers, each group in registration order — and the first candidate for
//! a type key wins (for a router built from a host, plugin providers come in
//! the host's load order, which `PluginHostBuilder::build` documents and the
//! linker does not decide, each plugin's in the order it registered them);
//! every later one is dropped with a
//! [`PROVIDER_DROPPED`] warning (logged through `tracing` as it
//! is created, and kept for [`diagnostics`](Router::diagnostics))
//! that names the dropped implementation and the one that kept the key. A
//! provider's type key and `default_is_local_endpoint` are read once, there.
//! Routing is then one hash lookup and, when offline operation is required,
//! the locality check of [`is_local_endpoint`](oscova_core::locality::is_local_endpoint)
//! on the configured endpoint and download URL — both before the provider
//! is entered, so a refused request never reaches it. A configuration
//! without an endpoint is local only if the provider is local by design.
//! Errors never quote user info of a URL.
//!
//! What differs between the directions is only the call itself:
//! `recognition.rs` adds `recognize`, `synthesis.rs` adds `synthesize`
//! and its caps on text and audio length.

mod builder;
mod origin;
mod recognition;
mod routers;
mod synthesis;
mod table;

use std::fmt;
use std::sync::Arc;

use oscova_core::Diagnostic;
use oscova_core::provider::speech::{
    SpeechError, SpeechProviderConfig, SpeechRecognitionProvider, SpeechSynthesisProvider,
};
use oscova_core::provider::{ProviderKind, ProviderTypeKey};

pub use builder::RouterBuilder;
pub use origin::{PROVIDER_DROPPED, ProviderOrigin};
pub(crate) use routers::Builtins;
pub use routers::SpeechRouters;

/// Routes recognition requests: audio in, text out (see [`Router`]).
pub type SpeechRecognitionRouter = Router<dyn SpeechRecognitionProvider>;

/// Routes synthesis requests: text in, audio out (see [`Router`]).
pub type SpeechSynthesisRouter = Router<dyn SpeechSynthesisProvider>;

/// A direction a router routes: `dyn SpeechRecognitionProvider` or
/// `dyn SpeechSynthesisProvider`. What the router reads from a provider
/// when it is built: its type key and whether it is local by design.
pub trait Routed: ProviderKind {
    /// The provider's type key.
    fn routed_key(&self) -> ProviderTypeKey;
    /// Whether the provider is local when no endpoint is configured.
    fn routed_default_local(&self) -> bool;
}

impl Routed for dyn SpeechRecognitionProvider {
    fn routed_key(&self) -> ProviderTypeKey {
        self.type_key()
    }
    fn routed_default_local(&self) -> bool {
        self.default_is_local_endpoint()
    }
}

impl Routed for dyn SpeechSynthesisProvider {
    fn routed_key(&self) -> ProviderTypeKey {
        self.type_key()
    }
    fn routed_default_local(&self) -> bool {
        self.default_is_local_endpoint()
    }
}

/// A provider type a router over `P` takes as a built-in: every
/// [`SpeechRecognitionProvider`] for recognition, every
/// [`SpeechSynthesisProvider`] for synthesis (a type that is both, such as
/// `OpenAiSpeech`, goes into either).
pub trait IntoRouted<P: ?Sized>: Send + Sync + 'static {
    /// The provider, shared as the direction's trait object.
    fn into_routed(self: Arc<Self>) -> Arc<P>;
}

impl<T: SpeechRecognitionProvider> IntoRouted<dyn SpeechRecognitionProvider> for T {
    fn into_routed(self: Arc<Self>) -> Arc<dyn SpeechRecognitionProvider> {
        self
    }
}

impl<T: SpeechSynthesisProvider> IntoRouted<dyn SpeechSynthesisProvider> for T {
    fn into_routed(self: Arc<Self>) -> Arc<dyn SpeechSynthesisProvider> {
        self
    }
}

/// Routes requests to the provider whose type key matches the request's
/// [`SpeechProviderConfig`], refusing non-local endpoints before the
/// provider is entered when offline operation is required. One type for
/// both directions: [`SpeechRecognitionRouter`] adds `recognize`,
/// [`SpeechSynthesisRouter`] adds `synthesize`.
pub struct Router<P: ?Sized> {
    table: table::Table<P>,
}

impl<P: ?Sized + Routed> Router<P> {
    /// An empty builder.
    pub fn builder() -> RouterBuilder<P> {
        RouterBuilder::default()
    }

    /// The provider for `config`, after the offline checks: this is all the
    /// routing there is, done before `recognize` or `synthesize` enters the
    /// provider.
    ///
    /// The caps on text and audio length are `synthesize`'s: calling the
    /// provider this returns directly bypasses them.
    ///
    /// # Errors
    ///
    /// [`SpeechError::UnknownProvider`] listing the known keys;
    /// when `offline` is set, [`SpeechError::NotLocal`] for a non-local
    /// endpoint or download URL and [`SpeechError::NoLocalEndpoint`] for a
    /// provider that is not local by design and has no endpoint configured.
    pub fn resolve(
        &self,
        config: &SpeechProviderConfig,
        offline: bool,
        download_url: Option<&str>,
    ) -> Result<&Arc<P>, SpeechError> {
        Ok(&self.table.resolve(config, offline, download_url)?.provider)
    }

    /// The provider that holds `key`, if any (no offline checks, and no
    /// caps).
    pub fn get(&self, key: &str) -> Option<&Arc<P>> {
        self.table.get(key).map(|route| &route.provider)
    }

    /// Where the provider that holds `key` came from.
    pub fn origin(&self, key: &str) -> Option<&ProviderOrigin> {
        self.table.get(key).map(|route| &route.origin)
    }

    /// The routable type keys, sorted.
    pub fn keys(&self) -> &[String] {
        &self.table.keys
    }

    /// One warning per provider dropped in a type-key collision.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.table.diagnostics
    }
}

impl<P: ?Sized> fmt::Debug for Router<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Router")
            .field("routes", &self.table)
            .finish()
    }
}

#[cfg(test)]
mod tests;
