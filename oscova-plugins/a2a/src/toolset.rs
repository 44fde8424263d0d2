//! The `a2a` toolset: `agents`, `send`, `status`, `cancel`.
//!
//! Rules, in the order a call meets them, each before any connection:
//! the agent must be configured; with `offline`, its URL must name this
//! machine ([`is_local_endpoint`](oscova_core::locality::is_local_endpoint), the rule model and speech endpoints
//! follow); a `send` made while handling an inbound message that has
//! already made `max_hops` hops is refused (`hops.rs`); a credential the
//! user has not set is an error result naming it and where to set it
//! ([`ToolResult::missing_credential`], the core convention). Then the card is fetched
//! (without credentials) and its interface checked (`card.rs`), and the
//! request sent with the user's credential headers (`peer.rs`). `send`
//! follows a running task by streaming when the card says the agent
//! streams (`stream.rs`), else by polling `GetTask` (quickly at first,
//! then every 2 s), until it settles, the wait (`[a2a] wait_secs`, lowered by
//! the call's `wait_secs`) runs out, or the call is cancelled; then it
//! returns the task's id and state. A task still running when a call
//! returns is kept in the user's pending list (`pending.rs`, when the host
//! set `pending_dir`) with the session whose call sent it (the host's
//! `CallOrigin`), which `status` without a task id polls and a host's
//! follower (`follow.rs`) delivers to. With the host's `push_url` and an
//! agent whose card offers push notifications, `send` asks the agent to
//! POST the task's updates to `{push_url}/a2a/followups/{id}` with a
//! random token, both kept in the entry. Files are attached by
//! `outgoing.rs`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use oscova_a2a::model::{AgentCard, AgentSkill, FOLLOWUPS_PATH, Message, Method, Part, PushConfig};
use oscova_core::prelude::*;
use oscova_core::serde_json::{Value, json};
use oscova_core::tool::call_origin;

use crate::card::{Binding, NoInterface, interface};
use crate::hops::{HOPS_KEY, inbound_hops};
use crate::outgoing::{attachments, random_hex};
use crate::peer::Peer;
use crate::pending::{PendingStore, PendingTask};
use crate::stream;
use crate::task::{is_running, send_result, state, task_result};
use crate::{A2aConfig, AgentConfig, ClientError};

/// The longest pause between two polls of a running task.
const MAX_POLL_GAP: Duration = Duration::from_secs(2);

/// One agent's credential headers for one user, or the (header, key)
/// pairs the user has not set.
type AgentCredentials = Result<Vec<(String, SecretString)>, Vec<(String, String)>>;

/// A2A tools for one user.
pub struct A2aToolset {
    config: Arc<A2aConfig>,
    http: HttpClient,
    /// Per agent: the credential headers, or the keys the user has not set.
    credentials: BTreeMap<String, AgentCredentials>,
    user: String,
    files_root: Option<PathBuf>,
    pending: Option<PendingStore>,
}

impl std::fmt::Debug for A2aToolset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aToolset")
            .field("agents", &self.config.agents.keys().collect::<Vec<_>>())
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

/// An agent ready to be called: its card read, its interface chosen.
pub(crate) struct Ready<'a> {
    pub(crate) peer: Peer<'a>,
    pub(crate) binding: Binding,
    pub(crate) url: String,
    pub(crate) card: AgentCard,
}

impl A2aToolset {
    /// The toolset of the user of `ctx`, over `config`.
    pub fn new(ctx: &AgentPluginContext, config: Arc<A2aConfig>) -> Self {
        let credentials = config
            .agents
            .iter()
            .map(|(name, agent)| {
                let mut found = Vec::new();
                let mut missing = Vec::new();
                for (header, key) in &agent.credential_header {
                    match ctx.credentials().get(key) {
                        Some(secret) => found.push((header.clone(), secret)),
                        None => missing.push((header.clone(), key.clone())),
                    }
                }
                let entry = if missing.is_empty() {
                    Ok(found)
                } else {
                    Err(missing)
                };
                (name.clone(), entry)
            })
            .collect();
        let pending = config
            .pending_dir
            .as_deref()
            .and_then(|dir| PendingStore::new(dir, ctx.user_id()));
        Self {
            config,
            pending,
            http: ctx.http_client(),
            credentials,
            user: ctx.user_id().to_owned(),
            files_root: ctx.files_root().map(PathBuf::from),
        }
    }

    fn agent(&self, name: &str) -> Result<&AgentConfig, ClientError> {
        self.config.agent(name)
    }

