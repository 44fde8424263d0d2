//! The conformance suite every `SessionStore` passes: the same checks, run
//! by `memory_store_conforms`, `sqlite_store_conforms` and
//! `postgres_store_conforms`. Each check gets a fresh, empty store from the
//! factory.

use std::future::Future;
use std::sync::Arc;

use oscova_agent::session::{
    AgentMessage, EntryId, EntryKind, MessageContent, Session, SessionEntry, SessionError,
    SessionId, SessionLease, SessionStore, UserMessage,
};
use oscova_core::UserInfo;
use oscova_core::provider::model::ChatMessage;

/// Runs every check, each against a fresh store from `fresh`.
pub async fn run<F, Fut>(fresh: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Arc<dyn SessionStore>>,
{
    create_and_find_by_name(fresh().await).await;
    append_checks_the_leaf(fresh().await).await;
    a_conflict_keeps_nothing(fresh().await).await;
    a_batch_is_kept_whole_or_not_at_all(fresh().await).await;
    fork_and_tree(fresh().await).await;
    list_and_delete(fresh().await).await;
    users_never_see_each_others_sessions(fresh().await).await;
    a_session_resumes_after_a_conflict(fresh().await).await;
    one_lease_holder_at_a_time(fresh().await).await;
}

fn user_entry(id: &str, parent: Option<&str>, text: &str) -> SessionEntry {
    SessionEntry {
        id: EntryId::new(id),
        parent_id: parent.map(EntryId::new),
        timestamp: "2026-01-02T03:04:05.678Z".into(),
        kind: EntryKind::Message {
            message: AgentMessage::User(UserMessage {
                content: MessageContent::Text(text.into()),
                timestamp: 1_767_323_045_678,
            }),
        },
    }
}

fn id(text: &str) -> EntryId {
    EntryId::new(text)
}

async fn create_and_find_by_name(store: Arc<dyn SessionStore>) {
    let alice = UserInfo::new("alice");
    let info = store.create(&alice, "notes").await.unwrap();
    assert_eq!(info.name, "notes");
    assert_eq!((info.leaf.clone(), info.entry_count), (None, 0));
    assert_eq!(
        store.find(&alice, "notes").await.unwrap(),
        Some(info.clone())
    );
    assert_eq!(store.find(&alice, "other").await.unwrap(), None);
    let taken = store.create(&alice, "notes").await.unwrap_err();
    assert!(matches!(taken, SessionError::NameTaken { .. }), "{taken}");
    let snapshot = store.load(&alice, &info.id).await.unwrap();
    assert_eq!(snapshot.info, info);
    assert!(snapshot.entries.is_empty());
    // The handle opens by name and by id.
    let by_name = Session::open(store.clone(), alice.clone(), "notes")
        .await
        .unwrap();
    assert_eq!(by_name.id(), &info.id);
    let missing = Session::open(store.clone(), alice.clone(), "nope")
        .await
        .unwrap_err();
    assert!(
        matches!(missing, SessionError::NotFound { .. }),
        "{missing}"
    );
    let created = Session::open_or_create(store.clone(), alice, "fresh")
        .await
        .unwrap();
    assert_eq!(created.info().name, "fresh");
}

async fn append_checks_the_leaf(store: Arc<dyn SessionStore>) {
    let alice = UserInfo::new("alice");
    let info = store.create(&alice, "s").await.unwrap();
    let root = user_entry("r0000001", None, "first");
    let after = store
        .append(&alice, &info.id, None, std::slice::from_ref(&root))
        .await
        .unwrap();
    assert_eq!(
        (after.leaf.clone(), after.entry_count),
        (Some(id("r0000001")), 1)
    );
    let batch = [
        user_entry("b0000001", Some("r0000001"), "second"),
        user_entry("b0000002", Some("b0000001"), "third"),
    ];
    let after = store
        .append(&alice, &info.id, Some(&id("r0000001")), &batch)
        .await
        .unwrap();
    assert_eq!(
        (after.leaf.clone(), after.entry_count),
        (Some(id("b0000002")), 3)
    );
    let snapshot = store.load(&alice, &info.id).await.unwrap();
    assert_eq!(
        snapshot.entries,
        vec![root, batch[0].clone(), batch[1].clone()]
    );
    assert_eq!(snapshot.info.leaf, Some(id("b0000002")));
    // Stored entries come back field for field, timestamps included.
    assert_eq!(snapshot.entries[2].timestamp, "2026-01-02T03:04:05.678Z");
}

async fn a_conflict_keeps_nothing(store: Arc<dyn SessionStore>) {
    let alice = UserInfo::new("alice");
    let info = store.create(&alice, "s").await.unwrap();
    store
        .append(
            &alice,
            &info.id,
            None,
            &[user_entry("r0000001", None, "root")],
        )
        .await
        .unwrap();
    let seen = Some(id("r0000001"));
    // Two writers saw the same leaf; the first wins.
    store
        .append(
            &alice,
            &info.id,
            seen.as_ref(),
            &[user_entry("a0000001", Some("r0000001"), "a")],
        )
        .await
        .unwrap();
    let second = store
        .append(
            &alice,
            &info.id,
            seen.as_ref(),
            &[
                user_entry("b0000001", Some("r0000001"), "b"),
                user_entry("b0000002", Some("b0000001"), "b2"),
            ],
        )
        .await
        .unwrap_err();
    match &second {
        SessionError::Changed { expected, actual } => {
            assert_eq!(expected.as_ref(), seen.as_ref());
            assert_eq!(actual.as_ref(), Some(&id("a0000001")));
        }
        other => panic!("expected a conflict, got {other}"),
    }
    assert!(second.is_conflict());
    assert!(
        second
            .to_string()
            .contains("the session changed; resume it"),
        "{second}"
    );
    let snapshot = store.load(&alice, &info.id).await.unwrap();
    let ids: Vec<&str> = snapshot.entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["r0000001", "a0000001"]);
    assert_eq!(snapshot.info.entry_count, 2);
    // An expected "empty" leaf on a session that has one is a conflict too.
    let empty = store
        .append(&alice, &info.id, None, &[user_entry("c0000001", None, "c")])
        .await
        .unwrap_err();
    assert!(empty.is_conflict(), "{empty}");
}

