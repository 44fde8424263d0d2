//! Connecting to one server: starting a stdio server's process (through
//! the spawn policy, confined as the `confine` module says for `network =
//! "none"` where the platform allows it) or opening a streamable HTTP
//! session (over `http://` or `https://`, with the client and TLS of the
//! `tls` module), and
//! the rmcp client handler that routes the server's progress notifications
//! to the call they belong to (through `progress.rs`) and records its
//! list-changed announcements (through `changes.rs`).
//!
//! Rules: a process gets only the environment the spawn policy builds plus
//! the server's `env` and the resolved `credential_env` values; it is
//! killed when its connection is dropped. Making a connection (process or
//! session, `initialize`, `tools/list`) takes at most the server's
//! `timeout_secs`, or is abandoned and its process killed. Its stderr is
//! kept as `tail.rs` says: the last
//! [`TAIL_BYTES`](crate::TAIL_BYTES) bytes, redacted before anyone sees
//! it.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};

use oscova_core::process::{ProcessSpawnPolicy, ProcessSpawnRequest};
use oscova_core::redact::Redactor;
use oscova_core::{ExposeSecret, NetworkScope, SecretString, ToolProgress};
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};

use crate::changes::{ChangeRoute, ChangedList};
use crate::config::{Elicitation, ServerConfig};
use crate::elicit::Asks;
use crate::pin::{CatalogTool, sorted};
use crate::progress::Routes;
use crate::tail::{Tail, keep_tail};
use oscova_core::interaction::Answer;

/// The rmcp client handler of one connection.
#[derive(Clone)]
pub(crate) struct Client {
    progress: Routes,
    asks: Asks,
    /// The server's name, which every forwarded question carries.
    server: String,
    elicitation: Elicitation,
    /// Where its list-changed announcements are recorded (`changes.rs`).
    changes: Option<ChangeRoute>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        // Form elicitation is offered only when it is forwarded: a question
        // reaches the person through the call it belongs to (see `elicit`).
        let mut info = rmcp::model::ClientConfig::default();
        if self.elicitation == Elicitation::Forward
            && let Ok(caps) =
                serde_json::from_value(serde_json::json!({"elicitation": {"form": {}}}))
        {
            info.capabilities = caps;
        }
        // A server that advertises the tasks extension may answer a call
        // with a task, which the call follows (`server/task.rs`).
        info.capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(
                rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                rmcp::model::JsonObject::new(),
            );
        info
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.progress.deliver(
            &params.progress_token,
            ToolProgress {
                message: params.message.unwrap_or_default(),
                progress: Some(params.progress),
                total: params.total,
            },
        );
        std::future::ready(())
    }

    fn on_prompt_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        if let Some(changes) = &self.changes {
            changes.record(ChangedList::Prompts);
        }
        std::future::ready(())
    }

    fn on_resource_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        if let Some(changes) = &self.changes {
            changes.record(ChangedList::Resources);
        }
        std::future::ready(())
    }

    fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ElicitResult, ErrorData>> + Send + '_ {
        let asks = self.asks.clone();
        let forward = self.elicitation == Elicitation::Forward;
        let server = self.server.clone();
        async move {
            let decline = Ok(ElicitResult::new(ElicitationAction::Decline));
            if !forward {
                return decline;
            }
            let ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } = request
            else {
                return decline;
            };
            let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
            let (Some(question), Some(route)) = (
                crate::elicit::question(&server, &message, &schema),
                asks.only(),
            ) else {
                return decline;
            };
            let (tx, rx) = tokio::sync::oneshot::channel();
            if route.send((question, tx)).is_err() {
                return decline;
            }
            Ok(match rx.await.ok().flatten() {
                Some(Answer::Accept(values)) => {
                    ElicitResult::new(ElicitationAction::Accept).with_content(values.into())
                }
                Some(Answer::Cancel) => ElicitResult::new(ElicitationAction::Cancel),
                _ => ElicitResult::new(ElicitationAction::Decline),
            })
        }
    }
}

/// One live connection to a server.
pub(crate) struct Connection {
    pub(crate) service: RunningService<RoleClient, Client>,
    progress: Routes,
    asks: Asks,
    child: Option<tokio::process::Child>,
    pub(crate) stderr: Arc<Mutex<Tail>>,
    /// The tools the server lists on this connection.
    pub(crate) live: Vec<CatalogTool>,
}

