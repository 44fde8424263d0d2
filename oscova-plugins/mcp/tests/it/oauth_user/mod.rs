//! `oauth` with `grant = "authorization_code"` (issue 39): a person logs
//! in once, the grant is kept sealed in the token store, refreshed, and
//! used for that person only. The authorization server is the real npm
//! `oidc-provider` (`oscova_test_support::oidc`), its consent driven over
//! HTTP as a browser would (`consent` below: the login and consent forms
//! its interaction endpoints take, cookies kept); the upstream is this
//! workspace's own MCP server trusting its tokens, whose one tool says
//! whom a token stands for.
//!
//! The cases are one conformance suite of the token store: each runs
//! against the sessions' SQLite file (`sqlite::`) and, with the
//! `postgres` feature, a database of its own on one throwaway Postgres
//! cluster the suite shares (`postgres::`, `world::shared_database`),
//! where two stores on one database are two instances of a fleet.

mod cimd;
mod link;
mod world;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use oscova_core::prelude::*;
use oscova_mcp::http::OAuthConfig;
use oscova_plugin_mcp::{
    LoopbackRedirect, McpPlugin, McpPluginBuilder, OAuthClient, ServerConfig, TokenStore,
};
use oscova_test_support::oidc::{self, OidcProvider, SHORT_USER_CLIENT_ID, USER_CLIENT_ID};
use serde_json::{Value, json};

use crate::oauth::Upstream;
use crate::support::spawn_policy;
use link::a_link_made_on_one_instance_is_finished_on_another_once;
use world::{Kind, World, mode};

/// Each case, as a test on each store.
macro_rules! conformance {
    ($($case:ident),* $(,)?) => {
        /// The cases on the sessions' SQLite file.
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case(super::Kind::Sqlite).await;
                }
            )*
        }

        /// The cases on a database of their own on the suite's Postgres cluster.
        #[cfg(feature = "postgres")]
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case(super::Kind::Postgres).await;
                }
            )*
        }
    };
}

conformance!(
    a_login_serves_calls_in_a_later_process_and_nobody_elses,
    each_user_gets_their_own_grant_and_a_moved_row_opens_for_nobody,
    an_expiring_token_is_refreshed_with_the_resource_on_every_request,
    two_stores_refreshing_at_once_use_a_rotating_refresh_token_once,
    a_revoked_grant_is_the_missing_credential_result_and_is_not_retried,
    without_a_client_id_the_client_registers_itself_at_login,
    a_server_asking_for_another_audience_or_a_foreign_redirect_is_refused,
    a_logout_revokes_the_grant_so_a_copy_of_it_is_worth_nothing,
    a_grant_is_never_sent_to_another_url_of_the_server,
    a_link_made_on_one_instance_is_finished_on_another_once,
);

/// The upstream's tool, through the plugin's server `up`.
const WHOAMI: &str = "oscova_mcp__up__test_who_who_whoami";
/// The provider's public client with refresh tokens.
const USER_CLIENT: &str = USER_CLIENT_ID;
/// The same, its access tokens living 2 seconds.
const SHORT_CLIENT: &str = SHORT_USER_CLIENT_ID;

/// The accounts people log in as at the provider, and whom the upstream
/// takes each for.
const ACCOUNTS: [(&str, &str); 3] = [
    ("account-alice", "upstream-alice"),
    ("account-bob", "upstream-bob"),
    ("account-host", "upstream-host"),
];

/// The upstream's OAuth settings: `provider`'s tokens, scope `mcp`, the
/// accounts mapped to its users.
fn trusting(provider: &OidcProvider) -> OAuthConfig {
    OAuthConfig::new(provider.issuer())
        .scopes(["mcp"])
        .users(ACCOUNTS)
}

/// Server `up`: each user's grant, from `client` (`None`: registered at
/// login).
fn server(url: &str, provider: &OidcProvider, client: Option<&str>) -> ServerConfig {
    let mut oauth = OAuthClient::authorization_code()
        .scopes(["mcp"])
        .issuer(provider.issuer());
    if let Some(client) = client {
        oauth = oauth.client_id(client);
    }
    ServerConfig::url(url)
        .per_user(true)
        .network(NetworkScope::Local)
        .timeout(Duration::from_secs(20))
        .oauth(oauth)
}

fn builder(config: ServerConfig, store: &TokenStore) -> McpPluginBuilder {
    McpPlugin::builder()
        .server("up", config)
        .token_store(store.clone())
        .spawn_policy(spawn_policy())
}