async fn a_batch_is_kept_whole_or_not_at_all(store: Arc<dyn SessionStore>) {
    let alice = UserInfo::new("alice");
    let info = store.create(&alice, "s").await.unwrap();
    store
        .append(
            &alice,
            &info.id,
            None,
            &[
                user_entry("r0000001", None, "root"),
                user_entry("r0000002", Some("r0000001"), "x"),
            ],
        )
        .await
        .unwrap();
    let leaf = Some(id("r0000002"));
    // The third entry reuses an id the session holds: found only by the
    // store, after two rows of the batch were written.
    let reused = store
        .append(
            &alice,
            &info.id,
            leaf.as_ref(),
            &[
                user_entry("n0000001", Some("r0000002"), "1"),
                user_entry("n0000002", Some("n0000001"), "2"),
                user_entry("r0000001", Some("n0000002"), "3"),
            ],
        )
        .await
        .unwrap_err();
    assert!(matches!(reused, SessionError::InvalidAppend(_)), "{reused}");
    let unknown_parent = store
        .append(
            &alice,
            &info.id,
            leaf.as_ref(),
            &[user_entry("n0000003", Some("zzzzzzzz"), "1")],
        )
        .await
        .unwrap_err();
    assert!(
        matches!(unknown_parent, SessionError::InvalidAppend(_)),
        "{unknown_parent}"
    );
    let broken = store
        .append(
            &alice,
            &info.id,
            leaf.as_ref(),
            &[
                user_entry("n0000004", Some("r0000002"), "1"),
                user_entry("n0000005", Some("r0000001"), "2"),
            ],
        )
        .await
        .unwrap_err();
    assert!(matches!(broken, SessionError::InvalidAppend(_)), "{broken}");
    let empty = store
        .append(&alice, &info.id, leaf.as_ref(), &[])
        .await
        .unwrap_err();
    assert!(matches!(empty, SessionError::InvalidAppend(_)), "{empty}");
    let snapshot = store.load(&alice, &info.id).await.unwrap();
    let ids: Vec<&str> = snapshot.entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["r0000001", "r0000002"]);
    assert_eq!(
        (snapshot.info.leaf, snapshot.info.entry_count),
        (leaf.clone(), 2)
    );
    // The session still takes the batch once it is sound.
    store
        .append(
            &alice,
            &info.id,
            leaf.as_ref(),
            &[user_entry("n0000001", Some("r0000002"), "1")],
        )
        .await
        .unwrap();
}

