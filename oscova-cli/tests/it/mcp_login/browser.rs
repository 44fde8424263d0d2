//! A person logs in through a real browser: Debian's Chromium, headless
//! (`oscova_test_support::chromium`), opens the authorization URL the
//! real `oscova mcp login up --user alice` prints, and is driven through
//! the authorization server's login and consent pages over the DevTools
//! protocol (a minimal client on `tokio-tungstenite`: `Runtime.evaluate`
//! on the page), as a person would fill them in; the browser's redirect
//! lands on the login's loopback listener. Then alice's call through
//! `oscova` goes through on her grant, and bob, who never logged in, is
//! told to. Without Chromium the test fails, naming
//! `scripts/ensure-chromium.sh`.

use std::io::BufRead as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use oscova_test_support::chromium::Chromium;
use oscova_test_support::oidc::{OidcProvider, USER_CLIENT_ID};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

/// A DevTools protocol connection to the page Chromium shows.
struct Page {
    socket: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    next: u64,
}

impl Page {
    /// Connects to Chromium's one page.
    async fn attach(chromium: &mut Chromium) -> Page {
        let browser = chromium.devtools_url();
        let port = browser
            .trim_start_matches("ws://127.0.0.1:")
            .split('/')
            .next()
            .unwrap()
            .to_owned();
        let deadline = Instant::now() + Duration::from_secs(30);
        let url = loop {
            let listed = match reqwest::get(format!("http://127.0.0.1:{port}/json/list")).await {
                Ok(answer) => answer.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            let list: Value = serde_json::from_str(&listed).unwrap_or(Value::Null);
            let page = list
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["type"] == "page");
            if let Some(url) = page.and_then(|p| p["webSocketDebuggerUrl"].as_str()) {
                break url.to_owned();
            }
            assert!(
                Instant::now() < deadline,
                "Chromium shows no page: {listed}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let (socket, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .unwrap();
        Page { socket, next: 0 }
    }

    /// The value of `expression` in the page, or `None` when it threw
    /// (the page was between two documents, say).
    async fn evaluate(&mut self, expression: &str) -> Option<Value> {
        self.next += 1;
        let id = self.next;
        let call = json!({
            "id": id,
            "method": "Runtime.evaluate",
            "params": {"expression": expression, "returnByValue": true},
        });
        self.socket
            .send(Message::text(call.to_string()))
            .await
            .unwrap();
        loop {
            let Some(Ok(message)) = self.socket.next().await else {
                panic!("the DevTools connection closed");
            };
            let Message::Text(text) = message else {
                continue;
            };
            let answer: Value = serde_json::from_str(text.as_str()).unwrap();
            if answer["id"] == id {
                if answer.get("error").is_some()
                    || answer["result"].get("exceptionDetails").is_some()
                {
                    return None;
                }
                return Some(answer["result"]["result"]["value"].clone());
            }
        }
    }

    /// Waits (30 s at most) until the page is the one whose `<body>`
    /// says `data-prompt="PROMPT"`.
    async fn wait_for_prompt(&mut self, prompt: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let now = self
                .evaluate("document.body ? document.body.dataset.prompt || location.href : ''")
                .await;
            if now.as_ref().and_then(Value::as_str) == Some(prompt) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the {prompt} page never came; the page is at {now:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits (30 s at most) until the page's address satisfies `done`;
    /// that address.
    async fn wait_for_address(&mut self, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let href = self.evaluate("location.href").await;
            if let Some(href) = href.as_ref().and_then(Value::as_str)
                && done(href)
            {
                return href.to_owned();
            }
            assert!(
                Instant::now() < deadline,
                "the browser did not get there; it is at {href:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_logs_in_through_chromium_and_their_call_goes_through() {
    // Before anything else: a run without Chromium fails here, saying
    // what installs it.
    let _ = oscova_test_support::chromium::binary();
    let provider = OidcProvider::start();
    let (mut up, config, _) = super::setup(&provider, "mcp-login-chromium", USER_CLIENT_ID);
    // The host's grant lists the server's tools at start.
    super::login(&provider, &config, None, "account-host", true);

    let mut login = super::oscova(&config, &["mcp", "login", "up", "--user", "alice"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(login.stdout.take().unwrap());
    let mut url = String::new();
    stdout.read_line(&mut url).unwrap();
    let url = url.trim().to_owned();
    assert!(
        url.starts_with(provider.issuer()) && url.contains("code_challenge_method=S256"),
        "{url}"
    );

    let mut chromium = Chromium::open(&url, &[]);
    let mut page = Page::attach(&mut chromium).await;
    page.wait_for_prompt("login").await;
    let typed = page
        .evaluate(
            "document.getElementById('login').value = 'account-alice'; \
             document.getElementById('submit').click(); true",
        )
        .await;
    assert_eq!(
        typed,
        Some(Value::Bool(true)),
        "the login form was filled in"
    );
    page.wait_for_prompt("consent").await;
    let asking = page
        .evaluate("document.getElementById('client').textContent")
        .await;
    assert!(
        asking
            .as_ref()
            .and_then(Value::as_str)
            .is_some_and(|text| text.contains(USER_CLIENT_ID)),
        "the consent page names the client: {asking:?}"
    );
    page.evaluate("document.getElementById('allow').click(); true")
        .await;
    // The authorization server sends the browser back to the login's
    // loopback listener, which says it is done.
    let landed = page
        .wait_for_address(|href| href.contains("/callback?"))
        .await;
    assert!(
        landed.starts_with("http://127.0.0.1:") && !landed.starts_with(provider.issuer()),
        "{landed}"
    );
    assert!(landed.contains("code="), "{landed}");

    let output = tokio::task::spawn_blocking(move || login.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    assert!(
        output.status.success() && rest.contains("logged user `alice` in"),
        "{rest}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    drop(page);
    drop(chromium);

    // alice's call goes through on her grant; bob has none.
    let (ok, out) = super::echo(&config, "alice", "hello from chromium");
    assert!(ok && out.contains("hello from chromium"), "{out}");
    let (ok, out) = super::echo(&config, "bob", "hello from bob");
    assert!(
        !ok && out.contains("oscova mcp login up --user bob"),
        "{out}"
    );
    assert_eq!(
        provider.grants()["authorization_code"],
        2,
        "the host's and alice's"
    );
    super::terminate(&mut up);
}