impl Connection {
    /// Where this connection's progress notifications go.
    pub(crate) fn routes(&self) -> Routes {
        self.progress.clone()
    }

    /// The calls on this connection a server's question can reach.
    pub(crate) fn asks(&self) -> Asks {
        self.asks.clone()
    }

    /// Whether the connection is gone (the process exited, the session
    /// closed).
    pub(crate) fn is_dead(&mut self) -> bool {
        if self.service.is_closed() {
            return true;
        }
        match &mut self.child {
            Some(child) => !matches!(child.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// The redacted stderr tail.
    pub(crate) fn stderr_tail(&self, redactor: &Redactor) -> String {
        self.stderr
            .lock()
            .map(|t| t.text(redactor))
            .unwrap_or_default()
    }
}

/// Why a connection could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    #[error("could not start the process: {0}")]
    Spawn(String),
    #[error("the MCP handshake failed: {reason}{}", tail_note(.tail))]
    Handshake { reason: String, tail: String },
    #[error("listing its tools failed: {reason}{}", tail_note(.tail))]
    List { reason: String, tail: String },
    #[error("{0}")]
    Url(String),
    #[error(
        "it did not start, answer `initialize` and list its tools within {secs:.1} s (its `timeout_secs`); the attempt was abandoned{}",
        tail_note(.tail)
    )]
    Timeout { secs: f64, tail: String },
}

impl ConnectError {
    pub(crate) fn redacted(&self, redactor: &Redactor) -> String {
        redactor.redact(&self.to_string()).into_owned()
    }
}

fn tail_note(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its stderr ended with:\n{tail}")
    }
}

/// Whether `network = "none"` can be enforced here: Linux with an
/// `unshare` that can make a user and network namespace, and seccomp
/// filters for this architecture (see the `confine` module for what `none`
/// then means). Checked once.
pub fn network_isolation_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        confine_available()
            && std::process::Command::new("unshare")
                .args(["-rn", "--", "true"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
    })
}

/// What a connection needs besides the server's configuration.
pub(crate) struct ConnectParams<'a> {
    pub(crate) name: &'a str,
    pub(crate) config: &'a ServerConfig,
    pub(crate) spawn: &'a ProcessSpawnPolicy,
    /// Resolved `credential_env` (stdio) or `credential_header` (url)
    /// values: name → secret.
    pub(crate) credentials: &'a [(String, SecretString)],
    /// A server with `oauth`: the resolved client credentials and the
    /// (server, user)'s token state (`None`: not set for whoever connects).
    pub(crate) oauth: Option<OAuthAccess>,
    pub(crate) redactor: &'a Redactor,
    /// Where the connection's list changes are recorded, if anywhere.
    pub(crate) changes: Option<ChangeRoute>,
}

/// What an `oauth` server's connection needs to get tokens.
#[derive(Clone)]
pub(crate) enum OAuthAccess {
    /// Client credentials: the resolved client and the (server, user)'s
    /// token state.
    Client {
        credentials: crate::oauth::Credentials,
        tokens: crate::oauth::Tokens,
    },
    /// Authorization code: the (server, user)'s grant.
    User(Arc<crate::oauth::user::UserFlow>),
}

impl OAuthAccess {
    /// The client secret to redact, if any.
    pub(crate) fn secret(&self) -> Option<&SecretString> {
        match self {
            Self::Client { credentials, .. } => Some(&credentials.secret),
            Self::User(flow) => flow.client_secret.as_ref(),
        }
    }
}

/// What every OAuth request of `config`'s server (at `url`) goes
/// through; `None` when its HTTP client cannot be made (the connection
/// then fails saying why).
pub(crate) fn reach(config: &ServerConfig) -> Option<crate::oauth::Reach> {
    let oauth = config.oauth.as_ref()?;
    Some(crate::oauth::Reach {
        url: config.url.clone()?,
        network: config.network,
        timeout: config.call_timeout(),
        http: crate::tls::client(config.ca_file.as_deref()).ok()?,
        issuer: oauth.issuer.clone(),
        scopes: oauth.scopes.clone(),
    })
}

