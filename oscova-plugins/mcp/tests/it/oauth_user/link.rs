//! Logins by link (`McpPluginBuilder::login_redirect` and
//! `finish_login`): a call of a user with no grant carries the
//! authorization URL; the login under way is kept in the store by its
//! `state`, so another instance on the store finishes it, once, for the
//! user who got the link.

use oscova_plugin_mcp::LinkError;

use super::world::{Kind, World};
use super::{USER_CLIENT, WHOAMI, consent, grants, host_of, login, whoami};
use oscova_core::prelude::*;
use serde_json::json;

/// The host's callback in these cases (nothing listens there: the
/// redirect is read from the consent, as the host's route would get it).
const CALLBACK: &str = "http://127.0.0.1:9/oauth/mcp/callback";

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
    let host = host_of(world.builder(None).login_redirect(CALLBACK)).await;
    // Alice has no grant: the result says what to run and carries a link.
    let alice = whoami(&host, "alice").await;
    assert!(alice.is_missing_credential(), "{alice:?}");
    assert_eq!(alice.details["login"], "oscova mcp login up --user alice");
    let url = alice.details["login_url"]
        .as_str()
        .expect("a link")
        .to_owned();
    assert!(url.starts_with(world.provider.issuer()), "{url}");
    assert_eq!(param(&url, "redirect_uri").as_deref(), Some(CALLBACK));
    assert!(url.contains("resource="), "{url}");
    let redirected = consent(&world.provider, &url, "account-alice").await;
    assert!(redirected.starts_with(CALLBACK), "{redirected}");
    let (state, code) = (
        param(&redirected, "state").expect("a state"),
        param(&redirected, "code").expect("a code"),
    );
    let iss = param(&redirected, "iss");

    // Another instance on the store finishes it, for alice.
    let other = world.builder(None);
    let done = other
        .finish_login(&state, &code, iss.as_deref())
        .await
        .expect("finished");
    assert_eq!(
        (done.server.as_str(), done.user.as_deref()),
        ("up", Some("alice"))
    );
    // Used once, on any instance.
    for builder in [&other, &world.builder(None)] {
        let again = builder.finish_login(&state, &code, iss.as_deref()).await;
        assert!(matches!(again, Err(LinkError::Unknown)), "{again:?}");
    }
    let alice = whoami(&host, "alice").await;
    assert_eq!(alice.content, "upstream-alice", "{alice:?}");
    // Bob still has none: his own link.
    let bob = whoami(&host, "bob").await;
    assert!(bob.is_missing_credential(), "{bob:?}");
    let bobs = bob.details["login_url"].as_str().expect("bob's link");
    assert_ne!(param(bobs, "state"), Some(state));
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
