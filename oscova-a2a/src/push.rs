//! Push notifications: a task's status updates POSTed to the client's
//! webhooks.
//!
//! Rules: a client sets a webhook for its own task (another user's task is
//! `TaskNotFound`) with `CreateTaskPushNotificationConfig` or in
//! `SendMessage`'s `configuration.taskPushNotificationConfig`; get, list
//! and delete name the task too. Configs are kept in the task store, beside
//! the tasks and scoped by user as they are (SQLite's
//! `a2a_push_configs`, Postgres's `oscova_a2a_push_configs`), so they
//! outlive a restart and, in a fleet, the instance that runs the task
//! reads the configs set through any other. The config's secrets (the
//! `authentication.credentials` sent as `Authorization`, and the `token`)
//! are kept there as the client gave them (protect the database as the
//! sessions', which hold the conversations), never logged (`Debug` hides
//! them) and never answered: `Create`, `Get` and
//! `ListTaskPushNotificationConfig(s)` return the config without them
//! (the specification does not require them back; a client that needs
//! them kept its own copy).
//!
//! Each `statusUpdate` of the task's run is POSTed as the `StreamResponse`
//! JSON to every webhook the store holds for the task at that moment, in
//! order, one event and one webhook at a time, with `Authorization:
//! <scheme> <credentials>` when the config has `authentication` and
//! `X-A2A-Notification-Token` when it has `token`: up to three attempts
//! (after 200 ms and 1 s) while the webhook fails or answers other than
//! 2xx. The final state of a run (terminal, or `AUTH_REQUIRED`) is owed
//! at least once: the store marks it owed in the same write as the state
//! (only when the task has a webhook), and the mark is cleared once every
//! webhook answered 2xx (or the policy refused it). A mark left behind (a
//! webhook down, a process stopped) is claimed by a sweep: at start (at
//! once when [`fail_unfinished_at_start`](crate::A2aServer::fail_unfinished_at_start)
//! is on, i.e. no other process shares the store; else once the mark is
//! [`CLAIM_LEASE`] old), then every [`SWEEP_EVERY`]; each claim delivers
//! the task's stored state again, at most [`MAX_CLAIMS`] claims per mark.
//! Every POST goes through the host's HTTP client with the `Internet`
//! scope, so a webhook on a loopback, private, link-local or metadata
//! address is refused (never retried) unless the operator allowed that
//! destination (`[network] allow`).
//!
//! Webhooks are bounded ([`Limits`](crate::Limits), as
//! [`PushLimits`]), since each one is a POST of every status update: a
//! task has at most `max_push_configs_per_task` (8 by default), and a
//! user at most `max_push_configs_per_user` (128 by default) on their
//! tasks that have not ended (a task stored in a terminal state is never pushed
//! again, bar a final state still owed; an `INPUT_REQUIRED` or
//! `AUTH_REQUIRED` task has not ended, and its webhooks count until it
//! does or they are deleted). The store checks both in the write that
//! adds one ([`TaskStore::put_push_config`]), so concurrent creates, on
//! any instance of a fleet, cannot pass them; replacing a webhook by its
//! id is always allowed. One more is refused, whether by
//! `CreateTaskPushNotificationConfig` or `SendMessage`'s
//! `configuration.taskPushNotificationConfig`, on either binding, with
//! `UnsupportedOperationError` (-32004, HTTP 400), as this server's
//! other per-user bounds are: the specification names no error of its
//! own for a bound, and this one is "an aspect of the operation not
//! supported" (its section 3.3.2), not a malformed parameter. A
//! `SendMessage` refused so starts no task.

use std::sync::Arc;
use std::time::Duration;

use oscova_core::{HttpClient, NetworkScope};
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::events::status_update;
use crate::model::A2aError;
use crate::model::{PushConfig, TaskState, new_id};
use crate::store::{PushLimits, PushWrite, TaskStore};

