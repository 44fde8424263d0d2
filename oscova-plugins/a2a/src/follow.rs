//! The follower: long A2A tasks followed to their end and their results
//! delivered, as a follow-up message, to the session that asked. Host
//! work: the plugin contract gives plugins no background work, so this
//! crate offers the follower as a library and a host runs it
//! ([`Follower::run`]) beside its sessions (`oscova chat`, `oscova serve`).
//!
//! Rules:
//!
//! - **What is followed**: the entries of every user's pending list under
//!   [`A2aConfig::pending_dir`] that name a session (the `send` call's
//!   `oscova_core::tool::CallOrigin`); others are left to the `status`
//!   tool. A new follower reads the files and resumes, so a restart
//!   between `send` and the task's end still delivers.
//! - **How**: when the agent's card says it streams, the follower
//!   subscribes to the task (`SubscribeToTask`, `stream.rs`) and waits on
//!   its events for at most [`FollowLimits::stream_wait`]; a task that
//!   settles there (or a subscription refused) is then read by `GetTask`,
//!   so the result is the whole task. Otherwise `GetTask` polls, the gap doubling from
//!   [`FollowLimits::min_gap`] to [`FollowLimits::max_gap`];
//!   [`Follower::wake`] polls at once. A task the agent was asked to push
//!   (its entry has a webhook id and token, `A2aConfig::push_url`) is
//!   polled when first seen, then when its webhook arrives
//!   ([`Follower::webhook`]: the id must name a pending task and the
//!   token must be that task's, else the call is refused and nothing is
//!   polled; the body is never read, the task is fetched by `GetTask`),
//!   and otherwise only every [`FollowLimits::push_poll`]. A webhook call
//!   is checked against an index in memory (webhook id to its token),
//!   rebuilt by each read of the lists, never against the lists: a call
//!   that has not proved itself reads no file and costs one lookup and
//!   one constant-time comparison (`subtle`), whatever the number of
//!   users and tasks. A webhook that arrives before the follower's next
//!   read of the lists has seen its task is refused, and loses nothing:
//!   that read polls the task, first seen, anyway. The
//!   requests are the tools' (`peer.rs`): the card's interface on the
//!   configured origin, the user's credential headers from the host's
//!   resolver, the agent's timeout, the offline rule checked before any
//!   connection. Following sends no message, so it makes no hop.
//! - **When**: a task that reaches a final state (completed, failed,
//!   canceled, rejected) or needs input or auth is handed to the host's
//!   callback (`deliver(user, session, FollowUpMessage)`); the entry
//!   leaves the list only after the callback succeeded. Delivery is at
//!   least once: a crash between the callback and the list's write
//!   delivers the result again after the restart. An agent that no longer
//!   knows the task (`TaskNotFoundError`), an agent no longer configured,
//!   or one the offline rule refuses is delivered as such and forgotten.
//! - **Bounds**: at most [`FollowLimits::max_tasks`] tasks followed at
//!   once; an agent that fails [`FollowLimits::max_failures`] times in a
//!   row (unreachable, a credential not set, a refused callback) is left
//!   for [`FollowLimits::park`] before it is tried again; the lists are
//!   read again every [`FollowLimits::scan_every`].

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oscova_a2a::model::{A2aError, Method};
use oscova_core::context::CredentialResolver;
use oscova_core::{CancellationToken, HttpClient, SecretString, UserInfo};
use serde_json::{Value, json};

use crate::pending::{PendingStore, PendingTask};
use crate::stream;
use crate::task::{is_running, state, task_result};
use crate::toolset::connect;
use crate::{A2aConfig, ClientError};

/// A task's result, for the session that sent it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FollowUpMessage {
    /// The agent's configured name.
    pub agent: String,
    /// The task.
    pub task_id: String,
    /// Its context (empty when unknown).
    pub context_id: String,
    /// Its last state (`TASK_STATE_COMPLETED`, ...), or `UNREACHABLE`
    /// when it could not be followed.
    pub state: String,
    /// The text for the model: the artifacts' text, or the state and the
    /// status message.
    pub text: String,
    /// Whether the task failed, was rejected or could not be followed.
    pub is_error: bool,
    /// The tool-result details of the task (as `status` gives them).
    pub details: Value,
}

impl FollowUpMessage {
    /// The custom type a host stores it under.
    pub const CUSTOM_TYPE: &'static str = "oscova.a2a.follow_up";

    /// The message as the model reads it: which task, then its text.
    pub fn content(&self) -> String {
        format!(
            "A2A agent `{}` finished task `{}` ({}):\n{}",
            self.agent, self.task_id, self.state, self.text
        )
    }
}

