//! `fetch` through a real host and user scope, against a loopback server.

use crate::server;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_core::prelude::*;
use oscova_plugin_web::{WebLimits, WebPlugin};
use oscova_test_kit::http::closed_port_url;
use oscova_test_kit::{TestHost, TestScope, TestUser};
use serde_json::{Value, json};
use server::Server;

const FETCH: &str = "oscova_web__web__fetch";

/// A scope whose host lets `Internet` tools reach `allowed` (`host:port`),
/// as a host allows an internal service: the test servers are on loopback,
/// which `Internet` alone does not reach.
fn scope_with(plugin: WebPlugin, allowed: &[&str]) -> TestScope {
    let http = HttpClient::builder()
        .allow_internal(allowed)
        .build()
        .unwrap();
    let kit = TestHost::builder()
        .plugin_instance(plugin)
        .host(move |b| b.http_client(http))
        .build();
    kit.scope_for(TestUser::new("alice"))
}

/// A scope whose host allows `srv`.
fn scope(srv: &Server) -> TestScope {
    scope_with(WebPlugin::default(), &[&srv.authority()])
}

async fn fetch(scope: &TestScope, args: Value) -> ToolResult {
    scope.invoke(FETCH, args).await
}

#[test]
fn the_tool_is_published_with_internet_scope() {
    let s = scope_with(WebPlugin::default(), &[]);
    let tools: Vec<_> = s.tools().collect();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].wire_name(), FETCH);
    assert_eq!(tools[0].info().network_scope(), NetworkScope::Internet);
    assert_eq!(tools[0].info().input_schema()["required"], json!(["url"]));
}

#[tokio::test]
async fn html_becomes_readable_text_with_details() {
    let srv = Server::start().await;
    let r = fetch(&scope(&srv), json!({"url": srv.url("/page")})).await;
    assert!(!r.is_error, "{}", r.content);
    assert!(r.content.contains("Welcome"), "{}", r.content);
    assert!(
        r.content.contains("Hello from the **loopback** server."),
        "{}",
        r.content
    );
    assert!(r.content.contains("/next"), "{}", r.content);
    assert!(!r.content.contains("var secret"), "{}", r.content);
    assert!(!r.content.contains("<p>"), "{}", r.content);
    assert_eq!(r.details["status"], 200);
    assert_eq!(r.details["content_type"], "text/html; charset=utf-8");
    assert_eq!(r.details["kind"], "html");
    assert_eq!(r.details["charset"], "UTF-8");
    assert_eq!(r.details["final_url"], srv.url("/page"));
    assert_eq!(r.details["redirected"], false);
    assert_eq!(r.details["truncated"], false);
    assert_eq!(r.details["bytes"], server::PAGE.len());
}

#[tokio::test]
async fn redirects_are_followed_and_the_final_url_reported() {
    let srv = Server::start().await;
    let r = fetch(&scope(&srv), json!({"url": srv.url("/redirect-twice")})).await;
    assert!(!r.is_error, "{}", r.content);
    assert!(r.content.contains("Welcome"), "{}", r.content);
    assert_eq!(r.details["url"], srv.url("/redirect-twice"));
    assert_eq!(r.details["final_url"], srv.url("/page"));
    assert_eq!(r.details["redirected"], true);
}

#[tokio::test]
async fn a_redirect_loop_is_an_error() {
    let srv = Server::start().await;
    let r = fetch(&scope(&srv), json!({"url": srv.url("/loop")})).await;
    assert!(r.is_error);
    assert!(
        r.content.starts_with("fetching `http://127.0.0.1"),
        "{}",
        r.content
    );
    assert!(r.content.contains("redirect"), "{}", r.content);
}

