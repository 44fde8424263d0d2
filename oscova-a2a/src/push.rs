//! Push notifications: a task's status updates POSTed to the client's
//! webhooks.
//!
//! Rules: a client sets a webhook for its own task (another user's task is
//! `TaskNotFound`) with `CreateTaskPushNotificationConfig` or in
//! `SendMessage`'s `configuration.taskPushNotificationConfig`; get, list
//! and delete name the task too. Each `statusUpdate` of the task's run is
//! POSTed as the `StreamResponse` JSON to every webhook, in order, one
//! event and one webhook at a time, with `Authorization: <scheme>
//! <credentials>` when the config has `authentication` and
//! `X-A2A-Notification-Token` when it has `token`: at least once, up to
//! three attempts (after 200 ms and 1 s) while the webhook fails or
//! answers other than 2xx. Every POST goes through the host's HTTP client
//! with the `Internet` scope, so a webhook on a loopback, private,
//! link-local or metadata address is refused (never retried) unless the
//! operator allowed that destination (`[network] allow`). Configs live
//! in this process (not in the task store) and deliveries are made by the
//! process that runs the task; a config set on a task that no run here
//! will update is kept and never used.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_core::{HttpClient, NetworkScope};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::broadcast;

use crate::error::A2aError;
use crate::wire::{TaskState, new_id};

/// How long to wait before each retry.
const RETRIES: [Duration; 2] = [Duration::from_millis(200), Duration::from_secs(1)];
/// How long one POST may take.
const POST_TIMEOUT: Duration = Duration::from_secs(10);

/// How the webhook wants to be called.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Authentication {
    scheme: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    credentials: Option<String>,
}

/// A webhook of a task (`TaskPushNotificationConfig`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PushConfig {
    #[serde(default)]
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) task_id: String,
    pub(crate) url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    authentication: Option<Authentication>,
}

type Configs = Arc<Mutex<HashMap<(String, String), Vec<PushConfig>>>>;

/// The webhooks of every task, and the client that calls them.
pub(crate) struct Pushes {
    configs: Configs,
    client: HttpClient,
    /// Tasks whose events are being forwarded (one forwarder each).
    forwarding: Arc<Mutex<std::collections::HashSet<(String, String)>>>,
}

impl Pushes {
    /// Webhooks called through `client` (the host's), with the `Internet`
    /// scope.
    pub(crate) fn new(client: &HttpClient) -> Self {
        Self {
            configs: Arc::default(),
            client: client.with_fixed_scope(NetworkScope::Internet),
            forwarding: Arc::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Vec<PushConfig>>> {
        self.configs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds (or replaces, by id) a webhook of the task `task` of `owner`.
    pub(crate) fn set(
        &self,
        owner: &str,
        task: &str,
        mut config: PushConfig,
    ) -> Result<PushConfig, A2aError> {
        let scheme = config.url.split_once("://").map(|(s, _)| s);
        if !matches!(scheme, Some("http" | "https")) {
            return Err(A2aError::InvalidParams("url: an http or https URL".into()));
        }
        if config.id.is_empty() {
            config.id = new_id();
        }
        config.task_id = task.to_owned();
        let mut configs = self.lock();
        let list = configs
            .entry((owner.to_owned(), task.to_owned()))
            .or_default();
        list.retain(|c| c.id != config.id);
        list.push(config.clone());
        Ok(config)
    }

    /// The webhooks of the task.
    pub(crate) fn list(&self, owner: &str, task: &str) -> Vec<PushConfig> {
        self.lock()
            .get(&(owner.to_owned(), task.to_owned()))
            .cloned()
            .unwrap_or_default()
    }

    /// Removes the webhook `id`; whether there was one.
    pub(crate) fn delete(&self, owner: &str, task: &str, id: &str) -> bool {
        let mut configs = self.lock();
        let Some(list) = configs.get_mut(&(owner.to_owned(), task.to_owned())) else {
            return false;
        };
        let before = list.len();
        list.retain(|c| c.id != id);
        before != list.len()
    }

    /// Delivers the status updates of `events` (the task's run) to the
    /// task's webhooks, in order, until the terminal one.
    pub(crate) fn forward(&self, owner: &str, task: &str, mut events: broadcast::Receiver<Value>) {
        let (configs, client) = (self.configs.clone(), self.client.clone());
        let key = (owner.to_owned(), task.to_owned());
        let forwarding = self.forwarding.clone();
        let fresh = forwarding
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key.clone());
        if !fresh {
            return;
        }
        tokio::spawn(async move {
            let _done = Forwarding(forwarding, key.clone());
            loop {
                let event = match events.recv().await {
                    Ok(event) => event,
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                let Some(state) = event["statusUpdate"]["status"]["state"].as_str() else {
                    continue;
                };
                let hooks = configs
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .get(&key)
                    .cloned()
                    .unwrap_or_default();
                for hook in &hooks {
                    deliver(&client, hook, &event).await;
                }
                if TaskState::parse(state).is_some_and(TaskState::is_terminal) {
                    return;
                }
            }
        });
    }
}

/// Forgets a task's forwarder when it ends.
struct Forwarding(
    Arc<Mutex<std::collections::HashSet<(String, String)>>>,
    (String, String),
);

impl Drop for Forwarding {
    fn drop(&mut self) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&self.1);
    }
}

/// POSTs `event` to `hook`, retrying failures the policy did not refuse.
async fn deliver(client: &HttpClient, hook: &PushConfig, event: &Value) {
    for attempt in 0..=RETRIES.len() {
        let mut request = client.post(&hook.url).json(event).timeout(POST_TIMEOUT);
        if let Some(token) = &hook.token {
            request = request.header("X-A2A-Notification-Token", token);
        }
        if let Some(auth) = &hook.authentication
            && let Some(credentials) = &auth.credentials
        {
            request = request.header("Authorization", &format!("{} {credentials}", auth.scheme));
        }
        match request.send().await {
            Ok(response) if response.status().is_success() => return,
            Ok(response) => {
                tracing::warn!(status = %response.status(), hook = %hook.id, "a webhook refused a push");
            }
            Err(oscova_core::http::HttpError::Request(error)) => {
                tracing::warn!(%error, hook = %hook.id, "a push failed");
            }
            Err(error) => {
                // The host's policy refused the destination: never retried.
                tracing::warn!(%error, hook = %hook.id, "a push was refused");
                return;
            }
        }
        if let Some(pause) = RETRIES.get(attempt) {
            tokio::time::sleep(*pause).await;
        }
    }
}
