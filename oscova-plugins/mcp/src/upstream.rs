//! The host's way to the servers' prompts, resources and completion
//! ([`McpUpstreams`]): what a gateway re-serves, read over the
//! connections the servers' tools use.
//!
//! Rules: nothing here runs on its own; each method is one request the
//! host makes, for one user scope and one server. It goes over the
//! connection that user's calls of that server's tools use: a `per_user`
//! server's is the one of that user's (newest live) scope, made with that
//! user's credentials, never another user's; a shared server's is the
//! host's one. A scope that never held the plugin's handler for that
//! server ([`UpstreamError::NoScope`]) gets nothing, rather than some
//! other connection. A user without a credential the server needs gets
//! [`UpstreamError::MissingCredential`] and no connection is tried, as
//! for tool calls. The connection is made (or remade) as a call would
//! make it, within the server's `timeout_secs`; each request is bounded
//! by the same timeout. A server that does not advertise a capability
//! (`prompts`, `resources`, `completions`) gives an empty list or no
//! completion values, not an error; getting a prompt or reading a
//! resource from it is [`UpstreamError::NotOffered`]. What comes back
//! passes the same redaction as tool results: every string (texts,
//! names, descriptions, URIs; not base64 `blob` and `data` fields) with
//! the host's known secrets and the user's credentials replaced, and so
//! does every error. List changes the servers announce are recorded as
//! `changes.rs` says; the host asks [`McpUpstreams::changed_since`] or
//! registers [`McpUpstreams::on_list_changed`].

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use oscova_core::redact::Redactor;
use oscova_core::{CancellationToken, UserScope};
use rmcp::model::{
    CompleteRequestParams, GetPromptRequestParams, GetPromptResult, Prompt,
    ReadResourceRequestParams, Resource, ResourceContents, ResourceTemplate, ServerCapabilities,
};
use rmcp::{Peer, RoleClient, ServiceError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::changes::{ChangeLog, ChangedList, ListChange};
use crate::server::Server;

/// The most completion values one answer holds (MCP's limit).
const MAX_COMPLETIONS: usize = 100;

/// The servers' prompts, resources and completion, for the host to read
/// per user (see the module rules). Got from
/// [`McpPlugin::upstreams`](crate::McpPlugin::upstreams); clones share
/// everything.
///
/// ```no_run
/// # async fn run(mcp: oscova_plugin_mcp::McpPlugin) -> Result<(), Box<dyn std::error::Error>> {
/// use oscova_core::prelude::*;
///
/// let upstreams = mcp.upstreams();
/// let host = PluginHost::builder().no_linked_plugins().plugin_instance(mcp).build()?;
/// let scope = host.user_scope(UserInfo::new("alice"));
/// for prompt in upstreams.list_prompts(&scope, "notes").await? {
///     println!("{}", prompt.name);
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
pub struct McpUpstreams {
    servers: Arc<[Arc<Server>]>,
    changes: Arc<ChangeLog>,
}

impl std::fmt::Debug for McpUpstreams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpUpstreams")
            .field("servers", &self.servers().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// Why a request to a server's prompts, resources or completion failed.
/// Every message is redacted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UpstreamError {
    /// No server of that name was loaded.
    #[error("no MCP server `{0}` is loaded")]
    UnknownServer(String),
    /// The scope holds no handler of that server (it is not a scope of
    /// the host this plugin was loaded into).
    #[error(
        "user `{user}` has no scope over MCP server `{server}` (ask with a scope of the host the plugin was loaded into)"
    )]
    NoScope {
        /// The server.
        server: String,
        /// The scope's user.
        user: String,
    },
    /// The user has not set a credential the server needs; no connection
    /// was tried.
    #[error("{message}")]
    MissingCredential {
        /// The server.
        server: String,
        /// What to set, and where (as a tool call's error says it).
        message: String,
        /// The credential keys not set.
        keys: Vec<String>,
    },
    /// The server does not offer what was asked (it does not advertise
    /// the capability).
    #[error("MCP server `{server}` does not offer {what}")]
    NotOffered {
        /// The server.
        server: String,
        /// `prompts` or `resources`.
        what: &'static str,
    },
    /// The server could not be started or reached, or closed the
    /// connection during the request (it is remade on the next one).
    #[error("{message}")]
    Unavailable {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("MCP server `{server}` refused the request: {message}")]
    Refused {
        /// The server.
        server: String,
        /// The error's code (-32602 invalid params, -32002 resource not
        /// found, ...).
        code: i32,
        /// The server's message.
        message: String,
    },
    /// The server did not answer within its `timeout_secs`.
    #[error("MCP server `{server}` did not answer within {secs:.1} s (its `timeout_secs`)")]
    Timeout {
        /// The server.
        server: String,
        /// The timeout.
        secs: f64,
    },
    /// Anything else (an answer that does not parse, say).
    #[error("the request to MCP server `{server}` failed: {message}")]
    Failed {
        /// The server.
        server: String,
        /// What happened.
        message: String,
    },
}