/// `provider`'s consent as `account` to `url` (a blocking exchange, off
/// the runtime's threads): where the browser is sent back to.
async fn consent(provider: &Arc<OidcProvider>, url: &str, account: &str) -> String {
    let (provider, url, account) = (provider.clone(), url.to_owned(), account.to_owned());
    tokio::task::spawn_blocking(move || provider.consent(&url, &account))
        .await
        .unwrap()
}

/// One blocking HTTP exchange, off the runtime's threads.
async fn exchange(method: &'static str, url: &str, form: Option<&'static str>) -> (u16, String) {
    let url = url.to_owned();
    tokio::task::spawn_blocking(move || {
        let (status, _, body) = oidc::exchange(method, &url, &BTreeMap::new(), form);
        (status, body)
    })
    .await
    .unwrap()
}

/// Logs `user` (`None`: the host) in to server `up` as `account`: the
/// loopback listener takes the redirect unless `paste`, which hands the
/// URL to the login as a person would paste it.
async fn login(
    builder: &McpPluginBuilder,
    provider: &Arc<OidcProvider>,
    user: Option<&str>,
    account: &str,
    paste: bool,
) {
    let loopback = LoopbackRedirect::bind().await.expect("a loopback port");
    let login = builder
        .login("up", user, loopback.redirect_uri())
        .await
        .expect("the login starts");
    assert!(
        login
            .authorization_url()
            .contains("code_challenge_method=S256")
            && login.authorization_url().contains("resource="),
        "{}",
        login.authorization_url()
    );
    let redirected = consent(provider, login.authorization_url(), account).await;
    assert!(redirected.starts_with(login.redirect_uri()), "{redirected}");
    let url = if paste {
        redirected
    } else {
        let waiting = tokio::spawn(loopback.wait());
        let (status, page) = exchange("GET", &redirected, None).await;
        assert_eq!(status, 200, "{page}");
        waiting.await.unwrap().expect("the redirect")
    };
    login.finish(&url).await.expect("the code is exchanged");
}

/// The provider's `/test/grants` counts.
async fn grants(provider: &Arc<OidcProvider>) -> Value {
    let provider = provider.clone();
    tokio::task::spawn_blocking(move || provider.grants())
        .await
        .unwrap()
}

async fn host_of(builder: McpPluginBuilder) -> PluginHost {
    let mcp = builder.start().await;
    assert!(
        mcp.start_diagnostics().is_empty(),
        "{:?}",
        mcp.start_diagnostics()
    );
    PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(mcp)
        .spawn_policy(spawn_policy())
        .build()
        .expect("host")
}

async fn whoami(host: &PluginHost, user: &str) -> ToolResult {
    host.user_scope(UserInfo::new(user))
        .invoke(WHOAMI, json!({}))
        .await
}

async fn a_login_serves_calls_in_a_later_process_and_nobody_elses(kind: Kind) {
    let world = World::new(kind).await;
    // Nobody logged in: the server cannot be listed, and start-up says
    // what to run.
    let unlisted = world.builder(Some(USER_CLIENT)).start().await;
    let said = unlisted.start_diagnostics().join("\n");
    assert!(said.contains("`oscova mcp login up`"), "{said}");
    let first = world.builder(Some(USER_CLIENT));
    // The host's grant lists the tools at start; alice's runs her calls.
    login(&first, &world.provider, None, "account-host", true).await;
    login(
        &first,
        &world.provider,
        Some("alice"),
        "account-alice",
        false,
    )
    .await;
    let host = host_of(first).await;
    let alice = whoami(&host, "alice").await;
    assert_eq!(alice.content, "upstream-alice", "{alice:?}");
    // bob has not logged in: the tools are listed, the call says what to run.
    let bob = whoami(&host, "bob").await;
    assert!(bob.is_missing_credential(), "{bob:?}");
    assert_eq!(bob.details["login"], "oscova mcp login up --user bob");
    assert_eq!(bob.details["credentials"], json!(["mcp.servers.up.oauth"]));
    assert!(
        bob.content.contains("oscova mcp login up --user bob"),
        "{bob:?}"
    );
    host.shutdown().await;

    // A restart: a new store on the file, a new plugin, a new host.
    let before = grants(&world.provider).await;
    let host = host_of(world.builder(Some(USER_CLIENT))).await;
    let again = whoami(&host, "alice").await;
    assert_eq!(again.content, "upstream-alice", "{again:?}");
    let after = grants(&world.provider).await;
    assert_eq!(
        after, before,
        "the kept grant's token served: nothing asked of the provider"
    );
    host.shutdown().await;

    // Kept sealed: no token in the clear, in any row or (SQLite) in the
    // file, which is private.
    let rows = world.rows().await;
    assert_eq!(rows.len(), 2, "the host's grant and alice's");
    let mut raw: Vec<u8> = rows.into_iter().flat_map(|row| row.2).collect();
    if let Some(db) = world.db() {
        assert_eq!(mode(&db), 0o600);
        assert_eq!(mode(db.parent().unwrap()), 0o700);
        raw.extend(std::fs::read(db).unwrap());
    }
    for needle in ["access_token", "refresh_token", "eyJ"] {
        assert!(
            !raw.windows(needle.len()).any(|w| w == needle.as_bytes()),
            "`{needle}` is in the store in the clear"
        );
    }
    world.upstream.stop().await;
}

