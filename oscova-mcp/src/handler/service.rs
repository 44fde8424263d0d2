//! What each MCP request becomes: the `rmcp` `ServerHandler` over the
//! session's handler.
//!
//! Rules: tools and logging are always served (`handler.rs` runs the
//! calls); prompts, resources and completion only when the server has a
//! source for them (`offer.rs`), and the capabilities say exactly that.
//! Every source is asked with the session's user scope. A source's
//! refusal is passed through `SourceError::to_mcp` and the scope's
//! redactor (its message may quote the client's text). What a source
//! gives is redacted as tool results are: every text of a prompt's
//! messages (text blocks, embedded text resources) and of a resource's
//! text contents passes the scope's and the host's redactors, so a
//! secret the host knows never leaves through a prompt or a file; blobs
//! are bytes and pass as they are. Completion for an
//! unknown prompt is invalid params, as the protocol asks; a template a
//! source does not complete gets no values. At most 100 values are sent,
//! with `total` and `hasMore` saying so.

use std::sync::Arc;

#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, CompletionInfo, ContentBlock, CustomRequest, CustomResult, ErrorCode,
    GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    PromptsCapability, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Reference, ResourceContents, ResourcesCapability, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tracing::Instrument as _;

use super::subscribe::ListKind;
use super::{McpHandler, SERVED_METHODS, invalid_params, log_level};
use crate::offer::SourceError;
use crate::prompt::{MAX_COMPLETIONS, PromptArguments};
use crate::resource::ResourceSource;
use serde_json::Value;

/// The -32601 answer for a method this server has no source for.
fn not_served(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: `{method}` (this server has no source for it)"),
        None,
    )
}

/// `contents` with its text redacted by `redact`.
fn redact_contents(contents: &mut ResourceContents, redact: &impl Fn(&str) -> Option<String>) {
    if let ResourceContents::TextResourceContents { text, .. } = contents
        && let Some(clean) = redact(text)
    {
        *text = clean;
    }
}

/// The arguments of a request as text: strings as they are, other JSON as
/// its text.
fn arguments_of(arguments: Option<&rmcp::model::JsonObject>) -> PromptArguments {
    arguments
        .into_iter()
        .flatten()
        .map(|(name, value)| {
            let text = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            (name.clone(), text)
        })
        .collect()
}

impl McpHandler {
    /// `text` passed through the scope's and the host's redactors, when
    /// that changes it.
    fn redacted(&self, text: &str) -> Option<String> {
        match self.scope.redact(text) {
            std::borrow::Cow::Borrowed(_) => None,
            std::borrow::Cow::Owned(clean) => Some(clean),
        }
    }

    /// A source's refusal as the client gets it, redacted.
    fn refuse(&self, error: &SourceError) -> ErrorData {
        let mut data = error.to_mcp();
        data.message = self.scope.redact(&data.message).into_owned().into();
        data
    }

    fn resources(&self, method: &str) -> Result<&Arc<dyn ResourceSource>, ErrorData> {
        self.offer
            .resources
            .as_ref()
            .ok_or_else(|| not_served(method))
    }

