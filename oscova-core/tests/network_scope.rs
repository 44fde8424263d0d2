//! The network scope a tool declares, enforced end to end: tools use the
//! `HttpClient` their factory took from `AgentPluginContext`, are called
//! through a real `PluginHost` and `UserScope`, and talk to a real loopback
//! HTTP server that counts the connections it accepts.
//!
//! The only non-loopback addresses here are TEST-NET-1 (192.0.2.0/24) and
//! the IPv6 documentation prefix, used as refused targets: every refusal is
//! timed, so a connection attempt (which would hang until a connect timeout)
//! fails the test instead of passing slowly.

#![allow(missing_docs)]

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use oscova_core::prelude::*;
use oscova_core::{
    UserScope, http::HttpError, http::HttpRequestBuilder, http::current_network_scope,
};
use oscova_test_support::http::{Reply, TestServer};
use serde_json::{Value, json};

/// How long a refusal may take. A connect attempt to TEST-NET would take far
/// longer (it is unroutable, so it waits for a timeout).
const PROMPT: Duration = Duration::from_millis(900);

// ------------------------------------------------------------------ server

/// A loopback server answering every request with `200 OK` and the body
/// `hello`. Every accepted connection is counted; each gets one response and
/// is closed, so every request a tool sends shows as a connection.
async fn ok_server() -> TestServer {
    TestServer::start(|_| Reply::new(200).body("hello").closing()).await
}

// ---------------------------------------------------------------- fixtures

/// A request built in the factory, outside any tool call, and sent later.
type Prebuilt = Arc<Mutex<Option<HttpRequestBuilder>>>;

/// The scope itself, for tools that call other tools.
type Nested = Arc<OnceLock<UserScope>>;

pub struct NetToolset {
    http: HttpClient,
    prebuilt: Prebuilt,
    nested: Nested,
}

/// Sends a GET and turns the outcome into a result: the body on success; on
/// failure an error result whose details name the `HttpError` variant.
async fn fetch(request: HttpRequestBuilder) -> ToolResult {
    match request.timeout(Duration::from_secs(5)).send().await {
        Ok(response) => match response.text().await {
            Ok(body) => ToolResult::text(body),
            Err(e) => ToolResult::error(format!("body: {e}")),
        },
        Err(e) => {
            let kind = match &e {
                HttpError::ScopeDenied { scope, .. } => format!("scope_denied:{scope}"),
                HttpError::Request(_) => "request".to_owned(),
                _ => "other".to_owned(),
            };
            ToolResult::error(e.to_string()).with_details(json!({ "kind": kind }))
        }
    }
}

#[toolset]
impl NetToolset {
    /// GET with no network allowed.
    #[tool(network = None)]
    pub async fn get_none(&self, url: String) -> ToolResult {
        fetch(self.http.get(&url)).await
    }

    /// GET on this machine only.
    #[tool(network = Local)]
    pub async fn get_local(&self, url: String) -> ToolResult {
        fetch(self.http.get(&url)).await
    }

    /// GET on the public Internet.
    #[tool(network = Internet)]
    pub async fn get_internet(&self, url: String) -> ToolResult {
        fetch(self.http.get(&url)).await
    }

    /// Sends the request the factory built.
    #[tool(network = Local)]
    pub async fn send_prebuilt_local(&self) -> ToolResult {
        let request = self.prebuilt.lock().unwrap().take();
        match request {
            Some(request) => fetch(request).await,
            None => ToolResult::error("nothing prebuilt"),
        }
    }

    /// Sends the request the factory built, with no network allowed.
    #[tool(network = None)]
    pub async fn send_prebuilt_none(&self) -> ToolResult {
        let request = self.prebuilt.lock().unwrap().take();
        match request {
            Some(request) => fetch(request).await,
            None => ToolResult::error("nothing prebuilt"),
        }
    }

    /// Sends from a task it spawns: the scope does not follow the task.
    #[tool(network = Local)]
    pub async fn get_from_spawned_task(&self, url: String) -> ToolResult {
        let http = self.http.clone();
        let task = tokio::spawn(async move {
            let scope = http.effective_scope().to_string();
            let result = fetch(http.get(&url)).await;
            (scope, result)
        });
        let (scope, mut result) = task.await.unwrap();
        result.details["spawned_scope"] = json!(scope);
        result
    }

    /// The scope in force inside a sync body.
    #[tool(network = Local)]
    pub fn scope_sync_local(&self) -> String {
        scope_name(&self.http)
    }

    /// The scope in force inside an async body.
    #[tool(network = Internet)]
    pub async fn scope_async_internet(&self) -> String {
        tokio::task::yield_now().await;
        scope_name(&self.http)
    }

