//! Client identity by a Client ID Metadata Document, for real: the test
//! serves the document over HTTPS on 127.0.0.1 with a certificate from a
//! test CA (`crate::tls::pki`), and the provider is started trusting that
//! CA and allowed to fetch that one loopback origin
//! (`OidcProvider::start_fetching_documents_of`). The login goes through
//! consent to a grant whose token requests name the document's URL as
//! the client, and a tool call with it succeeds; a document whose
//! `client_id` is not its own URL is refused by the provider.
//!
//! Client identity, not storage: on SQLite only (the grant is kept by the
//! same code as every other case's, which runs on both stores).

use std::collections::BTreeMap;
use std::sync::Arc;

use oscova_core::prelude::*;
use oscova_plugin_mcp::{LoopbackRedirect, OAuthClient, ServerConfig};
use oscova_test_support::oidc::OidcProvider;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls;

use super::world::{Kind, World};
use super::{builder, consent, exchange, grants, host_of, whoami};
use crate::tls::{Pki, pki, write_ca};

/// The documents a [`Documents`] server serves, by path.
type Served = BTreeMap<&'static str, serde_json::Value>;

/// An HTTPS server on 127.0.0.1 serving JSON documents by path, counting
/// the requests for each.
struct Documents {
    origin: String,
    served: Arc<std::sync::Mutex<Served>>,
    fetched: Arc<std::sync::Mutex<BTreeMap<String, usize>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Documents {
    /// Listens with `pki`'s certificate on a port the system picks;
    /// nothing served until [`serve`](Self::serve).
    async fn start(pki: &Pki) -> Self {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = rustls::pki_types::PrivatePkcs8KeyDer::from(pki.key.clone());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![pki.cert.clone()], key.into())
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("https://{}", listener.local_addr().unwrap());
        let served = Arc::new(std::sync::Mutex::new(Served::new()));
        let fetched = Arc::new(std::sync::Mutex::new(BTreeMap::new()));
        let (docs, counts) = (served.clone(), fetched.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (acceptor, docs, counts) = (acceptor.clone(), docs.clone(), counts.clone());
                tokio::spawn(async move {
                    let Ok(mut stream) = acceptor.accept(stream).await else {
                        return;
                    };
                    let mut head = Vec::new();
                    let mut chunk = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
                        match stream.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let head = String::from_utf8_lossy(&head);
                    let path = head
                        .lines()
                        .next()
                        .and_then(|l| l.split(' ').nth(1))
                        .unwrap_or_default()
                        .to_owned();
                    *counts.lock().unwrap().entry(path.clone()).or_default() += 1;
                    let document = docs.lock().unwrap().get(path.as_str()).cloned();
                    let answer = match document {
                        Some(document) => {
                            let body = document.to_string();
                            format!(
                                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                                body.len()
                            )
                        }
                        None => "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                            .to_owned(),
                    };
                    let _ = stream.write_all(answer.as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        Self {
            origin,
            served,
            fetched,
            task,
        }
    }

    /// The URL of `path` on it.
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    /// Serves `document` at `path`.
    fn serve(&self, path: &'static str, document: serde_json::Value) {
        self.served.lock().unwrap().insert(path, document);
    }

    /// How many requests `path` has had.
    fn fetches(&self, path: &str) -> usize {
        self.fetched
            .lock()
            .unwrap()
            .get(path)
            .copied()
            .unwrap_or_default()
    }
}

impl Drop for Documents {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A public native client's document: `client_id` (its own URL, unless
/// a case says otherwise), the redirects it may use.
fn document(client_id: &str, redirect_uris: &[&str]) -> serde_json::Value {
    json!({
        "client_id": client_id,
        "client_name": "Oscova (test)",
        "application_type": "native",
        "redirect_uris": redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    })
}

/// Server `up` of `world`, its client the document at `url`.
fn by_document(world: &World, url: &str) -> ServerConfig {
    ServerConfig::url(&world.upstream.url)
        .per_user(true)
        .network(NetworkScope::Local)
        .timeout(std::time::Duration::from_secs(20))
        .oauth(
            OAuthClient::authorization_code()
                .client_metadata_url(url)
                .scopes(["mcp"])
                .issuer(world.provider.issuer()),
        )
}

pub(super) async fn a_client_id_metadata_document_is_fetched_and_the_login_completes() {
    let pki = pki("Oscova CIMD test CA");
    let dir = tempfile::tempdir().unwrap();
    let ca_file = write_ca(dir.path(), &pki);
    let documents = Documents::start(&pki).await;
    let client = documents.url("/oauth/client.json");
    let impostor = documents.url("/oauth/impostor.json");
    // The host's login and alice's, each on its own loopback listener.
    let (host_redirect, alice_redirect) = (
        LoopbackRedirect::bind().await.unwrap(),
        LoopbackRedirect::bind().await.unwrap(),
    );
    let redirects = [host_redirect.redirect_uri(), alice_redirect.redirect_uri()];
    documents.serve("/oauth/client.json", document(&client, &redirects));
    // Another document claiming to be the first: its `client_id` is not
    // its own URL.
    documents.serve("/oauth/impostor.json", document(&client, &redirects));

    let (origin, ca) = (documents.origin.clone(), ca_file.clone());
    let provider = tokio::task::spawn_blocking(move || {
        OidcProvider::start_fetching_documents_of(&origin, &ca)
    })
    .await
    .unwrap();
    let world = World::with_provider(Kind::Sqlite, provider).await;
    let mcp = builder(by_document(&world, &client), &world.store());

    // The host's login and alice's: the URL is the client id, the
    // provider fetches the document, consent is given, the code is
    // exchanged.
    for (loopback, user, account) in [
        (host_redirect, None, "account-host"),
        (alice_redirect, Some("alice"), "account-alice"),
    ] {
        let login = mcp
            .login("up", user, loopback.redirect_uri())
            .await
            .expect("the login starts");
        let url = reqwest_rmcp::Url::parse(login.authorization_url()).unwrap();
        let client_id = url
            .query_pairs()
            .find(|(k, _)| k == "client_id")
            .map(|(_, v)| v.into_owned());
        assert_eq!(client_id.as_deref(), Some(client.as_str()), "{url}");
        let redirected = consent(&world.provider, login.authorization_url(), account).await;
        assert!(redirected.starts_with(login.redirect_uri()), "{redirected}");
        let waiting = tokio::spawn(loopback.wait());
        let (status, page) = exchange("GET", &redirected, None).await;
        assert_eq!(status, 200, "{page}");
        let url = waiting.await.unwrap().unwrap();
        login.finish(&url).await.expect("the code is exchanged");
    }
    assert!(
        documents.fetches("/oauth/client.json") >= 1,
        "the provider fetched the document"
    );
    let counts = grants(&world.provider).await;
    assert_eq!(counts["authorization_code"], 2, "{counts}");
    assert_eq!(counts["registrations"], 0, "nothing registered: {counts}");
    assert_eq!(
        counts["clients"],
        json!([client, client]),
        "each token request named the document's URL as its client: {counts}"
    );
    let rows = world.rows().await;
    assert_eq!(rows.len(), 2, "the host's grant and alice's are kept");

    // A tool call with alice's grant.
    let host = host_of(mcp).await;
    let called = whoami(&host, "alice").await;
    assert_eq!(called.content, "upstream-alice", "{called:?}");
    host.shutdown().await;

    // The impostor: the provider fetches it, finds a `client_id` that is
    // not its URL, and refuses the client; it must not redirect to an
    // unknown client's redirect URI, so the person sees its error page.
    let loopback = LoopbackRedirect::bind().await.unwrap();
    let login = builder(by_document(&world, &impostor), &world.store())
        .login("up", Some("bob"), loopback.redirect_uri())
        .await
        .expect("the login starts: the plugin does not fetch the document itself");
    let provider = world.provider.clone();
    let url = login.authorization_url().to_owned();
    let refused = tokio::task::spawn_blocking(move || provider.try_consent(&url, "account-bob"))
        .await
        .unwrap();
    let (status, page) = refused.expect_err("the impostor is refused, with no redirect");
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("invalid_client_metadata"), "{page}");
    assert!(
        page.contains("client_id metadata document client_id does not match"),
        "{page}"
    );
    assert!(documents.fetches("/oauth/impostor.json") >= 1);
    // Nothing comes back to the plugin's listener; the address the
    // person's browser ended on (the authorization URL, showing the
    // error), pasted, is refused with a reason, nothing exchanged.
    let waited = tokio::time::timeout(std::time::Duration::from_millis(300), loopback.wait()).await;
    assert!(
        waited.is_err(),
        "no redirect reached the listener: {waited:?}"
    );
    let pasted = login.authorization_url().to_owned();
    let err = login
        .finish(&pasted)
        .await
        .expect_err("no code, nothing exchanged");
    assert!(err.contains("carries no `code`"), "{err}");
    assert_eq!(grants(&world.provider).await["authorization_code"], 2);
    assert_eq!(world.rows().await.len(), 2, "no grant for bob");
    world.upstream.stop().await;
}
