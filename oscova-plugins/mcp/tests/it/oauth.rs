//! `oauth` url servers (issue 27 §3): the upstream is this workspace's own
//! streamable HTTP MCP server (`oscova_mcp::http`) in process on loopback,
//! accepting only OAuth access tokens of a real authorization server, npm
//! `oidc-provider` (`oscova_test_support::oidc`, on loopback too), which
//! counts the token requests it gets. The upstream's one tool says which
//! user the token stood for: the OAuth client's id.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use oscova_core::prelude::*;
use oscova_mcp::http::{McpHttpError, McpHttpServer, OAuthConfig};
use oscova_plugin_mcp::{ClientAuth, McpPlugin, McpPluginBuilder, OAuthClient, ServerConfig};
use oscova_test_support::http::{Reply, TestServer};
use oscova_test_support::oidc::{
    BASIC_CLIENT_ID, BASIC_CLIENT_SECRET, OidcProvider, SHORT_CLIENT_ID, SHORT_CLIENT_SECRET,
};
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::support::{plugin, spawn_policy};

/// The upstream's tool, through the plugin's server `up`.
const WHOAMI: &str = "oscova_mcp__up__test_who_who_whoami";
const ID_KEY: &str = "up.client_id";
const SECRET_KEY: &str = "up.client_secret";
const WRONG_SECRET: &str = "not-the-basic-secret";

/// The upstream's toolset: whom the call is for.
pub struct WhoToolset {
    user: String,
}

#[toolset]
impl WhoToolset {
    /// The calling user's id.
    pub fn whoami(&self) -> String {
        self.user.clone()
    }
}

/// The upstream's plugin.
#[plugin(id = "test.who")]
pub struct WhoPlugin;

impl AgentPlugin for WhoPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|ctx: &AgentPluginContext| WhoToolset {
            user: ctx.user().id().to_owned(),
        });
    }
}

/// The upstream's users: each client's id mapped to a name that is no
/// credential (the host redacts credential values, client ids included,
/// from results).
const BASIC_USER: &str = "robot-basic";
const SHORT_USER: &str = "robot-short";

/// The upstream's OAuth settings: `provider`'s tokens, scope `mcp`.
fn trusting(provider: &OidcProvider) -> OAuthConfig {
    OAuthConfig::new(provider.issuer())
        .scopes(["mcp"])
        .users([(BASIC_CLIENT_ID, BASIC_USER), (SHORT_CLIENT_ID, SHORT_USER)])
}

/// The upstream MCP server, serving until stopped.
pub(crate) struct Upstream {
    pub(crate) url: String,
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    done: JoinHandle<Result<(), McpHttpError>>,
}

impl Upstream {
    /// Serves at `addr` (port 0: one the system picks), trusting `oauth`.
    pub(crate) async fn start(addr: SocketAddr, oauth: OAuthConfig) -> Self {
        let host = PluginHost::builder()
            .plugins(oscova_core::linked_plugins![WhoPlugin])
            .build()
            .expect("the upstream's host");
        let bound = McpHttpServer::new(host)
            .oauth(oauth)
            .bind(addr)
            .await
            .expect("the upstream binds");
        let addr = bound.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let done = tokio::spawn(bound.serve_until(async {
            let _ = stopped.await;
        }));
        Self {
            url: format!("http://{addr}/mcp"),
            addr,
            stop: Some(stop),
            done,
        }
    }

    pub(crate) async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(10), self.done).await;
    }
}

pub(crate) fn any_port() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

/// The plugin's server `up` at `url`: per user unless `shared`.
fn server(url: &str, issuer: Option<&str>, shared: bool) -> ServerConfig {
    let mut client = OAuthClient::new(ID_KEY, SECRET_KEY).scopes(["mcp"]);
    if let Some(issuer) = issuer {
        client = client.issuer(issuer);
    }
    ServerConfig::url(url)
        .per_user(!shared)
        .network(NetworkScope::Local)
        .timeout(Duration::from_secs(20))
        .oauth(client)
}

/// The host's credentials: the Basic client's.
fn host_credentials(key: &str) -> Option<SecretString> {
    match key {
        ID_KEY => Some(BASIC_CLIENT_ID.into()),
        SECRET_KEY => Some(BASIC_CLIENT_SECRET.into()),
        _ => None,
    }
}