    /// Calls the `None` tool `get_none` from inside this `Local` call.
    #[tool(network = Local)]
    pub async fn nested_none_inside_local(&self, url: String) -> ToolResult {
        let scope = self.nested.get().unwrap().clone();
        scope.invoke(&wire("get_none"), json!({ "url": url })).await
    }

    /// Calls the `Local` tool `get_local` from inside this `None` call.
    pub async fn nested_local_inside_none(&self, url: String) -> ToolResult {
        let scope = self.nested.get().unwrap().clone();
        scope
            .invoke(&wire("get_local"), json!({ "url": url }))
            .await
    }

    /// The scope in force with no network declared.
    pub fn scope_default(&self) -> String {
        scope_name(&self.http)
    }
}

fn scope_name(http: &HttpClient) -> String {
    format!(
        "{}/{:?}",
        http.effective_scope(),
        current_network_scope().map(|s| s.to_string())
    )
}

/// Carries the server URL the factory prebuilds a request for.
#[plugin(id = "test.net")]
#[derive(Default)]
pub struct NetPlugin {
    prebuilt_url: Option<String>,
    prebuilt: Prebuilt,
    nested: Nested,
}

impl AgentPlugin for NetPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        let url = self.prebuilt_url.clone();
        let prebuilt = self.prebuilt.clone();
        let nested = self.nested.clone();
        builder.add_toolset(move |ctx: &AgentPluginContext| {
            let http = ctx.http_client();
            // Built here, outside any tool call: nothing is checked yet.
            if let Some(url) = &url {
                *prebuilt.lock().unwrap() = Some(http.get(url));
            }
            NetToolset {
                http,
                prebuilt: prebuilt.clone(),
                nested: nested.clone(),
            }
        });
    }
}

fn host_with(plugin: NetPlugin) -> (PluginHost, UserScope) {
    let nested = plugin.nested.clone();
    let host = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(plugin)
        .strict(true)
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("net"));
    assert!(scope.diagnostics().is_empty(), "{:?}", scope.diagnostics());
    // A cycle (scope → toolset → scope), leaked on purpose in a test.
    let _ = nested.set(scope.clone());
    (host, scope)
}

fn scope() -> (PluginHost, UserScope) {
    host_with(NetPlugin::default())
}

fn wire(tool: &str) -> String {
    format!("test_net__net__{tool}")
}

/// Calls `tool` with `url` and times it.
async fn get(scope: &UserScope, tool: &str, url: &str) -> (ToolResult, Duration) {
    let started = Instant::now();
    let result = scope.invoke(&wire(tool), json!({ "url": url })).await;
    (result, started.elapsed())
}

fn kind(result: &ToolResult) -> &str {
    result.details["kind"].as_str().unwrap_or("")
}

// ------------------------------------------------------------------- tests

#[tokio::test]
async fn none_tool_is_refused_and_the_server_sees_nothing() {
    let server = ok_server().await;
    let (_host, scope) = scope();
    let (result, took) = get(&scope, "get_none", &server.url()).await;
    assert!(result.is_error, "{result:?}");
    assert_eq!(kind(&result), "scope_denied:none", "{result:?}");
    assert!(
        result.content.contains("network scope `none`"),
        "{}",
        result.content
    );
    assert!(took < PROMPT, "took {took:?}");
    // Also for `localhost`, which a resolver would map to loopback.
    let (result, _) = get(
        &scope,
        "get_none",
        &format!("http://localhost:{}/", server.port()),
    )
    .await;
    assert_eq!(kind(&result), "scope_denied:none", "{result:?}");
    tokio::task::yield_now().await;
    assert_eq!(server.connections(), 0);
}

#[tokio::test]
async fn local_tool_reaches_the_loopback_server() {
    let server = ok_server().await;
    let (_host, scope) = scope();
    let (result, _) = get(&scope, "get_local", &server.url()).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.content, "hello");
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn local_tool_reaches_localhost_by_name() {
    let server = ok_server().await;
    let (_host, scope) = scope();
    let url = format!("http://localhost:{}/", server.port());
    let (result, _) = get(&scope, "get_local", &url).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.content, "hello");
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn local_tool_refuses_non_loopback_literals_without_connecting() {
    let (_host, scope) = scope();
    for url in [
        "http://192.0.2.1/",
        "http://192.0.2.1:9/",
        "https://192.0.2.7:443/x",
        "http://[2001:db8::1]/",
        "http://0.0.0.0:9/",
        "http://192.0.2.1.nip.io/",
    ] {
        let (result, took) = get(&scope, "get_local", url).await;
        assert!(result.is_error, "{url}: {result:?}");
        assert_eq!(kind(&result), "scope_denied:local", "{url}: {result:?}");
        assert!(took < PROMPT, "{url} took {took:?}: a connection was tried");
    }
}