async fn fork_and_tree(store: Arc<dyn SessionStore>) {
    let alice = UserInfo::new("alice");
    let mut session = Session::create(store.clone(), alice.clone(), "s")
        .await
        .unwrap();
    let ids = session
        .append_chat(&[
            ChatMessage::user("one"),
            ChatMessage::assistant("two", vec![]),
            ChatMessage::user("three"),
        ])
        .await
        .unwrap();
    let old_leaf = ids[2].clone();
    session.fork(Some(&ids[0])).await.unwrap();
    assert_eq!(session.leaf(), Some(&ids[0]));
    let texts = |s: &Session| -> Vec<String> {
        s.context()
            .chat_messages()
            .into_iter()
            .map(|m| m.content)
            .collect()
    };
    assert_eq!(texts(&session), ["one"]);
    session
        .append_chat(&[ChatMessage::assistant("other two", vec![])])
        .await
        .unwrap();
    assert_eq!(texts(&session), ["one", "other two"]);
    // Another handle sees the same tree after a resume.
    let other = Session::open_id(store.clone(), alice.clone(), session.id())
        .await
        .unwrap();
    let tree = other.tree();
    assert_eq!(tree.roots().count(), 1);
    assert_eq!(tree.children(&ids[0]).count(), 2);
    let branches = tree.branches();
    assert_eq!(branches.len(), 2);
    assert_eq!(branches[0].tip, old_leaf);
    assert_eq!((branches[0].len, branches[0].active), (3, false));
    assert_eq!((branches[1].len, branches[1].active), (2, true));
    assert_eq!(texts(&other), ["one", "other two"]);
    // A fork from a stale view is a conflict; an unknown entry is refused.
    let mut stale = Session::open_id(store.clone(), alice.clone(), session.id())
        .await
        .unwrap();
    session.fork(Some(&old_leaf)).await.unwrap();
    assert!(stale.fork(Some(&ids[1])).await.unwrap_err().is_conflict());
    let unknown = store
        .set_leaf(&alice, session.id(), Some(&old_leaf), Some(&id("zzzzzzzz")))
        .await
        .unwrap_err();
    assert!(
        matches!(unknown, SessionError::UnknownEntry(_)),
        "{unknown}"
    );
    // A new root.
    session.fork(None).await.unwrap();
    assert!(session.context().messages.is_empty());
    session
        .append_chat(&[ChatMessage::user("again")])
        .await
        .unwrap();
    assert_eq!(session.tree().roots().count(), 2);
    // A branch with a summary of the path left behind.
    let summary = session
        .fork_with_summary(Some(&ids[1]), "tried X")
        .await
        .unwrap();
    let context = session.context().chat_messages();
    assert_eq!(context.len(), 3);
    assert!(context[2].content.contains("tried X"));
    assert_eq!(
        session.entry(&summary).unwrap().parent_id.as_ref(),
        Some(&ids[1])
    );
}

async fn list_and_delete(store: Arc<dyn SessionStore>) {
    let alice = UserInfo::new("alice");
    let a = store.create(&alice, "a").await.unwrap();
    let b = store.create(&alice, "b").await.unwrap();
    // `a` changed last (or in the same millisecond, and its name is first).
    store
        .append(&alice, &a.id, None, &[user_entry("r0000001", None, "x")])
        .await
        .unwrap();
    let names: Vec<String> = store
        .list(&alice)
        .await
        .unwrap()
        .into_iter()
        .map(|i| i.name)
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert!(store.delete(&alice, &b.id).await.unwrap());
    assert!(!store.delete(&alice, &b.id).await.unwrap());
    assert!(matches!(
        store.load(&alice, &b.id).await.unwrap_err(),
        SessionError::NotFound { .. }
    ));
    let left: Vec<SessionId> = store
        .list(&alice)
        .await
        .unwrap()
        .into_iter()
        .map(|i| i.id)
        .collect();
    assert_eq!(left, [a.id]);
    // The name is free again, and the new session is empty.
    let again = store.create(&alice, "b").await.unwrap();
    assert!(
        store
            .load(&alice, &again.id)
            .await
            .unwrap()
            .entries
            .is_empty()
    );
}

async fn users_never_see_each_others_sessions(store: Arc<dyn SessionStore>) {
    let alice = UserInfo::new("alice");
    let bob = UserInfo::new("bob");
    let secret = store.create(&alice, "secret").await.unwrap();
    store
        .append(
            &alice,
            &secret.id,
            None,
            &[user_entry("r0000001", None, "private")],
        )
        .await
        .unwrap();
    // By name.
    assert_eq!(store.find(&bob, "secret").await.unwrap(), None);
    assert!(store.list(&bob).await.unwrap().is_empty());
    assert!(
        Session::open(store.clone(), bob.clone(), "secret")
            .await
            .is_err()
    );
    // By id: the same words as for an id nobody has.
    let missing = SessionId::random().unwrap();
    let by_id = store.load(&bob, &secret.id).await.unwrap_err();
    let nobody = store.load(&bob, &missing).await.unwrap_err();
    assert!(matches!(by_id, SessionError::NotFound { .. }), "{by_id}");
    assert_eq!(
        by_id.to_string().replace(secret.id.as_str(), "ID"),
        nobody.to_string().replace(missing.as_str(), "ID")
    );
    let leaf = Some(id("r0000001"));
    let append = store
        .append(
            &bob,
            &secret.id,
            leaf.as_ref(),
            &[user_entry("x0000001", Some("r0000001"), "mine now")],
        )
        .await
        .unwrap_err();
    assert!(matches!(append, SessionError::NotFound { .. }), "{append}");
    let fork = store
        .set_leaf(&bob, &secret.id, leaf.as_ref(), None)
        .await
        .unwrap_err();
    assert!(matches!(fork, SessionError::NotFound { .. }), "{fork}");
    assert!(!store.delete(&bob, &secret.id).await.unwrap());
    // Bob's own session of that name is another session.
    let bobs = store.create(&bob, "secret").await.unwrap();
    assert_ne!(bobs.id, secret.id);
    let untouched = store.load(&alice, &secret.id).await.unwrap();
    assert_eq!(untouched.entries.len(), 1);
    assert_eq!(untouched.info.leaf, leaf);
    assert_eq!(
        store.find(&alice, "secret").await.unwrap().unwrap().id,
        secret.id
    );
}

