//! One configured server at run time, and the handler that runs its tools
//! for one user scope.
//!
//! Rules: a shared server has one connection the host owns (the one its
//! catalog was listed on, else one made on the first call); a `per_user`
//! server has one per user scope, made on that user's first call with that
//! user's credentials and dropped (its process killed) with the scope. A
//! connection that died is replaced on the next call, with a diagnostic
//! carrying the redacted stderr tail. Each new connection lists the tools
//! again: a tool whose live definition differs from the published one (the
//! pin, or the listing at start) is refused until it is re-pinned. A
//! scope whose user lacks a credential the server needs never connects:
//! every call returns the error [`MissingCredentials`] words (a
//! [`ToolResult::missing_credential`], the core convention), so the tools
//! stay listed and the person learns what to set.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use oscova_core::args::ArgError;
use oscova_core::process::ProcessSpawnPolicy;
use oscova_core::redact::Redactor;
use oscova_core::runtime::{RuntimeCall, ToolHandler};
use oscova_core::tool::ToolFuture;
use oscova_core::{CancellationToken, ExposeSecret, SecretString, ToolInvocation, ToolResult};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientRequest, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleClient, ServiceError};
use tokio::sync::mpsc;

use crate::changes::{ChangeLog, ChangeRoute};
use crate::config::ServerConfig;
use crate::connect::{ConnectParams, Connection, connect};
use crate::pin::CatalogTool;
use crate::progress::Routes;
use crate::result::call_result;
use crate::status::ServerStatus;

mod task;

/// A configured server, shared by every scope.
pub(crate) struct Server {
    pub(crate) name: String,
    pub(crate) config: ServerConfig,
    /// The published definitions, in publication order.
    pub(crate) catalog: Vec<CatalogTool>,
    /// Whether `catalog` came from a pin (else from the listing at start).
    pub(crate) pinned: bool,
    /// The host's connection to a shared server.
    pub(crate) shared: tokio::sync::Mutex<Slot>,
    pub(crate) status: Arc<ServerStatus>,
    pub(crate) spawn: ProcessSpawnPolicy,
    pub(crate) redactor: Redactor,
    /// `oauth` tokens, by user (the host's for a shared server).
    pub(crate) tokens: Arc<crate::oauth::TokenCache>,
    /// A shared `oauth` server's client credentials: the host's.
    pub(crate) host_oauth: Option<crate::oauth::Credentials>,
    /// Where `grant = "authorization_code"` grants are kept.
    pub(crate) token_store: Option<crate::TokenStore>,
    /// The host's callback for logins by link, if it serves one.
    pub(crate) login_redirect: Option<crate::oauth::user::link::LinkRoutes>,
    /// A shared authorization-code server's flow: the host's grant.
    pub(crate) host_flow: Option<Arc<crate::oauth::user::UserFlow>>,
    /// A confidential `oauth.client_id`'s secret: the host's credential.
    pub(crate) client_secret: Option<SecretString>,
    /// Where its connections' list changes are recorded.
    pub(crate) changes: Arc<ChangeLog>,
    /// Every live scope's handler, by user id: what the host's requests
    /// (`upstream.rs`) go through, so they use that user's connection.
    pub(crate) scopes: std::sync::Mutex<Vec<(String, Weak<ServerHandler>)>>,
}

/// A connection, if there is one, and what it refuses.
#[derive(Default)]
pub(crate) struct Slot {
    pub(crate) conn: Option<Connection>,
    /// Tools whose live definition differs from the published one.
    refused: HashMap<String, String>,
    /// Connections made so far.
    starts: u32,
    /// The outcome of the connection one call is making, which the calls
    /// that find no connection meanwhile wait for (`None` until it is
    /// known; closed if that call gave up).
    connecting: Option<tokio::sync::watch::Receiver<Option<Result<(), String>>>>,
}

impl Slot {
    /// A slot over the connection the catalog was listed on.
    pub(crate) fn with(conn: Connection) -> Self {
        Self {
            conn: Some(conn),
            refused: HashMap::new(),
            starts: 1,
            connecting: None,
        }
    }
}