async fn each_user_gets_their_own_grant_and_a_moved_row_opens_for_nobody(kind: Kind) {
    let world = World::new(kind).await;
    let builder = world.builder(Some(USER_CLIENT));
    login(&builder, &world.provider, None, "account-host", true).await;
    login(
        &builder,
        &world.provider,
        Some("alice"),
        "account-alice",
        true,
    )
    .await;
    login(&builder, &world.provider, Some("bob"), "account-bob", false).await;
    let host = host_of(builder).await;
    for _ in 0..2 {
        assert_eq!(whoami(&host, "bob").await.content, "upstream-bob");
        assert_eq!(whoami(&host, "alice").await.content, "upstream-alice");
    }
    host.shutdown().await;

    // Someone with the file copies alice's sealed row over bob's: it
    // does not open for bob (the seal binds server, user and URL), so
    // bob is asked to log in, and alice's token is never sent for him.
    world
        .execute(
            "UPDATE oscova_mcp_oauth_grants SET sealed = (SELECT sealed FROM oscova_mcp_oauth_grants WHERE user_id = 'alice') WHERE user_id = 'bob'",
        )
        .await;
    let host = host_of(world.builder(Some(USER_CLIENT))).await;
    let bob = whoami(&host, "bob").await;
    assert!(bob.is_missing_credential(), "{bob:?}");
    assert!(
        bob.content.contains("cannot be opened with this token key"),
        "{bob:?}"
    );
    assert_eq!(whoami(&host, "alice").await.content, "upstream-alice");
    // Logged out (by another store on the file), alice's next call is
    // asked to log in again.
    let out = world.builder(Some(USER_CLIENT));
    let gone = out.logout("up", Some("alice")).await.unwrap();
    assert!(gone.forgotten, "{gone:?}");
    assert_eq!(
        gone.revoked_at.as_deref(),
        Some(world.provider.issuer()),
        "{gone:?}"
    );
    let again = out.logout("up", Some("alice")).await.unwrap();
    assert!(
        !again.forgotten && again.revoked_at.is_none(),
        "once: {again:?}"
    );
    let alice = whoami(&host, "alice").await;
    assert!(alice.is_missing_credential(), "{alice:?}");
    host.shutdown().await;
    world.upstream.stop().await;
}

async fn an_expiring_token_is_refreshed_with_the_resource_on_every_request(kind: Kind) {
    let world = World::new(kind).await;
    let builder = world.builder(Some(SHORT_CLIENT));
    login(&builder, &world.provider, None, "account-host", true).await;
    login(
        &builder,
        &world.provider,
        Some("alice"),
        "account-alice",
        true,
    )
    .await;
    let host = host_of(builder).await;
    assert_eq!(whoami(&host, "alice").await.content, "upstream-alice");
    tokio::time::sleep(Duration::from_millis(2300)).await;
    let again = whoami(&host, "alice").await;
    assert_eq!(again.content, "upstream-alice", "{again:?}");
    let counts = grants(&world.provider).await;
    assert_eq!(counts["authorization_code"], 2);
    assert!(counts["refresh_token"].as_u64() >= Some(1), "{counts}");
    assert_eq!(counts["refresh_errors"], 0, "{counts}");
    let resources = counts["resources"].as_array().unwrap();
    assert!(
        resources.iter().all(|r| r == &json!(world.upstream.url)),
        "every code exchange and refresh named the server: {counts}"
    );
    host.shutdown().await;
    world.upstream.stop().await;
}

