//! Connecting to one server: starting a stdio server's process (through
//! the spawn policy, in an empty network namespace for `network = "none"`
//! where the platform allows it) or opening a streamable HTTP session, and
//! the rmcp client handler that routes the server's progress notifications
//! to the call they belong to.
//!
//! Rules: a process gets only the environment the spawn policy builds plus
//! the server's `env` and the resolved `credential_env` values; it is
//! killed when its connection is dropped. Its stderr is kept as a bounded
//! tail (the last [`TAIL_BYTES`]), redacted before anyone sees it.

use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};

use oscova_core::process::{ProcessSpawnPolicy, ProcessSpawnRequest};
use oscova_core::redact::Redactor;
use oscova_core::{ExposeSecret, NetworkScope, SecretString, ToolProgress};
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;

use crate::config::ServerConfig;
use crate::elicit::Asks;
use crate::pin::{CatalogTool, sorted};
use oscova_core::interaction::Answer;

/// How much of a server's stderr is kept.
pub const TAIL_BYTES: usize = 4096;

/// Where one connection's progress notifications go, by token.
#[derive(Clone, Default)]
pub(crate) struct Routes(Arc<Mutex<HashMap<ProgressToken, mpsc::UnboundedSender<ToolProgress>>>>);

impl Routes {
    /// Sends progress for `token` to `route` until [`remove`](Self::remove).
    pub(crate) fn add(&self, token: ProgressToken, route: mpsc::UnboundedSender<ToolProgress>) {
        if let Ok(mut map) = self.0.lock() {
            map.insert(token, route);
        }
    }

    /// Stops routing `token`.
    pub(crate) fn remove(&self, token: &ProgressToken) {
        if let Ok(mut map) = self.0.lock() {
            map.remove(token);
        }
    }
}

/// The rmcp client handler of one connection.
#[derive(Clone, Default)]
pub(crate) struct Client {
    progress: Routes,
    asks: Asks,
}

impl ClientHandler for Client {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        // Form elicitation is offered: a question reaches the person
        // through the call it belongs to (see `elicit`).
        let mut info = rmcp::model::ClientConfig::default();
        if let Ok(caps) = serde_json::from_value(serde_json::json!({"elicitation": {"form": {}}})) {
            info.capabilities = caps;
        }
        info
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        if let Ok(routes) = self.progress.0.lock()
            && let Some(route) = routes.get(&params.progress_token)
        {
            let _ = route.send(ToolProgress {
                message: params.message.unwrap_or_default(),
                progress: Some(params.progress),
                total: params.total,
            });
        }
        std::future::ready(())
    }

    fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ElicitResult, ErrorData>> + Send + '_ {
        let asks = self.asks.clone();
        async move {
            let decline = Ok(ElicitResult::new(ElicitationAction::Decline));
            let ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } = request
            else {
                return decline;
            };
            let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
            let (Some(question), Some(route)) =
                (crate::elicit::question(message, &schema), asks.only())
            else {
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

/// The last bytes a process wrote to stderr.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    bytes: VecDeque<u8>,
}

impl Tail {
    fn push_line(&mut self, line: &str) {
        self.bytes.extend(line.as_bytes());
        self.bytes.push_back(b'\n');
        while self.bytes.len() > TAIL_BYTES {
            self.bytes.pop_front();
        }
    }

    /// The tail as text, redacted.
    pub(crate) fn text(&self, redactor: &Redactor) -> String {
        let (a, b) = self.bytes.as_slices();
        let mut raw = Vec::with_capacity(a.len() + b.len());
        raw.extend_from_slice(a);
        raw.extend_from_slice(b);
        let text = String::from_utf8_lossy(&raw);
        redactor.redact(text.trim()).into_owned()
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
/// `unshare` that can make a user and network namespace. Checked once.
pub fn network_isolation_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        cfg!(target_os = "linux")
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
    pub(crate) redactor: &'a Redactor,
}

/// Connects and lists the server's tools.
pub(crate) async fn connect(params: ConnectParams<'_>) -> Result<Connection, ConnectError> {
    let client = Client::default();
    let progress = client.progress.clone();
    let asks = client.asks.clone();
    let stderr = Arc::new(Mutex::new(Tail::default()));
    let (service, child) = match (&params.config.command, &params.config.url) {
        (Some(command), _) => {
            let mut child = spawn(&params, command)?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(ConnectError::Spawn("its stdio was not piped".to_owned()));
            };
            if let Some(err) = child.stderr.take() {
                let tail = stderr.clone();
                tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(err).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        if let Ok(mut tail) = tail.lock() {
                            tail.push_line(&line);
                        }
                    }
                });
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
            let transport = rmcp::transport::StreamableHttpClientTransport::from_config(
                http_config(&params, url)?,
            );
            let service = client
                .serve(transport)
                .await
                .map_err(|e| ConnectError::Handshake {
                    reason: e.to_string(),
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

fn spawn(params: &ConnectParams<'_>, command: &str) -> Result<tokio::process::Child, ConnectError> {
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
    if config.network == NetworkScope::None && network_isolation_available() {
        // A new user and network namespace holds only a loopback device
        // that is down: the server can reach nothing, this machine included.
        let program = std::mem::replace(&mut prepared.command, "unshare".into());
        let mut args = vec!["-rn".into(), "--".into(), program];
        args.append(&mut prepared.args);
        prepared.args = args;
    }
    let mut command = prepared.to_command();
    command.stdin(Stdio::piped());
    command.spawn().map_err(|e| {
        ConnectError::Spawn(format!(
            "`{command}`: {e}",
            command = command_name(command.as_std())
        ))
    })
}

fn command_name(command: &std::process::Command) -> String {
    command.get_program().to_string_lossy().into_owned()
}

fn http_config(
    params: &ConnectParams<'_>,
    url: &str,
) -> Result<
    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig,
    ConnectError,
> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let config = params.config;
    match config.network {
        NetworkScope::None => {
            return Err(ConnectError::Url(
                "a url server cannot have `network = \"none\"`: reaching it is network access"
                    .to_owned(),
            ));
        }
        NetworkScope::Local if !oscova_core::locality::is_local_endpoint(url) => {
            return Err(ConnectError::Url(format!(
                "`network = \"local\"` but `{url}` is not on this machine"
            )));
        }
        _ => {}
    }
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