/// The future of a delivery.
pub type DeliverFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// The host's callback: `(user, session, message)`; `Err` says why it
/// could not be delivered (the task is then tried again later).
pub type Deliver = Arc<dyn Fn(String, String, FollowUpMessage) -> DeliverFuture + Send + Sync>;

/// The follower's bounds (see the module rules).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FollowLimits {
    /// The most tasks followed at once (default 16).
    pub max_tasks: usize,
    /// The first gap between two polls of a task (default 500 ms).
    pub min_gap: Duration,
    /// The longest gap (default 10 s).
    pub max_gap: Duration,
    /// Failures in a row before a task is parked (default 8).
    pub max_failures: u32,
    /// How long a parked task waits (default 5 min).
    pub park: Duration,
    /// How often the lists are read again (default 5 s).
    pub scan_every: Duration,
    /// The gap between polls of a task the agent pushes (default 5 min).
    pub push_poll: Duration,
    /// How long one subscription to a streaming agent's task is held
    /// (default 5 min).
    pub stream_wait: Duration,
}

impl Default for FollowLimits {
    fn default() -> Self {
        Self {
            max_tasks: 16,
            min_gap: Duration::from_millis(500),
            max_gap: Duration::from_secs(10),
            max_failures: 8,
            park: Duration::from_secs(300),
            scan_every: Duration::from_secs(5),
            push_poll: Duration::from_secs(300),
            stream_wait: Duration::from_secs(300),
        }
    }
}

/// Why a push webhook call was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookRefused {
    /// No pending task has this webhook id.
    #[error("no pending task has this webhook")]
    Unknown,
    /// The token is missing or not the task's.
    #[error("the webhook's token is missing or wrong")]
    Forged,
}

/// Why a follower cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FollowError {
    /// The configuration keeps no pending list.
    #[error("`a2a.pending_dir` is not set: there is no list of pending tasks to follow")]
    NoPendingDir,
}

type Key = (String, String, String);

struct Inner {
    config: Arc<A2aConfig>,
    dir: PathBuf,
    http: HttpClient,
    credentials: Arc<dyn CredentialResolver>,
    deliver: Deliver,
    limits: FollowLimits,
    wake: tokio::sync::Notify,
    /// How many wakes so far: a wake during a poll is not missed.
    wakes: AtomicU64,
    following: Mutex<HashSet<Key>>,
    parked: Mutex<HashMap<Key, Instant>>,
    /// The pending tasks' webhooks, by id: their token. Rebuilt by each
    /// scan, so a webhook call reads no list.
    webhooks: Mutex<HashMap<String, String>>,
}

/// Follows the pending tasks of every user and delivers their results;
/// run by a host (see the module rules). Cheap to clone.
///
/// ```no_run
/// # async fn demo(config: oscova_plugin_a2a::A2aConfig, host: oscova_core::PluginHost) -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use oscova_core::CancellationToken;
/// use oscova_core::context::NoCredentials;
/// use oscova_plugin_a2a::follow::{Follower, FollowUpMessage};
///
/// let follower = Follower::new(
///     config,
///     host.http_client(),
///     Arc::new(NoCredentials),
///     |user: String, session: String, message: FollowUpMessage| async move {
///         println!("for {user} in {session}: {}", message.content());
///         Ok(())
///     },
/// )?;
/// tokio::spawn(follower.clone().run(CancellationToken::new()));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Follower {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower")
            .field("dir", &self.inner.dir)
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}

