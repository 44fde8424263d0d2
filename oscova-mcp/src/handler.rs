//! The `rmcp` server handler over one user scope: what each MCP request
//! becomes.
//!
//! Rules: the tool list is the scope's, in the form `convert.rs` gives it,
//! computed once per `Served` scope (the catalog is fixed when the host
//! starts) and shared by every handler made over it. Calls go through the
//! scope, so argument checks, redaction and hooks are the host's, and so is
//! approval unless the server was told to approve calls that need it itself
//! or the client can ask the person (`ask.rs`; the host's policy still says
//! which calls need it). An unknown tool is a JSON-RPC invalid-params error
//! (it cannot be routed); everything else, refusals and bad arguments
//! included, is a result with `isError`, which the model can read and act
//! on. Progress becomes `notifications/progress` only when the client sent
//! a progress token, and log messages `notifications/message` at or above
//! the session's level (`logging.rs`), always before the response, with
//! `progress` never decreasing. `notifications/cancelled` cancels the
//! call's token, and the host stops awaiting it at once, a question to the
//! person included. Each call is a future of its own, polled by the request
//! that drives it and cancelled whenever that request goes away; from
//! protocol 2026-07-28 a call that asks the person is parked between the
//! rounds of a multi round-trip request (`rounds.rs`), and its progress and
//! log messages go out with whichever round is in flight; with a wait
//! store it is kept there first, and a retry is answered on any server
//! sharing the store (`handler/retry.rs`, [`crate::wait`]). A call that
//! never asks touches no store. A client that declared the tasks
//! extension gets a call that outlasts the server's threshold, or asks
//! before it, as a task instead, run beside it and followed through the
//! store (`handler/tasks.rs`, [`crate::task`]).
//!
//! Prompts, resources, completion and subscriptions are answered in
//! `handler/service.rs` (the `ServerHandler` methods) from the server's
//! sources, with the session's scope; subscriptions are
//! `handler/subscribe.rs`'s, watched by the server's one watcher
//! (`handler/watch.rs`).
//!
//! Two rules rmcp does not keep on its own: a request for a method this
//! server serves whose `params` do not fit (rmcp's untagged request type
//! then reads it as a custom request) is -32602, not -32601; and at most
//! `max_in_flight` `tools/call` requests run at once per handler, the
//! excess answered at once with [`SERVER_BUSY`] (rmcp spawns a task per
//! request with no bound); over HTTP the same holds per user, whose
//! handlers share one bound (on 2026-07-28 every request is a handler of
//! its own), and for the whole server.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::RwLock;

use oscova_core::tool::{LogLevel, LogSink, ProgressSink, ToolLog};
use oscova_core::{ApprovalDecision, ApprovalRequest, ToolProgress, UserScope};

use super::names::ShortNames;
use oscova_core::ToolResult;
use oscova_core::interaction::AskError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, ElicitRequest, ElicitRequestParams,
    ErrorCode, Implementation, InputRequest, InputRequests, InputRequiredResult, JsonObject,
    ProgressNotificationParam, ProgressToken, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::ask::{self, Asker, ElicitApproval, RoundAsk, RoundReply};
use super::convert::{mcp_result, mcp_tool};
use super::logging::{LogRelay, log_level};
use super::offer::Offer;
use super::rounds::{self, CallEvent, CallEvents, INPUT_KEY, Parked, ParkedCalls, RunningCall};
use super::wait::{Answered, WaitStore};
use retry::Retry;

mod retry;
mod service;
mod subscribe;
mod tasks;
mod watch;

pub(crate) use tasks::Tasks;

#[cfg(feature = "http")]
pub(crate) use watch::Limits as SubscriptionLimits;
pub(crate) use watch::Watcher;
pub use watch::{
    DEFAULT_MAX_SUBSCRIPTIONS_PER_USER, DEFAULT_MAX_SUBSCRIPTIONS_TOTAL, MAX_CHECKS_PER_POLL,
    MAX_SUBSCRIBED_URI_BYTES, MAX_SUBSCRIPTIONS, SUBSCRIPTION_POLL, SubscriptionStats,
};