/// The capability a request needs the server to advertise.
#[derive(Clone, Copy)]
enum Needs {
    Prompts,
    Resources,
    Completions,
}

impl Needs {
    fn advertised(self, caps: &ServerCapabilities) -> bool {
        match self {
            Self::Prompts => caps.prompts.is_some(),
            Self::Resources => caps.resources.is_some(),
            Self::Completions => caps.completions.is_some(),
        }
    }

    fn what(self) -> &'static str {
        match self {
            Self::Prompts => "prompts",
            Self::Resources => "resources",
            Self::Completions => "completions",
        }
    }
}

impl McpUpstreams {
    pub(crate) fn new(servers: Vec<Arc<Server>>, changes: Arc<ChangeLog>) -> Self {
        Self {
            servers: servers.into(),
            changes,
        }
    }

    /// The loaded servers' names, in configuration order.
    pub fn servers(&self) -> impl Iterator<Item = &str> {
        self.servers.iter().map(|s| s.name.as_str())
    }

    /// The prompts server `server` offers `scope`'s user (`prompts/list`,
    /// every page); empty when it does not advertise prompts.
    pub async fn list_prompts(
        &self,
        scope: &UserScope,
        server: &str,
    ) -> Result<Vec<Prompt>, UpstreamError> {
        let listed = self
            .request(scope, server, Needs::Prompts, |peer| async move {
                peer.list_all_prompts().await
            })
            .await?;
        Ok(listed.unwrap_or_default())
    }