/// What a call needs from a live connection, taken out of the slot so the
/// slot is not held while the call runs.
pub(crate) struct Live {
    pub(crate) peer: Peer<RoleClient>,
    routes: Routes,
    asks: crate::elicit::Asks,
}

impl Server {
    /// Notes `handler` as the newest of its user's scopes, forgetting the
    /// handlers of scopes that are gone.
    pub(crate) fn register(&self, handler: &Arc<ServerHandler>) {
        let mut scopes = self
            .scopes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        scopes.retain(|(_, weak)| weak.strong_count() > 0);
        scopes.push((handler.user.clone(), Arc::downgrade(handler)));
    }

    /// The handler of `user`'s newest live scope.
    pub(crate) fn handler_of(&self, user: &str) -> Option<Arc<ServerHandler>> {
        let scopes = self
            .scopes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        scopes
            .iter()
            .rev()
            .filter(|(id, _)| id == user)
            .find_map(|(_, weak)| weak.upgrade())
    }

    /// What a new connection's listing refuses, each with a diagnostic.
    fn compare(&self, live: &[CatalogTool]) -> HashMap<String, String> {
        let mut refused = HashMap::new();
        let source = if self.pinned {
            "pinned"
        } else {
            "listed at start"
        };
        for tool in &self.catalog {
            let reason = match live.iter().find(|t| t.name == tool.name) {
                Some(now) if now == tool => continue,
                Some(_) => format!(
                    "tool `{}` of MCP server `{}` differs from its {source} definition; it is refused until it is reviewed and re-pinned (`oscova mcp pin {}`)",
                    tool.name, self.name, self.name
                ),
                None => format!(
                    "tool `{}` of MCP server `{}` is no longer listed by the server",
                    tool.name, self.name
                ),
            };
            self.status.event(&reason);
            refused.insert(tool.name.clone(), reason);
        }
        refused
    }
}

/// Runs one server's tools for one user scope.
pub(crate) struct ServerHandler {
    pub(crate) server: Arc<Server>,
    /// This scope's own connection (`per_user`), else the server's.
    pub(crate) own: Option<tokio::sync::Mutex<Slot>>,
    /// Resolved credentials: variable or header name → value.
    pub(crate) credentials: Vec<(String, SecretString)>,
    /// An `oauth` server's client credentials and token state.
    pub(crate) oauth: Option<crate::connect::OAuthAccess>,
    /// An authorization-code server's grant for this scope: made ready
    /// before each call, so a call without one is the missing-credential
    /// result naming the login command, without connecting.
    pub(crate) user_flow: Option<Arc<crate::oauth::user::UserFlow>>,
    /// The credentials this user has not set, if any: every call fails
    /// with this, before connecting (and so does every host request).
    pub(crate) missing: Option<MissingCredentials>,
    pub(crate) spawn: ProcessSpawnPolicy,
    pub(crate) user: String,
}

/// The credentials a user has not set for a server, as the error result
/// every call of its tools returns for that user.
pub(crate) struct MissingCredentials {
    message: String,
    keys: Vec<String>,
}

