//! OAuth 2.1 access tokens at `/mcp` (issue 27, §2), against a real
//! authorization server on loopback: npm `oidc-provider`
//! (`oscova_test_support::oidc`), issuing client-credentials JWT access
//! tokens for resource indicators. Every forged token is refused with 401,
//! each beside a genuine token that differs in the one forged point, so a
//! refusal is for that point.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use oscova_mcp::http::{OAuthConfig, oauth_user_id};
use oscova_test_support::oidc::{CLIENT_ID, CLIENT_SECRET, OidcProvider};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair};

use super::*;

const WHOAMI: &str = "test_post__post__whoami";

/// A form field, percent-encoded.
fn field(name: &str, value: &str) -> String {
    let encoded: String = value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    format!("{name}={encoded}")
}

/// A client-credentials access token for `resource` with `scope`, from
/// the provider's token endpoint.
async fn token(provider: &OidcProvider, resource: &str, scope: &str) -> String {
    let body = [
        field("grant_type", "client_credentials"),
        field("client_id", CLIENT_ID),
        field("client_secret", CLIENT_SECRET),
        field("scope", scope),
        field("resource", resource),
    ]
    .join("&");
    let answer: Value = reqwest::Client::new()
        .post(provider.token_endpoint())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {answer}"))
        .to_owned()
}