/// Users' credentials: alice has the Basic client, bob the short-lived
/// one, carol the Basic client with a wrong secret, dave none.
fn user_credentials(user: &UserInfo, key: &str) -> Option<SecretString> {
    let (id, secret) = match user.id() {
        "alice" => (BASIC_CLIENT_ID, BASIC_CLIENT_SECRET),
        "bob" => (SHORT_CLIENT_ID, SHORT_CLIENT_SECRET),
        "carol" => (BASIC_CLIENT_ID, WRONG_SECRET),
        _ => return None,
    };
    match key {
        ID_KEY => Some(id.into()),
        SECRET_KEY => Some(secret.into()),
        _ => None,
    }
}

async fn started(builder: McpPluginBuilder) -> PluginHost {
    let mcp = plugin(builder.host_credentials(host_credentials)).await;
    assert!(
        mcp.start_diagnostics().is_empty(),
        "{:?}",
        mcp.start_diagnostics()
    );
    for status in mcp.status().servers() {
        // What `oscova plugins` shows.
        assert!(
            status
                .summary()
                .contains("OAuth client credentials from `http://127.0.0.1:"),
            "{}",
            status.summary()
        );
    }
    PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(mcp)
        .spawn_policy(spawn_policy())
        .credentials(user_credentials)
        .build()
        .expect("host")
}

async fn whoami(host: &PluginHost, user: &str) -> ToolResult {
    host.user_scope(UserInfo::new(user))
        .invoke(WHOAMI, json!({}))
        .await
}