impl MissingCredentials {
    /// `missing` holds (variable or header name, credential key) pairs.
    pub(crate) fn new(server: &str, user: &str, missing: Vec<(String, String)>) -> Self {
        let needs = missing
            .iter()
            .map(|(name, key)| format!("`{key}` (for `{name}`)"))
            .collect::<Vec<_>>()
            .join(", ");
        let keys: Vec<String> = missing.into_iter().map(|(_, key)| key).collect();
        let set = keys
            .iter()
            .map(|key| format!("`{key}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let noun = if keys.len() == 1 {
            "credential"
        } else {
            "credentials"
        };
        let message = format!(
            "MCP server `{server}` needs the {noun} {needs}, which is not set for user \
             `{user}`; the user must set the {noun} {set} (oscova: under \
             `[users.{}.credentials]` in the config file), and until then this server's \
             tools cannot run for them",
            toml_key(user)
        );
        Self { message, keys }
    }

    /// A shared `oauth` server whose host credentials are not set (it was
    /// pinned, so it loaded without them).
    pub(crate) fn host(server: &str, client: &crate::config::OAuthClient) -> Self {
        let keys = vec![
            client.client_id_credential.clone(),
            client.client_secret_credential.clone(),
        ];
        let message = format!(
            "MCP server `{server}` needs the host's OAuth client credentials `{}` and `{}`, \
             which are not set; the operator must set them (oscova: in the `[credentials]` \
             table of the config file, or as `OSCOVA_CREDENTIAL_*` variables), and until then \
             this server's tools cannot run",
            client.client_id_credential, client.client_secret_credential
        );
        Self { message, keys }
    }

    /// The error's text.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }

    /// The credential keys not set.
    pub(crate) fn keys(&self) -> &[String] {
        &self.keys
    }

    /// The error result a call returns.
    fn result(&self) -> ToolResult {
        ToolResult::missing_credential(self.message.clone(), self.keys.iter().cloned())
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
        serde_json::Value::from(key).to_string()
    }
}

impl ServerHandler {
    pub(crate) fn redactor(&self) -> Redactor {
        let redactor = self.server.redactor.clone();
        for (_, secret) in &self.credentials {
            redactor.add(secret.expose_secret());
        }
        if let Some(secret) = self.oauth.as_ref().and_then(|o| o.secret()) {
            redactor.add(secret.expose_secret());
        }
        redactor
    }

    /// The slot this scope's calls use: its own (`per_user`) or the
    /// server's.
    fn slot(&self) -> &tokio::sync::Mutex<Slot> {
        self.own.as_ref().unwrap_or(&self.server.shared)
    }

    /// A live connection, made (or remade after a crash) if needed.
    ///
    /// The slot's lock is held only to look and to store, never across a
    /// connect: the call that finds no connection makes one (bounded by
    /// `timeout_secs`, see [`connect`]) with the lock released, and calls
    /// that arrive meanwhile wait for its outcome, each as long as its own
    /// cancellation allows. A connector whose call is dropped leaves the
    /// attempt to the next call.
    ///
    /// `tool` is the call's tool (a refused one fails), or `None` for the
    /// host's own requests (`upstream.rs`); the error is a message.
    pub(crate) async fn live(
        &self,
        tool: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Live, String> {
        loop {
            let mut waiting = {
                let mut slot = self.slot().lock().await;
                if let Some(conn) = slot.conn.as_mut()
                    && conn.is_dead()
                {
                    let tail = conn.stderr_tail(&self.redactor());
                    slot.conn = None;
                    self.server.status.event(&format!(
                        "MCP server `{}` exited{}; restarting it on this call{}",
                        self.server.name,
                        self.for_user(),
                        tail_note(&tail)
                    ));
                }
                if slot.conn.is_some() {
                    return live_of(&slot, tool);
                }
                match &slot.connecting {
                    Some(attempt) if attempt.has_changed().is_ok() => attempt.clone(),
                    _ => {
                        let (done, attempt) = tokio::sync::watch::channel(None);
                        slot.connecting = Some(attempt);
                        drop(slot);
                        return self.connect_for(tool, cancel, done).await;
                    }
                }
            };
            let outcome = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(self.cancelled_starting(tool)),
                outcome = waiting.wait_for(Option::is_some) => {
                    outcome.ok().and_then(|o| o.clone())
                }
            };
            match outcome {
                // Connected, or the connector gave up: look again.
                Some(Ok(())) | None => continue,
                Some(Err(message)) => return Err(message),
            }
        }
    }

