//! `oscova mcp --listen` end to end: the real binary on 127.0.0.1 with a
//! port the system picks, driven by the official Python SDK's client
//! (`scripts/ensure-python-mcp.sh` installs it), stopped with SIGTERM.

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const CLIENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../oscova-mcp/tests/python/mcp_http_client.py"
);
const TOKEN: &str = "alice-token";
/// `printf %s alice-token | sha256sum`
const TOKEN_SHA256: &str = "9c220f200955d76c0a38d308225e0ef10c5f971acaf2f8d1d8f732affa5bd1dc";

/// Starts the server and returns it with the URL it printed.
fn serve(args: &[&str]) -> (Child, String) {
    serve_command(support::oscova(args))
}

/// Starts the server `command` runs and returns it with the URL it printed.
fn serve_command(mut command: std::process::Command) -> (Child, String) {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(at) = line.find("http://") {
                    break line[at..].trim().to_owned();
                }
            }
            _ => panic!("the server exited before saying where it listens"),
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    (child, url)
}

fn python(url: &str, token: &str, tool: &str, args: &str) -> (Option<i32>, Value) {
    let output = std::process::Command::new(oscova_test_support::python::mcp_python())
        .args([CLIENT, url, token, tool, args])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().unwrap_or("null");
    (
        output.status.code(),
        serde_json::from_str(last).unwrap_or(Value::Null),
    )
}