/// How long to wait before each retry.
const RETRIES: [Duration; 2] = [Duration::from_millis(200), Duration::from_secs(1)];
/// How long one POST may take.
const POST_TIMEOUT: Duration = Duration::from_secs(10);
/// How old an owed push's claim must be before a sweep takes it over.
pub const CLAIM_LEASE: Duration = Duration::from_secs(120);
/// How often owed pushes are swept.
pub const SWEEP_EVERY: Duration = Duration::from_secs(60);
/// How many sweeps try an owed push before it is given up (and logged).
pub const MAX_CLAIMS: u32 = 5;

/// Whether `state` ends a run: its push is owed at least once.
pub(crate) fn is_final(state: TaskState) -> bool {
    state.is_terminal() || state == TaskState::AuthRequired
}

/// The webhooks' delivery: configs read from the store, POSTs through the
/// host's client.
#[derive(Clone)]
pub(crate) struct Pushes {
    store: Arc<dyn TaskStore>,
    client: HttpClient,
    limits: PushLimits,
}

fn internal(error: impl std::fmt::Display) -> A2aError {
    A2aError::Internal(error.to_string())
}

impl Pushes {
    /// Webhooks kept in `store` within `limits`, called through `client`
    /// (the host's) with the `Internet` scope.
    pub(crate) fn new(client: &HttpClient, store: Arc<dyn TaskStore>, limits: PushLimits) -> Self {
        Self {
            store,
            client: client.with_fixed_scope(NetworkScope::Internet),
            limits,
        }
    }

    /// Checks `config` for the task `task`, giving it an id when it has
    /// none.
    pub(crate) fn check(task: &str, mut config: PushConfig) -> Result<PushConfig, A2aError> {
        let scheme = config.url.split_once("://").map(|(s, _)| s);
        if !matches!(scheme, Some("http" | "https")) {
            return Err(A2aError::InvalidParams("url: an http or https URL".into()));
        }
        if config.id.is_empty() {
            config.id = new_id();
        }
        config.task_id = task.to_owned();
        Ok(config)
    }

    /// Adds (or replaces, by id) a webhook of the task `task` of `user`
    /// (who owns it: the caller checked); answers it redacted.
    pub(crate) async fn set(
        &self,
        user: &str,
        task: &str,
        config: PushConfig,
    ) -> Result<PushConfig, A2aError> {
        let config = Self::check(task, config)?;
        self.add(user, &config).await?;
        Ok(config.redacted())
    }

    /// Writes the checked `config` of `user` within the bounds: the one
    /// write every webhook goes through.
    pub(crate) async fn add(&self, user: &str, config: &PushConfig) -> Result<(), A2aError> {
        let limits = self.limits;
        match self
            .store
            .put_push_config(user, config, limits)
            .await
            .map_err(internal)?
        {
            PushWrite::Written => Ok(()),
            PushWrite::TaskFull => Err(A2aError::UnsupportedOperation(format!(
                "too many push notification configs: at most {} per task; delete one first",
                limits.per_task
            ))),
            PushWrite::UserFull => Err(A2aError::UnsupportedOperation(format!(
                "too many push notification configs: at most {} per user on tasks that have \
                 not ended; delete one first",
                limits.per_user
            ))),
        }
    }

    /// The webhooks of the task, redacted.
    pub(crate) async fn list(&self, user: &str, task: &str) -> Result<Vec<PushConfig>, A2aError> {
        let configs = self
            .store
            .push_configs(user, task)
            .await
            .map_err(internal)?;
        Ok(configs.iter().map(PushConfig::redacted).collect())
    }

    /// Removes the webhook `id`; whether there was one.
    pub(crate) async fn delete(&self, user: &str, task: &str, id: &str) -> Result<bool, A2aError> {
        self.store
            .delete_push_config(user, task, id)
            .await
            .map_err(internal)
    }