/// The JSON-RPC error code of a `tools/call` refused because the session
/// already runs its bound of calls: in the range JSON-RPC 2.0 leaves to
/// servers (-32000 to -32099). The error's `data` names the bound
/// (`{"max_in_flight": N}`).
pub const SERVER_BUSY: ErrorCode = ErrorCode(-32000);

/// The methods this server answers whatever it offers (the prompt and
/// resource methods are `offer.rs`'s). A request for one of them that
/// reaches [`McpHandler::on_custom_request`] had `params` that did not fit.
const SERVED_METHODS: [&str; 8] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "logging/setLevel",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
];

/// One session's `rmcp` server handler over a user scope's tools.
///
/// [`McpServer`](super::McpServer) makes one per session; use
/// [`McpServer::handler`](super::McpServer::handler) to serve it yourself
/// with `rmcp`. Cloning shares the in-flight bound.
#[derive(Debug, Clone)]
pub struct McpHandler {
    scope: UserScope,
    tools: Arc<[Tool]>,
    info: Implementation,
    in_flight: Arc<Semaphore>,
    max_in_flight: usize,
    allow_approval_required: bool,
    /// The least severe log level the client wants (`logging/setLevel`).
    log_level: Arc<RwLock<LogLevel>>,
    /// Short names, when served under them.
    names: Option<Arc<ShortNames>>,
    /// The bound shared by every session of a server, and its size.
    global: Option<(Arc<Semaphore>, usize)>,
    /// The bound shared by every session of the user, and its size.
    per_user: Option<(Arc<Semaphore>, usize)>,
    /// The server's calls waiting for an answer between rounds.
    parked: Arc<ParkedCalls>,
    /// Where waiting calls are kept for every instance, if anywhere.
    waits: Option<Arc<dyn WaitStore>>,
    /// The server's tasks running here (and kept here without a store).
    tasks: Arc<Tasks>,
    /// Prompts and resources, when the server has sources of them.
    offer: Offer,
    /// This session's resource subscriptions, and the server's watcher.
    subscriptions: subscribe::Subscriptions,
}

/// What one user is served: a scope and its tools as the client sees
/// them, converted once per scope rather than once per session (on
/// 2026-07-28 every request is a session of its own).
#[derive(Debug, Clone)]
pub(crate) struct Served {
    pub(crate) scope: UserScope,
    tools: Arc<[Tool]>,
    names: Option<Arc<ShortNames>>,
    /// The user's bound on calls in flight, and its size.
    per_user: Option<(Arc<Semaphore>, usize)>,
    /// Prompts and resources beside the tools.
    offer: Offer,
}

impl Served {
    /// `scope`'s tools, under their short names when `names` is given.
    pub(crate) fn new(scope: UserScope, names: Option<Arc<ShortNames>>, offer: Offer) -> Self {
        let tools = scope
            .tools()
            .map(mcp_tool)
            .filter_map(|mut tool| match &names {
                None => Some(tool),
                Some(names) => {
                    tool.name = names.short(&tool.name)?.to_owned().into();
                    Some(tool)
                }
            })
            .collect();
        Self {
            scope,
            tools,
            names,
            per_user: None,
            offer,
        }
    }

    /// Shares `permits` (`max` in all) between every call of this user.
    #[cfg(feature = "http")]
    pub(crate) fn with_user_bound(mut self, permits: Arc<Semaphore>, max: usize) -> Self {
        self.per_user = Some((permits, max));
        self
    }
}

