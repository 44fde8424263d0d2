//! `NetworkScope::Internet` means the public Internet: an `Internet` tool's
//! client refuses loopback, private, link-local and metadata destinations
//! in every spelling, on every redirect hop and after name resolution,
//! before connecting, unless the host allowed the destination by name.
//!
//! Loopback cases run against servers on 127.0.0.1 that count the
//! connections they accept. Private, link-local and metadata addresses run
//! only inside a network namespace the test creates (see
//! `oscova_test_support::netns`), where they exist on its loopback device;
//! names are mapped by a resolver of the test's own, never by DNS.

#![allow(missing_docs)]

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use oscova_core::prelude::*;
use oscova_core::{UserScope, http::HttpError};
use oscova_test_support::http::{Reply, TestServer};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use serde_json::json;

/// A refusal is made before connecting, so it is prompt.
const PROMPT: Duration = Duration::from_millis(900);

pub struct Net {
    http: HttpClient,
}

async fn fetch(http: &HttpClient, url: &str) -> ToolResult {
    match http.get(url).timeout(Duration::from_secs(5)).send().await {
        Ok(response) => match response.text().await {
            Ok(body) => ToolResult::text(body),
            Err(e) => ToolResult::error(format!("body: {e}")),
        },
        Err(e) => {
            let kind = match &e {
                HttpError::ScopeDenied { scope, .. } => format!("scope_denied:{scope}"),
                _ => "other".to_owned(),
            };
            ToolResult::error(e.to_string()).with_details(json!({ "kind": kind }))
        }
    }
}

#[toolset]
impl Net {
    /// GET anywhere on the Internet.
    #[tool(network = Internet)]
    pub async fn internet(&self, url: String) -> ToolResult {
        fetch(&self.http, &url).await
    }

    /// GET on this machine.
    #[tool(network = Local)]
    pub async fn local(&self, url: String) -> ToolResult {
        fetch(&self.http, &url).await
    }
}

#[plugin(id = "test.inet")]
#[derive(Default)]
pub struct NetPlugin;

impl AgentPlugin for NetPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|ctx: &AgentPluginContext| Net {
            http: ctx.http_client(),
        });
    }
}

/// Names the test knows; any other name fails to resolve, so nothing here
/// ever asks real DNS.
struct MapResolver(HashMap<String, Vec<IpAddr>>);

impl MapResolver {
    fn new(entries: &[(&str, &str)]) -> Arc<Self> {
        let mut map: HashMap<String, Vec<IpAddr>> = HashMap::new();
        for (name, ip) in entries {
            map.entry((*name).to_owned())
                .or_default()
                .push(ip.parse().unwrap());
        }
        Arc::new(Self(map))
    }
}

impl Resolve for MapResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let found = self.0.get(name.as_str()).cloned();
        let name = name.as_str().to_owned();
        Box::pin(async move {
            let ips = found.ok_or_else(|| format!("`{name}` is not a test name"))?;
            let addrs: Vec<SocketAddr> = ips.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect();
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

fn scope_with(http: HttpClient) -> (PluginHost, UserScope) {
    let host = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(NetPlugin)
        .http_client(http)
        .strict(true)
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("net"));
    (host, scope)
}

fn client(allow: &[&str], names: &[(&str, &str)]) -> HttpClient {
    HttpClient::builder()
        .allow_internal(allow)
        .dns_resolver(MapResolver::new(names))
        .build()
        .unwrap()
}

async fn call(scope: &UserScope, tool: &str, url: &str) -> (ToolResult, Duration) {
    let started = Instant::now();
    let result = scope
        .invoke(&format!("test_inet__net__{tool}"), json!({ "url": url }))
        .await;
    (result, started.elapsed())
}

/// Asserts `url` was refused promptly as the `scope` tool, the error naming
/// the scope and containing `why`.
async fn assert_refused(scope: &UserScope, tool: &str, url: &str, why: &str) {
    let (result, took) = call(scope, tool, url).await;
    assert!(result.is_error, "{url}: {result:?}");
    assert_eq!(
        result.details["kind"],
        format!("scope_denied:{tool}"),
        "{url}: {result:?}"
    );
    assert!(
        result
            .content
            .contains(&format!("network scope `{tool}` does not allow")),
        "{url}: {}",
        result.content
    );
    assert!(result.content.contains(why), "{url}: {}", result.content);
    assert!(took < PROMPT, "{url} took {took:?}: a connection was tried");
}

async fn ok_server() -> TestServer {
    TestServer::start(|_| Reply::new(200).body("hello").closing()).await
}

#[tokio::test]
async fn every_spelling_of_loopback_is_refused_without_connecting() {
    let server = ok_server().await;
    let port = server.port();
    let names = [("localhost", "127.0.0.1"), ("localhost.", "127.0.0.1")];
    let (_host, scope) = scope_with(client(&[], &names));
    for (url, why) in [
        (format!("http://127.0.0.1:{port}/"), "a loopback address"),
        (format!("http://localhost:{port}/"), "resolves to 127.0.0.1"),
        (format!("http://[::1]:{port}/"), "a loopback address"),
        (format!("http://0.0.0.0:{port}/"), "0.0.0.0/8"),
        (
            format!("http://2130706433:{port}/"),
            "127.0.0.1 is a loopback",
        ),
        (
            format!("http://0x7f000001:{port}/"),
            "127.0.0.1 is a loopback",
        ),
        (
            format!("http://0177.0.0.1:{port}/"),
            "127.0.0.1 is a loopback",
        ),
        (format!("http://127.1:{port}/"), "127.0.0.1 is a loopback"),
        (
            format!("http://[::ffff:127.0.0.1]:{port}/"),
            "127.0.0.1 is a loopback",
        ),
        (
            format!("http://example.com@127.0.0.1:{port}/"),
            "a loopback",
        ),
        (format!("http://user:pw@127.0.0.1:{port}/x?y"), "a loopback"),
        (
            format!("HTTP://LOCALHOST.:{port}/"),
            "not on the public Internet",
        ),
    ] {
        assert_refused(&scope, "internet", &url, why).await;
    }
    tokio::task::yield_now().await;
    assert_eq!(server.connections(), 0);
}

#[tokio::test]
async fn the_refusal_names_the_destination_but_not_the_userinfo() {
    let (_host, scope) = scope_with(client(&[], &[]));
    let (result, _) = call(
        &scope,
        "internet",
        "http://alice:hunter22@127.0.0.1:9/p?q=1",
    )
    .await;
    assert_eq!(
        result.details["kind"], "scope_denied:internet",
        "{result:?}"
    );
    assert!(result.content.contains("127.0.0.1:9"), "{}", result.content);
    assert!(!result.content.contains("hunter22"), "{}", result.content);
}

#[tokio::test]
async fn a_redirect_to_another_loopback_port_is_refused_and_not_followed() {
    let target = ok_server().await;
    let location = format!("http://127.0.0.1:{}/secret", target.port());
    let redirecting = TestServer::start(move |_| Reply::redirect(302, &location).closing()).await;
    let allowed = format!("127.0.0.1:{}", redirecting.port());
    let (_host, scope) = scope_with(client(&[&allowed], &[]));
    assert_refused(&scope, "internet", &redirecting.url(), "only on port").await;
    assert_eq!(redirecting.connections(), 1);
    assert_eq!(target.connections(), 0);
}

#[tokio::test]
async fn an_allowed_destination_is_reached_and_nothing_beside_it() {
    let allowed = ok_server().await;
    let other = ok_server().await;
    let entry = format!("127.0.0.1:{}", allowed.port());
    let (_host, scope) = scope_with(client(&[&entry], &[("localhost", "127.0.0.1")]));
    let (result, _) = call(&scope, "internet", &allowed.url()).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.content, "hello");
    assert_eq!(allowed.connections(), 1);
    // The same server by another name, and another port, stay refused.
    let by_name = format!("http://localhost:{}/", allowed.port());
    assert_refused(&scope, "internet", &by_name, "resolves to 127.0.0.1").await;
    assert_refused(&scope, "internet", &other.url(), "only on port").await;
    assert_eq!(allowed.connections(), 1);
    assert_eq!(other.connections(), 0);
}