/// `claims` signed by the provider's own current key for `alg`: a
/// genuine signature on whatever claims the test wants.
async fn provider_signed(provider: &OidcProvider, alg: &str, claims: &Value) -> String {
    reqwest::Client::new()
        .post(format!("{}/test/sign?alg={alg}", provider.issuer()))
        .body(claims.to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

async fn jwks_fetches(provider: &OidcProvider) -> u64 {
    let count: Value = reqwest::get(format!("{}/test/jwks-count", provider.issuer()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    count["count"].as_u64().unwrap()
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// A compact JWS of `header` and `claims`, signed by `sign`.
fn forge(header: &Value, claims: &Value, sign: impl Fn(&[u8]) -> Vec<u8>) -> String {
    let input = format!(
        "{}.{}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    );
    let sig = sign(input.as_bytes());
    format!("{input}.{}", b64(&sig))
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The server with static tokens and OAuth from `provider`.
async fn serve(provider: &OidcProvider, config: impl Fn(OAuthConfig) -> OAuthConfig) -> Running {
    let (host, _) = host();
    let oauth = config(OAuthConfig::new(provider.issuer()).scopes(["mcp"]));
    Running::start(with_tokens(McpHttpServer::new(host)).oauth(oauth)).await
}

/// The status and `WWW-Authenticate` of an `initialize` with `token`.
async fn status_of(url: &str, token: Option<&str>) -> (u16, String) {
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("authorization", a.as_str())).collect();
    let response = post(url, INITIALIZE, &headers).await;
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (response.status().as_u16(), challenge)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_and_challenges_point_clients_at_the_issuer() {
    let provider = OidcProvider::start();
    let server = serve(&provider, |c| c).await;
    let base = format!("http://{}", server.addr);
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let response = reqwest::get(format!("{base}{path}")).await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let document: Value = response.json().await.unwrap();
        assert_eq!(document["resource"], server.url, "{path}");
        assert_eq!(
            document["authorization_servers"],
            json!([provider.issuer()])
        );
        assert_eq!(document["scopes_supported"], json!(["mcp"]));
    }
    let metadata = format!("{base}/.well-known/oauth-protected-resource/mcp");
    let (status, challenge) = status_of(&server.url, None).await;
    assert_eq!(status, 401);
    assert_eq!(
        challenge,
        format!("Bearer resource_metadata=\"{metadata}\", scope=\"mcp\"")
    );
    let (status, challenge) = status_of(&server.url, Some("not-a-token")).await;
    assert_eq!(status, 401);
    assert!(
        challenge.ends_with(", error=\"invalid_token\""),
        "{challenge}"
    );
    // A valid token from the issuer without the scope `mcp`: 403.
    let other_scope = token(&provider, &server.url, "other").await;
    let (status, challenge) = status_of(&server.url, Some(&other_scope)).await;
    assert_eq!(status, 403);
    assert_eq!(
        challenge,
        format!(
            "Bearer resource_metadata=\"{metadata}\", scope=\"mcp\", error=\"insufficient_scope\""
        )
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_from_the_authorization_server_calls_a_tool_beside_static_tokens() {
    let provider = OidcProvider::start();
    let server = serve(&provider, |c| c.users([("mcp-client", "robot")])).await;
    let access = token(&provider, &server.url, "mcp").await;

    let client = connect(&server.url, Some(&access)).await;
    assert_eq!(
        text(&call(&client, WHOAMI, json!({})).await.unwrap()),
        "robot"
    );
    client.cancel().await.unwrap();
    // Static tokens keep working beside OAuth.
    let alice = connect(&server.url, Some(ALICE)).await;
    assert_eq!(
        text(&call(&alice, WHOAMI, json!({})).await.unwrap()),
        "alice"
    );
    alice.cancel().await.unwrap();

    // The official Python SDK's client with the same token.
    let url = server.url.clone();
    let py =
        tokio::task::spawn_blocking(move || python_client(&url, Some(&access), WHOAMI, json!({})))
            .await
            .unwrap();
    assert_eq!(py["text"], "robot", "{py}");
    assert_eq!(py["is_error"], false, "{py}");
    server.shutdown().await;
}

// Issue 36, finding 6: a claim is not a user id. A genuine token whose
// `sub` is a static-token user's id (`alice`) or a mapping's target
// (`robot`) is a user of its own, apart from both; the operator's
// explicit mapping still names any user; a static token given an id in
// OAuth's namespace cannot be reached by a token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_naming_a_static_or_mapped_user_is_not_that_user() {
    let provider = OidcProvider::start();
    let issuer = provider.issuer().to_owned();
    let squatted = oauth_user_id(&issuer, "squatted");
    let (host, _) = host();
    let oauth = OAuthConfig::new(&issuer)
        .scopes(["mcp"])
        .users([("mcp-client", "robot"), ("carol", "alice")]);
    let server = McpHttpServer::new(host)
        .tokens([
            UserToken::from_token("alice", ALICE),
            UserToken::from_token(squatted.clone(), "squat-token"),
        ])
        .oauth(oauth);
    let server = Running::start(server).await;
    let signed = |sub: &str| {
        let claims = json!({"iss": issuer, "aud": server.url, "sub": sub,
                            "scope": "mcp", "iat": now(), "exp": now() + 300});
        let provider = &provider;
        async move { provider_signed(provider, "RS256", &claims).await }
    };
    let whoami = async |token: &str| {
        let client = connect(&server.url, Some(token)).await;
        let user = text(&call(&client, WHOAMI, json!({})).await.unwrap());
        client.cancel().await.unwrap();
        user
    };

    assert_eq!(whoami(ALICE).await, "alice");
    let real = token(&provider, &server.url, "mcp").await;
    assert_eq!(whoami(&real).await, "robot", "the mapping names its user");
    for sub in ["alice", "robot"] {
        let user = whoami(&signed(sub).await).await;
        assert_ne!(user, sub, "a claim `{sub}` is not that user");
        assert_eq!(user, oauth_user_id(&issuer, sub));
    }
    assert_eq!(
        whoami(&signed("carol").await).await,
        "alice",
        "mapped explicitly"
    );
    let (status, challenge) = status_of(&server.url, Some(&signed("squatted").await)).await;
    assert_eq!(
        status, 401,
        "a static token's user is no token's: {challenge}"
    );
    assert_eq!(whoami("squat-token").await, squatted);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_tokens_are_refused() {
    let provider = OidcProvider::start();
    let server = serve(&provider, |c| c).await;
    let issuer = provider.issuer().to_owned();
    let good = json!({"iss": issuer, "aud": server.url, "sub": "mallory",
                      "scope": "mcp", "iat": now(), "exp": now() + 300});
    let with = |key: &str, value: Value| {
        let mut claims = good.clone();
        claims[key] = value;
        claims
    };

    // Controls: the provider's own keys sign `good` acceptably, with each
    // algorithm; each forgery below differs from one of these in one point.
    for alg in ["RS256", "ES256", "EdDSA"] {
        let genuine = provider_signed(&provider, alg, &good).await;
        assert_eq!(status_of(&server.url, Some(&genuine)).await.0, 200, "{alg}");
    }
    let real = token(&provider, &server.url, "mcp").await;
    assert_eq!(status_of(&server.url, Some(&real)).await.0, 200);

    let rng = SystemRandom::new();
    let ec_alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let ec = EcdsaKeyPair::from_pkcs8(
        ec_alg,
        EcdsaKeyPair::generate_pkcs8(ec_alg, &rng).unwrap().as_ref(),
        &rng,
    )
    .unwrap();
    let ed =
        Ed25519KeyPair::from_pkcs8(Ed25519KeyPair::generate_pkcs8(&rng).unwrap().as_ref()).unwrap();
    let es = |kid: &str| {
        forge(
            &json!({"alg": "ES256", "kid": kid, "typ": "at+jwt"}),
            &good,
            |m| ec.sign(&rng, m).unwrap().as_ref().to_vec(),
        )
    };
    let jwks: Value = reqwest::get(format!("{issuer}/jwks"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rsa_public = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kid"] == "rs-1")
        .unwrap()
        .clone();
    let hmac = |secret: &[u8]| {
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
        forge(&json!({"alg": "HS256", "kid": "rs-1"}), &good, |m| {
            ring::hmac::sign(&key, m).as_ref().to_vec()
        })
    };
    let modulus = URL_SAFE_NO_PAD
        .decode(rsa_public["n"].as_str().unwrap())
        .unwrap();
    // The real token with its claims altered (`sub`), signature kept.
    let altered = {
        let parts: Vec<&str> = real.split('.').collect();
        let mut claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        claims["sub"] = json!("admin");
        format!(
            "{}.{}.{}",
            parts[0],
            b64(claims.to_string().as_bytes()),
            parts[2]
        )
    };
    let forged = [
        ("signed by another key, the issuer's kid", es("es-1")),
        ("signed by another key, an unknown kid", es("nope")),
        (
            "signed by another Ed25519 key, the issuer's kid",
            forge(&json!({"alg": "EdDSA", "kid": "ed-1"}), &good, |m| {
                ed.sign(m).as_ref().to_vec()
            }),
        ),
        (
            "EdDSA under the issuer's ES256 kid",
            forge(&json!({"alg": "EdDSA", "kid": "es-1"}), &good, |m| {
                ed.sign(m).as_ref().to_vec()
            }),
        ),
        (
            "alg none",
            format!(
                "{}.{}.",
                b64(br#"{"alg":"none"}"#),
                b64(good.to_string().as_bytes())
            ),
        ),
        (
            "alg none with a signature",
            forge(&json!({"alg": "none"}), &good, |_| vec![0; 64]),
        ),
        (
            "HS256 keyed with the public JWK",
            hmac(rsa_public.to_string().as_bytes()),
        ),
        ("HS256 keyed with the public modulus", hmac(&modulus)),
        (
            "expired",
            provider_signed(&provider, "RS256", &with("exp", json!(now() - 3600))).await,
        ),
        (
            "not yet valid",
            provider_signed(&provider, "RS256", &with("nbf", json!(now() + 3600))).await,
        ),
        (
            "wrong audience",
            provider_signed(
                &provider,
                "RS256",
                &with("aud", json!("http://127.0.0.1:1/mcp")),
            )
            .await,
        ),
        (
            "wrong issuer",
            provider_signed(
                &provider,
                "ES256",
                &with("iss", json!(format!("{issuer}/"))),
            )
            .await,
        ),
        (
            "no expiry",
            provider_signed(&provider, "EdDSA", &{
                let mut claims = good.clone();
                claims.as_object_mut().unwrap().remove("exp");
                claims
            })
            .await,
        ),
        (
            "a token for another resource",
            token(&provider, "http://127.0.0.1:1/mcp", "mcp").await,
        ),
        ("claims altered after signing", altered),
    ];
    for (what, token) in &forged {
        let (status, challenge) = status_of(&server.url, Some(token)).await;
        assert_eq!(status, 401, "{what}");
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{what}: {challenge}"
        );
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_key_ids_refetch_the_keys_at_a_bounded_rate() {
    let provider = OidcProvider::start();
    let server = serve(&provider, |c| c.refetch_interval(Duration::from_secs(3600))).await;
    // Nothing is fetched before a token needs a key.
    assert_eq!(jwks_fetches(&provider).await, 0);

    // Many tokens with unknown kids, at once: one fetch, whatever their
    // number, and every one refused.
    let header = |kid: usize| {
        b64(json!({"alg": "RS256", "kid": format!("k{kid}")})
            .to_string()
            .as_bytes())
    };
    let handles: Vec<_> = (0..20)
        .map(|kid| {
            let token = format!("{}.{}.{}", header(kid), b64(b"{}"), b64(&[1; 256]));
            let url = server.url.clone();
            tokio::spawn(async move { status_of(&url, Some(&token)).await.0 })
        })
        .collect();
    for handle in handles {
        assert_eq!(handle.await.unwrap(), 401);
    }
    assert_eq!(jwks_fetches(&provider).await, 1);
    // A real token's kid is in the keys fetched: no fetch.
    let real = token(&provider, &server.url, "mcp").await;
    assert_eq!(status_of(&server.url, Some(&real)).await.0, 200);
    assert_eq!(jwks_fetches(&provider).await, 1);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_rotated_at_the_issuer_are_fetched_after_the_interval() {
    let provider = OidcProvider::start();
    let server = serve(&provider, |c| c.refetch_interval(Duration::from_secs(1))).await;
    let real = token(&provider, &server.url, "mcp").await;
    assert_eq!(status_of(&server.url, Some(&real)).await.0, 200);
    assert_eq!(jwks_fetches(&provider).await, 1);

    reqwest::Client::new()
        .post(format!("{}/test/rotate", provider.issuer()))
        .send()
        .await
        .unwrap();
    let rotated = token(&provider, &server.url, "mcp").await;
    assert_ne!(rotated.split('.').next(), real.split('.').next());
    // Refused (no fetch) until the interval since the last fetch passes,
    // then the new key is fetched and the token accepted.
    let accepted = timeout(PATIENCE, async {
        while status_of(&server.url, Some(&rotated)).await.0 != 200 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(accepted.is_ok(), "the rotated key was never fetched");
    assert_eq!(jwks_fetches(&provider).await, 2);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opaque_tokens_are_introspected_when_configured() {
    let provider = OidcProvider::start();
    let introspecting = |secret: &str| {
        let secret = oscova_core::SecretString::from(secret.to_owned());
        move |c: OAuthConfig| {
            c.audience("urn:opaque:mcp")
                .user_claim("client_id")
                .introspection("mcp-resource", secret.clone())
        }
    };
    let server = serve(&provider, introspecting("resource-secret")).await;
    let opaque = token(&provider, "urn:opaque:mcp", "mcp").await;
    assert_ne!(opaque.split('.').count(), 3, "{opaque}");
    let client = connect(&server.url, Some(&opaque)).await;
    assert_eq!(
        text(&call(&client, WHOAMI, json!({})).await.unwrap()),
        oauth_user_id(provider.issuer(), "mcp-client")
    );
    client.cancel().await.unwrap();

    let without_scope = token(&provider, "urn:opaque:mcp", "other").await;
    assert_eq!(status_of(&server.url, Some(&without_scope)).await.0, 403);
    for (what, refused) in [
        (
            "unknown to the issuer",
            "G7CMrq0CcjMQ1FiMUU5_af-B5LR6YvA38rIM2VQtam3".to_owned(),
        ),
        (
            "for another resource",
            token(&provider, "urn:opaque:other", "mcp").await,
        ),
    ] {
        let (status, challenge) = status_of(&server.url, Some(&refused)).await;
        assert_eq!(status, 401, "{what}");
        assert!(challenge.contains("invalid_token"), "{what}: {challenge}");
    }
    server.shutdown().await;

    // Without introspection, an opaque token is refused; with the wrong
    // client secret the issuer cannot be asked: 503, not a verdict.
    let plain = serve(&provider, |c| c.audience("urn:opaque:mcp")).await;
    assert_eq!(status_of(&plain.url, Some(&opaque)).await.0, 401);
    plain.shutdown().await;
    let wrong = serve(&provider, introspecting("not-the-secret")).await;
    assert_eq!(status_of(&wrong.url, Some(&opaque)).await.0, 503);
    wrong.shutdown().await;
}