    /// Makes the connection this scope's calls wait for, with the slot
    /// unlocked, and tells the waiting calls through `done`.
    async fn connect_for(
        &self,
        tool: Option<&str>,
        cancel: &CancellationToken,
        done: tokio::sync::watch::Sender<Option<Result<(), String>>>,
    ) -> Result<Live, String> {
        let server = &*self.server;
        let redactor = self.redactor();
        let made = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                // `done` is dropped: a waiting call makes its own attempt.
                self.slot().lock().await.connecting = None;
                return Err(self.cancelled_starting(tool));
            }
            made = connect(ConnectParams {
                name: &server.name,
                config: &server.config,
                spawn: &self.spawn,
                credentials: &self.credentials,
                oauth: self.oauth.clone(),
                redactor: &redactor,
                changes: Some(ChangeRoute {
                    log: server.changes.clone(),
                    server: server.name.clone(),
                    user: self.own.is_some().then(|| self.user.clone()),
                }),
            }) => made,
        };
        let mut slot = self.slot().lock().await;
        slot.connecting = None;
        match made {
            Ok(conn) => {
                slot.refused = server.compare(&conn.live);
                slot.starts += 1;
                if slot.starts > 1 {
                    server.status.event(&format!(
                        "MCP server `{}` restarted{} (start {})",
                        server.name,
                        self.for_user(),
                        slot.starts
                    ));
                }
                slot.conn = Some(conn);
                done.send_replace(Some(Ok(())));
                live_of(&slot, tool)
            }
            Err(e) => {
                let message = format!(
                    "MCP server `{}` could not be started{}: {}",
                    server.name,
                    self.for_user(),
                    e.redacted(&redactor)
                );
                server.status.event(&message);
                done.send_replace(Some(Err(message.clone())));
                Err(message)
            }
        }
    }

    fn cancelled_starting(&self, tool: Option<&str>) -> String {
        let what = match tool {
            Some(tool) => format!("the call of `{tool}`"),
            None => "the request".to_owned(),
        };
        format!(
            "{what} was cancelled while MCP server `{}` was starting",
            self.server.name
        )
    }

    fn for_user(&self) -> String {
        if self.own.is_some() {
            format!(" for user `{}`", self.user)
        } else {
            String::new()
        }
    }

    /// Marks the connection dead after a transport failure, so the next
    /// call starts a new one.
    pub(crate) async fn lost(&self) -> String {
        let mut slot = self.slot().lock().await;
        let tail = slot
            .conn
            .as_ref()
            .map(|c| c.stderr_tail(&self.redactor()))
            .unwrap_or_default();
        slot.conn = None;
        let message = format!(
            "MCP server `{}` closed the connection during the call{}; it is restarted on the next call{}",
            self.server.name,
            self.for_user(),
            tail_note(&tail)
        );
        self.server.status.event(&message);
        message
    }

    /// A call whose request could not be sent: the token flow's error
    /// when that is why (the connection stays; the next call tries for a
    /// token again), else the connection is lost.
    async fn failed(&self, tool: &str, error: &ServiceError) -> ToolResult {
        if let ServiceError::TransportSend(e) = error
            && let Some(oauth) = crate::oauth::OAuthError::find(e)
        {
            if let Some(result) = crate::oauth::user::login_result(oauth) {
                return result;
            }
            let message = format!(
                "the call of `{tool}` on MCP server `{}` could not be authorized{}: {oauth}",
                self.server.name,
                self.for_user()
            );
            return ToolResult::error(self.redactor().redact(&message).into_owned());
        }
        ToolResult::error(self.lost().await)
    }

    async fn run(
        &self,
        name: String,
        args: serde_json::Value,
        inv: &ToolInvocation<'_>,
    ) -> ToolResult {
        if let Some(flow) = &self.user_flow
            && let Err(e) = flow.ready().await
        {
            return flow.login_result(&e).await.unwrap_or_else(|| {
                ToolResult::error(self.redactor().redact(&e.to_string()).into_owned())
            });
        }
        let live = match self.live(Some(&name), inv.cancellation_token()).await {
            Ok(live) => live,
            Err(refused) => return ToolResult::error(refused),
        };
        let mut params = CallToolRequestParams::new(name.clone());
        params.arguments = match args {
            serde_json::Value::Object(map) => Some(map),
            serde_json::Value::Null => None,
            _ => return ToolResult::error("the arguments must be an object"),
        };
        let timeout = self.server.config.call_timeout();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match live
            .peer
            .send_cancellable_request(request, PeerRequestOptions::with_timeout(timeout))
            .await
        {
            Ok(handle) => handle,
            Err(e) => return self.failed(&name, &e).await,
        };
        let (tx, mut rx) = mpsc::unbounded_channel();
        let token = handle.progress_token.clone();
        live.routes.add(token.clone(), tx);
        let key = inv.call_id().get();
        let (ask_tx, mut ask_rx) = mpsc::unbounded_channel::<crate::elicit::Ask>();
        live.asks.add(key, ask_tx);
        let id = handle.id.clone();
        // A task the server answers with after the call was dropped
        // (cancelled) is cancelled too.
        let response = task::CallAnswer::of(handle, live.peer.clone());
        tokio::pin!(response);
        let cancel = inv.cancellation_token().clone();
        // rmcp may hand notifications over out of order; progress never
        // goes back, so a late, lower one is dropped.
        let mut last = f64::NEG_INFINITY;
        let outcome = loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    let notice = CancelledNotification::new(CancelledNotificationParam::new(
                        Some(id.clone()),
                        Some("the caller cancelled the call".to_owned()),
                    ));
                    let _ = live.peer.send_notification(notice.into()).await;
                    break None;
                }
                Some((question, reply)) = ask_rx.recv() => {
                    // A question the person cannot answer is declined.
                    let _ = reply.send(inv.ask(question).await.ok());
                }
                Some(progress) = rx.recv() => {
                    let value = progress.progress.unwrap_or(last);
                    if value >= last {
                        last = value;
                        inv.report(progress);
                    }
                }
                outcome = &mut response => break Some(outcome),
            }
        };
        live.routes.remove(&token);
        live.asks.remove(key);
        match outcome {
            None => ToolResult::error(format!("the call of `{name}` was cancelled")),
            Some(Ok(ServerResult::CallToolResult(result))) => call_result(result),
            // The server made the call a task: followed to its end.
            Some(Ok(ServerResult::CreateTaskResult(created))) => {
                let followed = task::Followed {
                    peer: &live.peer,
                    server: &self.server.name,
                    tool: &name,
                    forward: self.server.config.elicitation == crate::config::Elicitation::Forward,
                    limit: timeout,
                };
                followed.follow(created, inv).await
            }
            Some(Ok(_)) => ToolResult::error(format!(
                "MCP server `{}` answered the call of `{name}` with something other than a tool result",
                self.server.name
            )),
            Some(Err(ServiceError::Timeout { timeout })) => ToolResult::error(format!(
                "the call of `{name}` on MCP server `{}` timed out after {:.1} s and was cancelled",
                self.server.name,
                timeout.as_secs_f64()
            )),
            Some(Err(ServiceError::McpError(e))) => ToolResult::error(format!(
                "MCP server `{}` refused the call of `{name}`: {}",
                self.server.name, e.message
            )),
            Some(Err(e @ ServiceError::TransportSend(_))) => self.failed(&name, &e).await,
            Some(Err(ServiceError::TransportClosed)) => ToolResult::error(self.lost().await),
            Some(Err(e)) => ToolResult::error(format!(
                "the call of `{name}` on MCP server `{}` failed: {e}",
                self.server.name
            )),
        }
    }
}

impl ToolHandler for ServerHandler {
    fn call<'a>(&'a self, call: RuntimeCall<'a>) -> Result<ToolFuture<'a>, ArgError> {
        let Some(tool) = self.server.catalog.get(call.index) else {
            return Err(ArgError::new("/", "no such tool"));
        };
        if let Some(missing) = &self.missing {
            let result = missing.result();
            return Ok(Box::pin(std::future::ready(result)));
        }
        crate::validate::check(&tool.input_schema, &call.args)?;
        let name = tool.name.clone();
        let invocation = call.invocation;
        Ok(Box::pin(self.run(name, call.args, invocation)))
    }
}

/// What a call needs from the slot's live connection, unless the tool is
/// refused.
fn live_of(slot: &Slot, tool: Option<&str>) -> Result<Live, String> {
    if let Some(reason) = tool.and_then(|tool| slot.refused.get(tool)) {
        return Err(reason.clone());
    }
    let Some(conn) = slot.conn.as_ref() else {
        return Err("no connection".to_owned());
    };
    Ok(Live {
        peer: conn.service.peer().clone(),
        routes: conn.routes(),
        asks: conn.asks(),
    })
}

fn tail_note(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its stderr ended with:\n{tail}")
    }
}
