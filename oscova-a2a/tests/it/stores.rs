//! What every task store does with webhooks, run on each (memory and
//! SQLite in `push`, Postgres in `fleet`).

use std::time::Duration;

use oscova_a2a::TaskStore;
use oscova_a2a::model::{Message, PushConfig, Task, TaskState};
use oscova_a2a::store::{PushLimits, PushWrite};

/// What every store does with webhooks and owed pushes: configs by user,
/// a final state owed only when the task has a webhook, a claim taken once
/// until it is stale, a mark dropped after `max_claims` claims.
pub(crate) async fn check_owed_pushes(store: &dyn TaskStore) {
    let message: Message = serde_json::from_value(serde_json::json!({
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}))
    .unwrap();
    let mut hooked = Task::submitted("t-hooked".into(), "c1".into(), message.clone());
    let mut bare = Task::submitted("t-bare".into(), "c1".into(), message);
    store.put("alice", &hooked).await.unwrap();
    store.put("alice", &bare).await.unwrap();
    let config: PushConfig = serde_json::from_value(serde_json::json!({
        "id": "h1", "taskId": "t-hooked", "url": "http://127.0.0.1:9/hook",
        "token": "tok", "authentication": {"scheme": "Bearer", "credentials": "secret"}}))
    .unwrap();
    assert_eq!(
        store
            .put_push_config("alice", &config, PushLimits::default())
            .await
            .unwrap(),
        PushWrite::Written
    );
    assert_eq!(
        store.push_configs("alice", "t-hooked").await.unwrap(),
        std::slice::from_ref(&config)
    );
    assert!(
        store
            .push_configs("bob", "t-hooked")
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        !store
            .delete_push_config("bob", "t-hooked", "h1")
            .await
            .unwrap()
    );

    hooked.set_state(TaskState::Completed, None);
    bare.set_state(TaskState::Completed, None);
    store.put_final("alice", &hooked).await.unwrap();
    store.put_final("alice", &bare).await.unwrap();
    assert_eq!(
        store
            .get("alice", "t-hooked")
            .await
            .unwrap()
            .unwrap()
            .status
            .state,
        TaskState::Completed
    );
    // Claimed just now by the writer: not stale for a minute.
    let lease = Duration::from_secs(60);
    assert!(store.claim_owed_pushes(lease, 2).await.unwrap().is_empty());
    let owed = [("alice".to_owned(), "t-hooked".to_owned())];
    assert_eq!(
        store.claim_owed_pushes(Duration::ZERO, 2).await.unwrap(),
        owed
    );
    assert!(store.claim_owed_pushes(lease, 2).await.unwrap().is_empty());
    assert_eq!(
        store.claim_owed_pushes(Duration::ZERO, 2).await.unwrap(),
        owed
    );
    // Claimed twice: the next sweep drops it.
    assert!(
        store
            .claim_owed_pushes(Duration::ZERO, 2)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .claim_owed_pushes(Duration::ZERO, 2)
            .await
            .unwrap()
            .is_empty()
    );

    store.put_final("alice", &hooked).await.unwrap();
    store.push_delivered("alice", "t-hooked").await.unwrap();
    assert!(
        store
            .claim_owed_pushes(Duration::ZERO, 2)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .delete_push_config("alice", "t-hooked", "h1")
            .await
            .unwrap()
    );
    store.put_final("alice", &hooked).await.unwrap();
    assert!(
        store
            .claim_owed_pushes(Duration::ZERO, 2)
            .await
            .unwrap()
            .is_empty(),
        "no webhook left: nothing owed"
    );
}

fn hook(task: &str, id: &str) -> PushConfig {
    serde_json::from_value(serde_json::json!({
        "id": id, "taskId": task, "url": "http://127.0.0.1:9/hook"}))
    .unwrap()
}

