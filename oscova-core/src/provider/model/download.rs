//! The download side of a model provider whose service owns model
//! acquisition ([`ModelDownloadProvider`]): its catalog ([`ModelInfo`])
//! and the progress of a download ([`DownloadProgress`]).
//!
//! Rules: a host makes the offline check before any download request, as
//! before a chat; cancellation stops a transfer.

use secrecy::SecretString;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::{ModelError, ModelProviderConfig};
use crate::provider::BoxFuture;

/// A model a provider can download.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The model name.
    pub name: String,
    /// Its size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Whether it is already on the machine.
    #[serde(default)]
    pub installed: bool,
    /// The licence of its weights (an SPDX name such as `Apache-2.0`),
    /// when the provider knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
}

impl ModelInfo {
    /// A model named `name`, of unknown size and licence, not installed.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            size: None,
            installed: false,
            license: None,
        }
    }
}

/// Download progress.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DownloadProgress {
    /// What is happening (`pulling manifest`, `downloading`, ...).
    pub status: String,
    /// Bytes done of the current part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed: Option<u64>,
    /// Bytes of the current part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
}
/// A provider whose service owns model acquisition.
pub trait ModelDownloadProvider: Send + Sync {
    /// The models that can be downloaded (or already are).
    fn catalog<'a>(
        &'a self,
        config: &'a ModelProviderConfig,
        api_key: Option<&'a SecretString>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<ModelInfo>, ModelError>>;

    /// Downloads `model`, reporting progress; cancellation stops the transfer.
    fn download<'a>(
        &'a self,
        config: &'a ModelProviderConfig,
        api_key: Option<&'a SecretString>,
        model: &'a str,
        progress: &'a (dyn Fn(DownloadProgress) + Send + Sync),
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<(), ModelError>>;
}
