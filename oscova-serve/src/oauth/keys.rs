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
//! bounded in time (10 s) and size (1 MiB), and sends no token (but the
//! introspection of an opaque token, to its own issuer). A token
//! whose key id is not in the cached set causes one refetch, and at most
//! one per `refetch_interval` whatever the number of such tokens (one
//! fetch at a time; the others wait for it and use its answer), so forged
//! key ids cannot make the server hammer the issuer. A failed fetch also
//! counts: an unreachable issuer is asked again after the interval. The
//! metadata's `introspection_endpoint` is kept for opaque tokens
//! (`OAuth::introspect` in `mod.rs`), and posted to through the same
//! client with the same bounds.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use oscova_core::HttpClient;
use serde::Deserialize;

use super::jws::{Alg, PublicKey};

/// The longest document read from the issuer.
const MAX_DOCUMENT: usize = 1 << 20;
/// The time one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// What the issuer's metadata says, as far as it is used.
#[derive(Debug, Clone, Default, Deserialize)]
struct Discovered {
    issuer: String,
    jwks_uri: Option<String>,
    introspection_endpoint: Option<String>,
}

#[derive(Default)]
struct Cached {
    keys: Arc<Vec<PublicKey>>,
    discovered: Option<Discovered>,
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
            Ok(keys) => {
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

    async fn fetch(&self) -> Result<Vec<PublicKey>, KeysUnavailable> {
        let jwks_uri =
            self.discovered().await?.jwks_uri.ok_or_else(|| {
                KeysUnavailable("the issuer's metadata has no jwks_uri".to_owned())
            })?;
        let body = self.get(&jwks_uri).await?;
        PublicKey::set_from_json(&body)
            .ok_or_else(|| KeysUnavailable(format!("{jwks_uri} is not a JWK set")))
    }

    /// The issuer's metadata, read once and kept (a failed read is tried
    /// again on the next need).
    async fn discovered(&self) -> Result<Discovered, KeysUnavailable> {
        let known = self
            .cached
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .discovered
            .clone();
        if let Some(known) = known {
            return Ok(known);
        }
        let found = self.discover().await?;
        self.cached
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .discovered = Some(found.clone());
        Ok(found)
    }

    /// The issuer's RFC 7662 introspection endpoint, from its metadata.
    pub(crate) async fn introspection_endpoint(&self) -> Result<String, KeysUnavailable> {
        self.discovered()
            .await?
            .introspection_endpoint
            .ok_or_else(|| {
                KeysUnavailable("the issuer's metadata has no introspection_endpoint".to_owned())
            })
    }

    /// The issuer's metadata, from the first of its well-known URLs that
    /// names it exactly.
    async fn discover(&self) -> Result<Discovered, KeysUnavailable> {
        let mut last = KeysUnavailable("no metadata".to_owned());
        for url in metadata_urls(&self.issuer) {
            let body = match self.get(&url).await {
                Ok(body) => body,
                Err(error) => {
                    last = error;
                    continue;
                }
            };
            let Ok(metadata) = serde_json::from_slice::<Discovered>(&body) else {
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
            return Ok(metadata);
        }
        Err(last)
    }

    async fn get(&self, url: &str) -> Result<Vec<u8>, KeysUnavailable> {
        let request = self.http.for_endpoint(url, None).get(url);
        Self::read(url, request).await
    }

    /// POSTs a form `body` to `url` with HTTP Basic `client:secret`
    /// (`application/x-www-form-urlencoded` values, as RFC 6749 §2.3.1
    /// says); the answer's body.
    pub(crate) async fn post_form(
        &self,
        url: &str,
        client: &str,
        secret: &str,
        body: String,
    ) -> Result<Vec<u8>, KeysUnavailable> {
        use base64::Engine as _;
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            form_encode(client),
            form_encode(secret)
        ));
        let request = self
            .http
            .for_endpoint(url, None)
            .post(url)
            .header("authorization", &format!("Basic {basic}"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        Self::read(url, request).await
    }

    async fn read(
        url: &str,
        request: oscova_core::http::HttpRequestBuilder,
    ) -> Result<Vec<u8>, KeysUnavailable> {
        let failed = |e: &dyn std::fmt::Display| KeysUnavailable(format!("{url}: {e}"));
        let mut response = request
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

/// `value` as `application/x-www-form-urlencoded` writes it.
pub(crate) fn form_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                char::from(b).to_string()
            }
            b' ' => "+".to_owned(),
            _ => format!("%{b:02X}"),
        })
        .collect()
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
