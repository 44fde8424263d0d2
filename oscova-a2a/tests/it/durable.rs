//! Sessions and tasks in one SQLite file (`sqlite.rs`, the session
//! store's `SqliteFile`): one writer for both, concurrent sends all kept
//! across a restart, and a blocking send that waits for its context's turn
//! is stored as `SUBMITTED` meanwhile.

use std::sync::Arc;

use oscova_a2a::model::{Task, TaskState};
use oscova_a2a::store::TaskQuery;
use oscova_a2a::{SqliteTaskStore, TaskStore};
use oscova_agent::session::{Session, SessionStore, SqliteStore};
use oscova_core::UserInfo;
use oscova_core::provider::model::ChatRole;
use serde_json::json;

use crate::support::{ALICE, Server};

fn send(text: &str, context: &str) -> serde_json::Value {
    json!({"message": {
        "messageId": text, "role": "ROLE_USER", "contextId": context,
        "parts": [{"text": text}],
    }})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_and_sessions_in_one_file_share_one_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let sessions = SqliteStore::open(&path).await.unwrap();
    let tasks = SqliteTaskStore::open(&path).await.unwrap();
    let before = sessions.file().commits();
    let message = serde_json::from_value(send("hello", "c1")["message"].clone()).unwrap();
    let task = Task::submitted("t1".into(), "c1".into(), message);
    tasks.put("alice", &task).await.unwrap();
    assert_eq!(
        sessions.file().commits(),
        before + 1,
        "the task's write went through the sessions' writer"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_sends_on_one_file_are_all_kept_in_order_across_a_restart() {
    const CLIENTS: usize = 16;
    const MESSAGES: usize = 3;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let server = Arc::new(Server::start_sqlite(&path).await);
    let mut clients = Vec::new();
    for c in 0..CLIENTS {
        let server = server.clone();
        clients.push(tokio::spawn(async move {
            for m in 0..MESSAGES {
                let text = format!("client {c} message {m}");
                let sent = server
                    .rpc(ALICE, "SendMessage", send(&text, &format!("c{c}")))
                    .await;
                let task = &sent["result"]["task"];
                assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
                assert_eq!(
                    task["artifacts"][0]["parts"][0]["text"],
                    format!("You said: {text} ({} user messages)", m + 1)
                );
            }
        }));
    }
    for client in clients {
        client.await.unwrap();
    }
    Arc::into_inner(server).unwrap().stop().await;

    // What a new process reads from the file.
    let tasks = SqliteTaskStore::open(&path).await.unwrap();
    let mut query = TaskQuery::default();
    query.limit = 1000;
    let page = tasks.list("alice", &query).await.unwrap();
    assert_eq!(page.total, CLIENTS * MESSAGES);
    assert!(
        page.tasks
            .iter()
            .all(|t| t.status.state == TaskState::Completed)
    );
    let sessions: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).await.unwrap());
    for c in 0..CLIENTS {
        let session = Session::open(
            sessions.clone(),
            UserInfo::new("alice"),
            &format!("a2a:c{c}"),
        )
        .await
        .unwrap();
        let said: Vec<String> = session
            .context()
            .chat_messages()
            .into_iter()
            .filter(|m| m.role == ChatRole::User)
            .map(|m| m.content)
            .collect();
        let expected: Vec<String> = (0..MESSAGES)
            .map(|m| format!("client {c} message {m}"))
            .collect();
        assert_eq!(said, expected);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_send_waiting_for_its_context_is_stored_as_submitted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let server = Arc::new(Server::start_sqlite(&path).await);
    let mut slow = send("slow run", "c1");
    slow["configuration"] = json!({"returnImmediately": true});
    let slow = server.rpc(ALICE, "SendMessage", slow).await;
    let slow = slow["result"]["task"]["id"].as_str().unwrap().to_owned();
    let waiting = {
        let server = server.clone();
        tokio::spawn(async move { server.rpc(ALICE, "SendMessage", send("next", "c1")).await })
    };
    // The blocking send's task appears once stored, waiting its turn.
    let mut listed = json!(null);
    for _ in 0..500 {
        listed = server.rpc(ALICE, "ListTasks", json!({})).await;
        if listed["result"]["totalSize"] == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let states: Vec<&str> = listed["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"],
        "{listed}"
    );
    let canceled = server.rpc(ALICE, "CancelTask", json!({"id": slow})).await;
    assert_eq!(canceled["result"]["status"]["state"], "TASK_STATE_CANCELED");
    let next = waiting.await.unwrap();
    assert_eq!(
        next["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{next}"
    );
    Arc::into_inner(server).unwrap().stop().await;
}