#[tokio::test]
async fn redirect_to_a_forbidden_target_is_refused_and_not_followed() {
    let server = TestServer::start(|_| Reply::redirect(302, "http://192.0.2.1/").closing()).await;
    let (_host, scope) = scope();
    let (result, took) = get(&scope, "get_local", &server.url()).await;
    assert!(result.is_error, "{result:?}");
    assert_eq!(kind(&result), "scope_denied:local", "{result:?}");
    assert!(
        result.content.contains("192.0.2.1"),
        "the refused target is named: {}",
        result.content
    );
    assert!(took < PROMPT, "took {took:?}: the redirect was followed");
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn redirect_to_another_loopback_url_is_followed() {
    let target = ok_server().await;
    let location = format!("http://localhost:{}/next", target.port());
    let redirecting = TestServer::start(move |_| Reply::redirect(307, &location).closing()).await;
    let (_host, scope) = scope();
    let (result, _) = get(&scope, "get_local", &redirecting.url()).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.content, "hello");
    assert_eq!(redirecting.connections(), 1);
    assert_eq!(target.connections(), 1);
}

/// `Internet` is the public Internet: loopback is refused before any
/// connection (every other spelling and range is in `internet_scope.rs`).
#[tokio::test]
async fn internet_tool_does_not_reach_loopback() {
    let server = ok_server().await;
    let (_host, scope) = scope();
    let (result, took) = get(&scope, "get_internet", &server.url()).await;
    assert_eq!(kind(&result), "scope_denied:internet", "{result:?}");
    assert!(result.content.contains("loopback"), "{}", result.content);
    assert!(took < PROMPT, "took {took:?}");
    assert_eq!(server.connections(), 0);
}

#[tokio::test]
async fn a_request_built_outside_the_call_is_checked_when_sent() {
    let server = ok_server().await;
    let plugin = || NetPlugin {
        prebuilt_url: Some(server.url()),
        prebuilt: Prebuilt::default(),
        nested: Nested::default(),
    };

    let (_host, scope) = host_with(plugin());
    let result = scope.invoke(&wire("send_prebuilt_none"), json!({})).await;
    assert_eq!(kind(&result), "scope_denied:none", "{result:?}");
    assert_eq!(server.connections(), 0);

    let (_host, scope) = host_with(plugin());
    let result = scope.invoke(&wire("send_prebuilt_local"), json!({})).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.content, "hello");
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn a_task_spawned_by_a_tool_gets_no_network() {
    let server = ok_server().await;
    let (_host, scope) = scope();
    let (result, _) = get(&scope, "get_from_spawned_task", &server.url()).await;
    assert_eq!(kind(&result), "scope_denied:none", "{result:?}");
    assert_eq!(result.details["spawned_scope"], "none");
    assert_eq!(server.connections(), 0);
}

#[tokio::test]
async fn the_declared_scope_is_in_force_inside_sync_and_async_bodies() {
    let (_host, scope) = scope();
    let content = |r: ToolResult| {
        assert!(!r.is_error, "{r:?}");
        r.content
    };
    assert_eq!(
        content(scope.invoke(&wire("scope_sync_local"), Value::Null).await),
        r#"local/Some("local")"#
    );
    assert_eq!(
        content(
            scope
                .invoke(&wire("scope_async_internet"), Value::Null)
                .await
        ),
        r#"internet/Some("internet")"#
    );
    // `None` is the default, and needs no task-local at the top level.
    assert_eq!(
        content(scope.invoke(&wire("scope_default"), Value::Null).await),
        "none/None"
    );
    // Outside any call, the toolset's client acts as `None`.
    assert_eq!(current_network_scope(), None);
}

#[tokio::test]
async fn a_nested_call_runs_under_the_inner_tools_scope() {
    let server = ok_server().await;
    let (_host, scope) = scope();
    let (result, _) = get(&scope, "nested_none_inside_local", &server.url()).await;
    assert_eq!(kind(&result), "scope_denied:none", "{result:?}");
    assert_eq!(server.connections(), 0);
    let (result, _) = get(&scope, "nested_local_inside_none", &server.url()).await;
    assert_eq!(result.content, "hello", "{result:?}");
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn the_hosts_own_client_is_unscoped() {
    let server = ok_server().await;
    let (host, _scope) = scope();
    let response = host.http_client().get(&server.url()).send().await.unwrap();
    assert_eq!(response.text().await.unwrap(), "hello");
    assert_eq!(server.connections(), 1);
}
