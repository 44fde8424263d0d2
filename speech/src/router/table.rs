//! The built routing table: one route per type key, and the offline rules.
//!
//! Rules: routing is one hash lookup and, when offline operation is
//! required, the locality check of [`is_local_endpoint`] on the configured
//! endpoint and download URL, both before the provider is entered. A
//! configuration without an endpoint is local only if the provider is
//! local by design. Errors never quote user info of a URL.

use std::fmt;
use std::sync::Arc;

use oscova_core::Diagnostic;
use oscova_core::locality::is_local_endpoint;
use oscova_core::provider::speech::{SpeechError, SpeechProviderConfig};
use rustc_hash::FxHashMap;

use super::ProviderOrigin;
use crate::error::truncate;
use crate::providers::openai::redact_endpoint_text;
use crate::stream::StreamingRecognizer;

/// A provider that won its type key.
pub(super) struct Route<P: ?Sized> {
    pub(super) provider: Arc<P>,
    pub(super) default_local: bool,
    pub(super) origin: ProviderOrigin,
    /// The provider's streaming form, when it was registered with one
    /// (recognition only); `None` streams through the buffering default.
    pub(super) streaming: Option<Arc<dyn StreamingRecognizer>>,
}

/// The built routing table.
pub(super) struct Table<P: ?Sized> {
    pub(super) routes: FxHashMap<Box<str>, Route<P>>,
    pub(super) keys: Vec<String>,
    pub(super) diagnostics: Vec<Diagnostic>,
}

impl<P: ?Sized> Table<P> {
    /// The route for `config`, if offline rules allow it.
    pub(super) fn resolve(
        &self,
        config: &SpeechProviderConfig,
        offline: bool,
        download_url: Option<&str>,
    ) -> Result<&Route<P>, SpeechError> {
        let Some(route) = self.routes.get(config.provider.as_str()) else {
            return Err(SpeechError::UnknownProvider {
                key: config.provider.to_string(),
                known: self.keys.clone(),
            });
        };
        if offline {
            check_offline(config, route.default_local, download_url)?;
        }
        Ok(route)
    }

    pub(super) fn get(&self, key: &str) -> Option<&Route<P>> {
        self.routes.get(key)
    }
}

impl<P: ?Sized> fmt::Debug for Table<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for key in &self.keys {
            if let Some(route) = self.routes.get(key.as_str()) {
                map.entry(key, &route.origin.to_string());
            }
        }
        map.finish()
    }
}

/// The offline rules: the endpoint (or, without one, the provider's design)
/// and the download URL must be local.
pub(super) fn check_offline(
    config: &SpeechProviderConfig,
    default_local: bool,
    download_url: Option<&str>,
) -> Result<(), SpeechError> {
    match config.endpoint.as_deref() {
        Some(endpoint) if !is_local_endpoint(endpoint) => {
            return Err(SpeechError::NotLocal {
                what: "endpoint",
                endpoint: shown(endpoint),
            });
        }
        Some(_) => {}
        None if !default_local => {
            return Err(SpeechError::NoLocalEndpoint {
                key: config.provider.to_string(),
            });
        }
        None => {}
    }
    if let Some(url) = download_url.filter(|url| !is_local_endpoint(url)) {
        return Err(SpeechError::NotLocal {
            what: "download URL",
            endpoint: shown(url),
        });
    }
    Ok(())
}

/// A refused URL as an error may quote it: user info hidden, length capped.
pub(super) fn shown(url: &str) -> String {
    truncate(&redact_endpoint_text(url).escape_debug().to_string(), 200)
}