fn terminate(child: &mut Child) -> Option<i32> {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(
            Instant::now() < deadline,
            "the server did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_public_address_without_tokens_is_refused_with_exit_2() {
    let (code, _, stderr) = support::run(&mut support::oscova(&["mcp", "--listen", "0.0.0.0:0"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("[[mcp.tokens]]"), "{stderr}");

    let dir = support::temp_dir("mcp-bad-hash");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        "[[mcp.tokens]]\nuser = \"alice\"\nsha256 = \"abc\"\n",
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let (code, _, stderr) = support::run(&mut support::oscova(&[
        "--config",
        config,
        "mcp",
        "--listen",
        "127.0.0.1:0",
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("alice"),
        "the message names the entry: {stderr}"
    );
}

#[test]
fn a_limit_out_of_its_range_is_refused_with_exit_2_naming_it() {
    // Values that used to panic the server (a semaphore's limit) or
    // cannot serve at all.
    for (key, value) in [
        ("max_in_flight_total", "18446744073709551615"),
        ("max_in_flight", "18446744073709551615"),
        ("max_sessions", "0"),
        ("max_connections", "0"),
        ("max_connections_per_peer", "0"),
        ("body_timeout_secs", "0"),
    ] {
        let dir = support::temp_dir("mcp-bad-limit");
        let config = dir.join("config.toml");
        std::fs::write(&config, format!("[mcp]\n{key} = {value}\n")).unwrap();
        let config = config.to_str().unwrap();
        let (code, _, stderr) = support::run(&mut support::oscova(&[
            "--config",
            config,
            "mcp",
            "--listen",
            "127.0.0.1:0",
        ]));
        assert_eq!(code, 2, "{key}: {stderr}");
        let setting = key.trim_end_matches("_secs");
        assert!(stderr.contains(setting), "{key}: {stderr}");
        assert!(!stderr.contains("panicked"), "{key}: {stderr}");
    }
}

#[test]
fn users_are_served_by_token_and_sigterm_stops_the_server() {
    let dir = support::temp_dir("mcp-http");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!("[[mcp.tokens]]\nuser = \"alice\"\nsha256 = \"{TOKEN_SHA256}\"\n"),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let (mut child, url) = serve(&[
        "--config",
        config,
        "mcp",
        "--listen",
        "127.0.0.1:0",
        "--names",
        "short",
    ]);
    let (code, answer) = python(&url, TOKEN, "example_echo", r#"{"text": "hi"}"#);
    assert_eq!(code, Some(0), "{answer}");
    assert_eq!(answer["text"], "hi", "{answer}");
    assert!(
        answer["tools"]
            .as_array()
            .unwrap()
            .contains(&"example_echo".into()),
        "short names: {answer}"
    );
    let (code, answer) = python(&url, "not-the-token", "example_echo", r#"{"text": "hi"}"#);
    assert_eq!(code, Some(3), "refused: {answer}");
    assert_eq!(terminate(&mut child), Some(0));
}

/// `[auth]`: `[[auth.tokens]]` beside `[[mcp.tokens]]`, and `[auth.oauth]`
/// accepting access tokens from a real authorization server on loopback
/// (npm `oidc-provider`, `scripts/ensure-oidc-provider.sh`), its user
/// mapped through `[auth.oauth.users]`.
#[test]
fn auth_tokens_and_oauth_access_tokens_are_served_beside_mcp_tokens() {
    let provider = oscova_test_support::oidc::OidcProvider::start();
    let dir = support::temp_dir("mcp-auth");
    let config = dir.join("config.toml");
    // `printf %s bob-token | sha256sum`
    let bob_sha256 = "97dd3707015dcf069cf73022ed7173b1165db6eff24b441cb57fd069a8c4e525";
    std::fs::write(
        &config,
        format!(
            "[[mcp.tokens]]\nuser = \"alice\"\nsha256 = \"{TOKEN_SHA256}\"\n\n\
             [[auth.tokens]]\nuser = \"bob\"\nsha256 = \"{bob_sha256}\"\n\n\
             [auth.oauth]\nissuer = \"{}\"\nscopes = [\"mcp\"]\n\n\
             [auth.oauth.users]\nmcp-client = \"robot\"\n",
            provider.issuer()
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let (mut child, url) = serve(&[
        "--config",
        config,
        "mcp",
        "--listen",
        "127.0.0.1:0",
        "--names",
        "short",
    ]);
    let echo = "example_echo";
    for token in [
        TOKEN.to_owned(),
        "bob-token".to_owned(),
        provider.token(&url, "mcp"),
    ] {
        let (code, answer) = python(&url, &token, echo, r#"{"text": "hi"}"#);
        assert_eq!(code, Some(0), "{answer}");
        assert_eq!(answer["text"], "hi", "{answer}");
    }
    // A token for another resource, and one without the scope: refused.
    for token in [
        provider.token("http://127.0.0.1:1/mcp", "mcp"),
        provider.token(&url, "other"),
    ] {
        let (code, answer) = python(&url, &token, echo, r#"{"text": "hi"}"#);
        assert_eq!(code, Some(3), "refused: {answer}");
    }
    assert_eq!(terminate(&mut child), Some(0));
}

/// `[mcp.servers.NAME] oauth` (issue 27, §3): the upstream is another
/// `oscova mcp --listen` that takes only OAuth access tokens from a real
/// authorization server on loopback (npm `oidc-provider`); the gateway's
/// shared server gets one by client credentials, the id and secret from
/// the host's `[credentials]`, and that one token serves the listing at
/// start and the call.
#[test]
fn an_upstream_that_answers_401_is_called_with_a_client_credentials_token() {
    use oscova_test_support::oidc::{BASIC_CLIENT_ID, BASIC_CLIENT_SECRET, OidcProvider};

    let provider = OidcProvider::start();
    let dir = support::temp_dir("mcp-upstream-oauth");
    let upstream_config = dir.join("upstream.toml");
    std::fs::write(
        &upstream_config,
        format!(
            "[auth.oauth]\nissuer = \"{}\"\nscopes = [\"mcp\"]\n",
            provider.issuer()
        ),
    )
    .unwrap();
    let (mut upstream, url) = serve(&[
        "--config",
        upstream_config.to_str().unwrap(),
        "mcp",
        "--listen",
        "127.0.0.1:0",
        "--names",
        "short",
    ]);
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[credentials]\n\"up.id\" = \"{BASIC_CLIENT_ID}\"\n\"up.secret\" = \"{BASIC_CLIENT_SECRET}\"\n\n\
             [mcp.servers.up]\nurl = \"{url}\"\nnetwork = \"local\"\ntimeout_secs = 20\n\
             oauth = {{ client_id_credential = \"up.id\", client_secret_credential = \"up.secret\", \
             scopes = [\"mcp\"], issuer = \"{}\" }}\n",
            provider.issuer()
        ),
    )
    .unwrap();
    let output = support::oscova(&[
        "--config",
        config.to_str().unwrap(),
        "tools",
        "call",
        "oscova_mcp__up__example_echo",
        "--args",
        r#"{"text":"through a token"}"#,
    ])
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("through a token"), "{stdout}\n{stderr}");
    assert!(!stderr.contains(BASIC_CLIENT_SECRET), "{stderr}");
    assert_eq!(
        provider.token_requests(),
        1,
        "one token for the listing and the call"
    );
    assert_eq!(terminate(&mut upstream), Some(0));
}

/// The client's bearer token (static or OAuth) is the client's proof to
/// this server only: an upstream MCP server the gateway connects to
/// (`[mcp.servers]` with `url`, `per_user`) never receives it, in any
/// header.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_token_never_reaches_an_upstream_server() {
    use oscova_test_support::http::{Reply, TestServer};

    let upstream = TestServer::start(|_| Reply::json(500, serde_json::json!({}))).await;
    let provider = oscova_test_support::oidc::OidcProvider::start();
    let dir = support::temp_dir("mcp-auth-upstream");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[auth.tokens]]\nuser = \"alice\"\nsha256 = \"{TOKEN_SHA256}\"\n\n\
             [auth.oauth]\nissuer = \"{}\"\n\n\
             [mcp.servers.up]\nurl = \"{}/mcp\"\nper_user = true\nnetwork = \"local\"\n\
             timeout_secs = 5\n",
            provider.issuer(),
            upstream.url()
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap().to_owned();
    let (mut child, url) = tokio::task::spawn_blocking(move || {
        serve(&[
            "--config",
            &config,
            "mcp",
            "--listen",
            "127.0.0.1:0",
            "--names",
            "short",
        ])
    })
    .await
    .unwrap();
    let oauth = provider.token(&url, "mcp");
    for token in [TOKEN.to_owned(), oauth.clone()] {
        let url = url.clone();
        let (code, answer) = tokio::task::spawn_blocking(move || {
            python(&url, &token, "example_echo", r#"{"text": "hi"}"#)
        })
        .await
        .unwrap();
        assert_eq!(code, Some(0), "{answer}");
    }
    let requests = upstream.requests();
    // The upstream answers no MCP, so the gateway stops after its
    // `initialize`; whatever reached it carries neither token.
    assert!(!requests.is_empty(), "the upstream was reached");
    for request in &requests {
        for (name, value) in &request.headers {
            for token in [TOKEN, oauth.as_str()] {
                assert!(!value.contains(token), "{name}: {value}");
            }
        }
    }
    assert_eq!(terminate(&mut child), Some(0));
}

/// `[auth.oauth] introspection_client_id`: opaque tokens checked at the
/// issuer's introspection endpoint, the client's secret taken from
/// `OSCOVA_OAUTH_CLIENT_SECRET` (and refused at start without it).
#[test]
fn opaque_tokens_are_introspected_with_the_secret_from_the_environment() {
    let provider = oscova_test_support::oidc::OidcProvider::start();
    let dir = support::temp_dir("mcp-auth-introspection");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[auth.oauth]\nissuer = \"{}\"\naudience = \"urn:opaque:mcp\"\n\
             user_claim = \"client_id\"\nintrospection_client_id = \"mcp-resource\"\n",
            provider.issuer()
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let args = [
        "--config",
        config,
        "mcp",
        "--listen",
        "127.0.0.1:0",
        "--names",
        "short",
    ];
    let (code, _, stderr) = support::run(&mut support::oscova(&args));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("OSCOVA_OAUTH_CLIENT_SECRET"), "{stderr}");

    let mut command = support::oscova(&args);
    command.env("OSCOVA_OAUTH_CLIENT_SECRET", "resource-secret");
    let (mut child, url) = serve_command(command);
    let opaque = provider.token("urn:opaque:mcp", "mcp");
    let (code, answer) = python(&url, &opaque, "example_echo", r#"{"text": "hi"}"#);
    assert_eq!(code, Some(0), "{answer}");
    assert_eq!(answer["text"], "hi", "{answer}");
    let (code, answer) = python(&url, "opaque-but-unknown", "example_echo", "{}");
    assert_eq!(code, Some(3), "refused: {answer}");
    assert_eq!(terminate(&mut child), Some(0));
}
