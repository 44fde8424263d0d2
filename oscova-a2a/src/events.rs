//! What a run tells its listeners, and how long a blocking send waits.
//!
//! Rules: every change of a task's state is one `statusUpdate` event; the
//! model's text goes out as chunks of the artifact `response` while it
//! comes; a blocking send returns when the run ends or the task waits for
//! the client (`INPUT_REQUIRED`, `AUTH_REQUIRED`), whichever comes first.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};

use crate::model::Task;

/// The `statusUpdate` stream event of `task`'s status.
pub(crate) fn status_update(task: &Task) -> Value {
    json!({"statusUpdate": {
        "taskId": task.id,
        "contextId": task.context_id,
        "status": serde_json::to_value(&task.status).unwrap_or(Value::Null),
    }})
}

/// The `artifactUpdate` event of `task`'s whole artifact `artifact`, for
/// a subscriber who got none of it as chunks (a model that does not
/// stream), so a stream shows the answer `GetTask` would.
pub(crate) fn whole_artifact(task: &Task, artifact: &str) -> Option<Value> {
    let whole = task.artifacts.iter().find(|a| a.artifact_id == artifact)?;
    Some(json!({"artifactUpdate": {
        "taskId": task.id,
        "contextId": task.context_id,
        "artifact": whole,
        "append": false,
        "lastChunk": true,
    }}))
}

/// Sends the model's text as chunks of the task's artifact.
pub(crate) struct Chunks {
    pub(crate) events: broadcast::Sender<Value>,
    pub(crate) task: String,
    pub(crate) context: String,
    pub(crate) artifact: String,
    pub(crate) sent: Arc<std::sync::atomic::AtomicBool>,
}

impl Chunks {
    pub(crate) fn send(&self, text: &str) {
        let append = self.sent.swap(true, std::sync::atomic::Ordering::Relaxed);
        let _ = self.events.send(json!({"artifactUpdate": {
            "taskId": self.task,
            "contextId": self.context,
            "artifact": {"artifactId": self.artifact, "name": "response", "parts": [{"text": text}]},
            "append": append,
            "lastChunk": false,
        }}));
    }
}

pub(crate) enum Outcome {
    Completed(String),
    /// A resumed run in which a call its stopped process had started was
    /// not run again: the report (the call and what the model was told),
    /// and the model's answer.
    Interrupted {
        report: String,
        text: String,
    },
    /// A tool call came back with a missing credential
    /// ([`oscova_core::ToolResult::is_missing_credential`]): the first
    /// such result's guidance, and the model's answer.
    AuthRequired {
        guidance: String,
        text: String,
    },
    Canceled,
    Failed(String),
}

/// Waits until the run ends or the task waits for the client
/// (`INPUT_REQUIRED`, `AUTH_REQUIRED`).
pub(crate) async fn settle(
    mut events: broadcast::Receiver<Value>,
    mut done: watch::Receiver<bool>,
) {
    let interrupted = |event: &Value| {
        matches!(
            event["statusUpdate"]["status"]["state"].as_str(),
            Some("TASK_STATE_INPUT_REQUIRED" | "TASK_STATE_AUTH_REQUIRED")
        )
    };
    let mut closed = false;
    loop {
        if closed {
            let _ = done.wait_for(|d| *d).await;
            return;
        }
        tokio::select! {
            ended = done.wait_for(|d| *d) => {
                let _ = ended;
                return;
            }
            event = events.recv() => match event {
                Ok(event) if interrupted(&event) => return,
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => closed = true,
            },
        }
    }
}

pub(crate) async fn wait(mut done: watch::Receiver<bool>) {
    let _ = done.wait_for(|d| *d).await;
}