/// How many token requests the provider has had (a blocking request,
/// off the runtime's threads).
async fn token_requests(provider: &Arc<OidcProvider>) -> u64 {
    let provider = provider.clone();
    tokio::task::spawn_blocking(move || provider.token_requests())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_gets_a_token_by_client_credentials_and_reuses_it() {
    let provider = Arc::new(OidcProvider::start());
    let upstream = Upstream::start(any_port(), trusting(&provider)).await;
    let host = started(
        McpPlugin::builder().server("up", server(&upstream.url, Some(provider.issuer()), false)),
    )
    .await;
    // The listing at start: the host's client, one token.
    assert_eq!(token_requests(&provider).await, 1);
    for _ in 0..3 {
        let result = whoami(&host, "alice").await;
        assert!(!result.is_error, "{result:?}");
        assert_eq!(result.content, BASIC_USER, "the token was alice's client's");
    }
    assert_eq!(
        token_requests(&provider).await,
        2,
        "alice's token is got once and reused by her next calls"
    );
    let bob = whoami(&host, "bob").await;
    assert_eq!(bob.content, SHORT_USER, "bob's own client: {bob:?}");
    assert_eq!(token_requests(&provider).await, 3);
    host.shutdown().await;
    upstream.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_replaced_before_it_is_sent() {
    let provider = Arc::new(OidcProvider::start());
    // The upstream's default leeway (60 s) would still take a token
    // expired by a second: only the client's own expiry renews it.
    let upstream = Upstream::start(any_port(), trusting(&provider)).await;
    let host = started(
        McpPlugin::builder().server("up", server(&upstream.url, Some(provider.issuer()), false)),
    )
    .await;
    let before = token_requests(&provider).await;
    assert_eq!(whoami(&host, "bob").await.content, SHORT_USER);
    assert_eq!(whoami(&host, "bob").await.content, SHORT_USER);
    assert_eq!(
        token_requests(&provider).await,
        before + 1,
        "a fresh token is reused"
    );
    // Its 2 seconds pass (it is renewed a tenth of its life early).
    tokio::time::sleep(Duration::from_millis(2300)).await;
    let again = whoami(&host, "bob").await;
    assert_eq!(again.content, SHORT_USER, "{again:?}");
    assert_eq!(
        token_requests(&provider).await,
        before + 2,
        "the expired token was replaced"
    );
    host.shutdown().await;
    upstream.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_secret_is_an_error_naming_the_credentials_and_a_missing_one_is_guidance() {
    let provider = Arc::new(OidcProvider::start());
    let upstream = Upstream::start(any_port(), trusting(&provider)).await;
    let host = started(
        McpPlugin::builder().server("up", server(&upstream.url, Some(provider.issuer()), false)),
    )
    .await;
    let before = token_requests(&provider).await;

    let carol = whoami(&host, "carol").await;
    assert!(
        carol.is_error && !carol.is_missing_credential(),
        "{carol:?}"
    );
    for part in [
        "refused the client credentials",
        ID_KEY,
        SECRET_KEY,
        "invalid_client",
        provider.issuer(),
    ] {
        assert!(carol.content.contains(part), "{part}: {}", carol.content);
    }
    assert!(!carol.content.contains(WRONG_SECRET), "{}", carol.content);
    assert_eq!(token_requests(&provider).await, before + 1);

    // No credentials: guidance, and nothing is asked of anyone.
    let dave = whoami(&host, "dave").await;
    assert!(dave.is_missing_credential(), "{dave:?}");
    assert_eq!(dave.details["credentials"], json!([ID_KEY, SECRET_KEY]));
    assert!(
        dave.content.contains("[users.dave.credentials]"),
        "{dave:?}"
    );
    assert_eq!(token_requests(&provider).await, before + 1);
    host.shutdown().await;
    upstream.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_server_uses_the_hosts_client_and_its_one_token() {
    let provider = Arc::new(OidcProvider::start());
    let upstream = Upstream::start(any_port(), trusting(&provider)).await;
    let host = started(
        McpPlugin::builder().server("up", server(&upstream.url, Some(provider.issuer()), true)),
    )
    .await;
    for user in ["alice", "dave"] {
        let result = whoami(&host, user).await;
        assert_eq!(result.content, BASIC_USER, "{user}: {result:?}");
    }
    assert_eq!(
        token_requests(&provider).await,
        1,
        "the listing's token serves every user's calls"
    );
    host.shutdown().await;
    upstream.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_token_is_replaced_once_per_attempt_never_in_a_loop() {
    let provider = Arc::new(OidcProvider::start());
    let upstream = Upstream::start(any_port(), trusting(&provider)).await;
    let addr = upstream.addr;
    let url = upstream.url.clone();
    let host =
        started(McpPlugin::builder().server("up", server(&url, Some(provider.issuer()), false)))
            .await;
    assert_eq!(whoami(&host, "alice").await.content, BASIC_USER);
    let before = token_requests(&provider).await;
    // The upstream comes back on the same address wanting an audience no
    // token has: every token is refused with 401.
    upstream.stop().await;
    let strict = Upstream::start(addr, trusting(&provider).audience("urn:nobody")).await;
    for attempt in 1..=2 {
        let refused = whoami(&host, "alice").await;
        assert!(refused.is_error, "{refused:?}");
        assert!(
            refused.content.contains("refused the access token"),
            "{attempt}: {}",
            refused.content
        );
        // The cached token was sent, refused and dropped; one more was
        // got and refused too; then the call ended.
        assert_eq!(token_requests(&provider).await, before + attempt);
    }
    host.shutdown().await;
    strict.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_naming_another_authorization_server_gets_no_secret_sent_there() {
    let provider = Arc::new(OidcProvider::start());
    let recorder = TestServer::start(|_| Reply::json(200, json!({}))).await;
    let elsewhere = recorder.url();
    // The upstream's metadata names `elsewhere` as its authorization
    // server (it only fetches that server's keys for a token it is shown,
    // and none is).
    let upstream = Upstream::start(any_port(), OAuthConfig::new(&elsewhere).scopes(["mcp"])).await;

    // With the issuer configured: that one only.
    let configured = McpPlugin::builder()
        .server("up", server(&upstream.url, Some(provider.issuer()), false))
        .host_credentials(host_credentials);
    let err = configured.list("up").await.unwrap_err().to_string();
    assert!(
        err.contains("not the configured `oauth.issuer`") && err.contains(&elsewhere),
        "{err}"
    );
    // Without: only the server's own origin.
    let unconfigured = McpPlugin::builder()
        .server("up", server(&upstream.url, None, false))
        .host_credentials(host_credentials);
    let err = unconfigured.list("up").await.unwrap_err().to_string();
    assert!(
        err.contains("none on its own origin") && err.contains("set `oauth.issuer`"),
        "{err}"
    );

    assert!(!err.contains(BASIC_CLIENT_SECRET), "{err}");
    assert_eq!(recorder.connections(), 0, "nothing reached it");
    assert_eq!(token_requests(&provider).await, 0, "nor the real one");
    upstream.stop().await;
}

/// A hostile server: `/mcp` answers 401 with `challenge`; the well-known
/// metadata paths answer `metadata`.
async fn hostile(challenge: String, metadata: serde_json::Value) -> TestServer {
    TestServer::start(move |request| {
        if request
            .path
            .starts_with("/.well-known/oauth-protected-resource")
        {
            Reply::json(200, metadata.clone())
        } else {
            Reply::new(401).header("www-authenticate", &challenge)
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_elsewhere_or_for_another_resource_is_refused_before_any_token_request() {
    let provider = Arc::new(OidcProvider::start());
    let recorder = TestServer::start(|_| Reply::json(200, json!({}))).await;
    let metadata = json!({
        "resource": "http://127.0.0.1:1/mcp",
        "authorization_servers": [provider.issuer()],
    });
    // The challenge points at metadata on another origin: not fetched.
    let pointing = hostile(
        format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource\"",
            recorder.url()
        ),
        metadata.clone(),
    )
    .await;
    let url = format!("{}/mcp", pointing.url());
    let err = McpPlugin::builder()
        .server("up", server(&url, Some(provider.issuer()), true))
        .host_credentials(host_credentials)
        .list("up")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("metadata on another origin"), "{err}");
    assert_eq!(recorder.connections(), 0, "the other origin was not asked");

    // Metadata (at the well-known URL of the server's path, the challenge
    // naming none) for another resource: refused, no token asked for.
    let other = hostile("Bearer".to_owned(), metadata).await;
    let url = format!("{}/mcp", other.url());
    let err = McpPlugin::builder()
        .server("up", server(&url, Some(provider.issuer()), true))
        .host_credentials(host_credentials)
        .list("up")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not this server"), "{err}");
    let asked: Vec<String> = other.requests().iter().map(|r| r.path.clone()).collect();
    assert!(
        asked.contains(&"/.well-known/oauth-protected-resource/mcp".to_owned()),
        "{asked:?}"
    );
    assert_eq!(token_requests(&provider).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_authenticates_with_basic_unless_client_auth_says_the_form() {
    let provider = Arc::new(OidcProvider::start());
    let upstream = Upstream::start(any_port(), trusting(&provider)).await;
    let with = |auth: Option<ClientAuth>| {
        let mut client = OAuthClient::new(ID_KEY, SECRET_KEY)
            .scopes(["mcp"])
            .issuer(provider.issuer());
        if let Some(auth) = auth {
            client = client.client_auth(auth);
        }
        ServerConfig::url(&upstream.url)
            .network(NetworkScope::Local)
            .oauth(client)
    };
    for (auth, sent) in [
        (None, "header"),
        (Some(ClientAuth::ClientSecretPost), "form"),
        (Some(ClientAuth::ClientSecretBasic), "header"),
    ] {
        let tools = McpPlugin::builder()
            .server("up", with(auth))
            .host_credentials(host_credentials)
            .list("up")
            .await
            .unwrap_or_else(|e| panic!("{auth:?}: {e}"));
        assert!(tools.iter().any(|t| t.name == "test_who__who__whoami"));
        let provider = provider.clone();
        let last = tokio::task::spawn_blocking(move || provider.last_token_auth())
            .await
            .unwrap();
        assert_eq!(last, sent, "{auth:?}");
    }
    assert_eq!(token_requests(&provider).await, 3);
    upstream.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_server_never_takes_a_users_client_and_without_the_hosts_is_guidance() {
    let provider = Arc::new(OidcProvider::start());
    let upstream = Upstream::start(any_port(), trusting(&provider)).await;
    let config = server(&upstream.url, Some(provider.issuer()), true);

    // Unpinned and no host credentials: it cannot be listed, and the
    // diagnostic says which credentials the host lacks.
    let unlisted = plugin(McpPlugin::builder().server("up", config.clone())).await;
    let diagnostics = unlisted.start_diagnostics().join("\n");
    assert!(
        diagnostics.contains("not set for the host")
            && diagnostics.contains(ID_KEY)
            && diagnostics.contains(SECRET_KEY),
        "{diagnostics}"
    );

    // Pinned with them; then started without them.
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("oscova.mcp.lock");
    McpPlugin::builder()
        .server("up", config.clone())
        .host_credentials(host_credentials)
        .lock_file(&lock)
        .pin("up")
        .await
        .expect("pinned with the host's client");
    let before = token_requests(&provider).await;
    let mcp = plugin(McpPlugin::builder().server("up", config).lock_file(&lock)).await;
    assert!(
        mcp.start_diagnostics().is_empty(),
        "{:?}",
        mcp.start_diagnostics()
    );
    let host = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(mcp)
        .spawn_policy(spawn_policy())
        .credentials(user_credentials)
        .build()
        .expect("host");
    // alice has a client of her own; a shared server does not take it.
    let result = whoami(&host, "alice").await;
    assert!(result.is_missing_credential(), "{result:?}");
    assert_eq!(result.details["credentials"], json!([ID_KEY, SECRET_KEY]));
    assert!(result.content.contains("`[credentials]`"), "{result:?}");
    assert_eq!(
        token_requests(&provider).await,
        before,
        "no token was asked for"
    );
    host.shutdown().await;
    upstream.stop().await;
}
