//! A run's stream events, relayed through the store to the other processes
//! that share it (a fleet on Postgres), so a client subscribed on another
//! instance gets the model's text as it comes, not only the states.
//!
//! Rules: only when the store relays ([`TaskStore::relays`]). Every event
//! of the run goes out in the order the run made it. The model's text is
//! coalesced: chunks are joined for at most [`COALESCE`] (or until
//! [`MAX_TEXT`] bytes), so a run publishes at most about 20 text events a
//! second whatever its model's pace; the joined text is sent before any
//! state that follows it. A text longer than [`MAX_TEXT`] goes out as
//! several appended chunks, so no event is past what the store can carry.
//! A failed publish is logged and the run goes on: listeners then miss
//! those chunks, and still get every state from the store.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::store::TaskStore;

/// How long chunks of text are joined before they are published.
pub(crate) const COALESCE: Duration = Duration::from_millis(50);
/// The most text one relayed event carries, in bytes once escaped in JSON
/// (the rest of the event stays well under the store's limit).
pub(crate) const MAX_TEXT: usize = 6000;

/// Publishes the events of `user`'s task `task` (its run's `events`)
/// until the run ends.
pub(crate) fn publish_run(
    store: Arc<dyn TaskStore>,
    user: String,
    task: String,
    mut events: broadcast::Receiver<Value>,
) {
    tokio::spawn(async move {
        let mut pending: Option<(Value, Instant)> = None;
        loop {
            let next = match &pending {
                Some((_, flush_at)) => {
                    match tokio::time::timeout_at(*flush_at, events.recv()).await {
                        Ok(next) => next,
                        Err(_) => {
                            flush(&*store, &user, &task, pending.take()).await;
                            continue;
                        }
                    }
                }
                None => events.recv().await,
            };
            let event = match next {
                Ok(event) => event,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => {
                    flush(&*store, &user, &task, pending.take()).await;
                    return;
                }
            };
            if event.get("artifactUpdate").is_some() {
                let full = match &mut pending {
                    Some((joined, _)) => {
                        let more = text(&event).to_owned();
                        append(joined, &more);
                        text(joined).len() >= MAX_TEXT
                    }
                    None => {
                        let full = text(&event).len() >= MAX_TEXT;
                        pending = Some((event, Instant::now() + COALESCE));
                        full
                    }
                };
                if full {
                    flush(&*store, &user, &task, pending.take()).await;
                }
                continue;
            }
            flush(&*store, &user, &task, pending.take()).await;
            send(&*store, &user, &task, &event).await;
        }
    });
}

/// The text of an `artifactUpdate` event.
fn text(event: &Value) -> &str {
    event["artifactUpdate"]["artifact"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

fn append(event: &mut Value, more: &str) {
    if let Some(Value::String(text)) = event.pointer_mut("/artifactUpdate/artifact/parts/0/text") {
        text.push_str(more);
    }
}

/// How many bytes `c` takes in a JSON string.
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if c < ' ' => 6,
        c => c.len_utf8(),
    }
}

/// `event` (an `artifactUpdate`) as events of at most [`MAX_TEXT`] bytes
/// of JSON-escaped text each, the later ones appended.
pub(crate) fn split(event: &Value) -> Vec<Value> {
    let whole = text(event);
    if whole.chars().map(escaped_len).sum::<usize>() <= MAX_TEXT {
        return vec![event.clone()];
    }
    let mut pieces = Vec::new();
    let mut rest = whole;
    while !rest.is_empty() {
        let mut size = 0;
        let end = rest
            .char_indices()
            .find(|(_, c)| {
                size += escaped_len(*c);
                size > MAX_TEXT
            })
            .map_or(rest.len(), |(at, _)| at);
        let (piece, after) = rest.split_at(end);
        let mut part = event.clone();
        if let Some(text) = part.pointer_mut("/artifactUpdate/artifact/parts/0/text") {
            *text = Value::String(piece.to_owned());
        }
        if !pieces.is_empty()
            && let Some(append) = part.pointer_mut("/artifactUpdate/append")
        {
            *append = Value::Bool(true);
        }
        pieces.push(part);
        rest = after;
    }
    pieces
}

async fn flush(store: &dyn TaskStore, user: &str, task: &str, pending: Option<(Value, Instant)>) {
    if let Some((event, _)) = pending {
        for piece in split(&event) {
            send(store, user, task, &piece).await;
        }
    }
}

async fn send(store: &dyn TaskStore, user: &str, task: &str, event: &Value) {
    if let Err(error) = store.publish(user, task, event).await {
        tracing::warn!(%error, task, "relaying a stream event failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_split_at_char_boundaries_and_the_rest_appended() {
        let quotes = "\"".repeat(MAX_TEXT);
        let event = serde_json::json!({"artifactUpdate": {
            "artifact": {"parts": [{"text": quotes}]}, "append": false}});
        let pieces = split(&event);
        assert_eq!(pieces.len(), 2, "escaped, the quotes are twice as long");
        assert!(
            pieces
                .iter()
                .all(|p| serde_json::to_string(text(p)).unwrap().len() <= MAX_TEXT + 2)
        );
        let long = "é".repeat(MAX_TEXT); // two bytes each
        let event = serde_json::json!({"artifactUpdate": {
            "artifact": {"parts": [{"text": long}]}, "append": false}});
        let pieces = split(&event);
        assert_eq!(pieces.len(), 2);
        let joined: String = pieces.iter().map(|p| text(p).to_owned()).collect();
        assert_eq!(joined, long);
        assert!(pieces.iter().all(|p| text(p).len() <= MAX_TEXT));
        assert_eq!(pieces[0]["artifactUpdate"]["append"], false);
        assert_eq!(pieces[1]["artifactUpdate"]["append"], true);
    }
}