    /// The error result for credentials `name` needs and the user has
    /// not set, if any.
    fn missing(&self, name: &str) -> Option<ToolResult> {
        let Some(Err(missing)) = self.credentials.get(name) else {
            return None;
        };
        let needs = missing
            .iter()
            .map(|(header, key)| format!("`{key}` (for the `{header}` header)"))
            .collect::<Vec<_>>()
            .join(", ");
        let keys: Vec<&String> = missing.iter().map(|(_, key)| key).collect();
        let message = format!(
            "A2A agent `{name}` needs the credential {needs}, which is not set for user `{}`; \
             the user must set it (oscova: under `[users.{}.credentials]` in the config \
             file), and until then this agent cannot be called for them; no connection was made",
            self.user,
            toml_key(&self.user),
        );
        let mut result = ToolResult::missing_credential(message, keys);
        result.details["agent"] = json!(name);
        Some(result)
    }

    /// The agent's card read and its interface chosen.
    async fn ready<'a>(
        &'a self,
        name: &'a str,
        agent: &'a AgentConfig,
        headers: &'a [(String, SecretString)],
        cancel: &'a CancellationToken,
    ) -> Result<Ready<'a>, ClientError> {
        connect(&self.http, name, agent, headers, cancel).await
    }
}

/// Agent `name` (configured as `agent`) with its card read and its
/// interface chosen, reached through `http` with `headers`.
pub(crate) async fn connect<'a>(
    http: &HttpClient,
    name: &'a str,
    agent: &'a AgentConfig,
    headers: &'a [(String, SecretString)],
    cancel: &'a CancellationToken,
) -> Result<Ready<'a>, ClientError> {
    let peer = Peer {
        name,
        http: http.for_endpoint(agent.url.trim(), None),
        headers,
        timeout: agent.timeout(),
        cancel,
    };
    let card = peer.card(&agent.url).await?;
    let (binding, url) = interface(&card, &agent.url).map_err(|e| ClientError::Interface {
        agent: name.to_owned(),
        reason: match e {
            NoInterface::Unsupported(offered) => format!(
                "its card offers no A2A 1.0 JSONRPC or HTTP+JSON interface (it offers: {})",
                offered.join(", ")
            ),
            NoInterface::Elsewhere(url) => format!(
                "its card names the interface `{url}`, which is not on the configured \
                     URL's scheme, host and port (`{}`); refused, so a card cannot send the \
                     user's credential elsewhere (configure that URL as the agent's `url`)",
                agent.url.trim()
            ),
        },
    })?;
    Ok(Ready {
        peer,
        binding,
        url,
        card,
    })
}

/// A skill as `agents` shows it: its tags and examples only when it has
/// some.
fn skill_details(skill: &AgentSkill) -> Value {
    let mut details = json!({
        "id": skill.id,
        "name": skill.name,
        "description": skill.description,
    });
    if !skill.tags.is_empty() {
        details["tags"] = json!(skill.tags);
    }
    if !skill.examples.is_empty() {
        details["examples"] = json!(skill.examples);
    }
    details
}

/// The credential headers of `name` (known to be set).
fn headers_of<'a>(
    credentials: &'a BTreeMap<String, AgentCredentials>,
    name: &str,
) -> &'a [(String, SecretString)] {
    match credentials.get(name) {
        Some(Ok(found)) => found,
        _ => &[],
    }
}

#[toolset]
impl A2aToolset {
    /// Lists the A2A agents this host can call, with what each says it
    /// does (its card's description and skills).
    #[tool(network = Internet, read_only)]
    pub async fn agents(&self, invocation: &ToolInvocation) -> Result<ToolResult, ClientError> {
        let cancel = invocation.cancellation_token();
        let mut lines = Vec::new();
        let mut list = Vec::new();
        for name in self.config.agents.keys() {
            let entry = match self.agent(name) {
                Err(e) => Err(e),
                Ok(agent) => self.ready(name, agent, &[], cancel).await,
            };
            match entry {
                Ok(ready) => {
                    let card = &ready.card;
                    lines.push(format!("- `{name}`: {} ({})", card.name, card.description));
                    for skill in &card.skills {
                        lines.push(format!("  - skill `{}`: {}", skill.id, skill.description));
                    }
                    list.push(json!({
                        "agent": name,
                        "name": card.name,
                        "description": card.description,
                        "version": card.version,
                        "binding": ready.binding.name(),
                        "skills": card.skills.iter().map(skill_details).collect::<Vec<_>>(),
                    }));
                }
                Err(ClientError::Cancelled) => return Err(ClientError::Cancelled),
                Err(e) => {
                    lines.push(format!("- `{name}`: unavailable: {e}"));
                    list.push(json!({"agent": name, "error": e.to_string()}));
                }
            }
        }
        Ok(ToolResult::text(lines.join("\n")).with_details(json!({ "agents": list })))
    }