    /// Delivers the status updates of `events` (the task's run) to the
    /// task's webhooks, in order, until the run's final one.
    pub(crate) fn forward(&self, user: &str, task: &str, mut events: broadcast::Receiver<Value>) {
        let pushes = self.clone();
        let (user, task) = (user.to_owned(), task.to_owned());
        tokio::spawn(async move {
            loop {
                let event = match events.recv().await {
                    Ok(event) => event,
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                let Some(state) = event["statusUpdate"]["status"]["state"]
                    .as_str()
                    .and_then(TaskState::parse)
                else {
                    continue;
                };
                let owed = if is_final(state) { Owed::Run } else { Owed::No };
                pushes.push(&user, &task, &event, owed).await;
                if is_final(state) {
                    return;
                }
            }
        });
    }

    /// POSTs `event` to the task's webhooks; for a final state, clears
    /// the owed mark once every webhook took it (see [`Owed`]).
    async fn push(&self, user: &str, task: &str, event: &Value, owed: Owed) {
        let hooks = match self.store.push_configs(user, task).await {
            Ok(hooks) => hooks,
            Err(error) => {
                tracing::warn!(%error, task, "reading a task's webhooks failed");
                return;
            }
        };
        let mut all = true;
        for hook in &hooks {
            all &= deliver(&self.client, hook, event).await;
        }
        let clear = match owed {
            Owed::No => false,
            // The mark was written with the state only if the task had
            // webhooks then: with none now there is nothing to clear (a
            // mark left by a webhook deleted since is the sweep's).
            Owed::Run => all && !hooks.is_empty(),
            Owed::Swept => all,
        };
        if clear && let Err(error) = self.store.push_delivered(user, task).await {
            tracing::warn!(%error, task, "clearing a delivered push failed");
        }
    }

    /// Sweeps owed pushes now (taking over claims older than `first`),
    /// then every [`SWEEP_EVERY`] (older than [`CLAIM_LEASE`]), until
    /// `cancel`.
    pub(crate) fn sweep(&self, first: Duration, cancel: CancellationToken) {
        let pushes = self.clone();
        tokio::spawn(async move {
            let mut stale = first;
            loop {
                pushes.sweep_once(stale).await;
                stale = CLAIM_LEASE;
                tokio::select! {
                    () = cancel.cancelled() => return,
                    () = tokio::time::sleep(SWEEP_EVERY) => {}
                }
            }
        });
    }

    async fn sweep_once(&self, stale: Duration) {
        let owed = match self.store.claim_owed_pushes(stale, MAX_CLAIMS).await {
            Ok(owed) => owed,
            Err(error) => {
                tracing::warn!(%error, "claiming owed pushes failed");
                return;
            }
        };
        for (user, task) in owed {
            match self.store.get(&user, &task).await {
                Ok(Some(stored)) if is_final(stored.status.state) => {
                    self.push(&user, &task, &status_update(&stored), Owed::Swept)
                        .await;
                }
                // Gone, or running again: its next final state is owed instead.
                Ok(_) => {
                    let _ = self.store.push_delivered(&user, &task).await;
                }
                Err(error) => tracing::warn!(%error, %task, "reading an owed task failed"),
            }
        }
    }
}

/// Whether a push carries a final state whose owed mark it clears.
#[derive(Debug, Clone, Copy)]
enum Owed {
    /// Not a final state: no mark.
    No,
    /// A run's final state, just written with its mark.
    Run,
    /// A final state the sweep claimed.
    Swept,
}

/// POSTs `event` to `hook`, retrying failures the policy did not refuse;
/// whether it is done with (taken, or refused for good).
async fn deliver(client: &HttpClient, hook: &PushConfig, event: &Value) -> bool {
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
            Ok(response) if response.status().is_success() => return true,
            Ok(response) => {
                tracing::warn!(status = %response.status(), hook = %hook.id, "a webhook refused a push");
            }
            Err(oscova_core::http::HttpError::Request(error)) => {
                tracing::warn!(%error, hook = %hook.id, "a push failed");
            }
            Err(error) => {
                // The host's policy refused the destination: never retried.
                tracing::warn!(%error, hook = %hook.id, "a push was refused");
                return true;
            }
        }
        if let Some(pause) = RETRIES.get(attempt) {
            tokio::time::sleep(*pause).await;
        }
    }
    false
}