async fn a_session_resumes_after_a_conflict(store: Arc<dyn SessionStore>) {
    let alice = UserInfo::new("alice");
    let mut first = Session::create(store.clone(), alice.clone(), "s")
        .await
        .unwrap();
    first
        .append_chat(&[ChatMessage::user("hello")])
        .await
        .unwrap();
    let mut second = Session::open(store.clone(), alice.clone(), "s")
        .await
        .unwrap();
    first
        .append_chat(&[ChatMessage::assistant("from first", vec![])])
        .await
        .unwrap();
    let conflict = second
        .append_chat(&[ChatMessage::assistant("from second", vec![])])
        .await
        .unwrap_err();
    assert!(conflict.is_conflict(), "{conflict}");
    // The refused handle is as it was; after a resume it writes on top.
    assert_eq!(second.entries().len(), 1);
    second.resume().await.unwrap();
    second
        .append_chat(&[ChatMessage::user("and now?")])
        .await
        .unwrap();
    let texts: Vec<String> = second
        .context()
        .chat_messages()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(texts, ["hello", "from first", "and now?"]);
}

/// One holder at a time: a running lease refuses another holder (and
/// another user's attempt finds no session), its holder renews it, a
/// released or lapsed lease is taken by the next; `SessionLease` keeps it
/// past its length while held and gives it back when dropped.
async fn one_lease_holder_at_a_time(store: Arc<dyn SessionStore>) {
    use std::time::Duration;
    let ttl = Duration::from_secs(1);
    let (alice, bob) = (UserInfo::new("alice"), UserInfo::new("bob"));
    let id = store.create(&alice, "leased").await.unwrap().id;
    let leased = |r: Result<(), SessionError>| matches!(r, Err(SessionError::Leased { .. }));

    store.lease(&alice, &id, "a", ttl).await.unwrap();
    assert!(leased(store.lease(&alice, &id, "b", ttl).await));
    assert!(matches!(
        store.lease(&bob, &id, "b", ttl).await,
        Err(SessionError::NotFound { .. })
    ));
    store.lease(&alice, &id, "a", ttl).await.unwrap();
    store.release(&id, "b").await.unwrap();
    assert!(
        leased(store.lease(&alice, &id, "b", ttl).await),
        "b held nothing to give back"
    );
    store.release(&id, "a").await.unwrap();
    store.lease(&alice, &id, "b", ttl).await.unwrap();
    // b stops without giving it back: after its length, a takes it over.
    tokio::time::sleep(ttl + Duration::from_millis(150)).await;
    store.lease(&alice, &id, "a", ttl).await.unwrap();
    // Taken over only from the holder named, as it holds it now.
    match store.take_over(&alice, &id, "x", "b", ttl).await {
        Err(SessionError::Leased { holder, .. }) => assert_eq!(holder, "a"),
        other => panic!("a holds it: {other:?}"),
    }
    store.take_over(&alice, &id, "a", "b", ttl).await.unwrap();
    assert!(leased(store.lease(&alice, &id, "a", ttl).await));
    store.release(&id, "b").await.unwrap();

    let held = SessionLease::take(store.clone(), &alice, &id, ttl)
        .await
        .unwrap();
    tokio::time::sleep(ttl + Duration::from_millis(500)).await;
    assert!(
        leased(store.lease(&alice, &id, "c", ttl).await),
        "renewed while held"
    );
    assert!(!held.lost());
    drop(held);
    let given_back = async {
        while store.lease(&alice, &id, "c", ttl).await.is_err() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_millis(900), given_back)
        .await
        .expect("given back when dropped, before it would lapse");
    // A deleted session (its lease row deleted with it) has no lease to take.
    assert!(store.delete(&alice, &id).await.unwrap());
    assert!(matches!(
        store.lease(&alice, &id, "c", ttl).await,
        Err(SessionError::NotFound { .. })
    ));
}