    /// Prompt `name` of server `server` with `arguments` (`prompts/get`).
    pub async fn get_prompt(
        &self,
        scope: &UserScope,
        server: &str,
        name: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<GetPromptResult, UpstreamError> {
        let params: GetPromptRequestParams =
            self.params(server, json!({ "name": name, "arguments": arguments }))?;
        self.request(scope, server, Needs::Prompts, |peer| async move {
            peer.get_prompt(params).await
        })
        .await?
        .ok_or_else(|| not_offered(server, Needs::Prompts))
    }

    /// The resources server `server` offers `scope`'s user
    /// (`resources/list`, every page); empty when it does not advertise
    /// resources.
    pub async fn list_resources(
        &self,
        scope: &UserScope,
        server: &str,
    ) -> Result<Vec<Resource>, UpstreamError> {
        let listed = self
            .request(scope, server, Needs::Resources, |peer| async move {
                peer.list_all_resources().await
            })
            .await?;
        Ok(listed.unwrap_or_default())
    }

    /// The resource templates of server `server`
    /// (`resources/templates/list`, every page); empty when it does not
    /// advertise resources.
    pub async fn list_resource_templates(
        &self,
        scope: &UserScope,
        server: &str,
    ) -> Result<Vec<ResourceTemplate>, UpstreamError> {
        let listed = self
            .request(scope, server, Needs::Resources, |peer| async move {
                peer.list_all_resource_templates().await
            })
            .await?;
        Ok(listed.unwrap_or_default())
    }

    /// The contents at `uri` (an upstream URI, as server `server` lists
    /// it or as one of its templates makes it) (`resources/read`).
    pub async fn read_resource(
        &self,
        scope: &UserScope,
        server: &str,
        uri: &str,
    ) -> Result<Vec<ResourceContents>, UpstreamError> {
        let params: ReadResourceRequestParams = self.params(server, json!({ "uri": uri }))?;
        let read = self
            .request(scope, server, Needs::Resources, |peer| async move {
                peer.read_resource(params).await.map(|r| r.contents)
            })
            .await?;
        read.ok_or_else(|| not_offered(server, Needs::Resources))
    }

    /// Values server `server` offers for argument `argument` of its
    /// prompt `prompt`, given what was typed (`value`) and the arguments
    /// already given (`context`) (`completion/complete`); at most 100,
    /// none when it does not advertise completions.
    pub async fn complete_prompt_argument(
        &self,
        scope: &UserScope,
        server: &str,
        prompt: &str,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Result<Vec<String>, UpstreamError> {
        let reference = json!({ "type": "ref/prompt", "name": prompt });
        self.complete(scope, server, reference, argument, value, context)
            .await
    }

    /// Values for argument `argument` of server `server`'s resource
    /// template `template` (its URI template, as the server lists it), as
    /// [`complete_prompt_argument`](Self::complete_prompt_argument) does
    /// for prompts.
    pub async fn complete_template_argument(
        &self,
        scope: &UserScope,
        server: &str,
        template: &str,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Result<Vec<String>, UpstreamError> {
        let reference = json!({ "type": "ref/resource", "uri": template });
        self.complete(scope, server, reference, argument, value, context)
            .await
    }

    /// How many list changes the servers have announced so far, on every
    /// connection: a mark to ask [`changed_since`](Self::changed_since)
    /// with later.
    pub fn change_mark(&self) -> u64 {
        self.changes.mark()
    }

    /// Whether server `server` announced a change of `list` after `mark`
    /// (a [`change_mark`](Self::change_mark) taken earlier).
    pub fn changed_since(&self, server: &str, list: ChangedList, mark: u64) -> bool {
        self.changes.last(server, list).is_some_and(|at| at > mark)
    }

    /// Calls `callback` on each list change a server announces from now
    /// on, on the task of the connection it arrived on: it must be quick
    /// and must not block (raise a signal, send on a channel).
    pub fn on_list_changed(&self, callback: impl Fn(&ListChange) + Send + Sync + 'static) {
        self.changes.subscribe(Arc::new(callback));
    }

    async fn complete(
        &self,
        scope: &UserScope,
        server: &str,
        reference: Value,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Result<Vec<String>, UpstreamError> {
        let mut request = json!({
            "ref": reference,
            "argument": { "name": argument, "value": value },
        });
        if !context.is_empty() {
            request["context"] = json!({ "arguments": context });
        }
        let params: CompleteRequestParams = self.params(server, request)?;
        let values = self
            .request(scope, server, Needs::Completions, |peer| async move {
                peer.complete(params).await.map(|r| r.completion.values)
            })
            .await?;
        let mut values = values.unwrap_or_default();
        values.truncate(MAX_COMPLETIONS);
        Ok(values)
    }

    fn params<T: DeserializeOwned>(&self, server: &str, value: Value) -> Result<T, UpstreamError> {
        serde_json::from_value(value).map_err(|e| UpstreamError::Failed {
            server: server.to_owned(),
            message: format!("the request could not be built: {e}"),
        })
    }

    /// Runs `ask` on the connection `scope`'s user's calls of `server`
    /// use; `None` when the server does not advertise `needs`.
    async fn request<T, F, Fut>(
        &self,
        scope: &UserScope,
        name: &str,
        needs: Needs,
        ask: F,
    ) -> Result<Option<T>, UpstreamError>
    where
        F: FnOnce(Peer<RoleClient>) -> Fut,
        Fut: Future<Output = Result<T, ServiceError>>,
        T: Serialize + DeserializeOwned,
    {
        let server = self
            .servers
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| UpstreamError::UnknownServer(scope.redact(name).into_owned()))?;
        let user = scope.user().id();
        let handler = server
            .handler_of(user)
            .ok_or_else(|| UpstreamError::NoScope {
                server: name.to_owned(),
                user: user.to_owned(),
            })?;
        let redactor = handler.redactor();
        let clean = |text: &str| scope.redact(&redactor.redact(text)).into_owned();
        if let Some(missing) = &handler.missing {
            return Err(UpstreamError::MissingCredential {
                server: name.to_owned(),
                message: clean(missing.message()),
                keys: missing.keys().to_vec(),
            });
        }
        let live = handler
            .live(None, &CancellationToken::new())
            .await
            .map_err(|message| UpstreamError::Unavailable {
                server: name.to_owned(),
                message: clean(&message),
            })?;
        let offered = live
            .peer
            .peer_info()
            .is_some_and(|info| needs.advertised(&info.capabilities));
        if !offered {
            return Ok(None);
        }
        let limit = server.config.call_timeout();
        let timeout = || UpstreamError::Timeout {
            server: name.to_owned(),
            secs: limit.as_secs_f64(),
        };
        let answer = match tokio::time::timeout(limit, ask(live.peer)).await {
            Err(_) | Ok(Err(ServiceError::Timeout { .. })) => return Err(timeout()),
            Ok(Ok(answer)) => answer,
            Ok(Err(ServiceError::McpError(e))) => {
                return Err(UpstreamError::Refused {
                    server: name.to_owned(),
                    code: e.code.0,
                    message: clean(&e.message),
                });
            }
            Ok(Err(ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                return Err(UpstreamError::Unavailable {
                    server: name.to_owned(),
                    message: clean(&handler.lost().await),
                });
            }
            Ok(Err(e)) => {
                return Err(UpstreamError::Failed {
                    server: name.to_owned(),
                    message: clean(&e.to_string()),
                });
            }
        };
        redacted(answer, &redactor, scope)
            .map(Some)
            .map_err(|e| UpstreamError::Failed {
                server: name.to_owned(),
                message: format!("its answer could not be redacted: {e}"),
            })
    }
}

fn not_offered(server: &str, needs: Needs) -> UpstreamError {
    UpstreamError::NotOffered {
        server: server.to_owned(),
        what: needs.what(),
    }
}

/// `value` with every string but base64 payloads (`blob`, `data`)
/// redacted by the user's redactor and then the scope's.
fn redacted<T: Serialize + DeserializeOwned>(
    value: T,
    redactor: &Redactor,
    scope: &UserScope,
) -> Result<T, serde_json::Error> {
    fn walk(value: &mut Value, redactor: &Redactor, scope: &UserScope) {
        match value {
            Value::String(text) => {
                let clean = scope.redact(&redactor.redact(text)).into_owned();
                if clean != *text {
                    *text = clean;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, redactor, scope)),
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    if key != "blob" && key != "data" {
                        walk(v, redactor, scope);
                    }
                }
            }
            _ => {}
        }
    }
    let mut json = serde_json::to_value(value)?;
    walk(&mut json, redactor, scope);
    serde_json::from_value(json)
}
