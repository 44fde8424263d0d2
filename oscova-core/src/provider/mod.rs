//! Provider contracts the builder registers: model providers (with an
//! optional download side) and speech recognition and synthesis providers.
//!
//! Providers are created once at host start, shared by every user, and
//! must be `Send + Sync`. Runtime calls receive the provider configuration,
//! the selected plaintext API key and a cancellation token. A provider that
//! owns resources releases them in `shutdown`, which the host calls once,
//! in reverse order of creation.
//!
//! Every kind is handled by one mechanism ([`ProviderKind`]): the builder
//! records factories of any kind in one list, the host builds them once and
//! hands them out by kind (`host.providers::<dyn ModelProvider>()`).
//!
//! The HTTP plumbing that back ends share (bounded reads, streamed lines,
//! scrubbed error texts) is not a contract: it is [`crate::http::backend`],
//! behind the `http` feature.

mod kind;
pub mod model;
pub(crate) mod provisions;
pub mod speech;

pub use kind::{BoxError, IntoProvider, ProviderKind};
pub use provisions::PublishedProvider;

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

/// A boxed, sendable future, as provider traits return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A stable provider type identifier (`"openai"`, `"flite"`, `"acme.tts"`).
/// Routers match it exactly.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProviderTypeKey(Cow<'static, str>);

impl ProviderTypeKey {
    /// A key from a static string.
    pub const fn from_static(key: &'static str) -> Self {
        Self(Cow::Borrowed(key))
    }

    /// A key from any string.
    pub fn new(key: impl Into<String>) -> Self {
        Self(Cow::Owned(key.into()))
    }

    /// The key text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ProviderTypeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for ProviderTypeKey {
    fn from(key: &str) -> Self {
        Self::new(key.to_owned())
    }
}

impl From<String> for ProviderTypeKey {
    fn from(key: String) -> Self {
        Self::new(key)
    }
}

impl Default for ProviderTypeKey {
    /// The empty key, which routes to nothing.
    fn default() -> Self {
        Self::from_static("")
    }
}

impl std::ops::Deref for ProviderTypeKey {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for ProviderTypeKey {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<&String> for ProviderTypeKey {
    fn from(key: &String) -> Self {
        Self::new(key.clone())
    }
}

impl PartialEq<str> for ProviderTypeKey {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<ProviderTypeKey> for str {
    fn eq(&self, other: &ProviderTypeKey) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<ProviderTypeKey> for &str {
    fn eq(&self, other: &ProviderTypeKey) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<ProviderTypeKey> for String {
    fn eq(&self, other: &ProviderTypeKey) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<&str> for ProviderTypeKey {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// A future that is already done; for default `shutdown` methods.
pub fn ready<'a, T: Send + 'a>(value: T) -> BoxFuture<'a, T> {
    Box::pin(std::future::ready(value))
}
