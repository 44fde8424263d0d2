//! A person logs in through a real browser: Debian's Chromium, headless
//! (`oscova_test_support::chromium`), opens the authorization URL the
//! real `oscova mcp login up --user alice` prints, and is driven through
//! the authorization server's login and consent pages over the DevTools
//! protocol (test-support's `chromium::Page`: `Runtime.evaluate`
//! on the page), as a person would fill them in; the browser's redirect
//! lands on the login's loopback listener. Then alice's call through
//! `oscova` goes through on her grant, and bob, who never logged in, is
//! told to. Without Chromium the test fails, naming
//! `scripts/ensure-chromium.sh`.

use std::io::BufRead as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

use oscova_test_support::chromium::{Chromium, Page};
use oscova_test_support::oidc::{OidcProvider, USER_CLIENT_ID};
use serde_json::Value;

/// Waits (30 s at most) until the page is the one whose `<body>`
/// says `data-prompt="PROMPT"`.
async fn wait_for_prompt(page: &mut Page, prompt: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = page
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
async fn wait_for_address(page: &mut Page, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let href = page.evaluate("location.href").await;
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
    let mut page = Page::attach(&mut chromium, |_| true).await;
    wait_for_prompt(&mut page, "login").await;
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
    wait_for_prompt(&mut page, "consent").await;
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
    let landed = wait_for_address(&mut page, |href| href.contains("/callback?")).await;
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
