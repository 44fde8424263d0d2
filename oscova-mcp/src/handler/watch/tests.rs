//! The watcher's bounds, sharing and rounds.

use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_core::{PluginHost, UserInfo};
use rmcp::model::{Resource, ResourceContents};

use super::*;
use crate::offer::{BoxFuture, SourceError};

/// Resources whose versions the test sets, counting the checks.
#[derive(Default)]
struct Versions {
    now: Mutex<HashMap<String, String>>,
    asked: AtomicUsize,
}

impl Versions {
    fn set(&self, uri: &str, version: &str) {
        self.now
            .lock()
            .unwrap()
            .insert(uri.to_owned(), version.to_owned());
    }

    fn asked(&self) -> usize {
        self.asked.swap(0, Ordering::SeqCst)
    }
}

impl ResourceSource for Versions {
    fn list<'a>(
        &'a self,
        _scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<Resource>, SourceError>> {
        Box::pin(std::future::ready(Ok(Vec::new())))
    }

    fn read<'a>(
        &'a self,
        _scope: &'a UserScope,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ResourceContents>, SourceError>> {
        let unknown = SourceError::UnknownResource {
            uri: uri.to_owned(),
        };
        Box::pin(std::future::ready(Err(unknown)))
    }

    fn subscribable(&self) -> bool {
        true
    }

    fn version<'a>(&'a self, _scope: &'a UserScope, uri: &'a str) -> BoxFuture<'a, Option<String>> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let now = self.now.lock().unwrap().get(uri).cloned();
        Box::pin(std::future::ready(now))
    }
}

struct Fixture {
    _host: PluginHost,
    versions: Arc<Versions>,
    source: Arc<dyn ResourceSource>,
    watcher: Watcher,
}

impl Fixture {
    fn new(per_user: usize, total: usize) -> Self {
        let host = PluginHost::builder()
            .plugins(oscova_core::linked_plugins![])
            .build()
            .unwrap();
        let versions = Arc::new(Versions::default());
        Self {
            _host: host,
            source: versions.clone(),
            versions,
            watcher: Watcher::by_hand(Limits { per_user, total }),
        }
    }

    fn scope(&self, user: &str) -> UserScope {
        self._host.user_scope(UserInfo::new(user))
    }

    async fn add(&self, subscriber: &Subscriber, user: &str, uri: &str) -> Result<(), ErrorData> {
        subscriber.add(&self.source, &self.scope(user), uri).await
    }

    fn stats(&self) -> (usize, usize) {
        let stats = SubscriptionStats::new(self.watcher.clone());
        (stats.subscriptions(), stats.watched())
    }
}

fn bound_of(error: &ErrorData) -> (i32, String) {
    let data = error.data.clone().unwrap_or_default();
    let key = data
        .as_object()
        .and_then(|o| o.keys().next().cloned())
        .unwrap_or_default();
    (error.code.0, key)
}

// Issue 36, finding 3: one user's sessions together stay within the
// user's bound, and all users within the server's; each refusal names
// its bound, and a released session makes room again.
#[tokio::test]
async fn the_user_bound_holds_across_sessions_and_the_total_across_users() {
    let f = Fixture::new(2, 3);
    let mut alice: Vec<Subscriber> = (0..3).map(|_| f.watcher.subscriber("alice")).collect();
    f.add(&alice[0], "alice", "file:///a").await.unwrap();
    f.add(&alice[1], "alice", "file:///b").await.unwrap();
    let refused = f.add(&alice[2], "alice", "file:///c").await.unwrap_err();
    assert_eq!(
        bound_of(&refused),
        (
            crate::SERVER_BUSY.0,
            "max_subscriptions_per_user".to_owned()
        ),
        "{refused:?}"
    );
    // Subscribing again to what the session holds takes no room.
    f.add(&alice[1], "alice", "file:///b").await.unwrap();
    let bob = f.watcher.subscriber("bob");
    f.add(&bob, "bob", "file:///a").await.unwrap();
    let carol = f.watcher.subscriber("carol");
    let refused = f.add(&carol, "carol", "file:///a").await.unwrap_err();
    assert_eq!(
        bound_of(&refused),
        (crate::SERVER_BUSY.0, "max_subscriptions_total".to_owned()),
        "{refused:?}"
    );
    assert_eq!(f.stats(), (3, 3));
    assert_eq!(f.watcher.room("alice"), 0);
    // A session that ends takes its subscriptions with it.
    drop(alice.remove(0));
    f.add(&carol, "carol", "file:///a").await.unwrap();
    assert_eq!(f.stats(), (3, 3));
}

#[tokio::test]
async fn one_session_holds_at_most_its_bound() {
    let f = Fixture::new(MAX_SUBSCRIPTIONS * 2, MAX_SUBSCRIPTIONS * 2);
    let session = f.watcher.subscriber("alice");
    for i in 0..MAX_SUBSCRIPTIONS {
        f.add(&session, "alice", &format!("file:///{i}"))
            .await
            .unwrap();
    }
    let refused = f.add(&session, "alice", "file:///more").await.unwrap_err();
    assert_eq!(bound_of(&refused), (-32602, "max_subscriptions".to_owned()));
    let long = format!("file:///{}", "x".repeat(MAX_SUBSCRIBED_URI_BYTES));
    let other = f.watcher.subscriber("alice");
    let refused = f.add(&other, "alice", &long).await.unwrap_err();
    assert_eq!(bound_of(&refused), (-32602, "max_uri_bytes".to_owned()));
}