#[tokio::test]
async fn a_body_over_the_cap_is_cut_and_marked() {
    let srv = Server::start().await;
    let events = Arc::new(Mutex::new(Vec::<ToolProgress>::new()));
    let sink = events.clone();
    let r = scope(&srv)
        .invoke(FETCH, json!({"url": srv.url("/big"), "max_bytes": 100_000}))
        .progress(move |p| sink.lock().unwrap().push(p))
        .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(r.details["bytes"], 100_000);
    assert_eq!(r.details["truncated"], true);
    assert_eq!(r.details["content_length"], 200_000);
    assert!(r.content.starts_with(&"a".repeat(1000)));
    assert!(
        r.content
            .contains("[truncated: only the first 100000 bytes were read"),
        "{}",
        &r.content[r.content.len() - 200..]
    );

    let events = events.lock().unwrap();
    assert!(events.len() >= 2, "{events:?}");
    let figures: Vec<f64> = events.iter().map(|p| p.progress.unwrap()).collect();
    assert!(figures.windows(2).all(|w| w[0] < w[1]), "{figures:?}");
    assert_eq!(*figures.last().unwrap(), 100_000.0);
    assert_eq!(events[0].total, Some(100_000.0));
    assert!(
        events.last().unwrap().message.contains("100000 bytes"),
        "{events:?}"
    );
}

#[tokio::test]
async fn the_host_cap_limits_what_a_call_may_ask_for() {
    let srv = Server::start().await;
    let mut limits = WebLimits::default();
    limits.max_bytes = 1000;
    let s = scope_with(WebPlugin::with_limits(limits), &[&srv.authority()]);
    let r = fetch(&s, json!({"url": srv.url("/big"), "max_bytes": 1_000_000})).await;
    assert_eq!(r.details["bytes"], 1000);
    assert_eq!(r.details["truncated"], true);
    let r = fetch(&s, json!({"url": srv.url("/exact"), "max_bytes": 10})).await;
    assert_eq!(r.content, "0123456789");
    assert_eq!(r.details["truncated"], false);
}

