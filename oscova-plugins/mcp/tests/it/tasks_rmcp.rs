//! An upstream's tasks (the MCP Tasks extension, SEP-2663) followed by the
//! plugin against a server that is not ours: the rmcp test server over
//! stdio, whose `brew` and `confirm_order` are tasks run by rmcp's own task
//! manager (`rmcp::task_manager`) for a client declaring the extension.
//! One server for the three cases: a task polled to its result (its status
//! message as the call's progress), a task's `input_required` form asked
//! of the person and answered with `tasks/update`, and our cancellation
//! sent as `tasks/cancel`, which the server's task sees.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_core::interaction::{Answer, AskError, InteractionRequest, Question};
use oscova_core::prelude::*;
use oscova_plugin_mcp::{Elicitation, McpPlugin};
use serde_json::json;

use crate::support::{Kind, host, plugin, server, tool};

const PATIENCE: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rmcp_servers_tasks_are_followed_answered_and_cancelled() {
    let markers = tempfile::tempdir().unwrap();
    let config = server(Kind::Rmcp)
        .env("MARKER_DIR", markers.path().display().to_string())
        .timeout(PATIENCE)
        .elicitation(Elicitation::Forward);
    let host = host(plugin(McpPlugin::builder().server("notes", config)).await);
    let scope = host.user_scope(UserInfo::new("alice"));

    // Followed to its result; "brewing" reported as the call's progress.
    let reported = Arc::new(Mutex::new(Vec::new()));
    let sink = reported.clone();
    let brewed = tokio::time::timeout(
        PATIENCE,
        scope
            .invoke(&tool("brew"), json!({"ms": 400}))
            .progress(move |p: ToolProgress| sink.lock().unwrap().push(p.message)),
    )
    .await
    .unwrap();
    assert!(!brewed.is_error, "{brewed:?}");
    assert_eq!(
        brewed.content, "brewed as a task in 400 ms",
        "served as a task: the plugin declared the extension"
    );
    let reported = reported.lock().unwrap().clone();
    assert!(
        reported.iter().any(|m| m == "brewing"),
        "the task's status message as progress: {reported:?}"
    );

    // The task's question asked of the person, the answer sent back.
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let person = move |request: InteractionRequest| {
        seen.lock().unwrap().push(request.question.clone());
        let yes = json!({"confirm": true});
        async move { Ok::<_, AskError>(Answer::Accept(yes.as_object().unwrap().clone())) }
    };
    let ordered = tokio::time::timeout(
        PATIENCE,
        scope
            .invoke(&tool("confirm_order"), json!({"cups": 2}))
            .interaction_handler(person),
    )
    .await
    .unwrap();
    assert!(!ordered.is_error, "{ordered:?}");
    assert_eq!(ordered.content, "ordered 2 cups");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "asked once: {asked:?}");
    let Question::Form { message, .. } = &asked[0] else {
        panic!("a form: {asked:?}");
    };
    assert!(
        message.contains("Confirm the order of 2 cups?"),
        "the server's question: {message}"
    );

    // Our cancellation is the server task's `tasks/cancel`.
    let cancel = CancellationToken::new();
    let brew = tool("brew");
    let call = scope
        .invoke(&brew, json!({"ms": 60_000}))
        .cancellation(cancel.clone());
    let cancelling = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        cancel.cancel();
    };
    let (result, ()) = tokio::time::timeout(PATIENCE, async { tokio::join!(call, cancelling) })
        .await
        .unwrap();
    assert!(result.is_error, "{result:?}");
    let marker = markers.path().join("task-cancelled");
    let server_saw = async {
        while !marker.exists() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(PATIENCE, server_saw)
        .await
        .expect("the server's task saw tasks/cancel");
    host.shutdown().await;
}