/// The bounds on webhooks, checked in the store's write: per task, and
/// per user on tasks not stored in a terminal state (a task not stored
/// yet counts); a replacement always passes; other users are apart.
pub(crate) async fn check_push_bounds(store: &dyn TaskStore) {
    let limits = PushLimits::new(2, 3);
    let message: Message = serde_json::from_value(serde_json::json!({
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}))
    .unwrap();
    let mut first = Task::submitted("b-1".into(), "c1".into(), message.clone());
    store.put("carol", &first).await.unwrap();
    store
        .put(
            "carol",
            &Task::submitted("b-2".into(), "c1".into(), message),
        )
        .await
        .unwrap();
    let put = |task: &'static str, id: &'static str| {
        let config = hook(task, id);
        async move {
            store
                .put_push_config("carol", &config, limits)
                .await
                .unwrap()
        }
    };
    assert_eq!(put("b-1", "h1").await, PushWrite::Written);
    assert_eq!(put("b-1", "h2").await, PushWrite::Written);
    assert_eq!(put("b-1", "h3").await, PushWrite::TaskFull);
    assert_eq!(put("b-1", "h2").await, PushWrite::Written, "a replacement");
    assert_eq!(store.push_configs("carol", "b-1").await.unwrap().len(), 2);
    assert_eq!(put("b-2", "h1").await, PushWrite::Written);
    // Three on tasks that have not ended: the user is full, on any task,
    // one not stored yet included; another user is not.
    assert_eq!(put("b-2", "h2").await, PushWrite::UserFull);
    assert_eq!(put("b-unstored", "h1").await, PushWrite::UserFull);
    assert_eq!(put("b-2", "h1").await, PushWrite::Written, "a replacement");
    let dave = store
        .put_push_config("dave", &hook("b-1", "h9"), limits)
        .await
        .unwrap();
    assert_eq!(dave, PushWrite::Written);
    assert_eq!(store.push_configs("carol", "b-2").await.unwrap().len(), 1);
    // A task stored in a terminal state no longer counts; one waiting for
    // input does.
    first.set_state(TaskState::InputRequired, None);
    store.put("carol", &first).await.unwrap();
    assert_eq!(put("b-2", "h2").await, PushWrite::UserFull);
    first.set_state(TaskState::Completed, None);
    store.put_final("carol", &first).await.unwrap();
    assert_eq!(put("b-2", "h2").await, PushWrite::Written);
    assert_eq!(put("b-unstored", "h1").await, PushWrite::Written);
    assert_eq!(put("b-unstored", "h2").await, PushWrite::UserFull);
    // Deleting one makes room.
    assert!(
        store
            .delete_push_config("carol", "b-2", "h1")
            .await
            .unwrap()
    );
    assert_eq!(put("b-unstored", "h2").await, PushWrite::Written);
}

/// A task stored in a final state keeps it: a later write of the same
/// task (a run's progress, on another instance) is not stored over it.
async fn check_a_final_state_holds(store: &dyn TaskStore) {
    use serde_json::json;
    let message: Message = serde_json::from_value(json!({
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "slow"}]}))
    .unwrap();
    let mut task = Task::submitted("t-final".into(), "c1".into(), message);
    task.set_state(TaskState::Working, None);
    store.put("alice", &task).await.unwrap();
    let mut canceled = task.clone();
    canceled.set_state(TaskState::Canceled, Some("canceled by the client"));
    store.put_final("alice", &canceled).await.unwrap();
    store.put("alice", &task).await.unwrap();
    let mut completed = task.clone();
    completed.set_state(TaskState::Completed, None);
    store.put_final("alice", &completed).await.unwrap();
    let stored = store.get("alice", "t-final").await.unwrap().unwrap();
    assert_eq!(stored.status.state, TaskState::Canceled);
}

/// What every store does with a task's wait: written with the task's
/// state, taken once (the second taker and another user get nothing), and
/// dropped by the task's final state.
pub(crate) async fn check_waits(store: &dyn TaskStore) {
    check_a_final_state_holds(store).await;
    use oscova_a2a::store::TaskWait;
    use serde_json::json;
    let message: Message = serde_json::from_value(json!({
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "pay"}]}))
    .unwrap();
    let mut task = Task::submitted("t-wait".into(), "c1".into(), message);
    task.set_state(TaskState::InputRequired, Some("Pay?"));
    let wait = TaskWait::new(
        "alice",
        "pay",
        json!({"to": "bob"}),
        json!({"kind": "confirm", "message": "Pay?"}),
        i64::MAX,
    );
    store.put_waiting("alice", &task, &wait).await.unwrap();
    let stored = store.get("alice", "t-wait").await.unwrap().unwrap();
    assert_eq!(stored.status.state, TaskState::InputRequired);
    assert_eq!(store.take_wait("bob", "t-wait").await.unwrap(), None);
    assert_eq!(
        store.take_wait("alice", "t-wait").await.unwrap(),
        Some(wait.clone())
    );
    assert_eq!(
        store.take_wait("alice", "t-wait").await.unwrap(),
        None,
        "a wait is taken once"
    );
    // Kept again, then the task ends: the wait goes with its final state.
    store.put_waiting("alice", &task, &wait).await.unwrap();
    task.set_state(TaskState::Canceled, None);
    store.put_final("alice", &task).await.unwrap();
    assert_eq!(store.take_wait("alice", "t-wait").await.unwrap(), None);

    // The sweep takes the expired waits only, each once.
    let mut due = wait.clone();
    due.expires_at = 1_000;
    task.set_state(TaskState::InputRequired, Some("Pay?"));
    store.put_waiting("alice", &task, &due).await.unwrap();
    let mut later = Task::submitted("t-later".into(), "c1".into(), task.history[0].clone());
    later.set_state(TaskState::InputRequired, Some("Pay?"));
    store.put_waiting("bob", &later, &wait).await.unwrap();
    assert_eq!(
        store.take_expired_waits(2_000).await.unwrap(),
        vec![("alice".to_owned(), "t-wait".to_owned(), due)]
    );
    assert!(store.take_expired_waits(2_000).await.unwrap().is_empty());
    assert_eq!(store.take_wait("bob", "t-later").await.unwrap(), Some(wait));
}
