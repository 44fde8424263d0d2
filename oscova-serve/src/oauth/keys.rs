//! The issuer's signing keys: discovered, fetched lazily, cached, and
//! refetched on an unknown key id at a bounded rate.
//!
//! Rules: nothing is fetched until the first token needs a key. The
//! issuer's metadata is read from RFC 8414's
//! `/.well-known/oauth-authorization-server` (path form), else OpenID's
//! `/.well-known/openid-configuration`, and its `issuer` must equal the
//! configured one exactly (RFC 8414 §3.3), or its `jwks_uri` is not used.
//! Every fetch goes through the host's HTTP client as an operator-configured
//! endpoint ([`HttpClient::for_endpoint`]: an issuer on loopback is reached
//! under the `Local` rule, so its name cannot lead off the machine), is
//! bounded in time (10 s) and size (1 MiB), and sends no token. A token
//! whose key id is not in the cached set causes one refetch, and at most
//! one per `refetch_interval` whatever the number of such tokens (one
//! fetch at a time; the others wait for it and use its answer), so forged
//! key ids cannot make the server hammer the issuer. A failed fetch also
//! counts: an unreachable issuer is asked again after the interval.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use oscova_core::HttpClient;
use serde::Deserialize;

use super::jws::{Alg, PublicKey};

/// The longest document read from the issuer.
const MAX_DOCUMENT: usize = 1 << 20;
/// The time one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Default)]
struct Cached {
    keys: Arc<Vec<PublicKey>>,
    jwks_uri: Option<String>,
    /// When the last fetch was tried, and whether it failed.
    fetched: Option<(Instant, bool)>,
}

/// The issuer's keys as last fetched.
pub(crate) struct Keys {
    issuer: String,
    http: HttpClient,
    refetch_interval: Duration,
    cached: RwLock<Cached>,
    fetching: tokio::sync::Mutex<()>,
}

/// Why no key could be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the issuer's keys are unavailable: {0}")]
pub(crate) struct KeysUnavailable(pub(crate) String);

impl Keys {
    pub(crate) fn new(issuer: String, http: HttpClient, refetch_interval: Duration) -> Self {
        Self {
            issuer,
            http,
            refetch_interval,
            cached: RwLock::default(),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The cached keys that may verify a token with `kid` and `alg`.
    fn matching(&self, kid: Option<&str>, alg: Alg) -> (Vec<PublicKey>, Option<(Instant, bool)>) {
        let cached = self.cached.read().unwrap_or_else(|p| p.into_inner());
        let keys = cached
            .keys
            .iter()
            .filter(|k| k.verifies(alg) && (kid.is_none() || k.kid.as_deref() == kid))
            .cloned()
            .collect();
        (keys, cached.fetched)
    }

    /// The keys that may verify a token with `kid` and `alg`, fetching the
    /// set when it has none (at most once per interval). Empty when the
    /// issuer has no such key.
    pub(crate) async fn candidates(
        &self,
        kid: Option<&str>,
        alg: Alg,
    ) -> Result<Vec<PublicKey>, KeysUnavailable> {
        let (keys, _) = self.matching(kid, alg);
        if !keys.is_empty() {
            return Ok(keys);
        }
        let _one_at_a_time = self.fetching.lock().await;
        let (keys, fetched) = self.matching(kid, alg);
        if !keys.is_empty() {
            return Ok(keys);
        }
        if let Some((at, failed)) = fetched
            && at.elapsed() < self.refetch_interval
        {
            return if failed {
                Err(KeysUnavailable("the last fetch failed".to_owned()))
            } else {
                Ok(keys)
            };
        }
        let result = self.fetch().await;
        let mut cached = self.cached.write().unwrap_or_else(|p| p.into_inner());
        cached.fetched = Some((Instant::now(), result.is_err()));
        match result {
            Ok((jwks_uri, keys)) => {
                cached.jwks_uri = Some(jwks_uri);
                cached.keys = Arc::new(keys);
                drop(cached);
                Ok(self.matching(kid, alg).0)
            }
            Err(error) => {
                tracing::warn!(issuer = %self.issuer, %error, "fetching the OAuth issuer's keys failed");
                Err(error)
            }
        }
    }

    async fn fetch(&self) -> Result<(String, Vec<PublicKey>), KeysUnavailable> {
        let known = self
            .cached
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .jwks_uri
            .clone();
        let jwks_uri = match known {
            Some(uri) => uri,
            None => self.discover().await?,
        };
        let body = self.get(&jwks_uri).await?;
        let keys = PublicKey::set_from_json(&body)
            .ok_or_else(|| KeysUnavailable(format!("{jwks_uri} is not a JWK set")))?;
        Ok((jwks_uri, keys))
    }

    /// The issuer's `jwks_uri`, from its metadata.
    async fn discover(&self) -> Result<String, KeysUnavailable> {
        #[derive(Deserialize)]
        struct Metadata {
            issuer: String,
            jwks_uri: Option<String>,
        }
        let mut last = KeysUnavailable("no metadata".to_owned());
        for url in metadata_urls(&self.issuer) {
            let body = match self.get(&url).await {
                Ok(body) => body,
                Err(error) => {
                    last = error;
                    continue;
                }
            };
            let Ok(metadata) = serde_json::from_slice::<Metadata>(&body) else {
                last = KeysUnavailable(format!("{url} is not authorization server metadata"));
                continue;
            };
            if metadata.issuer != self.issuer {
                last = KeysUnavailable(format!(
                    "{url} names issuer `{}`, not `{}`",
                    metadata.issuer, self.issuer
                ));
                continue;
            }
            return metadata
                .jwks_uri
                .ok_or_else(|| KeysUnavailable(format!("{url} has no jwks_uri")));
        }
        Err(last)
    }

    async fn get(&self, url: &str) -> Result<Vec<u8>, KeysUnavailable> {
        let failed = |e: &dyn std::fmt::Display| KeysUnavailable(format!("{url}: {e}"));
        let mut response = self
            .http
            .for_endpoint(url, None)
            .get(url)
            .header("accept", "application/json")
            .timeout(FETCH_TIMEOUT)
            .send()
            .await
            .map_err(|e| failed(&e))?;
        if !response.status().is_success() {
            return Err(failed(&response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| failed(&e))? {
            if body.len() + chunk.len() > MAX_DOCUMENT {
                return Err(failed(&"larger than 1 MiB"));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// Where an issuer's metadata may be: RFC 8414's form (the well-known
/// segment inserted before the issuer's path), then OpenID's (appended).
pub(crate) fn metadata_urls(issuer: &str) -> Vec<String> {
    let trimmed = issuer.trim_end_matches('/');
    let mut urls = Vec::new();
    if let Some((scheme, rest)) = trimmed.split_once("://") {
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        urls.push(format!(
            "{scheme}://{authority}/.well-known/oauth-authorization-server{path}"
        ));
    }
    urls.push(format!("{trimmed}/.well-known/openid-configuration"));
    urls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_both_rfcs_put_it() {
        assert_eq!(
            metadata_urls("https://as.example/tenant/1"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant/1",
                "https://as.example/tenant/1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(
            metadata_urls("http://127.0.0.1:8080"),
            [
                "http://127.0.0.1:8080/.well-known/oauth-authorization-server",
                "http://127.0.0.1:8080/.well-known/openid-configuration"
            ]
        );
    }
}
