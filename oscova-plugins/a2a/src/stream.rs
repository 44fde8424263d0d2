//! Following a task by streaming: `SendStreamingMessage` (JSON-RPC) or
//! `POST URL/message:stream` (HTTP+JSON) for a message being sent, and
//! `SubscribeToTask` (JSON-RPC) or `POST URL/tasks/ID:subscribe`
//! (HTTP+JSON) for a task already running (the follower, `follow.rs`),
//! read as server-sent events, when the agent's card says it streams.
//!
//! Rules: the request is made as `peer.rs` makes every request (version
//! header, the user's credential headers, the origin check, bounded by the
//! agent's `timeout_secs` until the answer starts); the events are then
//! read until the task settles, the stream ends, the wait runs out or the
//! call is cancelled, one `data:` line at a time, each at most
//! [`MAX_ANSWER`] bytes. Events are the A2A 1.0 `StreamResponse` (inside
//! a JSON-RPC `result` for that binding): `message` ends the stream with
//! that message; `task` sets the task; `statusUpdate` sets its status;
//! `artifactUpdate` adds an artifact, or extends the one of the same id
//! when `append` is true. What is known when reading stops is the answer,
//! as `SendMessage` would give it (`{"task": ...}` or `{"message": ...}`).

use std::time::Duration;

use oscova_a2a::model::Method;
use oscova_core::http::backend::{BackendError, Body, LineSplitter};
use serde_json::{Value, json};

use crate::ClientError;
use crate::card::Binding;
use crate::peer::{MAX_ANSWER, Peer, next_id};
use crate::task::is_running;

/// What the events said so far.
#[derive(Debug, Default)]
struct Followed {
    task: Option<Value>,
    message: Option<Value>,
}

impl Followed {
    /// Applies one `StreamResponse`; `true` when nothing more is to come.
    fn apply(&mut self, event: Value) -> bool {
        if let Some(message) = event.get("message") {
            self.message = Some(message.clone());
            return true;
        }
        if let Some(task) = event.get("task") {
            self.task = Some(task.clone());
        } else if let Some(update) = event.get("statusUpdate") {
            let task = self.task_for(update);
            task["status"] = update.get("status").cloned().unwrap_or(Value::Null);
        } else if let Some(update) = event.get("artifactUpdate") {
            let append = update.get("append").and_then(Value::as_bool) == Some(true);
            let artifact = update.get("artifact").cloned().unwrap_or(Value::Null);
            let task = self.task_for(update);
            if !task["artifacts"].is_array() {
                task["artifacts"] = json!([]);
            }
            if let Some(list) = task["artifacts"].as_array_mut() {
                let id = artifact.get("artifactId").cloned();
                let same = list
                    .iter_mut()
                    .find(|a| id.is_some() && a.get("artifactId") == id.as_ref());
                match same {
                    Some(existing) if append => {
                        let more = artifact.get("parts").and_then(Value::as_array).cloned();
                        if let (Some(parts), Some(more)) = (existing["parts"].as_array_mut(), more)
                        {
                            parts.extend(more);
                        }
                    }
                    Some(existing) => *existing = artifact,
                    None => list.push(artifact),
                }
            }
        }
        self.task
            .as_ref()
            .is_some_and(|t| !is_running(crate::task::state(t)))
    }

    /// The task an update is about (made from the update when no `task`
    /// event came first).
    fn task_for(&mut self, update: &Value) -> &mut Value {
        self.task.get_or_insert_with(|| {
            json!({
                "id": update.get("taskId"),
                "contextId": update.get("contextId"),
                "status": {"state": "TASK_STATE_SUBMITTED"},
            })
        })
    }

    fn answer(self, peer: &Peer<'_>) -> Result<Value, ClientError> {
        match (self.message, self.task) {
            (Some(message), _) => Ok(json!({ "message": message })),
            (None, Some(task)) => Ok(json!({ "task": task })),
            (None, None) => Err(ClientError::BadAnswer {
                agent: peer.name.to_owned(),
                reason: "the stream ended before any task or message".to_owned(),
            }),
        }
    }
}

/// Sends `params` (a `SendMessageRequest`) as a streaming request and
/// follows the events for at most `wait`.
pub(crate) async fn send(
    peer: &Peer<'_>,
    binding: Binding,
    url: &str,
    params: Value,
    wait: Duration,
) -> Result<Value, ClientError> {
    let (target, body) = match binding {
        Binding::JsonRpc => (
            url.to_owned(),
            json!({"jsonrpc": "2.0", "id": next_id(),
                   "method": Method::SendStreamingMessage.name(), "params": params}),
        ),
        Binding::HttpJson => (
            format!("{url}{}", Method::SendStreamingMessage.http("", "").1),
            params,
        ),
    };
    read(peer, binding, &target, body, wait).await
}

