//! Logins by link (`McpPluginBuilder::login_redirect`, `start_login` and
//! `finish_login`): a call of a user with no grant carries the host's
//! start page for its login, never the authorization URL; the login under
//! way is kept in the store by its `state`, so another instance on the
//! store binds it to its user's browser (another user is refused, nothing
//! changed) and finishes it, once, for the user who got the link, only
//! with that browser's nonce.

use oscova_core::ExposeSecret as _;
use oscova_plugin_mcp::LinkError;

use super::world::{Kind, World};
use super::{USER_CLIENT, WHOAMI, consent, grants, host_of, login, whoami};
use oscova_core::prelude::*;
use serde_json::json;

/// The host's callback in these cases (nothing listens there: the
/// redirect is read from the consent, as the host's route would get it).
const CALLBACK: &str = "http://127.0.0.1:9/oauth/mcp/callback";
/// The host's start page (nothing listens there either).
const START: &str = "http://127.0.0.1:9/oauth/mcp/login";

/// `name`'s value in the query of `url`.
fn param(url: &str, name: &str) -> Option<String> {
    reqwest_rmcp::Url::parse(url)
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

pub(super) async fn a_link_made_on_one_instance_is_finished_on_another_once(kind: Kind) {
    let world = World::new(kind).await;
    let first = world.builder(Some(USER_CLIENT));
    login(&first, &world.provider, None, "account-host", true).await;
    // The links' client registers itself (RFC 7591) with the callback:
    // the provider's pre-registered one knows only its loopback
    // `/callback`.
    let host = host_of(world.builder(None).login_redirect(START, CALLBACK)).await;
    // Alice has no grant: the result says what to run and carries a link
    // to the host's start page, not to the authorization server.
    let alice = whoami(&host, "alice").await;
    assert!(alice.is_missing_credential(), "{alice:?}");
    assert_eq!(alice.details["login"], "oscova mcp login up --user alice");
    let link = alice.details["login_url"]
        .as_str()
        .expect("a link")
        .to_owned();
    assert!(link.starts_with(&format!("{START}?id=")), "{link}");
    assert!(!link.contains("code_challenge"), "{link}");
    let id = param(&link, "id").expect("an id");

    // Another instance on the store: bob (authenticated by the host) is
    // refused alice's login, and nothing changes; alice gets the
    // authorization URL and her browser's nonce.
    let other = world.builder(None);
    let bobs_try = other.start_login(&id, Some("bob")).await;
    assert!(matches!(bobs_try, Err(LinkError::NotYours)), "{bobs_try:?}");
    let host_try = other.start_login(&id, None).await;
    assert!(matches!(host_try, Err(LinkError::NotYours)), "{host_try:?}");
    let started = other
        .start_login(&id, Some("alice"))
        .await
        .expect("alice's login");
    assert_eq!(started.server, "up");
    let url = started.authorization_url.clone();
    assert!(url.starts_with(world.provider.issuer()), "{url}");
    assert_eq!(param(&url, "redirect_uri").as_deref(), Some(CALLBACK));
    assert!(url.contains("resource="), "{url}");
    let redirected = consent(&world.provider, &url, "account-alice").await;
    assert!(redirected.starts_with(CALLBACK), "{redirected}");
    let (state, code) = (
        param(&redirected, "state").expect("a state"),
        param(&redirected, "code").expect("a code"),
    );
    assert_eq!(state, id);
    let iss = param(&redirected, "iss");

    // Without the browser's nonce, or with another, nothing is
    // exchanged and the login is left as it was.
    let codes = grants(&world.provider).await["authorization_code"].clone();
    for nonce in [None, Some("forged"), Some("")] {
        let refused = other
            .finish_login(&state, &code, iss.as_deref(), nonce)
            .await;
        assert!(matches!(refused, Err(LinkError::NotBound)), "{refused:?}");
    }
    assert_eq!(grants(&world.provider).await["authorization_code"], codes);

    // With it, another instance on the store finishes it, for alice.
    let nonce = Some(started.nonce.expose_secret());
    let done = world
        .builder(None)
        .finish_login(&state, &code, iss.as_deref(), nonce)
        .await
        .expect("finished");
    assert_eq!(
        (done.server.as_str(), done.user.as_deref()),
        ("up", Some("alice"))
    );
    // Used once, on any instance.
    for builder in [&other, &world.builder(None)] {
        let again = builder
            .finish_login(&state, &code, iss.as_deref(), nonce)
            .await;
        assert!(matches!(again, Err(LinkError::Unknown)), "{again:?}");
    }
    let alice = whoami(&host, "alice").await;
    assert_eq!(alice.content, "upstream-alice", "{alice:?}");
    // Bob still has none: his own link.
    let bob = whoami(&host, "bob").await;
    assert!(bob.is_missing_credential(), "{bob:?}");
    let bobs = bob.details["login_url"].as_str().expect("bob's link");
    assert_ne!(param(bobs, "id"), Some(state));
    // Called again while it is under way: the same link, nothing new
    // registered or kept.
    let before = grants(&world.provider).await["registrations"].clone();
    let again = whoami(&host, "bob").await;
    assert_eq!(again.details["login_url"].as_str(), Some(bobs));
    assert_eq!(grants(&world.provider).await["registrations"], before);
    host.shutdown().await;

    // Without a redirect the result names the command only, as before.
    let plain = host_of(world.builder(Some(USER_CLIENT))).await;
    let carol = plain
        .user_scope(UserInfo::new("carol"))
        .invoke(WHOAMI, json!({}))
        .await;
    assert!(carol.is_missing_credential(), "{carol:?}");
    assert!(carol.details.get("login_url").is_none(), "{carol:?}");
    plain.shutdown().await;
    world.upstream.stop().await;
}