impl Follower {
    /// A follower of the tasks kept under `config`'s `pending_dir`,
    /// reaching agents through `http` (the host's client) with the
    /// credentials `credentials` resolves for each user, and handing
    /// results to `deliver`.
    pub fn new<F, Fut>(
        config: impl Into<Arc<A2aConfig>>,
        http: HttpClient,
        credentials: Arc<dyn CredentialResolver>,
        deliver: F,
    ) -> Result<Self, FollowError>
    where
        F: Fn(String, String, FollowUpMessage) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        let config: Arc<A2aConfig> = config.into();
        let dir = config
            .pending_dir
            .clone()
            .ok_or(FollowError::NoPendingDir)?;
        let deliver: Deliver = Arc::new(move |user, session, message| {
            Box::pin(deliver(user, session, message)) as DeliverFuture
        });
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                dir,
                http,
                credentials,
                deliver,
                limits: FollowLimits::default(),
                wake: tokio::sync::Notify::new(),
                wakes: AtomicU64::new(0),
                following: Mutex::default(),
                parked: Mutex::default(),
                webhooks: Mutex::default(),
            }),
        })
    }

    /// The same follower with `limits` (before it runs).
    pub fn with_limits(self, limits: FollowLimits) -> Self {
        match Arc::try_unwrap(self.inner) {
            Ok(mut inner) => {
                inner.limits = limits;
                Self {
                    inner: Arc::new(inner),
                }
            }
            Err(inner) => Self { inner },
        }
    }

    /// Reads the lists and polls every followed task now (a push
    /// webhook arrived, or a `send` just recorded a task).
    pub fn wake(&self) {
        self.inner.wakes.fetch_add(1, Ordering::SeqCst);
        self.inner.wake.notify_waiters();
    }

    /// A push webhook call for the webhook `id` (the route's last path
    /// segment) with `token` (the `X-A2A-Notification-Token` header):
    /// polls the task at once when both are a pending task's, else
    /// refuses. The call's body is not needed: the task is fetched. The
    /// id is looked up in the follower's index of webhooks (built by its
    /// reads of the lists, see the module rules) and the token compared
    /// in constant time: no list is read for the call. A host answers
    /// both refusals alike (`oscova serve`: 401).
    pub fn webhook(&self, id: &str, token: Option<&str>) -> Result<(), WebhookRefused> {
        let proved = {
            let webhooks = lock(&self.inner.webhooks);
            let expected = webhooks.get(id).ok_or(WebhookRefused::Unknown)?;
            token.is_some_and(|token| same(token.as_bytes(), expected.as_bytes()))
        };
        if !proved {
            return Err(WebhookRefused::Forged);
        }
        self.wake();
        Ok(())
    }

    /// Follows until `cancel` is cancelled.
    pub async fn run(self, cancel: CancellationToken) {
        let mut running = tokio::task::JoinSet::new();
        loop {
            self.scan(&mut running, &cancel);
            tokio::select! {
                biased;
                () = cancel.cancelled() => break,
                Some(_) = running.join_next(), if !running.is_empty() => {}
                () = self.inner.wake.notified() => {}
                () = tokio::time::sleep(self.inner.limits.scan_every) => {}
            }
        }
        running.abort_all();
    }

    /// Starts following each listed task not followed yet, up to the bound.
    fn scan(&self, running: &mut tokio::task::JoinSet<()>, cancel: &CancellationToken) {
        let inner = &self.inner;
        let now = Instant::now();
        lock(&inner.parked).retain(|_, until| *until > now);
        let mut webhooks = HashMap::new();
        for (user, store) in PendingStore::all(&inner.dir) {
            let Ok(tasks) = store.list() else { continue };
            for task in tasks
                .iter()
                .filter(|t| !t.push_id.is_empty() && !t.push_token.is_empty())
            {
                webhooks.insert(task.push_id.clone(), task.push_token.clone());
            }
            for task in tasks.into_iter().filter(|t| !t.session.is_empty()) {
                let key = (user.clone(), task.agent.clone(), task.task_id.clone());
                if lock(&inner.parked).contains_key(&key) {
                    continue;
                }
                {
                    let mut following = lock(&inner.following);
                    if following.len() >= inner.limits.max_tasks || following.contains(&key) {
                        continue;
                    }
                    following.insert(key.clone());
                }
                let inner = inner.clone();
                let store = store.clone();
                let cancel = cancel.child_token();
                let user = user.clone();
                running.spawn(async move {
                    let parked = follow(&inner, &user, &store, &task, &cancel).await;
                    if parked {
                        let until = Instant::now() + inner.limits.park;
                        lock(&inner.parked).insert(key.clone(), until);
                    }
                    lock(&inner.following).remove(&key);
                });
            }
        }
        *lock(&inner.webhooks) = webhooks;
    }
}

