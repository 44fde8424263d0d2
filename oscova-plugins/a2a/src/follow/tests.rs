//! The webhook route's check: by the follower's index, never the lists.

use super::*;
use crate::pending::READS;

fn pushed(id: &str, token: &str) -> PendingTask {
    PendingTask {
        agent: "a".into(),
        task_id: format!("task-{id}"),
        context_id: String::new(),
        state: "TASK_STATE_WORKING".into(),
        // No session: a scan indexes the webhook and follows nothing.
        session: String::new(),
        push_id: id.into(),
        push_token: token.into(),
    }
}

fn reads() -> usize {
    READS.with(std::cell::Cell::get)
}

#[test]
fn a_webhook_call_is_checked_by_the_index_and_reads_no_list() {
    let dir = tempfile::tempdir().unwrap();
    let config = A2aConfig {
        pending_dir: Some(dir.path().to_owned()),
        ..A2aConfig::default()
    };
    let follower = Follower::new(
        config,
        HttpClient::builder().build().unwrap(),
        Arc::new(oscova_core::context::NoCredentials),
        |_: String, _: String, _: FollowUpMessage| async { Ok(()) },
    )
    .unwrap();
    let alice_token = "a".repeat(64);
    PendingStore::new(dir.path(), "alice")
        .unwrap()
        .put(pushed("alice-hook", &alice_token))
        .unwrap();
    for user in 0..50 {
        let store = PendingStore::new(dir.path(), &format!("user{user}")).unwrap();
        for n in 0..8 {
            store
                .put(pushed(&format!("hook-{user}-{n}"), &"b".repeat(64)))
                .unwrap();
        }
    }
    // Before the follower read the lists, nothing is known.
    assert_eq!(
        follower.webhook("alice-hook", Some(&alice_token)),
        Err(WebhookRefused::Unknown)
    );
    follower.scan(&mut tokio::task::JoinSet::new(), &CancellationToken::new());

    // Forged calls (alice's real id with a wrong or missing token, a
    // made-up id, an empty one) are refused and read nothing.
    let before = reads();
    let wrong = "0".repeat(64);
    assert_eq!(
        follower.webhook("alice-hook", Some(&wrong)),
        Err(WebhookRefused::Forged)
    );
    assert_eq!(
        follower.webhook("alice-hook", Some(&alice_token[..63])),
        Err(WebhookRefused::Forged)
    );
    assert_eq!(
        follower.webhook("alice-hook", None),
        Err(WebhookRefused::Forged)
    );
    for unknown in ["nothing", "", "../alice"] {
        assert_eq!(
            follower.webhook(unknown, Some(&alice_token)),
            Err(WebhookRefused::Unknown)
        );
    }
    // Another user's webhook with alice's token is forged too.
    assert_eq!(
        follower.webhook("hook-3-1", Some(&alice_token)),
        Err(WebhookRefused::Forged)
    );
    assert_eq!(reads(), before, "a call that proved nothing read a list");
    // The right token is accepted, still without reading a list.
    assert_eq!(follower.webhook("alice-hook", Some(&alice_token)), Ok(()));
    assert_eq!(follower.webhook("hook-49-7", Some(&"b".repeat(64))), Ok(()));
    assert_eq!(reads(), before);

    // A webhook whose task left the lists is forgotten at the next scan.
    PendingStore::new(dir.path(), "alice")
        .unwrap()
        .remove("a", "task-alice-hook")
        .unwrap();
    follower.scan(&mut tokio::task::JoinSet::new(), &CancellationToken::new());
    assert_eq!(
        follower.webhook("alice-hook", Some(&alice_token)),
        Err(WebhookRefused::Unknown)
    );
}

#[test]
fn tokens_are_compared_whole() {
    assert!(same(b"abc", b"abc"));
    assert!(!same(b"abc", b"abd"));
    assert!(!same(b"abc", b"ab"));
    assert!(!same(b"", b"a"));
    assert!(same(b"", b""));
}
