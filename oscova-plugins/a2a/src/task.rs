//! A2A 1.0 messages and tasks as tool results.
//!
//! Rules: the text a model reads is the agent's text parts (artifacts of a
//! completed task, else its status message); `data` parts are shown as
//! JSON, files by name, type and size, never their bytes. A task that is
//! still running says its id and state and which tool to call next. A
//! failed or rejected task is an error result. `details` always hold the
//! agent, and for a task its `task_id`, `context_id` and `state` under the
//! SDK's spelling (`TASK_STATE_WORKING`, ...), so a host can follow it.

use oscova_a2a::model::TaskState;
use oscova_core::ToolResult;
use serde_json::{Value, json};

/// The wire names a running task's result points to.
const STATUS_TOOL: &str = "oscova_a2a__a2a__status";
const CANCEL_TOOL: &str = "oscova_a2a__a2a__cancel";
const SEND_TOOL: &str = "oscova_a2a__a2a__send";

/// A task's state as A2A 1.0 writes it.
pub(crate) fn state(task: &Value) -> &str {
    task.pointer("/status/state")
        .and_then(Value::as_str)
        .unwrap_or("TASK_STATE_UNSPECIFIED")
}

/// Whether a task in `state` waits for nobody but the agent (so following
/// it is worth it).
pub(crate) fn is_running(state: &str) -> bool {
    matches!(
        TaskState::parse(state),
        Some(TaskState::Submitted | TaskState::Working)
    )
}

/// The text of a list of parts.
fn parts_text(parts: Option<&Value>) -> Vec<String> {
    let Some(parts) = parts.and_then(Value::as_array) else {
        return Vec::new();
    };
    parts
        .iter()
        .filter_map(|part| {
            if let Some(text) = part.get("text").and_then(Value::as_str) {
                return Some(text.to_owned());
            }
            if let Some(data) = part.get("data") {
                return Some(data.to_string());
            }
            let name = part
                .get("filename")
                .and_then(Value::as_str)
                .unwrap_or("(unnamed)");
            let media = part
                .get("mediaType")
                .and_then(Value::as_str)
                .unwrap_or("unknown type");
            if let Some(url) = part.get("url").and_then(Value::as_str) {
                return Some(format!("[file {name} ({media}) at {url}]"));
            }
            part.get("raw")
                .and_then(Value::as_str)
                .map(|raw| format!("[file {name} ({media}), about {} bytes]", raw.len() / 4 * 3))
        })
        .collect()
}

/// A `SendMessageResponse` (`{"message": ...}` or `{"task": ...}`).
pub(crate) fn send_result(agent: &str, answer: &Value) -> Option<ToolResult> {
    if let Some(task) = answer.get("task") {
        return Some(task_result(agent, task));
    }
    let message = answer.get("message")?;
    let text = parts_text(message.get("parts")).join("\n");
    let details = json!({
        "agent": agent,
        "kind": "message",
        "context_id": message.get("contextId"),
        "message_id": message.get("messageId"),
        "metadata": message.get("metadata"),
    });
    Some(ToolResult::text(text).with_details(details))
}

/// A `Task`.
pub(crate) fn task_result(agent: &str, task: &Value) -> ToolResult {
    let id = task.get("id").and_then(Value::as_str).unwrap_or("");
    let context = task.get("contextId").and_then(Value::as_str).unwrap_or("");
    let state = state(task);
    let status_text = parts_text(task.pointer("/status/message/parts")).join("\n");
    let artifacts: Vec<Value> = task
        .get("artifacts")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|a| {
                    json!({
                        "name": a.get("name"),
                        "text": parts_text(a.get("parts")).join("\n"),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let details = json!({
        "agent": agent,
        "kind": "task",
        "task_id": id,
        "context_id": context,
        "state": state,
        "artifacts": artifacts,
    });
    let artifact_text = artifacts
        .iter()
        .filter_map(|a| a.get("text").and_then(Value::as_str))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    let said = |fallback: &str| {
        if status_text.is_empty() {
            fallback.to_owned()
        } else {
            status_text.clone()
        }
    };
    let result = match state {
        "TASK_STATE_COMPLETED" if !artifact_text.is_empty() => ToolResult::text(artifact_text),
        "TASK_STATE_COMPLETED" => {
            ToolResult::text(said("(the task completed without returning text)"))
        }
        "TASK_STATE_FAILED" | "TASK_STATE_REJECTED" => ToolResult::error(format!(
            "task `{id}` of A2A agent `{agent}` ended {state}: {}",
            said("(no reason given)")
        )),
        "TASK_STATE_CANCELED" => {
            ToolResult::text(format!("task `{id}` of A2A agent `{agent}` was canceled"))
        }
        "TASK_STATE_INPUT_REQUIRED" | "TASK_STATE_AUTH_REQUIRED" => ToolResult::text(format!(
            "A2A agent `{agent}` needs more before task `{id}` can go on ({state}): {}\n\
             Answer with `{SEND_TOOL}` giving agent `{agent}`, task_id `{id}` and context_id `{context}`.",
            said("(no question given)")
        )),
        _ => ToolResult::text(format!(
            "task `{id}` of A2A agent `{agent}` is still running ({state}); check it later \
             with `{STATUS_TOOL}` (agent `{agent}`, task_id `{id}`), or stop it with `{CANCEL_TOOL}`"
        )),
    };
    result.with_details(details)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_task_names_its_id_state_and_the_next_tool() {
        let task =
            json!({"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}});
        let r = task_result("slow", &task);
        assert!(!r.is_error);
        assert!(
            r.content.contains("t1") && r.content.contains(STATUS_TOOL),
            "{}",
            r.content
        );
        assert_eq!(r.details["state"], "TASK_STATE_WORKING");
    }

    #[test]
    fn a_failed_task_is_an_error_with_its_reason() {
        let task = json!({"id": "t", "status": {"state": "TASK_STATE_FAILED",
            "message": {"parts": [{"text": "disk full"}]}}});
        let r = task_result("a", &task);
        assert!(r.is_error);
        assert!(r.content.contains("disk full"), "{}", r.content);
    }

    #[test]
    fn files_are_described_never_inlined() {
        let parts = json!([{"raw": "aGVsbG8h", "filename": "a.txt", "mediaType": "text/plain"},
            {"data": {"k": 1}}]);
        assert_eq!(
            parts_text(Some(&parts)),
            ["[file a.txt (text/plain), about 6 bytes]", "{\"k\":1}"]
        );
    }
}