/// Subscribes to the running task `id` and follows its events for at
/// most `wait`.
pub(crate) async fn subscribe(
    peer: &Peer<'_>,
    binding: Binding,
    url: &str,
    id: &str,
    wait: Duration,
) -> Result<Value, ClientError> {
    let (target, body) = match binding {
        Binding::JsonRpc => (
            url.to_owned(),
            json!({"jsonrpc": "2.0", "id": next_id(),
                   "method": Method::SubscribeToTask.name(), "params": {"id": id}}),
        ),
        Binding::HttpJson => (
            format!("{url}{}", Method::SubscribeToTask.http(id, "").1),
            json!({}),
        ),
    };
    read(peer, binding, &target, body, wait).await
}

/// Posts `body` to `target`, then reads the events for at most `wait`.
async fn read(
    peer: &Peer<'_>,
    binding: Binding,
    target: &str,
    body: Value,
    wait: Duration,
) -> Result<Value, ClientError> {
    let target = target.to_owned();
    let request = peer
        .prepare(peer.http.post(&target).json(&body), true)
        .header("Accept", "text/event-stream");
    let response = match tokio::time::timeout(peer.timeout, peer.open(request, &target)).await {
        Ok(response) => response?,
        Err(_) => return Err(peer.timed_out()),
    };
    let streams = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !streams {
        // An error (or a plain answer) instead of a stream.
        let answer = peer.read_json(response, &target).await?;
        return unwrap(peer, binding, answer);
    }
    let mut followed = Followed::default();
    let mut body = Body::new(response, &target);
    let mut splitter = LineSplitter::with_max_line(MAX_ANSWER);
    let scrub = peer.scrub();
    let read = async {
        while let Some(chunk) = body
            .next(peer.cancel, &scrub)
            .await
            .map_err(|e| peer.transport(e))?
        {
            let mut lines = Vec::new();
            splitter
                .push(chunk.as_ref(), &mut |line: &str| {
                    lines.push(line.to_owned());
                    Ok::<(), BackendError>(())
                })
                .map_err(|e| peer.transport(e))?;
            for line in lines {
                let Some(data) = line.strip_prefix("data:") else {
                    continue;
                };
                let event: Value =
                    serde_json::from_str(data.trim()).map_err(|e| ClientError::BadAnswer {
                        agent: peer.name.to_owned(),
                        reason: format!("a stream event that is not JSON ({e})"),
                    })?;
                if followed.apply(unwrap(peer, binding, event)?) {
                    return Ok(());
                }
            }
        }
        Ok::<(), ClientError>(())
    };
    // Past the wait, what is known so far is the answer.
    if let Ok(Err(e)) = tokio::time::timeout(wait, read).await {
        return Err(e);
    }
    followed.answer(peer)
}

/// The `StreamResponse` inside a JSON-RPC answer, or the answer itself.
fn unwrap(peer: &Peer<'_>, binding: Binding, answer: Value) -> Result<Value, ClientError> {
    if let Some(error) = peer.rpc_error(&answer) {
        return Err(error);
    }
    match (binding, answer.get("result")) {
        (Binding::JsonRpc, Some(result)) => Ok(result.clone()),
        _ => Ok(answer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_build_the_task_and_appended_parts_join_their_artifact() {
        let mut f = Followed::default();
        assert!(
            !f.apply(json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING"}}}))
        );
        assert!(!f.apply(json!({"artifactUpdate": {"taskId": "t",
            "artifact": {"artifactId": "a", "parts": [{"text": "one"}]}}})));
        assert!(
            !f.apply(json!({"artifactUpdate": {"taskId": "t", "append": true,
            "artifact": {"artifactId": "a", "parts": [{"text": "two"}]}}}))
        );
        assert!(f.apply(json!({"statusUpdate": {"taskId": "t",
            "status": {"state": "TASK_STATE_COMPLETED"}}})));
        let task = f.task.unwrap();
        assert_eq!(task["id"], "t");
        assert_eq!(task["contextId"], "c");
        assert_eq!(
            task["artifacts"],
            json!([{"artifactId": "a", "parts": [{"text": "one"}, {"text": "two"}]}])
        );
    }

    #[test]
    fn a_message_ends_the_stream() {
        let mut f = Followed::default();
        assert!(f.apply(json!({"message": {"parts": [{"text": "hi"}]}})));
    }
}