#[tokio::test]
async fn a_name_that_resolves_to_an_internal_address_is_refused_unless_allowed() {
    let server = ok_server().await;
    let url = format!("http://intranet.test:{}/", server.port());
    let names = [("intranet.test", "127.0.0.1")];

    let (_host, scope) = scope_with(client(&[], &names));
    assert_refused(
        &scope,
        "internet",
        &url,
        "intranet.test: it resolves to 127.0.0.1",
    )
    .await;
    let (_host, scope) = scope_with(client(&["intranet.test:1"], &names));
    assert_refused(&scope, "internet", &url, "only on port 1").await;
    assert_eq!(server.connections(), 0);

    let (_host, scope) = scope_with(client(&["INTRANET.test"], &names));
    let (result, _) = call(&scope, "internet", &url).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(server.connections(), 1);
    // `Local` stays loopback-only: an allowed name is not a local one.
    assert_refused(&scope, "local", &url, "not a name for this machine").await;
    assert_eq!(server.connections(), 1);
}

// ------------------------------------------------------- network namespace

const INTERNAL: [&str; 4] = [
    "10.0.0.5",
    "169.254.169.254",
    "192.168.1.2",
    "fd00:ec2::254",
];

#[test]
fn private_link_local_and_metadata_addresses_are_refused() {
    oscova_test_support::netns::run_async(
        "private_link_local_and_metadata_addresses_are_refused",
        &INTERNAL,
        internal_addresses_in_a_namespace,
    );
}

async fn internal_addresses_in_a_namespace() {
    let mut servers = Vec::new();
    for ip in INTERNAL {
        let ip: IpAddr = ip.parse().unwrap();
        servers.push(TestServer::start_on(ip, |_| Reply::new(200).body("hello").closing()).await);
    }
    let names = [
        ("metadata.test", "169.254.169.254"),
        ("lan.test", "192.168.1.2"),
    ];
    let (_host, scope) = scope_with(client(&[], &names));
    let whys = [
        "a private address (10.0.0.0/8)",
        "a cloud metadata address",
        "a private address (192.168.0.0/16)",
        "a cloud metadata address",
    ];
    for (server, why) in servers.iter().zip(whys) {
        assert_refused(&scope, "internet", &format!("{}/", server.url()), why).await;
    }
    let metadata = format!(
        "http://metadata.test:{}/latest/meta-data/",
        servers[1].port()
    );
    assert_refused(&scope, "internet", &metadata, "resolves to 169.254.169.254").await;
    let lan = format!("http://lan.test:{}/", servers[2].port());
    assert_refused(&scope, "internet", &lan, "resolves to 192.168.1.2").await;
    for server in &servers {
        assert_eq!(server.connections(), 0, "{}", server.addr);
    }

    // Allowing one destination opens exactly that one.
    let allowed = servers[0].addr.to_string();
    let (_host, scope) = scope_with(client(&[&allowed], &names));
    let (result, _) = call(&scope, "internet", &servers[0].url()).await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.content, "hello");
    assert_eq!(servers[0].connections(), 1);
    assert_refused(&scope, "internet", &servers[1].url(), "metadata").await;
    assert_refused(&scope, "local", &servers[0].url(), "not a loopback address").await;
    assert_eq!(servers[0].connections(), 1);
    assert_eq!(servers[1].connections(), 0);
}