impl McpHandler {
    pub(super) fn new(
        served: Served,
        info: Implementation,
        max_in_flight: usize,
        allow_approval_required: bool,
        (parked, waits, tasks): (Arc<ParkedCalls>, Option<Arc<dyn WaitStore>>, Arc<Tasks>),
        watcher: Watcher,
    ) -> Self {
        Self {
            scope: served.scope,
            tools: served.tools,
            info,
            // Never past what a semaphore holds, whatever a caller asked.
            in_flight: Arc::new(Semaphore::new(max_in_flight.min(Semaphore::MAX_PERMITS))),
            max_in_flight,
            allow_approval_required,
            log_level: Arc::new(RwLock::new(super::logging::DEFAULT_LEVEL)),
            names: served.names,
            global: None,
            per_user: served.per_user,
            parked,
            waits,
            tasks,
            offer: served.offer,
            subscriptions: subscribe::Subscriptions::new(watcher),
        }
    }

    /// Shares a bound on calls in flight with other sessions: `permits`
    /// holds `max` permits in all. Only the HTTP server has sessions to
    /// share it between.
    #[cfg(feature = "http")]
    pub(super) fn with_global_bound(mut self, permits: Arc<Semaphore>, max: usize) -> Self {
        self.global = Some((permits, max));
        self
    }

    fn server_busy(max: usize) -> ErrorData {
        ErrorData::new(
            SERVER_BUSY,
            format!(
                "server busy: the server already runs {max} tool calls, its bound for all \
                 sessions together; retry when one has finished"
            ),
            Some(json!({ "max_in_flight_total": max })),
        )
    }

    fn user_busy(max: usize) -> ErrorData {
        ErrorData::new(
            SERVER_BUSY,
            format!(
                "server busy: this user already runs {max} tool calls, the bound for one user \
                 across sessions and requests; retry when one has finished"
            ),
            Some(json!({ "max_in_flight_per_user": max })),
        )
    }

    fn busy(&self) -> ErrorData {
        ErrorData::new(
            SERVER_BUSY,
            format!(
                "server busy: this session already runs {} tool calls, its bound; \
                 retry when one has finished",
                self.max_in_flight
            ),
            Some(json!({ "max_in_flight": self.max_in_flight })),
        )
    }
}

/// The -32602 answer to a served method whose `params` did not fit.
fn invalid_params(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    let problem = match (method, &request.params) {
        ("tools/call", None) => {
            "`params` is missing; send {\"name\": ..., \"arguments\": {...}}".to_owned()
        }
        ("tools/call", Some(params)) => {
            match serde_json::from_value::<CallToolRequestParams>(params.clone()) {
                Err(error) => error.to_string(),
                Ok(_) => "they do not fit the method".to_owned(),
            }
        }
        (_, None) => "`params` is missing".to_owned(),
        (_, Some(_)) => "they do not fit the method".to_owned(),
    };
    ErrorData::invalid_params(format!("invalid params for `{method}`: {problem}"), None)
}

/// Sends progress notifications for one call, in order, never decreasing.
struct ProgressRelay<'a> {
    peer: &'a Peer<RoleServer>,
    token: ProgressToken,
    last: f64,
    sent: u32,
}

impl ProgressRelay<'_> {
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

/// What one round of a call came to.
enum Round {
    /// The call finished.
    Done(ToolResult),
    /// The call asks the person, and waits for the answer; `true` when
    /// it is the call's approval, asked before the tool's body runs.
    Asked(ElicitRequestParams, RoundReply, bool),
}