async fn two_stores_refreshing_at_once_use_a_rotating_refresh_token_once(kind: Kind) {
    let world = World::new(kind).await;
    let builder = world.builder(Some(SHORT_CLIENT));
    login(&builder, &world.provider, None, "account-host", true).await;
    login(
        &builder,
        &world.provider,
        Some("alice"),
        "account-alice",
        true,
    )
    .await;
    // Two hosts, each with a store of its own on the one file, as two
    // processes would have.
    let one = host_of(builder).await;
    let two = host_of(world.builder(Some(SHORT_CLIENT))).await;
    assert_eq!(whoami(&one, "alice").await.content, "upstream-alice");
    assert_eq!(whoami(&two, "alice").await.content, "upstream-alice");
    let before = grants(&world.provider).await;
    // Both tokens expire; then both hosts call at once, twice each.
    tokio::time::sleep(Duration::from_millis(2300)).await;
    let (a, b, c, d) = tokio::join!(
        whoami(&one, "alice"),
        whoami(&two, "alice"),
        whoami(&one, "alice"),
        whoami(&two, "alice"),
    );
    for result in [a, b, c, d] {
        assert_eq!(result.content, "upstream-alice", "{result:?}");
    }
    let after = grants(&world.provider).await;
    let refreshes =
        after["refresh_token"].as_u64().unwrap() - before["refresh_token"].as_u64().unwrap();
    assert_eq!(refreshes, 1, "one refresh served both: {after}");
    assert_eq!(
        after["refresh_errors"], 0,
        "a rotated refresh token was never reused: {after}"
    );
    one.shutdown().await;
    two.shutdown().await;
    world.upstream.stop().await;
}

async fn a_revoked_grant_is_the_missing_credential_result_and_is_not_retried(kind: Kind) {
    let world = World::new(kind).await;
    let builder = world.builder(Some(SHORT_CLIENT));
    login(&builder, &world.provider, None, "account-host", true).await;
    login(
        &builder,
        &world.provider,
        Some("alice"),
        "account-alice",
        true,
    )
    .await;
    let host = host_of(builder).await;
    assert_eq!(whoami(&host, "alice").await.content, "upstream-alice");
    let provider = world.provider.clone();
    let revoked = tokio::task::spawn_blocking(move || provider.revoke("account-alice"))
        .await
        .unwrap();
    assert!(revoked >= 1, "alice's grant was revoked");
    tokio::time::sleep(Duration::from_millis(2300)).await;
    let revoked = whoami(&host, "alice").await;
    assert!(revoked.is_missing_credential(), "{revoked:?}");
    assert!(revoked.content.contains("refused the grant"), "{revoked:?}");
    assert_eq!(revoked.details["login"], "oscova mcp login up --user alice");
    let counts = grants(&world.provider).await;
    assert_eq!(counts["refresh_errors"], 1, "{counts}");
    // The grant is forgotten: the next call asks nobody anything.
    let again = whoami(&host, "alice").await;
    assert!(again.is_missing_credential(), "{again:?}");
    assert_eq!(grants(&world.provider).await, counts);
    host.shutdown().await;
    world.upstream.stop().await;
}

async fn without_a_client_id_the_client_registers_itself_at_login(kind: Kind) {
    let world = World::new(kind).await;
    let builder = world.builder(None);
    login(&builder, &world.provider, None, "account-host", true).await;
    login(
        &builder,
        &world.provider,
        Some("alice"),
        "account-alice",
        false,
    )
    .await;
    assert_eq!(grants(&world.provider).await["registrations"], 2);
    let host = host_of(builder).await;
    assert_eq!(whoami(&host, "alice").await.content, "upstream-alice");
    host.shutdown().await;
    world.upstream.stop().await;
}

