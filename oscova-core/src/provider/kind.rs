//! Provider kinds: the one mechanism behind every kind of shared provider.
//!
//! A kind is a provider trait object type (`dyn ModelProvider`,
//! `dyn SpeechRecognitionProvider`, `dyn SpeechSynthesisProvider`). The
//! builder records factories of any kind in one list, the host builds them
//! once in that order and keeps them per kind, and shuts every one down in
//! reverse order of creation. What differs between kinds is written once,
//! in the [`ProviderKind`] impl: its name in diagnostics and how it shuts
//! down. [`IntoProvider`] is what a factory may return: the provider, or a
//! `Result` of one.

use std::sync::Arc;

use super::BoxFuture;
use super::model::ModelProvider;
use super::speech::{SpeechRecognitionProvider, SpeechSynthesisProvider};

/// A boxed error from a factory.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A kind of shared provider: a provider trait object type.
///
/// Implemented for `dyn ModelProvider`, `dyn SpeechRecognitionProvider` and
/// `dyn SpeechSynthesisProvider`. Host code names a kind to reach the
/// providers of that kind, as in `host.providers::<dyn ModelProvider>()`.
pub trait ProviderKind: Send + Sync + 'static {
    /// What diagnostics call this kind ("model", "speech recognition").
    const NAME: &'static str;

    /// Releases the provider's resources; the host calls it once, at
    /// shutdown.
    fn shutdown(provider: &Self) -> BoxFuture<'_, ()>;
}

/// What a provider factory of kind `K` may return: a provider of that kind
/// or a `Result` of one.
#[diagnostic::on_unimplemented(
    message = "a provider factory returned `{Self}`, which is not a provider of this kind",
    label = "return the provider, or a `Result` of it",
    note = "a model provider factory returns a type implementing `ModelProvider` (or `Result<T, E>` of one); likewise for the speech provider traits"
)]
pub trait IntoProvider<K: ProviderKind + ?Sized> {
    /// The provider type the factory builds.
    type Output;
    /// The provider, or the factory's error.
    fn into_provider(self) -> Result<Arc<K>, BoxError>;
}

macro_rules! provider_kind {
    ($trait:ident, $name:literal) => {
        impl ProviderKind for dyn $trait {
            const NAME: &'static str = $name;

            fn shutdown(provider: &Self) -> BoxFuture<'_, ()> {
                provider.shutdown()
            }
        }

        impl<T: $trait> IntoProvider<dyn $trait> for T {
            type Output = T;
            fn into_provider(self) -> Result<Arc<dyn $trait>, BoxError> {
                Ok(Arc::new(self))
            }
        }

        impl<T: $trait, E: Into<BoxError>> IntoProvider<dyn $trait> for Result<T, E> {
            type Output = T;
            fn into_provider(self) -> Result<Arc<dyn $trait>, BoxError> {
                self.map(|p| Arc::new(p) as Arc<dyn $trait>)
                    .map_err(Into::into)
            }
        }
    };
}

provider_kind!(ModelProvider, "model");
provider_kind!(SpeechRecognitionProvider, "speech recognition");
provider_kind!(SpeechSynthesisProvider, "speech synthesis");
