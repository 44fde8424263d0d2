//! A person on the other end of `oscova serve` logs in by link: the real
//! `oscova serve` with `[serve] public_url`, the real authorization
//! server (npm `oidc-provider`), and rmcp's MCP client over streamable
//! HTTP declaring URL-mode elicitation at `initialize`. A call of a user
//! with no grant is answered with the `-32042` URL-elicitation-required
//! error naming the authorization URL; the person's consent (driven over
//! HTTP, `OidcProvider::consent`) sends the browser to serve's
//! `/oauth/mcp/callback`, which keeps the grant for the user who got the
//! link, and the retried call goes through for that user only. A client
//! without URL elicitation gets the missing-credential result, no link.
//! Refused: a replayed redirect, a `state` nobody made, one past its
//! term; a `user` in the redirect changes nothing.

use std::collections::BTreeMap;
use std::path::Path;

use oscova_test_support::oidc::{self, OidcProvider, USER_CLIENT_ID};
use serde_json::{Value, json};

use super::{ECHO, KEY, login, setup, terminate};
use crate::support;

const ALICE: &str = "alice-link-token";
const BOB: &str = "bob-link-token";

/// A free loopback port (the public URL must be known before serve
/// starts).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `tools/call` of the echo tool as `token` through rmcp's client over
/// streamable HTTP, declaring URL-mode elicitation at `initialize` or
/// not: the JSON-RPC answer (`{"result": …}` or `{"error": …}`).
fn call(url: &str, token: &str, takes_urls: bool, text: &str) -> Value {
    use rmcp::ServiceExt as _;
    use rmcp::model::{
        CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitationCapability,
        Implementation, UrlElicitationCapability,
    };
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    let (url, token, text) = (url.to_owned(), token.to_owned(), text.to_owned());
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async move {
                let _ = rustls::crypto::ring::default_provider().install_default();
                let mut capabilities = ClientCapabilities::default();
                if takes_urls {
                    capabilities.elicitation = Some(
                        ElicitationCapability::new().with_url(UrlElicitationCapability::new()),
                    );
                }
                let info = ClientConfig::new(capabilities, Implementation::new("link-test", "1"));
                let transport = StreamableHttpClientTransport::from_config(
                    StreamableHttpClientTransportConfig::with_uri(url).auth_header(token),
                );
                let client = info.serve(transport).await.expect("initialize answers");
                let mut params = CallToolRequestParams::new(ECHO);
                params.arguments = json!({ "text": text }).as_object().cloned();
                let answer = match client.call_tool(params).await {
                    Ok(result) => json!({ "result": result }),
                    Err(rmcp::ServiceError::McpError(error)) => json!({ "error": error }),
                    Err(other) => panic!("the call failed: {other}"),
                };
                let _ = client.cancel().await;
                answer
            })
    })
    .join()
    .unwrap()
}

/// The authorization URL of a `-32042` answer.
fn link(answer: &Value) -> String {
    assert_eq!(answer["error"]["code"], -32042, "{answer}");
    let elicitation = &answer["error"]["data"]["elicitations"][0];
    assert_eq!(elicitation["mode"], "url", "{answer}");
    elicitation["url"].as_str().unwrap().to_owned()
}

/// GET `url` (the browser landing on serve's callback) with `cookie`
/// (name, value): status and page.
fn land(url: &str, cookie: Option<&(String, String)>) -> (u16, String) {
    let cookies = cookie.cloned().into_iter().collect::<BTreeMap<_, _>>();
    let (status, _, page) = oidc::exchange("GET", url, &cookies, None);
    (status, page)
}