/// Connects and lists the server's tools, all of it (starting the process
/// or opening the session, `initialize`, `tools/list`) within the server's
/// `timeout_secs`. A connection not made by then is abandoned: its future
/// is dropped, and with it the process (killed on drop).
pub(crate) async fn connect(params: ConnectParams<'_>) -> Result<Connection, ConnectError> {
    let limit = params.config.call_timeout();
    let stderr = Arc::new(Mutex::new(Tail::default()));
    match tokio::time::timeout(limit, connect_within(&params, stderr.clone())).await {
        Ok(made) => made,
        Err(_) => Err(ConnectError::Timeout {
            secs: limit.as_secs_f64(),
            tail: stderr
                .lock()
                .map(|t| t.text(params.redactor))
                .unwrap_or_default(),
        }),
    }
}

async fn connect_within(
    params: &ConnectParams<'_>,
    stderr: Arc<Mutex<Tail>>,
) -> Result<Connection, ConnectError> {
    let client = Client {
        progress: Routes::default(),
        asks: Asks::default(),
        server: params.name.to_owned(),
        elicitation: params.config.elicitation,
        changes: params.changes.clone(),
    };
    let progress = client.progress.clone();
    let asks = client.asks.clone();
    let (service, child) = match (&params.config.command, &params.config.url) {
        (Some(command), _) => {
            let mut child = spawn(params, command).await?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(ConnectError::Spawn("its stdio was not piped".to_owned()));
            };
            if let Some(err) = child.stderr.take() {
                tokio::spawn(keep_tail(err, stderr.clone()));
            }
            let tail_of = |stderr: &Arc<Mutex<Tail>>| {
                stderr
                    .lock()
                    .map(|t| t.text(params.redactor))
                    .unwrap_or_default()
            };
            let service = match client.serve((stdout, stdin)).await {
                Ok(service) => service,
                Err(e) => {
                    // Let the stderr reader catch the process's last words.
                    let _ =
                        tokio::time::timeout(std::time::Duration::from_millis(500), child.wait())
                            .await;
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    return Err(ConnectError::Handshake {
                        reason: e.to_string(),
                        tail: tail_of(&stderr),
                    });
                }
            };
            (service, Some(child))
        }
        (None, Some(url)) => {
            use rmcp::transport::StreamableHttpClientTransport as Transport;
            let http = crate::tls::client(params.config.ca_file.as_deref())
                .map_err(|e| ConnectError::Url(e.to_string()))?;
            let transport = http_config(params, url)?;
            let served = match (&params.config.oauth, &params.oauth) {
                (None, _) => client.serve(Transport::with_client(http, transport)).await,
                (Some(oauth), Some(access)) => {
                    let flow: Arc<dyn crate::oauth::TokenSource> = match access {
                        OAuthAccess::Client {
                            credentials,
                            tokens,
                        } => Arc::new(crate::oauth::Flow {
                            reach: crate::oauth::Reach {
                                url: url.clone(),
                                network: params.config.network,
                                timeout: params.config.call_timeout(),
                                http: http.clone(),
                                issuer: oauth.issuer.clone(),
                                scopes: oauth.scopes.clone(),
                            },
                            config: oauth.clone(),
                            credentials: credentials.clone(),
                            tokens: tokens.clone(),
                        }),
                        OAuthAccess::User(flow) => flow.clone(),
                    };
                    let http = crate::oauth::OAuthHttp { http, flow };
                    client.serve(Transport::with_client(http, transport)).await
                }
                (Some(oauth), None) => {
                    return Err(ConnectError::Url(format!(
                        "its `oauth` client credentials `{}` and `{}` are not set for the host, \
                         which lists a server's tools at start (oscova: in the `[credentials]` \
                         table or as `OSCOVA_CREDENTIAL_*` variables); set them, or pin its \
                         catalog with them set",
                        oauth.client_id_credential, oauth.client_secret_credential
                    )));
                }
            };
            let service = served.map_err(|e| ConnectError::Handshake {
                reason: crate::tls::handshake_reason(&e),
                tail: String::new(),
            })?;
            (service, None)
        }
        (None, None) => return Err(ConnectError::Url("no command and no url".to_owned())),
    };
    let live = match service.peer().list_all_tools().await {
        Ok(tools) => sorted(tools.iter().map(CatalogTool::from_mcp).collect()),
        Err(e) => {
            let tail = stderr
                .lock()
                .map(|t| t.text(params.redactor))
                .unwrap_or_default();
            return Err(ConnectError::List {
                reason: e.to_string(),
                tail,
            });
        }
    };
    Ok(Connection {
        service,
        progress,
        asks,
        child,
        stderr,
        live,
    })
}

