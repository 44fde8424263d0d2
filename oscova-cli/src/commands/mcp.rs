//! `oscova mcp`: one user's tools as an MCP server over stdin and stdout.
//!
//! Rules: the tool list is the user scope's, computed once at start (the
//! catalog is fixed when the host starts), with the raw input schemas and
//! `openWorldHint` true exactly for `NetworkScope::Internet` tools. No
//! `readOnlyHint`/`destructiveHint` is sent: Oscova metadata says nothing
//! about side effects, and a wrong hint is worse than none. Calls go through
//! the scope, so approval, argument checks, redaction and hooks are the
//! host's. An unknown tool is a JSON-RPC invalid-params error (it cannot be
//! routed); everything else, refusals and bad arguments included, is a
//! result with `isError`, which the model can read and act on. A result's
//! text is the tool's `content`; its `details`, when they are a JSON
//! object, are also sent as `structuredContent`. Progress
//! becomes `notifications/progress` only when the client sent a progress
//! token, always before the response, with `progress` never decreasing.
//! `notifications/cancelled` cancels the call's token, and the host stops
//! awaiting it at once. stdout carries protocol messages only.

use std::sync::Arc;

use oscova_core::{NetworkScope, ToolProgress, ToolResult, UserScope, host::PublishedTool};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::sync::mpsc;

use super::Env;
use crate::cli::McpArgs;
use crate::error::{CliError, ExitStatus};
use crate::output::warn;

pub(super) async fn run(env: &Env, args: McpArgs) -> Result<ExitStatus, CliError> {
    let scope = env
        .host
        .user_scope(env.config.user(args.user.user.as_deref()));
    for d in scope.diagnostics() {
        warn(&d.to_string());
    }
    serve_stdio(scope).await?;
    Ok(ExitStatus::Success)
}

/// Serves `scope`'s tools over MCP on stdin and stdout until the client
/// disconnects. Approval is whatever the scope's host decides.
pub async fn serve_stdio(scope: UserScope) -> Result<(), CliError> {
    let running = McpServer::new(scope)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| CliError::Mcp(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| CliError::Mcp(e.to_string()))?;
    Ok(())
}

/// An MCP server handler over one user's tools; serve it on any `rmcp`
/// transport.
#[derive(Debug, Clone)]
pub struct McpServer {
    scope: UserScope,
    tools: Arc<[Tool]>,
}

impl McpServer {
    /// A server for `scope`'s tools.
    pub fn new(scope: UserScope) -> Self {
        let tools = scope.tools().map(mcp_tool).collect();
        Self { scope, tools }
    }
}

fn mcp_tool(tool: &PublishedTool) -> Tool {
    let schema: JsonObject = match tool.input_schema() {
        Value::Object(map) => map.clone(),
        // Tool arguments are always an object; the macro never emits
        // anything else, but a hand-written toolset might.
        _ => JsonObject::from_iter([("type".to_owned(), Value::from("object"))]),
    };
    let open_world = tool.network_scope() == NetworkScope::Internet;
    Tool::new(
        tool.wire_name().to_owned(),
        tool.description(),
        Arc::new(schema),
    )
    .with_annotations(ToolAnnotations::new().open_world(open_world))
}

fn mcp_result(result: ToolResult) -> CallToolResult {
    let content = vec![ContentBlock::text(result.content)];
    let mut out = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    // MCP's `structuredContent` is an object, and peers before 2026-07-28
    // drop anything else; other details are in the text already.
    if result.details.is_object() {
        out.structured_content = Some(result.details);
    }
    out
}

/// Sends progress notifications for one call, in order, never decreasing.
struct ProgressRelay {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    last: f64,
    sent: u32,
}

impl ProgressRelay {
    async fn send(&mut self, p: ToolProgress) {
        self.sent += 1;
        let value = p.progress.unwrap_or(f64::from(self.sent)).max(self.last);
        self.last = value;
        let mut param = ProgressNotificationParam::new(self.token.clone(), value);
        if let Some(total) = p.total {
            param = param.with_total(total);
        }
        if !p.message.is_empty() {
            param = param.with_message(p.message);
        }
        // A client that went away cannot be told; the call carries on.
        let _ = self.peer.notify_progress(param).await;
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("oscova", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Tools of the Oscova plugins linked into this host, for user `{}`.",
                self.scope.user().id()
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        if self.scope.tool(name).is_none() {
            // The name is the client's text, and may be a secret pasted by
            // mistake; the response passes the scope's and the CLI's
            // redactors, as results pass the host's.
            let message = format!("unknown tool `{name}`");
            let message = crate::output::redacted(&self.scope.redactor().redact(&message));
            return Err(ErrorData::invalid_params(message, None));
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let (tx, mut rx) = mpsc::unbounded_channel::<ToolProgress>();
        let mut relay = context
            .meta
            .get_progress_token()
            .map(|token| ProgressRelay {
                peer: context.peer.clone(),
                token,
                last: 0.0,
                sent: 0,
            });
        let call = self
            .scope
            .invoke(name, arguments)
            .cancel_on(context.ct.clone());
        let call = call.progress_sink(relay.is_some().then(|| {
            let sink: oscova_core::tool::ProgressSink = Arc::new(move |p| {
                let _ = tx.send(p);
            });
            sink
        }));
        tokio::pin!(call);
        let result = loop {
            tokio::select! {
                result = &mut call => break result,
                Some(p) = rx.recv() => {
                    if let Some(relay) = relay.as_mut() {
                        relay.send(p).await;
                    }
                }
            }
        };
        // Updates queued while the call finished go out before the response.
        while let Ok(p) = rx.try_recv() {
            if let Some(relay) = relay.as_mut() {
                relay.send(p).await;
            }
        }
        Ok(mcp_result(result).into())
    }
}