    fn capabilities(&self) -> ServerCapabilities {
        #[allow(deprecated)]
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .enable_tasks()
            .build();
        if let Some(prompts) = &self.offer.prompts {
            let mut capability = PromptsCapability::default();
            capability.list_changed = prompts.list_changes().map(|_| true);
            capabilities.prompts = Some(capability);
        }
        if let Some(resources) = &self.offer.resources {
            let mut capability = ResourcesCapability::default();
            capability.subscribe = resources.subscribable().then_some(true);
            capability.list_changed = resources.list_changes().map(|_| true);
            capabilities.resources = Some(capability);
        }
        if self.offer.completes() {
            capabilities.completions = Some(Default::default());
        }
        capabilities
    }
}

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        // What this server really serves: tools, log messages from them,
        // and prompts, resources and completion when it has sources.
        ServerConfig::new(self.capabilities())
            .with_server_info(self.info.clone())
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
        let span = crate::trace::request_span("tools/call", Some(&request.name), &context);
        let response = self
            .run_tool_call(request, context.clone())
            .instrument(span.clone())
            .await;
        let response = crate::link::carry(response, &context);
        match &response {
            Err(_) => crate::trace::record_error(&span, "protocol_error"),
            Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
                crate::trace::record_error(&span, "tool_error");
            }
            Ok(_) => {}
        }
        response
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.get_task_state(&request.task_id).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let responses = request.input_responses.into_iter().collect();
        self.update_task_state(&request.task_id, responses).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.cancel_task_state(&request.task_id).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self
            .log_level
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = log_level(&request);
        Ok(())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.as_str();
        if SERVED_METHODS.contains(&method) || self.offer.serves(method) {
            return Err(invalid_params(&request));
        }
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("method not found: `{}`", request.method),
            None,
        ))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let source = self
            .offer
            .prompts
            .as_ref()
            .ok_or_else(|| not_served("prompts/list"))?;
        let prompts = source
            .list(&self.scope)
            .await
            .map_err(|e| self.refuse(&e))?;
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let source = self
            .offer
            .prompts
            .as_ref()
            .ok_or_else(|| not_served("prompts/get"))?;
        let arguments = arguments_of(request.arguments.as_ref());
        let mut result = source
            .get(&self.scope, &request.name, &arguments)
            .await
            .map_err(|e| self.refuse(&e))?;
        let redact = |text: &str| self.redacted(text);
        for message in &mut result.messages {
            match &mut message.content {
                ContentBlock::Text(block) => {
                    if let Some(clean) = redact(&block.text) {
                        block.text = clean;
                    }
                }
                ContentBlock::Resource(block) => redact_contents(&mut block.resource, &redact),
                _ => {}
            }
        }
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let source = self.resources("resources/list")?;
        let resources = source
            .list(&self.scope)
            .await
            .map_err(|e| self.refuse(&e))?;
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let source = self.resources("resources/templates/list")?;
        let templates = source
            .templates(&self.scope)
            .await
            .map_err(|e| self.refuse(&e))?;
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let source = self.resources("resources/read")?;
        let mut contents = source
            .read(&self.scope, &request.uri)
            .await
            .map_err(|e| self.refuse(&e))?;
        let redact = |text: &str| self.redacted(text);
        for content in &mut contents {
            redact_contents(content, &redact);
        }
        Ok(ReadResourceResult::new(contents).into())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let source = self.resources("resources/subscribe")?;
        if !source.subscribable() {
            return Err(ErrorData::invalid_params(
                "this server's resources take no subscriptions",
                None,
            ));
        }
        self.subscriptions
            .add(
                source.clone(),
                self.scope.clone(),
                request.uri,
                context.peer,
            )
            .await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.resources("resources/unsubscribe")?;
        self.subscriptions.remove(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        let prompts_change = self.offer.prompts.as_ref().and_then(|p| p.list_changes());
        if prompts_change.is_some() {
            accepted.prompts_list_changed = requested.prompts_list_changed;
        }
        let Some(source) = self.offer.resources.as_ref() else {
            return prompts_change.map(|_| accepted);
        };
        if source.list_changes().is_some() {
            accepted.resources_list_changed = requested.resources_list_changed;
        }
        if source.subscribable() {
            let watcher = self.subscriptions.watcher();
            let user = self.scope.user().id();
            accepted.resource_subscriptions = requested
                .resource_subscriptions
                .as_ref()
                .map(|uris| super::subscribe::accepted_uris(watcher, user, uris));
        }
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let prompt_changes = self
            .offer
            .prompts
            .as_ref()
            .and_then(|p| p.list_changes_for(&self.scope));
        let resources = self.offer.resources.clone();
        let watcher = self.subscriptions.watcher();
        super::subscribe::listen(
            resources,
            prompt_changes,
            self.scope.clone(),
            watcher,
            context,
        )
        .await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let scope = &self.scope;
        if let Some(changes) = self
            .offer
            .prompts
            .as_ref()
            .and_then(|p| p.list_changes_for(scope))
        {
            let peer = context.peer.clone();
            self.subscriptions.forward(ListKind::Prompts, changes, peer);
        }
        if let Some(changes) =
            (self.offer.resources.as_ref()).and_then(|r| r.list_changes_for(scope))
        {
            let peer = context.peer.clone();
            self.subscriptions
                .forward(ListKind::Resources, changes, peer);
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        if !self.offer.completes() {
            return Err(not_served("completion/complete"));
        }
        let argument = &request.argument;
        let values = match &request.r#ref {
            Reference::Prompt(prompt) => match &self.offer.prompts {
                None => Vec::new(),
                Some(source) => {
                    let context = request
                        .context
                        .as_ref()
                        .and_then(|c| c.arguments.as_ref())
                        .map(|a| a.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                        .unwrap_or_default();
                    source
                        .complete(
                            &self.scope,
                            &prompt.name,
                            &argument.name,
                            &argument.value,
                            &context,
                        )
                        .await
                        .map_err(|e| self.refuse(&e))?
                }
            },
            Reference::Resource(template) => match &self.offer.resources {
                None => Vec::new(),
                Some(source) => source
                    .complete(&self.scope, &template.uri, &argument.name, &argument.value)
                    .await
                    .map_err(|e| self.refuse(&e))?,
            },
            _ => Vec::new(),
        };
        let mut values = values;
        let more = values.len() > MAX_COMPLETIONS;
        values.truncate(MAX_COMPLETIONS);
        let total = u32::try_from(values.len()).unwrap_or(u32::MAX);
        let completion = CompletionInfo::with_pagination(values, Some(total), more)
            .map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(CompleteResult::new(completion))
    }
}