/// Whether `a` and `b` are equal, in time that does not depend on where
/// they differ (`subtle`; only a length difference shows, and every
/// token this crate makes has one length).
fn same(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    bool::from(a.ct_eq(b))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What one poll found.
enum Found {
    /// Still running.
    Running,
    /// Done, with the message to deliver.
    Done(FollowUpMessage),
}

/// Follows `task` of `user` until it is delivered (`false`), cancelled
/// (`false`), or parked after too many failures (`true`).
async fn follow(
    inner: &Inner,
    user: &str,
    store: &PendingStore,
    task: &PendingTask,
    cancel: &CancellationToken,
) -> bool {
    let limits = &inner.limits;
    let mut gap = limits.min_gap;
    let mut failures = 0;
    loop {
        let seen = inner.wakes.load(Ordering::SeqCst);
        let found = match poll(inner, user, task, cancel).await {
            Ok(found) => found,
            Err(ClientError::Cancelled) => return false,
            Err(e) => match final_error(task, &e) {
                Some(message) => Found::Done(message),
                None => {
                    tracing::debug!(agent = %task.agent, task = %task.task_id, error = %e, "following an A2A task failed");
                    failures += 1;
                    Found::Running
                }
            },
        };
        if let Found::Done(message) = found {
            let delivered = (inner.deliver)(user.to_owned(), task.session.clone(), message).await;
            match delivered {
                Ok(()) => {
                    if let Err(e) = store.remove(&task.agent, &task.task_id) {
                        tracing::warn!(error = %e, "a delivered A2A task stays in its list");
                    }
                    lock(&inner.webhooks).remove(&task.push_id);
                    return false;
                }
                Err(e) => {
                    tracing::warn!(session = %task.session, error = %e, "delivering an A2A result failed");
                    failures += 1;
                }
            }
        }
        if failures >= limits.max_failures {
            return true;
        }
        // A pushed task waits for its webhook (a failure still backs off).
        if !task.push_id.is_empty() && failures == 0 {
            gap = limits.push_poll;
        }
        let woken = inner.wake.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        if inner.wakes.load(Ordering::SeqCst) != seen {
            // Woken while polling: the news may be newer than the poll.
            gap = limits.min_gap;
            continue;
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => return false,
            () = woken => gap = limits.min_gap,
            () = tokio::time::sleep(gap) => gap = (gap * 2).min(limits.max_gap),
        }
    }
}

/// One `GetTask` of `task`, checked as the tools check a call.
async fn poll(
    inner: &Inner,
    user: &str,
    task: &PendingTask,
    cancel: &CancellationToken,
) -> Result<Found, ClientError> {
    let agent = inner.config.agent(&task.agent)?;
    let who = UserInfo::new(user);
    let mut headers: Vec<(String, SecretString)> = Vec::new();
    for (header, key) in &agent.credential_header {
        match inner.credentials.resolve(&who, key) {
            Some(secret) => headers.push((header.clone(), secret)),
            None => {
                return Err(ClientError::BadArgument(format!(
                    "the credential `{key}` is not set for user `{user}`"
                )));
            }
        }
    }
    let ready = connect(&inner.http, &task.agent, agent, &headers, cancel).await?;
    if ready.card.capabilities.streaming {
        let wait = inner.limits.stream_wait;
        match stream::subscribe(&ready.peer, ready.binding, &ready.url, &task.task_id, wait).await {
            Err(ClientError::Cancelled) => return Err(ClientError::Cancelled),
            Ok(answer) if answer.get("task").is_some_and(|t| is_running(state(t))) => {
                return Ok(Found::Running);
            }
            // Settled, or the subscription was refused (a task that had
            // ended already): `GetTask` says which.
            _ => {}
        }
    }
    let found = ready
        .peer
        .call(
            ready.binding,
            &ready.url,
            Method::GetTask,
            json!({ "id": task.task_id }),
        )
        .await?;
    if is_running(state(&found)) {
        return Ok(Found::Running);
    }
    let result = task_result(&task.agent, &found);
    Ok(Found::Done(FollowUpMessage {
        agent: task.agent.clone(),
        task_id: task.task_id.clone(),
        context_id: found
            .get("contextId")
            .and_then(Value::as_str)
            .unwrap_or(&task.context_id)
            .to_owned(),
        state: state(&found).to_owned(),
        text: result.content,
        is_error: result.is_error,
        details: result.details,
    }))
}

/// The message for an error after which following makes no sense.
fn final_error(task: &PendingTask, error: &ClientError) -> Option<FollowUpMessage> {
    let ends = match error {
        ClientError::Remote { code, .. } => *code == A2aError::TaskNotFound.code(),
        ClientError::UnknownAgent { .. } | ClientError::Offline { .. } => true,
        _ => false,
    };
    ends.then(|| FollowUpMessage {
        agent: task.agent.clone(),
        task_id: task.task_id.clone(),
        context_id: task.context_id.clone(),
        state: "UNREACHABLE".to_owned(),
        text: format!("the task could not be followed: {error}"),
        is_error: true,
        details: json!({
            "agent": task.agent, "task_id": task.task_id, "state": task.state,
            "error": error.to_string(),
        }),
    })
}

#[cfg(test)]
mod tests;