impl McpHandler {
    /// `tools/call`, inside its request span: a new call, or the next
    /// round of a parked one.
    async fn run_tool_call(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = match &self.names {
            None => Some(request.name.as_ref()),
            Some(names) => names.wire(&request.name),
        };
        let Some(name) = name.filter(|name| self.scope.tool(name).is_some()) else {
            let name = request.name.as_ref();
            // The name is the client's text, and may be a secret pasted by
            // mistake: the error passes the scope's and the host's
            // redactors, as results do.
            let message = format!("unknown tool `{name}`");
            let message = self.scope.redact(&message).into_owned();
            return Err(ErrorData::invalid_params(message, None));
        };
        // Held until the response is built; a cancelled call returns at
        // once, so its permit comes back at once too.
        let Ok(_permit) = self.in_flight.clone().try_acquire_owned() else {
            return Err(self.busy());
        };
        let _user = match &self.per_user {
            None => None,
            Some((permits, max)) => match permits.clone().try_acquire_owned() {
                Ok(permit) => Some(permit),
                Err(_) => return Err(Self::user_busy(*max)),
            },
        };
        let _global = match &self.global {
            None => None,
            Some((permits, max)) => match permits.clone().try_acquire_owned() {
                Ok(permit) => Some(permit),
                Err(_) => return Err(Self::server_busy(*max)),
            },
        };
        if request.request_state.is_none() && tasks::wanted(&context) {
            let permits = (_permit, _user, _global);
            return self
                .start_task(name, request.arguments.take(), &context, permits)
                .await;
        }
        let user = self.scope.user().id();
        let arguments = request.arguments.take();
        // Kept with a wait should the call park: only with a store, and
        // only when the client can be asked in rounds at all.
        let may_park =
            self.waits.is_some() && ask::in_rounds(&context) && ask::can_elicit(&context);
        let (arguments, kept_arguments) = if may_park {
            (arguments.clone(), arguments)
        } else {
            (arguments, None)
        };
        let mut call = match request.request_state.as_deref() {
            None => self.start_call(name, arguments, &context, VecDeque::new()),
            Some(handle) => {
                let response = request
                    .input_responses
                    .as_ref()
                    .and_then(|r| r.get(INPUT_KEY));
                match self
                    .retry(handle, name, arguments, response, &context)
                    .await?
                {
                    Retry::Goes(call) => call,
                    Retry::Ends(result) => {
                        return Ok(mcp_result(result, self.scope.tool(name)).into());
                    }
                }
            }
        };
        let mut logs = LogRelay {
            peer: &context.peer,
            logger: name,
        };
        let mut relay = context
            .meta
            .get_progress_token()
            .map(|token| ProgressRelay {
                peer: &context.peer,
                token,
                last: 0.0,
                sent: 0,
            });
        loop {
            let (params, reply, before_body) =
                match drive(&mut call, &mut relay, &mut logs, &context.ct).await {
                    Round::Done(result) => {
                        return Ok(mcp_result(result, self.scope.tool(name)).into());
                    }
                    Round::Asked(params, reply, before_body) => (params, reply, before_body),
                };
            let mut asked = serde_json::to_value(&params).unwrap_or_default();
            self.scope.redact_json(&mut asked);
            if let Some(answered) = call.replay.pop_front() {
                if answered.asked == asked {
                    // Asked and answered in an earlier run of this call.
                    let _ = reply.send(retry::answer_in(Some(&answered.answer)));
                    call.answered.push(answered);
                    continue;
                }
                // The call went another way: the person is asked from here.
                call.replay.clear();
            }
            let handle = rounds::new_handle().map_err(|e| ErrorData::internal_error(e, None))?;
            if let Some(store) = &self.waits {
                let arguments = kept_arguments.clone();
                let wait = self.kept_wait(&handle, name, arguments, &call, (&asked, before_body));
                if let Err(reason) = self.keep(store.as_ref(), &wait).await {
                    // Nobody is asked a question whose wait is not kept.
                    let _ = reply.send(Err(AskError::Failed(reason)));
                    continue;
                }
            }
            let parked = Parked {
                user: user.to_owned(),
                tool: name.to_owned(),
                call,
                answer: reply,
                asked,
            };
            self.parked.park(handle.clone(), parked);
            let mut requests = InputRequests::new();
            let ask = InputRequest::Elicitation(ElicitRequest::new(params));
            requests.insert(INPUT_KEY.to_owned(), ask);
            let result = InputRequiredResult::new(Some(requests), Some(handle));
            return Ok(CallToolResponse::InputRequired(result));
        }
    }

