//! What a request's authentication costs: a static token, an OAuth access
//! token already accepted once (the common case: a client reuses its
//! token), and an access token checked for the first time (signature and
//! claims; ES256 and EdDSA). The issuer is a small loopback server this
//! bench starts, serving its metadata and JWK set; the keys are fetched
//! once, before measuring.
//!
//! Beside it, what the port's Origin and Host policy costs a request
//! (`origin_policy`), checked before authentication on every path.
//!
//! Run with: `cargo bench -p oscova-serve --bench auth`
//!
//! Budget (issue 27): `oscova mcp --listen` with OAuth serves at least 0.9x
//! the calls per second it serves with static tokens; `mcp-load --auth`
//! measures that end to end, this bench the part that differs.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)] // bench fixtures

use std::hint::black_box;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use http::HeaderMap;
use oscova_core::HttpClient;
use oscova_serve::origin::OriginPolicy;
use oscova_serve::{Authenticator, OAuth, OAuthConfig, Tokens, UserToken};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const RESOURCE: &str = "http://bench.invalid/mcp";

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// An issuer on loopback answering its metadata and `jwks` with fixed
/// documents; its URL.
async fn issuer(jwks: serde_json::Value) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let metadata = json!({"issuer": url, "jwks_uri": format!("{url}/jwks")}).to_string();
    let jwks = jwks.to_string();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let (metadata, jwks) = (metadata.clone(), jwks.clone());
            tokio::spawn(async move {
                let mut buf = vec![0; 4096];
                let n = socket.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]);
                let body = if head.starts_with("GET /jwks") {
                    jwks
                } else if head.starts_with("GET /.well-known/oauth-authorization-server") {
                    metadata
                } else {
                    let _ = socket
                        .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                        .await;
                    return;
                };
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    url
}

struct Signers {
    ec: EcdsaKeyPair,
    ed: Ed25519KeyPair,
    rng: SystemRandom,
}

impl Signers {
    fn new() -> Self {
        let rng = SystemRandom::new();
        let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let ec = EcdsaKeyPair::from_pkcs8(
            alg,
            EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap().as_ref(),
            &rng,
        )
        .unwrap();
        let ed = Ed25519KeyPair::from_pkcs8(Ed25519KeyPair::generate_pkcs8(&rng).unwrap().as_ref())
            .unwrap();
        Self { ec, ed, rng }
    }

    fn jwks(&self) -> serde_json::Value {
        let point = self.ec.public_key().as_ref();
        json!({"keys": [
            {"kty": "EC", "crv": "P-256", "kid": "ec", "x": b64(&point[1..33]), "y": b64(&point[33..])},
            {"kty": "OKP", "crv": "Ed25519", "kid": "ed", "x": b64(self.ed.public_key().as_ref())},
        ]})
    }

    /// A token from `issuer` for the bench's resource, signed with `alg`;
    /// `n` makes it distinct.
    fn token(&self, issuer: &str, alg: &str, n: u64) -> String {
        let exp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 3600;
        let kid = if alg == "ES256" { "ec" } else { "ed" };
        let header = json!({"alg": alg, "kid": kid, "typ": "at+jwt"});
        let claims = json!({"iss": issuer, "aud": RESOURCE, "sub": "client-1",
                            "scope": "mcp", "exp": exp, "jti": n.to_string()});
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let sig = if alg == "ES256" {
            self.ec
                .sign(&self.rng, input.as_bytes())
                .unwrap()
                .as_ref()
                .to_vec()
        } else {
            self.ed.sign(input.as_bytes()).as_ref().to_vec()
        };
        format!("{input}.{}", b64(&sig))
    }
}

fn headers(token: &str) -> HeaderMap {
    let mut map = HeaderMap::new();
    map.insert(
        http::header::AUTHORIZATION,
        format!("Bearer {token}").parse().unwrap(),
    );
    map
}

fn auth(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let signers = Signers::new();
    let url = runtime.block_on(issuer(signers.jwks()));
    let tokens = Tokens::new([UserToken::from_token("load", "load-token")]);
    let oauth = OAuth::new(
        OAuthConfig::new(&url).scopes(["mcp"]),
        RESOURCE,
        HttpClient::new(),
    )
    .unwrap();
    let both = Authenticator::new(tokens.clone(), Some(oauth));
    let only_static = Authenticator::new(tokens, None);

    let fixed = headers("load-token");
    let reused = headers(&signers.token(&url, "ES256", 0));
    // Fetches the keys and remembers the token.
    assert!(
        runtime
            .block_on(both.authenticate(&reused))
            .unwrap()
            .is_some()
    );

    let mut group = c.benchmark_group("authenticate");
    group.bench_function("static_token", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(only_static.authenticate(&fixed).await.unwrap()) });
    });
    group.bench_function("static_token_beside_oauth", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(both.authenticate(&fixed).await.unwrap()) });
    });
    group.bench_function("oauth_token_accepted_before", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(both.authenticate(&reused).await.unwrap()) });
    });
    for alg in ["ES256", "EdDSA"] {
        let mut n = 1;
        group.bench_function(format!("oauth_token_first_seen_{alg}"), |b| {
            b.to_async(&runtime).iter_batched(
                || {
                    n += 1;
                    headers(&signers.token(&url, alg, n))
                },
                |fresh| {
                    let both = &both;
                    async move { black_box(both.authenticate(&fresh).await.unwrap()) }
                },
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

/// What the port's Origin and Host policy costs each request, checked by
/// the listener before any handler (issue 36): a client on loopback (no
/// `Origin`), a browser on a loopback origin, and a refused rebound page.
fn origin(c: &mut Criterion) {
    let policy = OriginPolicy::new(
        "127.0.0.1:8080".parse().unwrap(),
        ["https://app.example.com"],
    );
    let uri = http::Uri::from_static("/mcp");
    let request = |pairs: &[(&'static str, &'static str)]| {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, http::HeaderValue::from_static(value));
        }
        headers
    };
    let client = request(&[("host", "127.0.0.1:8080")]);
    let browser = request(&[
        ("host", "localhost:8080"),
        ("origin", "http://localhost:3000"),
    ]);
    let rebound = request(&[
        ("host", "evil.example:8080"),
        ("origin", "http://evil.example:8080"),
    ]);
    let mut group = c.benchmark_group("origin_policy");
    for (name, headers) in [
        ("client", &client),
        ("browser", &browser),
        ("rebound", &rebound),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| black_box(policy.check(black_box(&uri), black_box(headers))));
        });
    }
    group.finish();
}

criterion_group!(benches, auth, origin);
criterion_main!(benches);