    /// Sends a message to an A2A agent and returns its answer; when the
    /// agent works on it longer than the wait, returns the task's id and
    /// state (then use `status` or `cancel`).
    #[tool(network = Internet)]
    #[allow(clippy::too_many_arguments)]
    pub async fn send(
        &self,
        /// The agent's name, as `agents` lists it.
        agent: String,
        /// The message.
        message: String,
        /// Continue this conversation (a `context_id` from an earlier result).
        context_id: Option<String>,
        /// Answer this task (one waiting for input).
        task_id: Option<String>,
        /// Paths of files in the user's files root to attach.
        files: Option<Vec<String>>,
        /// Wait at most this many seconds for a running task (0: do not
        /// wait; the host sets the default and the maximum).
        wait_secs: Option<f64>,
        invocation: &ToolInvocation,
    ) -> Result<ToolResult, ClientError> {
        let config = self.agent(&agent)?;
        let inbound = inbound_hops();
        if inbound >= self.config.max_hops {
            return Err(ClientError::HopLimit {
                hops: inbound,
                max: self.config.max_hops,
            });
        }
        if let Some(missing) = self.missing(&agent) {
            return Ok(missing);
        }
        let wait = match wait_secs {
            Some(s) if !(s.is_finite() && s >= 0.0) => {
                return Err(ClientError::BadArgument(
                    "`wait_secs` must be a number of seconds, 0 or more".to_owned(),
                ));
            }
            Some(s) => Duration::try_from_secs_f64(s)
                .map_or(self.config.wait(), |d| d.min(self.config.wait())),
            None => self.config.wait(),
        };
        let mut parts = vec![Part::text(message)];
        parts.extend(attachments(
            self.files_root.as_deref(),
            files.as_deref().unwrap_or_default(),
        )?);
        let mut outgoing = Message::user(parts);
        outgoing.metadata = Some(json!({ HOPS_KEY: inbound.saturating_add(1) }));
        outgoing.context_id = context_id;
        outgoing.task_id = task_id;
        let cancel = invocation.cancellation_token();
        let headers = headers_of(&self.credentials, &agent);
        let ready = self.ready(&agent, config, headers, cancel).await?;
        let mut params = json!({
            "message": outgoing,
            "configuration": { "returnImmediately": true },
        });
        // A host that serves the follow-up route asks for the task's
        // updates there; a random id names the webhook, a random token
        // (kept with the pending entry) proves a call is the agent's.
        let push = self
            .config
            .push_url
            .as_deref()
            .filter(|_| ready.card.capabilities.push_notifications && self.pending.is_some())
            .and_then(|base| Some((base, random_hex(16)?, random_hex(32)?)));
        let push = push.map(|(base, id, token)| {
            let url = format!("{}{FOLLOWUPS_PATH}{id}", base.trim_end_matches('/'));
            let config = PushConfig::new(url).with_token(token.clone());
            params["configuration"]["taskPushNotificationConfig"] = json!(config);
            (id, token)
        });
        // The wait counts from here, whether the stream or polls use it.
        let started = Instant::now();
        let streams = ready.card.capabilities.streaming && !wait.is_zero();
        let answer = if streams {
            stream::send(&ready.peer, ready.binding, &ready.url, params, wait).await?
        } else {
            ready
                .peer
                .call(ready.binding, &ready.url, Method::SendMessage, params)
                .await?
        };
        let Some(task) = answer.get("task") else {
            return send_result(&agent, &answer).ok_or_else(|| ClientError::BadAnswer {
                agent: agent.clone(),
                reason: "a SendMessage result with neither `task` nor `message`".to_owned(),
            });
        };
        let mut task = task.clone();
        let mut gap = Duration::from_millis(100);
        while is_running(state(&task)) && started.elapsed() < wait {
            let pause = gap.min(wait.saturating_sub(started.elapsed()));
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(ClientError::Cancelled),
                () = tokio::time::sleep(pause) => {}
            }
            gap = (gap * 2).min(MAX_POLL_GAP);
            let id = task.get("id").cloned().unwrap_or(Value::Null);
            task = ready
                .peer
                .call(
                    ready.binding,
                    &ready.url,
                    Method::GetTask,
                    json!({ "id": id }),
                )
                .await?;
            invocation.report(ToolProgress::message(format!(
                "task of `{agent}`: {}",
                state(&task)
            )));
        }
        let mut result = task_result(&agent, &task);
        if let Some(details) = result.details.as_object_mut() {
            let how = if streams { "stream" } else { "poll" };
            details.insert("followed_by".to_owned(), Value::from(how));
            if push.is_some() {
                details.insert("push".to_owned(), Value::Bool(true));
            }
        }
        Ok(self.remember(&agent, &task, result, push))
    }

    /// The state of a task an agent is working on, and its result once it
    /// has one. Without `task_id`: every task still pending for this user
    /// (of `agent`, when given), each polled once; finished ones give
    /// their results and leave the list.
    #[tool(network = Internet)]
    pub async fn status(
        &self,
        /// The agent's name (needed with `task_id`).
        agent: Option<String>,
        /// The task's id, from `send`.
        task_id: Option<String>,
        invocation: &ToolInvocation<'_>,
    ) -> Result<ToolResult, ClientError> {
        match (agent, task_id) {
            (Some(agent), Some(id)) => {
                self.task_call(&agent, id, Method::GetTask, invocation)
                    .await
            }
            (None, Some(_)) => Err(ClientError::BadArgument(
                "`task_id` needs the `agent` it belongs to".to_owned(),
            )),
            (agent, None) => self.pending_status(agent.as_deref(), invocation).await,
        }
    }

    /// Asks an agent to stop working on a task.
    #[tool(network = Internet, destructive)]
    pub async fn cancel(
        &self,
        /// The agent's name.
        agent: String,
        /// The task's id, from `send`.
        task_id: String,
        invocation: &ToolInvocation,
    ) -> Result<ToolResult, ClientError> {
        self.task_call(&agent, task_id, Method::CancelTask, invocation)
            .await
    }
}