async fn a_server_asking_for_another_audience_or_a_foreign_redirect_is_refused(kind: Kind) {
    let world = World::new(kind).await;
    // Its metadata names another resource: its tokens would be good
    // elsewhere. Refused before anything is asked of the provider.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap();
    let elsewhere = Upstream::start(
        addr,
        trusting(&world.provider).resource(format!("http://{addr}/elsewhere")),
    )
    .await;
    let wrong = builder(
        server(&elsewhere.url, &world.provider, Some(USER_CLIENT)),
        &world.store(),
    );
    let err = wrong
        .login("up", Some("alice"), "http://127.0.0.1:9/callback")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("is not this server"), "{err}");
    assert_eq!(grants(&world.provider).await["registrations"], 0);
    elsewhere.stop().await;

    // A redirect whose `state` is not this login's exchanges nothing.
    let builder = world.builder(Some(USER_CLIENT));
    let login = builder
        .login("up", Some("alice"), "http://127.0.0.1:9/callback")
        .await
        .unwrap();
    let forged = "http://127.0.0.1:9/callback?code=abc&state=not-this-one";
    let err = login.finish(forged).await.unwrap_err();
    assert!(err.contains("not this login's"), "{err}");
    let denied = builder
        .login("up", Some("alice"), "http://127.0.0.1:9/callback")
        .await
        .unwrap()
        .finish("http://127.0.0.1:9/callback?error=access_denied&error_description=no")
        .await
        .unwrap_err();
    assert!(
        denied.contains("refused the login: access_denied"),
        "{denied}"
    );
    assert_eq!(grants(&world.provider).await["authorization_code"], 0);
    world.upstream.stop().await;
}

async fn a_logout_revokes_the_grant_so_a_copy_of_it_is_worth_nothing(kind: Kind) {
    let world = World::new(kind).await;
    let builder = world.builder(Some(SHORT_CLIENT));
    login(&builder, &world.provider, None, "account-host", true).await;
    login(
        &builder,
        &world.provider,
        Some("alice"),
        "account-alice",
        true,
    )
    .await;
    let host = host_of(builder).await;
    assert_eq!(whoami(&host, "alice").await.content, "upstream-alice");
    // Someone keeps a copy of alice's row (and has the key).
    let copy = world.row("alice").await;
    let out = world
        .builder(Some(SHORT_CLIENT))
        .logout("up", Some("alice"))
        .await
        .unwrap();
    assert!(out.forgotten && out.revoked_at.is_some(), "{out:?}");
    // The copy is put back; once its access token expires, its refresh
    // token is refused: the missing-credential result, not a token.
    assert!(
        world.rows().await.iter().all(|row| row.0 != "alice"),
        "forgotten"
    );
    world.insert(copy).await;
    tokio::time::sleep(Duration::from_millis(2300)).await;
    let refused = whoami(&host, "alice").await;
    assert!(refused.is_missing_credential(), "{refused:?}");
    assert!(refused.content.contains("refused the grant"), "{refused:?}");
    host.shutdown().await;
    world.upstream.stop().await;
}

/// Client identity, not storage: on SQLite only (`cimd.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_id_metadata_document_is_fetched_and_the_login_completes() {
    cimd::a_client_id_metadata_document_is_fetched_and_the_login_completes().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loopback_listener_takes_only_the_redirect() {
    let loopback = LoopbackRedirect::bind().await.unwrap();
    let uri = loopback.redirect_uri().to_owned();
    assert!(
        uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"),
        "{uri}"
    );
    let waiting = tokio::spawn(loopback.wait());
    let base = uri.trim_end_matches("/callback");
    // A stray request, and one without the authorization server's
    // answer, are turned away; the listener keeps waiting.
    assert_eq!(
        exchange("GET", &format!("{base}/favicon.ico"), None)
            .await
            .0,
        404
    );
    assert_eq!(exchange("GET", &uri, None).await.0, 404);
    let redirect = format!("{uri}?code=c&state=s&iss=x");
    let (status, page) = exchange("GET", &redirect, None).await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(waiting.await.unwrap().unwrap(), redirect);
}

async fn a_grant_is_never_sent_to_another_url_of_the_server(kind: Kind) {
    use oscova_test_support::http::{Reply, TestServer};

    let world = World::new(kind).await;
    let builder = world.builder(Some(USER_CLIENT));
    login(&builder, &world.provider, None, "account-host", true).await;
    // The configuration now points `up` elsewhere: the grant got for the
    // old URL is not used, and nothing at all is sent there.
    let elsewhere = TestServer::start(|_| Reply::json(200, json!({}))).await;
    let moved = McpPlugin::builder()
        .server(
            "up",
            server(
                &format!("{}/mcp", elsewhere.url()),
                &world.provider,
                Some(USER_CLIENT),
            ),
        )
        .token_store(world.store());
    let err = moved.list("up").await.unwrap_err().to_string();
    assert!(err.contains("`oscova mcp login up`"), "{err}");
    assert_eq!(elsewhere.connections(), 0, "nothing reached it");
    // At its own URL the grant still serves.
    assert!(world.builder(Some(USER_CLIENT)).list("up").await.is_ok());
    world.upstream.stop().await;
}