// The work of watching is per resource, not per subscription: many
// subscriptions to one file are one resource, asked once a round, and
// the change reaches every subscriber once.
#[tokio::test]
async fn many_subscriptions_to_one_resource_are_one_check_a_round() {
    let f = Fixture::new(64, 64);
    f.versions.set("file:///a", "1");
    let sessions: Vec<Subscriber> = (0..16).map(|_| f.watcher.subscriber("alice")).collect();
    for session in &sessions {
        f.add(session, "alice", "file:///a").await.unwrap();
    }
    assert_eq!(f.stats(), (16, 1));
    f.versions.asked();
    f.watcher.check_now().await;
    assert_eq!(f.versions.asked(), 1, "one check for sixteen subscriptions");
    assert!(sessions.iter().all(|s| s.outbox.take().is_empty()));
    f.versions.set("file:///a", "2");
    f.watcher.check_now().await;
    for session in &sessions {
        assert_eq!(session.outbox.take(), ["file:///a"]);
    }
    // The same URI of another user is another resource.
    let bob = f.watcher.subscriber("bob");
    f.add(&bob, "bob", "file:///a").await.unwrap();
    assert_eq!(f.stats(), (17, 2));
}

// However many resources are watched, a round checks at most
// MAX_CHECKS_PER_POLL of them, and the next round carries on where it
// stopped, so every one is checked in turn.
#[tokio::test]
async fn a_round_checks_at_most_its_budget_and_every_resource_in_turn() {
    let f = Fixture::new(1024, 1024);
    let count = MAX_CHECKS_PER_POLL + MAX_CHECKS_PER_POLL / 2;
    let session = f.watcher.subscriber("alice");
    for i in 0..count {
        let uri = format!("file:///{i:04}");
        f.versions.set(&uri, "1");
        f.add(&session, "alice", &uri).await.unwrap();
    }
    for i in 0..count {
        f.versions.set(&format!("file:///{i:04}"), "2");
    }
    f.versions.asked();
    f.watcher.check_now().await;
    assert_eq!(f.versions.asked(), MAX_CHECKS_PER_POLL);
    assert_eq!(session.outbox.take().len(), MAX_CHECKS_PER_POLL);
    f.watcher.check_now().await;
    assert_eq!(f.versions.asked(), MAX_CHECKS_PER_POLL);
    assert_eq!(session.outbox.take().len(), count - MAX_CHECKS_PER_POLL);
}

// A `subscriptions/listen` request accepts only what there is room
// for: distinct URIs, none too long, within the user's bound.
#[tokio::test]
async fn a_listen_request_accepts_only_the_room_left() {
    let f = Fixture::new(3, 8);
    let session = f.watcher.subscriber("alice");
    f.add(&session, "alice", "file:///a").await.unwrap();
    f.add(&session, "alice", "file:///b").await.unwrap();
    let long = format!("file:///{}", "x".repeat(MAX_SUBSCRIBED_URI_BYTES));
    let requested = [
        long,
        "file:///c".into(),
        "file:///c".into(),
        "file:///d".into(),
    ];
    let accepted = super::super::subscribe::accepted_uris(&f.watcher, "alice", &requested);
    assert_eq!(accepted, ["file:///c"]);
    let accepted = super::super::subscribe::accepted_uris(&f.watcher, "bob", &requested);
    assert_eq!(accepted, ["file:///c", "file:///d"]);
}

// A session released, or an unsubscribe, forgets the subscription,
// and a resource nobody subscribes to is no longer checked.
#[tokio::test]
async fn released_subscriptions_are_no_longer_watched() {
    let f = Fixture::new(8, 8);
    let (one, two) = (f.watcher.subscriber("alice"), f.watcher.subscriber("alice"));
    f.add(&one, "alice", "file:///a").await.unwrap();
    f.add(&two, "alice", "file:///a").await.unwrap();
    f.add(&two, "alice", "file:///b").await.unwrap();
    assert_eq!(f.stats(), (3, 2));
    drop(one);
    assert_eq!(f.stats(), (2, 2));
    two.remove("file:///a");
    assert_eq!(f.stats(), (1, 1));
    drop(two);
    assert_eq!(f.stats(), (0, 0));
    assert_eq!(f.watcher.room("alice"), 8);
    f.versions.asked();
    f.watcher.check_now().await;
    assert_eq!(f.versions.asked(), 0);
}

// Subscribing takes the version anew: a change since the last round is
// the other subscribers' update, not the newcomer's.
#[tokio::test]
async fn a_change_seen_when_subscribing_is_the_others_update() {
    let f = Fixture::new(8, 8);
    f.versions.set("file:///a", "1");
    let (old, new) = (f.watcher.subscriber("alice"), f.watcher.subscriber("alice"));
    f.add(&old, "alice", "file:///a").await.unwrap();
    f.versions.set("file:///a", "2");
    f.add(&new, "alice", "file:///a").await.unwrap();
    assert_eq!(old.outbox.take(), ["file:///a"]);
    assert!(new.outbox.take().is_empty());
    f.watcher.check_now().await;
    assert!(old.outbox.take().is_empty() && new.outbox.take().is_empty());
}
