//! [`RouterBuilder`]: collects providers of one direction in call order and
//! ranks them when it builds the router.
//!
//! Rules: built-in providers come before plugin providers whatever the
//! call order; within each group the first registration of a type key
//! wins, and every later one is dropped with a warning (see `origin`). A
//! provider's type key and `default_is_local_endpoint` are read once,
//! here.

use std::any::type_name;
use std::fmt;
use std::sync::Arc;

use oscova_core::PluginHost;
use oscova_core::provider::PublishedProvider;
use oscova_core::provider::speech::SpeechRecognitionProvider;
use rustc_hash::FxHashMap;

use super::origin::dropped;
use super::table::{Route, Table};
use super::{IntoRouted, ProviderOrigin, Routed, Router};
use crate::stream::StreamingRecognizer;

/// A provider waiting for [`RouterBuilder::build`].
struct Candidate<P: ?Sized> {
    provider: Arc<P>,
    origin: ProviderOrigin,
    streaming: Option<Arc<dyn StreamingRecognizer>>,
}

/// Collects the providers of one direction for a [`Router`]: a
/// [`SpeechRecognitionRouter`](super::SpeechRecognitionRouter)'s from
/// `SpeechRecognitionRouter::builder()`, a
/// [`SpeechSynthesisRouter`](super::SpeechSynthesisRouter)'s from
/// `SpeechSynthesisRouter::builder()`. One builder for both directions.
///
/// Built-in providers take precedence over plugin providers whatever the call
/// order; within each group the first registration of a key wins.
///
/// ```
/// use std::sync::Arc;
/// use oscova_speech::SpeechSynthesisRouter;
/// use oscova_speech::providers::{FliteSynthesizer, OpenAiSpeech};
///
/// let router = SpeechSynthesisRouter::builder()
///     .plugin("acme.dup", "acme::Dup", Arc::new(FliteSynthesizer::new()))
///     .builtin(FliteSynthesizer::new())
///     .builtin(OpenAiSpeech::default())
///     .build();
/// assert_eq!(router.keys(), ["flite", "openai"]);
/// assert!(router.origin("flite").is_some_and(|o| o.plugin_id().is_none()));
/// assert_eq!(router.diagnostics().len(), 1); // acme.dup's provider was dropped
/// ```
pub struct RouterBuilder<P: ?Sized> {
    builtins: Vec<Candidate<P>>,
    plugins: Vec<Candidate<P>>,
}

impl<P: ?Sized> Default for RouterBuilder<P> {
    fn default() -> Self {
        Self {
            builtins: Vec::new(),
            plugins: Vec::new(),
        }
    }
}

impl<P: ?Sized + Routed> RouterBuilder<P> {
    /// Adds a built-in provider.
    #[must_use]
    pub fn builtin<T: IntoRouted<P>>(self, provider: T) -> Self {
        self.builtin_shared(Arc::new(provider))
    }

    /// Adds a built-in provider that is shared with something else (the
    /// other router, say).
    #[must_use]
    pub fn builtin_shared<T: IntoRouted<P>>(mut self, provider: Arc<T>) -> Self {
        self.push_builtin(provider.into_routed(), type_name::<T>());
        self
    }

    /// Adds a provider registered by plugin `plugin_id`; `type_name` names
    /// its implementation in warnings.
    #[must_use]
    pub fn plugin(
        mut self,
        plugin_id: impl Into<String>,
        type_name: impl Into<String>,
        provider: Arc<P>,
    ) -> Self {
        self.plugins.push(Candidate {
            provider,
            origin: ProviderOrigin::Plugin {
                plugin_id: plugin_id.into(),
                type_name: type_name.into(),
            },
            streaming: None,
        });
        self
    }