/// The start page's `POST` of `link` as the page makes it, with `token`
/// (none: no `Authorization`): status, the cookie set (name, value, its
/// attributes), body.
fn start(link: &str, token: Option<&str>) -> (u16, Option<(String, String, String)>, String) {
    use std::io::{Read as _, Write as _};

    let rest = link.strip_prefix("http://").expect("an http:// link");
    let (authority, path) = rest.split_at(rest.find('/').expect("a path"));
    let mut stream = std::net::TcpStream::connect(authority).expect("connect");
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\ncontent-length: 0\r\n"
    );
    if let Some(token) = token {
        request.push_str(&format!("authorization: Bearer {token}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let cookie = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("set-cookie"))
        .and_then(|(_, v)| {
            let (pair, attributes) = v.trim().split_once(';').unwrap_or((v.trim(), ""));
            let (name, value) = pair.split_once('=')?;
            Some((name.to_owned(), value.to_owned(), attributes.to_owned()))
        });
    (status, cookie, body.to_owned())
}

/// The start page's `POST` of `link` as `token`'s user, accepted: the
/// authorization URL and the browser's login cookie (name, value).
fn started(link: &str, token: &str) -> (String, (String, String)) {
    let (status, cookie, body) = start(link, Some(token));
    assert_eq!(status, 200, "{body}");
    let (name, value, attributes) = cookie.expect("a login cookie");
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/oauth/mcp", "Max-Age=600"] {
        assert!(attributes.contains(attribute), "{attributes}");
    }
    // Served over http: not `Secure` (a browser would drop it).
    assert!(!attributes.contains("Secure"), "{attributes}");
    assert!(value.len() >= 32, "{value}");
    let answer: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(answer["server"], "up", "{answer}");
    (
        answer["url"].as_str().expect("a URL").to_owned(),
        (name, value),
    )
}

/// The users with a grant of server `up` in the sessions' file.
fn granted(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut statement = conn
        .prepare("SELECT user_id FROM oscova_mcp_oauth_grants WHERE server = 'up' ORDER BY user_id")
        .unwrap();
    statement
        .query_map((), |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_person_on_the_other_end_of_serve_logs_in_by_the_link_a_call_carries() {
    let provider = OidcProvider::start();
    let (mut up, config, db) = setup(&provider, "mcp-login-link", USER_CLIENT_ID);
    let port = free_port();
    let public = format!("http://127.0.0.1:{port}");
    let hash = oscova_mcp::http::token_sha256_hex;
    // The client registers itself (RFC 7591) with the redirect URI of
    // the login: the provider's pre-registered client knows only
    // `http://127.0.0.1/callback`.
    let mut text = std::fs::read_to_string(&config)
        .unwrap()
        .replace(&format!("client_id = \"{USER_CLIENT_ID}\", "), "");
    assert!(!text.contains("client_id"), "{text}");
    text.push_str(&format!(
        "\n[[mcp.tokens]]\nuser = \"alice\"\nsha256 = \"{}\"\n\n\
         [[mcp.tokens]]\nuser = \"bob\"\nsha256 = \"{}\"\n\n\
         [providers.openai]\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"gpt-test\"\n\n\
         [a2a]\nprovider = \"openai\"\n\n[serve]\npublic_url = \"{public}\"\n",
        hash(ALICE),
        hash(BOB),
    ));
    std::fs::write(&config, text).unwrap();
    // The host's grant lists the server's tools at start.
    login(&provider, &config, None, "account-host", true);
    let mut serve = support::oscova(&[
        "--config",
        config.to_str().unwrap(),
        "serve",
        "--listen",
        &format!("127.0.0.1:{port}"),
    ]);
    serve
        .env("OSCOVA_TOKEN_KEY", KEY)
        .env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", "sk-link-test");
    let (mut serve, base) = support::listening(&mut serve, "serve");
    let mcp = format!("{base}/mcp");
    let callback = format!("{public}/oauth/mcp/callback");

    // A client that cannot take a link: today's missing-credential result.
    let answer = call(&mcp, BOB, false, "no link");
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    assert_eq!(
        result["structuredContent"]["error"], "missing_credential",
        "{answer}"
    );
    assert!(result["structuredContent"].get("login_url").is_none());
    assert!(
        answer
            .to_string()
            .contains("oscova mcp login up --user bob"),
        "{answer}"
    );

    // Alice's client takes URL elicitations: the link, to serve's start
    // page (the authorization URL is given only to alice, below).
    let start_page = format!("{public}/oauth/mcp/login?id=");
    let alices = link(&call(&mcp, ALICE, true, "before"));
    assert!(alices.starts_with(&start_page), "{alices}");
    assert!(!alices.contains("code_challenge"), "{alices}");
    let (status, headers, page) = oidc::exchange("GET", &alices, &BTreeMap::new(), None);
    assert_eq!(status, 200, "{page}");
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    assert!(
        header("content-type").starts_with("text/html"),
        "{headers:?}"
    );
    assert!(
        header("content-security-policy").starts_with("default-src 'none'"),
        "{headers:?}"
    );
    assert!(page.contains("login.js"), "{page}");
    let (status, _, script) = oidc::exchange(
        "GET",
        &format!("{public}/oauth/mcp/login.js"),
        &BTreeMap::new(),
        None,
    );
    assert_eq!(status, 200);
    assert!(script.contains("Authorization"), "{script}");
    // No token, or bob's, at alice's login: refused, no cookie, no URL.
    let (status, cookie, body) = start(&alices, None);
    assert_eq!(status, 401, "{body}");
    assert!(cookie.is_none());
    let (status, cookie, body) = start(&alices, Some(BOB));
    assert_eq!((status, body.as_str()), (403, "Refused.\n"));
    assert!(cookie.is_none());
    // Alice's own: the provider's URL, coming back to serve's callback.
    let (url, alices_cookie) = started(&alices, ALICE);
    assert!(url.starts_with(provider.issuer()), "{url}");
    assert!(url.contains("code_challenge_method=S256"), "{url}");
    let redirected = provider.consent(&url, "account-alice");
    assert!(redirected.starts_with(&callback), "{redirected}");

    // Bob's link opened with alice's token: refused, nothing kept
    // anywhere. Bob's own binding gives his browser its cookie.
    let bobs = link(&call(&mcp, BOB, true, "bob's"));
    assert!(bobs.starts_with(&start_page), "{bobs}");
    let (status, cookie, _) = start(&bobs, Some(ALICE));
    assert_eq!(status, 403);
    assert!(cookie.is_none());
    let (bobs_url, bobs_cookie) = started(&bobs, BOB);
    assert_ne!(bobs_cookie.0, alices_cookie.0);

    // Alice's redirect in a browser without her cookie, or with bob's
    // (under its name or hers): refused, nothing exchanged, her login
    // left as it was.
    let codes = provider.grants()["authorization_code"].clone();
    let bobs_nonce_as_hers = (alices_cookie.0.clone(), bobs_cookie.1.clone());
    for cookie in [None, Some(&bobs_cookie), Some(&bobs_nonce_as_hers)] {
        let (status, page) = land(&redirected, cookie);
        assert_eq!(status, 400, "{page}");
        assert!(
            page.contains("not started in this browser by its user"),
            "{page}"
        );
    }
    assert_eq!(provider.grants()["authorization_code"], codes);
    assert_eq!(granted(&db), [""]);
    // In her browser: logged in.
    let (status, page) = land(&redirected, Some(&alices_cookie));
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("Logged in to MCP server `up`"), "{page}");
    // The same redirect again: used once, nothing exchanged.
    let codes = provider.grants()["authorization_code"].clone();
    let (status, page) = land(&redirected, Some(&alices_cookie));
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("used already"), "{page}");
    assert_eq!(provider.grants()["authorization_code"], codes);
    // A state nobody made.
    let (status, page) = land(
        &format!("{callback}?state=forged&code=forged"),
        Some(&alices_cookie),
    );
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("belongs to no login"), "{page}");

    // Alice's retried call goes through; bob still has no grant.
    let answer = call(&mcp, ALICE, true, "hello from alice");
    assert!(
        answer["result"]["isError"] != true && answer.to_string().contains("hello from alice"),
        "{answer}"
    );
    assert_eq!(granted(&db), ["", "alice"]);

    // Bob's login past its term: refused, nothing kept.
    let redirected = provider.consent(&bobs_url, "account-bob");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("UPDATE oscova_mcp_oauth_pending SET until_ms = 0", ())
        .unwrap();
    let (status, page) = land(&redirected, Some(&bobs_cookie));
    assert_eq!(status, 400, "{page}");
    assert!(page.contains("expired"), "{page}");
    assert_eq!(granted(&db), ["", "alice"]);

    // A fresh link: a `user` added to the redirect changes nothing, the
    // grant is bob's, who got the link.
    let fresh = link(&call(&mcp, BOB, true, "fresh"));
    assert_ne!(fresh, bobs);
    let (url, cookie) = started(&fresh, BOB);
    let redirected = provider.consent(&url, "account-bob");
    let (status, page) = land(&format!("{redirected}&user=alice"), Some(&cookie));
    assert_eq!(status, 200, "{page}");
    assert_eq!(granted(&db), ["", "alice", "bob"]);
    let answer = call(&mcp, BOB, true, "hello from bob");
    assert!(answer.to_string().contains("hello from bob"), "{answer}");

    terminate(&mut serve);
    terminate(&mut up);
}