#[cfg(target_os = "linux")]
fn confine_available() -> bool {
    crate::confine::available()
}

#[cfg(not(target_os = "linux"))]
fn confine_available() -> bool {
    false
}

async fn spawn(
    params: &ConnectParams<'_>,
    command: &str,
) -> Result<tokio::process::Child, ConnectError> {
    let config = params.config;
    let mut request = ProcessSpawnRequest::new(command)
        .args(config.args.iter())
        .origin(format!("MCP server `{}`", params.name));
    for (name, value) in &config.env {
        request = request.env(name.clone(), value.clone());
    }
    for (name, secret) in params.credentials {
        request = request.env(name.clone(), secret.expose_secret().to_owned());
    }
    let mut prepared = params
        .spawn
        .prepare(request)
        .map_err(|e| ConnectError::Spawn(e.to_string()))?;
    let confined = config.network == NetworkScope::None && network_isolation_available();
    if confined {
        // A new user and network namespace holds only a loopback device
        // that is down: the server can reach nothing, this machine included.
        let program = std::mem::replace(&mut prepared.command, "unshare".into());
        let mut args = vec!["-rn".into(), "--".into(), program];
        args.append(&mut prepared.args);
        prepared.args = args;
    }
    let mut command = prepared.to_command();
    command.stdin(Stdio::piped());
    let name = command_name(command.as_std());
    let spawned = if confined {
        spawn_confined(command).await
    } else {
        command.spawn().map_err(|e| e.to_string())
    };
    spawned.map_err(|e| ConnectError::Spawn(format!("`{name}`: {e}")))
}

/// Starts the process under the seccomp filter of `confine`.
#[cfg(target_os = "linux")]
async fn spawn_confined(command: tokio::process::Command) -> Result<tokio::process::Child, String> {
    crate::confine::spawn(command)
        .await
        .map_err(|e| e.to_string())
}

#[cfg(not(target_os = "linux"))]
async fn spawn_confined(
    _command: tokio::process::Command,
) -> Result<tokio::process::Child, String> {
    Err("confinement is not available on this platform".to_owned())
}

fn command_name(command: &std::process::Command) -> String {
    command.get_program().to_string_lossy().into_owned()
}

/// Whether a url server may reach `url` under its `network` scope: never
/// with `none`, only this machine with `local` (decided without DNS).
pub(crate) fn in_scope(network: NetworkScope, url: &str) -> Result<(), String> {
    match network {
        NetworkScope::None => Err(
            "a url server cannot have `network = \"none\"`: reaching it is network access"
                .to_owned(),
        ),
        NetworkScope::Local if !oscova_core::locality::is_local_endpoint(url) => Err(format!(
            "`network = \"local\"` but `{url}` is not on this machine"
        )),
        _ => Ok(()),
    }
}

fn http_config(
    params: &ConnectParams<'_>,
    url: &str,
) -> Result<
    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig,
    ConnectError,
> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    in_scope(params.config.network, url).map_err(ConnectError::Url)?;
    let mut transport = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let mut headers = HashMap::new();
    for (name, secret) in params.credentials {
        if name.eq_ignore_ascii_case("authorization") {
            transport = transport.auth_header(secret.expose_secret().to_owned());
            continue;
        }
        let header = http::HeaderName::try_from(name.as_str())
            .map_err(|e| ConnectError::Url(format!("header `{name}`: {e}")))?;
        let mut value = http::HeaderValue::try_from(secret.expose_secret())
            .map_err(|_| ConnectError::Url(format!("header `{name}`: not a valid header value")))?;
        value.set_sensitive(true);
        headers.insert(header, value);
    }
    Ok(transport.custom_headers(headers))
}
