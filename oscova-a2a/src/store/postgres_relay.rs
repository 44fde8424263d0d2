//! The Postgres store's relay of stream events between the instances of a
//! fleet: `NOTIFY` on a channel per task, `LISTEN` while someone listens.
//!
//! Rules: one connection of its own per store, opened when first used
//! (and again once lost; listeners of the lost one go on reading the
//! store alone), publishes (`pg_notify`, a prepared statement) and listens; a channel is
//! `oscova_a2a_` and the task id's letters and digits (at most 40), so no
//! name a client sends reaches SQL but as that. A payload is `{"o":
//! user, "e": event}`, at most [`MAX_PAYLOAD`] bytes (Postgres refuses
//! 8000 or more; the publisher splits the model's text so that none is
//! larger). A channel is listened to while one reader listens; the
//! channels nobody listens to any more are dropped (`UNLISTEN`) when the next
//! reader starts listening, under one lock, so a `LISTEN` and an
//! `UNLISTEN` of one channel never cross. Notifications from one
//! connection arrive in the order they were sent, so a listener sees a
//! run's chunks and states in the order the running instance made them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio_postgres::{AsyncMessage, Client, NoTls, Statement};

use crate::store::{Relayed, StoreError};

/// The largest payload sent: under Postgres's 8000 bytes.
pub(crate) const MAX_PAYLOAD: usize = 7900;

/// Relayed events a slow listener may fall behind by.
const BUFFER: usize = 256;

type Channels = Arc<Mutex<HashMap<String, broadcast::Sender<(String, Value)>>>>;

fn db(error: impl std::fmt::Display) -> StoreError {
    StoreError::Database(error.to_string())
}

/// The channel of task `task`.
fn channel(task: &str) -> String {
    let id: String = task
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(40)
        .collect();
    format!("oscova_a2a_{}", id.to_ascii_lowercase())
}

/// One store's relay connection.
pub(crate) struct Relay {
    client: Client,
    notify: Statement,
    channels: Channels,
    /// Held while channels are listened to or dropped.
    listening: tokio::sync::Mutex<()>,
}

impl Relay {
    /// Connects with the store's configuration.
    pub(crate) async fn connect(config: &str) -> Result<Self, StoreError> {
        let (client, mut connection) = tokio_postgres::connect(config, NoTls).await.map_err(db)?;
        let channels: Channels = Arc::default();
        let map = channels.clone();
        tokio::spawn(async move {
            loop {
                match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                    Some(Ok(AsyncMessage::Notification(note))) => {
                        dispatch(&map, note.channel(), note.payload());
                    }
                    Some(Ok(_)) => {}
                    Some(Err(error)) => {
                        tracing::warn!(%error, "the Postgres relay's connection ended");
                        return;
                    }
                    None => return,
                }
            }
        });
        let notify = client
            .prepare("SELECT pg_notify($1, $2)")
            .await
            .map_err(db)?;
        Ok(Self {
            client,
            notify,
            channels,
            listening: tokio::sync::Mutex::new(()),
        })
    }

    /// Whether its connection is gone (its listeners' streams have ended:
    /// the store opens another).
    pub(crate) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// Sends `event` of `user`'s task `task` to its listeners.
    pub(crate) async fn publish(
        &self,
        user: &str,
        task: &str,
        event: &Value,
    ) -> Result<(), StoreError> {
        let payload = json!({"o": user, "e": event}).to_string();
        if payload.len() > MAX_PAYLOAD {
            return Err(StoreError::Database(format!(
                "a relayed event of {} bytes is past the {MAX_PAYLOAD} a notification takes",
                payload.len()
            )));
        }
        self.client
            .execute(&self.notify, &[&channel(task), &payload])
            .await
            .map_err(db)?;
        Ok(())
    }

    /// The events published for `task` from now on.
    pub(crate) async fn listen(&self, task: &str) -> Result<Relayed, StoreError> {
        let _turn = self.listening.lock().await;
        let name = channel(task);
        let (receiver, fresh, stale) = {
            let mut channels = self
                .channels
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let stale: Vec<String> = channels
                .iter()
                .filter(|(n, s)| **n != name && s.receiver_count() == 0)
                .map(|(n, _)| n.clone())
                .collect();
            for n in &stale {
                channels.remove(n);
            }
            let fresh = !channels.contains_key(&name);
            let sender = channels
                .entry(name.clone())
                .or_insert_with(|| broadcast::channel(BUFFER).0);
            (sender.subscribe(), fresh, stale)
        };
        for n in stale {
            self.client
                .batch_execute(&format!("UNLISTEN \"{n}\""))
                .await
                .map_err(db)?;
        }
        if fresh {
            self.client
                .batch_execute(&format!("LISTEN \"{name}\""))
                .await
                .map_err(db)?;
        }
        Ok(receiver)
    }
}

/// Hands a notification to the channel's listeners.
fn dispatch(channels: &Channels, name: &str, payload: &str) {
    let Ok(mut payload) = serde_json::from_str::<Value>(payload) else {
        return;
    };
    let (Some(user), event) = (
        payload["o"].as_str().map(str::to_owned),
        payload["e"].take(),
    ) else {
        return;
    };
    let channels = channels
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(sender) = channels.get(name) {
        let _ = sender.send((user, event));
    }
}

#[cfg(test)]
mod tests {
    use super::channel;

    #[test]
    fn a_channel_is_the_ids_letters_and_digits_only() {
        assert_eq!(
            channel("0f8e-AB\"; DROP TABLE x; --"),
            "oscova_a2a_0f8eabdroptablex"
        );
        assert_eq!(channel(&"a".repeat(100)).len(), "oscova_a2a_".len() + 40);
    }
}