#[tokio::test]
async fn a_slow_body_hits_the_time_limit() {
    let srv = Server::start().await;
    let started = std::time::Instant::now();
    let r = fetch(
        &scope(&srv),
        json!({"url": srv.url("/slow-body"), "timeout_secs": 0.5}),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(r.is_error);
    assert!(
        r.content.contains("took longer than 0.5 s"),
        "{}",
        r.content
    );
    assert!(r.content.contains("timeout_secs"), "{}", r.content);
}

#[tokio::test]
async fn a_server_that_never_answers_hits_the_time_limit() {
    let srv = Server::start().await;
    let r = fetch(
        &scope(&srv),
        json!({"url": srv.url("/slow-head"), "timeout_secs": 0.3}),
    )
    .await;
    assert!(r.is_error);
    assert!(r.content.contains("received 0 bytes"), "{}", r.content);
}

#[tokio::test]
async fn non_utf8_bodies_are_decoded_by_charset() {
    let srv = Server::start().await;
    let s = scope(&srv);
    let r = fetch(&s, json!({"url": srv.url("/latin1")})).await;
    assert!(r.content.contains("Café crème brûlée"), "{}", r.content);
    assert_eq!(r.details["charset"], "windows-1252");

    let r = fetch(&s, json!({"url": srv.url("/meta-charset")})).await;
    assert!(
        r.content.contains("\u{201c}quoted\u{201d} € 5"),
        "{}",
        r.content
    );
    assert_eq!(r.details["charset"], "windows-1252");

    let r = fetch(&s, json!({"url": srv.url("/shift-jis")})).await;
    assert_eq!(r.content, "日本語");
    assert_eq!(r.details["charset"], "Shift_JIS");

    let r = fetch(&s, json!({"url": srv.url("/bad-utf8")})).await;
    assert!(!r.is_error);
    assert!(
        r.content.starts_with("ok \u{fffd}\u{fffd} bytes"),
        "{}",
        r.content
    );
    assert!(r.content.contains("not valid UTF-8"), "{}", r.content);
}

#[tokio::test]
async fn non_html_text_is_returned_as_is() {
    let srv = Server::start().await;
    let s = scope(&srv);
    let r = fetch(&s, json!({"url": srv.url("/plain")})).await;
    assert_eq!(r.content, "line one\n<b>not markup</b>");
    assert_eq!(r.details["kind"], "text");
    let r = fetch(&s, json!({"url": srv.url("/json")})).await;
    assert_eq!(r.content, "{\"a\": [1, 2]}");
    assert_eq!(r.details["content_type"], "application/json");
    let r = fetch(&s, json!({"url": srv.url("/untyped")})).await;
    assert_eq!(r.details["kind"], "html");
    assert_eq!(r.content, "sniffed html");
}

#[tokio::test]
async fn binary_bodies_are_refused() {
    let srv = Server::start().await;
    let s = scope(&srv);
    let r = fetch(&s, json!({"url": srv.url("/png")})).await;
    assert!(r.is_error);
    assert!(
        r.content.contains("binary content (image/png)"),
        "{}",
        r.content
    );
    let r = fetch(&s, json!({"url": srv.url("/octet")})).await;
    assert!(r.is_error);
    assert!(
        r.content
            .contains("binary content (application/octet-stream)"),
        "{}",
        r.content
    );
}

#[tokio::test]
async fn an_error_status_is_an_error_result_with_the_page() {
    let srv = Server::start().await;
    let r = fetch(&scope(&srv), json!({"url": srv.url("/missing")})).await;
    assert!(r.is_error);
    assert!(
        r.content.contains("answered HTTP 404 Not Found"),
        "{}",
        r.content
    );
    assert!(r.content.contains("Nothing here"), "{}", r.content);
    assert_eq!(r.details["status"], 404);
}

#[tokio::test]
async fn bad_arguments_are_explained() {
    let s = scope_with(WebPlugin::default(), &[]);
    let r = fetch(&s, json!({"url": "ftp://example.org/file"})).await;
    assert!(
        r.is_error && r.content.contains("not an http(s) URL"),
        "{}",
        r.content
    );
    let r = fetch(
        &s,
        json!({"url": "http://127.0.0.1:9/", "timeout_secs": -1}),
    )
    .await;
    assert!(
        r.is_error && r.content.contains("positive number"),
        "{}",
        r.content
    );
    let r = fetch(&s, json!({"url": "http://127.0.0.1:9/", "max_bytes": 0})).await;
    assert!(
        r.is_error && r.content.contains("at least 1"),
        "{}",
        r.content
    );
}

#[tokio::test]
async fn a_refused_connection_is_reported() {
    let url = closed_port_url().await;
    let allowed = url.trim_start_matches("http://");
    let r = fetch(
        &scope_with(WebPlugin::default(), &[allowed]),
        json!({"url": format!("{url}/")}),
    )
    .await;
    assert!(r.is_error);
    assert!(
        r.content.starts_with("fetching `http://127.0.0.1"),
        "{}",
        r.content
    );
}

/// `Internet` is the public Internet: without the host's allowance the
/// loopback test server is refused, and never connected to.
#[tokio::test]
async fn an_internal_destination_the_host_did_not_allow_is_refused() {
    let srv = Server::start().await;
    let s = scope_with(WebPlugin::default(), &[]);
    for url in [
        srv.url("/page"),
        srv.url("/page").replace("127.0.0.1", "localhost"),
        srv.url("/page").replace("127.0.0.1", "2130706433"),
        srv.url("/page").replace("127.0.0.1", "[::ffff:127.0.0.1]"),
    ] {
        let r = fetch(&s, json!({ "url": url })).await;
        assert!(r.is_error, "{url}: {}", r.content);
        assert!(
            r.content.contains("is not allowed here")
                && r.content.contains("not on the public Internet"),
            "{url}: {}",
            r.content
        );
    }
    assert_eq!(srv.connections(), 0);
}

/// `{"timeout_secs": 1e20}` hit `Duration::from_secs_f64` before the clamp
/// and panicked; it now means the host's maximum.
#[tokio::test]
async fn an_enormous_timeout_is_clamped_not_a_panic() {
    let url = closed_port_url().await;
    let s = scope_with(WebPlugin::default(), &[url.trim_start_matches("http://")]);
    for timeout in [1e20, f64::MAX, 1.8e19] {
        let r = fetch(
            &s,
            json!({"url": format!("{url}/"), "timeout_secs": timeout}),
        )
        .await;
        assert!(r.is_error, "{}", r.content);
        assert!(!r.content.contains("panic"), "{timeout}: {}", r.content);
        assert!(r.content.contains("fetching"), "{timeout}: {}", r.content);
    }
}