    /// Adds providers a host published, in order.
    #[must_use]
    pub fn published<'a>(
        mut self,
        providers: impl IntoIterator<Item = &'a PublishedProvider<P>>,
    ) -> Self
    where
        P: 'a,
    {
        for published in providers {
            self = self.plugin(
                published.plugin_id(),
                published.type_name(),
                Arc::clone(published.provider()),
            );
        }
        self
    }

    /// Adds every provider of this direction `host` built from its plugins,
    /// in the order it built them: its plugin load order, which does not
    /// depend on the linker (see `PluginHostBuilder::build`), so the plugin
    /// that keeps a contested type key is the same in every build.
    #[must_use]
    pub fn host_plugins(self, host: &PluginHost) -> Self {
        self.published(host.providers::<P>())
    }

    /// Ranks the providers and builds the routing table.
    pub fn build(self) -> Router<P> {
        let mut routes: FxHashMap<Box<str>, Route<P>> = FxHashMap::default();
        let mut diagnostics = Vec::new();
        for candidate in self.builtins.into_iter().chain(self.plugins) {
            let key = candidate.provider.routed_key();
            if let Some(winner) = routes.get(key.as_str()) {
                diagnostics.push(dropped::<P>(&key, &candidate.origin, &winner.origin));
                continue;
            }
            let default_local = candidate.provider.routed_default_local();
            routes.insert(
                key.as_str().into(),
                Route {
                    provider: candidate.provider,
                    default_local,
                    origin: candidate.origin,
                    streaming: candidate.streaming,
                },
            );
        }
        let mut keys: Vec<String> = routes.keys().map(|k| k.to_string()).collect();
        keys.sort_unstable();
        Router {
            table: Table {
                routes,
                keys,
                diagnostics,
            },
        }
    }

    /// Adds a built-in provider already shared as `P`.
    pub(crate) fn push_builtin(&mut self, provider: Arc<P>, type_name: &str) {
        self.builtins.push(Candidate {
            provider,
            origin: ProviderOrigin::BuiltIn {
                type_name: type_name.to_owned(),
            },
            streaming: None,
        });
    }
}

/// Recognition only: providers registered with their streaming form.
impl RouterBuilder<dyn SpeechRecognitionProvider> {
    /// Adds a built-in recognition provider that streams natively: the
    /// router's [`open_stream`](Router::open_stream) hands its streams to
    /// `provider`'s [`StreamingRecognizer`] form (a provider added with
    /// [`builtin`](Self::builtin) streams through the buffering default).
    ///
    /// ```
    /// use oscova_speech::SpeechRecognitionRouter;
    /// use oscova_speech::providers::OpenAiSpeech;
    ///
    /// let router = SpeechRecognitionRouter::builder().builtin(OpenAiSpeech::default()).build();
    /// assert!(!router.streams_natively("openai"));
    /// ```
    #[must_use]
    pub fn builtin_streaming<T>(mut self, provider: T) -> Self
    where
        T: SpeechRecognitionProvider + StreamingRecognizer,
    {
        self.push_builtin_streaming(Arc::new(provider), type_name::<T>());
        self
    }

    /// Adds a recognition provider registered by plugin `plugin_id` that
    /// streams natively (see [`builtin_streaming`](Self::builtin_streaming));
    /// `type_name` names its implementation in warnings. A plugin's
    /// provider from [`host_plugins`](Self::host_plugins) streams through
    /// the buffering default; a host that knows one's streaming form adds
    /// it this way instead.
    #[must_use]
    pub fn plugin_streaming<T>(
        mut self,
        plugin_id: impl Into<String>,
        type_name: impl Into<String>,
        provider: Arc<T>,
    ) -> Self
    where
        T: SpeechRecognitionProvider + StreamingRecognizer,
    {
        self.plugins.push(Candidate {
            provider: Arc::clone(&provider) as Arc<dyn SpeechRecognitionProvider>,
            origin: ProviderOrigin::Plugin {
                plugin_id: plugin_id.into(),
                type_name: type_name.into(),
            },
            streaming: Some(provider),
        });
        self
    }

    /// Adds a built-in provider with its streaming form.
    pub(crate) fn push_builtin_streaming<T>(&mut self, provider: Arc<T>, type_name: &str)
    where
        T: SpeechRecognitionProvider + StreamingRecognizer,
    {
        self.builtins.push(Candidate {
            provider: Arc::clone(&provider) as Arc<dyn SpeechRecognitionProvider>,
            origin: ProviderOrigin::BuiltIn {
                type_name: type_name.to_owned(),
            },
            streaming: Some(provider),
        });
    }
}

impl<P: ?Sized> fmt::Debug for RouterBuilder<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouterBuilder").finish_non_exhaustive()
    }
}