    /// Makes the call of `name` a future of its own, inside the current
    /// (request) span, reporting through one queue of events.
    /// `replay` holds the answers an earlier run of the call was given,
    /// to give again to the same questions (`rounds.rs`).
    fn start_call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        context: &RequestContext<RoleServer>,
        replay: VecDeque<Answered>,
    ) -> RunningCall {
        self.start_call_asking(
            name,
            arguments,
            |events| Asker::for_request(context, events),
            replay,
        )
    }

    /// [`start_call`](Self::start_call), its questions asked through the
    /// asker `asker` makes of the call's events.
    fn start_call_asking(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        asker: impl FnOnce(&Arc<CallEvents>) -> Asker,
        replay: VecDeque<Answered>,
    ) -> RunningCall {
        let events = Arc::new(CallEvents::default());
        let threshold = *self
            .log_level
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let log_sink: LogSink = {
            let events = events.clone();
            Arc::new(move |l: ToolLog| {
                if l.level >= threshold {
                    let _ = events.push(CallEvent::Log(l));
                }
            })
        };
        let progress_sink: ProgressSink = {
            let events = events.clone();
            Arc::new(move |p| {
                let _ = events.push(CallEvent::Progress(p));
            })
        };
        let asker = asker(&events);
        // Either the server approves such calls itself, or the person is
        // asked through the client when it can ask, or the host's handler
        // decides.
        let elicit_approval =
            (!self.allow_approval_required && asker.can_ask()).then(|| ElicitApproval {
                asker: asker.clone(),
                scope: self.scope.clone(),
            });
        let approve_all = self.allow_approval_required;
        let cancel = CancellationToken::new();
        let (scope, name) = (self.scope.clone(), name.to_owned());
        let arguments = Value::Object(arguments.unwrap_or_default());
        let token = cancel.clone();
        let run = async move {
            let call = scope
                .invoke(&name, arguments)
                .cancellation(token)
                .progress_arc(Some(progress_sink))
                .log_arc(log_sink)
                .interaction_handler_arc(ask::interaction(asker));
            if approve_all {
                call.approval_handler(|_: &ApprovalRequest<'_>| ApprovalDecision::Approve)
                    .await
            } else if let Some(approval) = elicit_approval {
                call.approval_handler(approval).await
            } else {
                call.await
            }
        };
        RunningCall {
            task: Box::pin(run.in_current_span()),
            cancel,
            events,
            answered: Vec::new(),
            replay,
        }
    }
}

/// Runs `call` until it finishes or asks the person, relaying its
/// progress and log messages; a cancelled request cancels the call, which
/// then finishes as cancelled. Updates queued meanwhile go out before the
/// round ends.
async fn drive(
    call: &mut RunningCall,
    relay: &mut Option<ProgressRelay<'_>>,
    logs: &mut LogRelay<'_>,
    ct: &CancellationToken,
) -> Round {
    let mut cancelled = false;
    let round = loop {
        tokio::select! {
            result = &mut call.task => break Round::Done(result),
            event = call.events.next() => {
                if let Some(ask) = report(event, relay, logs).await {
                    match ask::form_params(&ask.question) {
                        Ok(params) => break Round::Asked(params, ask.reply, ask.before_body),
                        Err(e) => {
                            let _ = ask.reply.send(Err(e));
                        }
                    }
                }
            }
            () = ct.cancelled(), if !cancelled => {
                cancelled = true;
                call.cancel.cancel();
            }
        }
    };
    while let Some(event) = call.events.next_report() {
        report(event, relay, logs).await;
    }
    round
}

/// Sends a progress or log report on; gives back a question.
async fn report(
    event: CallEvent,
    relay: &mut Option<ProgressRelay<'_>>,
    logs: &mut LogRelay<'_>,
) -> Option<RoundAsk> {
    match event {
        CallEvent::Progress(p) => {
            if let Some(relay) = relay.as_mut() {
                relay.send(p).await;
            }
        }
        CallEvent::Log(l) => logs.send(l).await,
        CallEvent::Ask(ask) => return Some(ask),
    }
    None
}