impl A2aToolset {
    async fn task_call(
        &self,
        agent: &str,
        task_id: String,
        method: Method,
        invocation: &ToolInvocation<'_>,
    ) -> Result<ToolResult, ClientError> {
        let config = self.agent(agent)?;
        if let Some(missing) = self.missing(agent) {
            return Ok(missing);
        }
        let cancel = invocation.cancellation_token();
        let headers = headers_of(&self.credentials, agent);
        let ready = self.ready(agent, config, headers, cancel).await?;
        let task = ready
            .peer
            .call(ready.binding, &ready.url, method, json!({ "id": task_id }))
            .await?;
        Ok(self.remember(agent, &task, task_result(agent, &task), None))
    }

    /// Keeps the pending list in step with `task`: recorded while it runs,
    /// forgotten once it does not. A list that cannot be written is said
    /// in the result's details, and the result stands.
    fn remember(
        &self,
        agent: &str,
        task: &Value,
        mut result: ToolResult,
        push: Option<(String, String)>,
    ) -> ToolResult {
        let Some(store) = &self.pending else {
            return result;
        };
        let id = task.get("id").and_then(Value::as_str).unwrap_or_default();
        let state = state(task);
        let written = if is_running(state) {
            store.put(PendingTask {
                agent: agent.to_owned(),
                task_id: id.to_owned(),
                context_id: task
                    .get("contextId")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                state: state.to_owned(),
                session: call_origin().map(|o| o.session).unwrap_or_default(),
                push_id: push.as_ref().map(|p| p.0.clone()).unwrap_or_default(),
                push_token: push.map(|p| p.1).unwrap_or_default(),
            })
        } else {
            store.remove(agent, id)
        };
        if let (Err(e), Some(details)) = (written, result.details.as_object_mut()) {
            details.insert("pending_error".to_owned(), Value::String(e));
        }
        result
    }

    /// `status` without a task id: each pending task polled once.
    async fn pending_status(
        &self,
        agent: Option<&str>,
        invocation: &ToolInvocation<'_>,
    ) -> Result<ToolResult, ClientError> {
        let Some(store) = &self.pending else {
            return Err(ClientError::BadArgument(
                "this host keeps no list of pending tasks; give `agent` and `task_id`".to_owned(),
            ));
        };
        let tasks = store.list().map_err(ClientError::BadArgument)?;
        let mut lines = Vec::new();
        let mut all = Vec::new();
        for task in tasks.iter().filter(|t| agent.is_none_or(|a| a == t.agent)) {
            let polled = self
                .task_call(
                    &task.agent,
                    task.task_id.clone(),
                    Method::GetTask,
                    invocation,
                )
                .await;
            let result = match polled {
                Ok(result) => result,
                Err(ClientError::Cancelled) => return Err(ClientError::Cancelled),
                Err(e) => ToolResult::error(e.to_string()).with_details(json!({
                    "agent": task.agent, "task_id": task.task_id, "state": task.state,
                })),
            };
            lines.push(format!(
                "`{}` task `{}`: {}",
                task.agent, task.task_id, result.content
            ));
            all.push(result.details);
        }
        if lines.is_empty() {
            lines.push("no A2A task is pending for this user".to_owned());
        }
        Ok(ToolResult::text(lines.join("\n\n")).with_details(json!({ "tasks": all })))
    }
}

/// `key` as a TOML table key: bare when it can be, else quoted.
fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_owned()
    } else {
        Value::from(key).to_string()
    }
}
