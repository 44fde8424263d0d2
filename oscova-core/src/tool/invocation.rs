//! The per-call handle a tool may take as `&ToolInvocation`.
//!
//! Creating one is cheap on purpose (it sits on every call's path): the
//! cancellation token is created lazily when nobody supplied one, because a
//! token no caller holds can never be cancelled anyway, and so is the
//! call's tracing span, which only logging needs. What a tool sends out
//! through it (progress, log messages, questions) passes the scope's
//! redaction first.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::context::UserInfo;
use crate::interaction::{
    Answer, AskError, Form, InteractionHandler, InteractionRequest, Question, TEXT_FIELD,
};
use crate::process::{ProcessSpawnPolicy, ProcessSpawnRequest};
use crate::redact::Redactor;

use super::log::{LogLevel, LogSink, ToolLog};
use super::progress::{ProgressSink, ToolProgress};

/// A unique id of one tool call within this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CallId(u64);

impl CallId {
    /// A fresh id.
    pub fn next() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The number behind the id.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for CallId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "call-{}", self.0)
    }
}

/// What every call of one user scope starts from: the user, the spawn
/// policy, the redactors. A call borrows it from its scope, so starting a
/// call touches no reference count.
#[derive(Debug)]
pub(crate) struct CallBase {
    pub(crate) user: Arc<UserInfo>,
    pub(crate) spawn: Option<ProcessSpawnPolicy>,
    /// The scope's redactor, then the host's.
    pub(crate) redactors: [Redactor; 2],
}

impl CallBase {
    pub(crate) fn redact(&self, text: &mut String) {
        for redactor in &self.redactors {
            if let std::borrow::Cow::Owned(clean) = redactor.redact(text) {
                *text = clean;
            }
        }
    }
}

/// A call's base: borrowed from a user scope, owned by a handle built on
/// its own.
enum BaseRef<'a> {
    Borrowed(&'a CallBase),
    Owned(Arc<CallBase>),
}

impl std::ops::Deref for BaseRef<'_> {
    type Target = CallBase;

    #[inline]
    fn deref(&self) -> &CallBase {
        match self {
            Self::Borrowed(shared) => shared,
            Self::Owned(shared) => shared,
        }
    }
}

/// The one disabled span every call shares while nobody listens.
#[inline]
fn disabled_span() -> &'static tracing::Span {
    static NONE: tracing::Span = tracing::Span::none();
    &NONE
}

/// The per-call handle: call id, user, cancellation, progress, processes.
///
/// It lives as long as the call and borrows the user scope's part for
/// `'a`, the way [`std::task::Context`] borrows its waker, so starting a
/// call costs no reference count. In a `#[toolset]` impl, take it as
/// `&ToolInvocation`: the macro fills in the lifetime. A helper `async fn`
/// elsewhere writes `&ToolInvocation<'_>`, as an `async fn` must.
pub struct ToolInvocation<'a> {
    /// Taken from the process-wide counter on first use only: most calls
    /// never ask, and the counter is a contended cache line under load.
    call_id: OnceLock<CallId>,
    base: BaseRef<'a>,
    cancel: OnceLock<CancellationToken>,
    progress: Option<ProgressSink>,
    /// The wire name of the tool, when a host runs it.
    tool: &'a str,
    interaction: Option<Arc<dyn InteractionHandler>>,
    log: Option<LogSink>,
    /// Set when the call starts, and only while somebody listens.
    span: Option<tracing::Span>,
}

impl ToolInvocation<'static> {
    /// A handle for a call made by `user`. Hosts build these; tests may too.
    ///
    /// ```
    /// use oscova_core::{ToolInvocation, UserInfo};
    /// let inv = ToolInvocation::new(UserInfo::new("alice").into());
    /// assert_eq!(inv.user_id(), "alice");
    /// assert!(!inv.is_cancelled());
    /// ```
    pub fn new(user: Arc<UserInfo>) -> Self {
        let mut invocation = Self::with_base(BaseRef::Owned(Arc::new(CallBase {
            user,
            spawn: None,
            redactors: Default::default(),
        })));
        invocation.start_span("");
        invocation
    }
}

impl<'a> ToolInvocation<'a> {
    /// A handle borrowing a user scope's call base.
    pub(crate) fn borrowing(base: &'a CallBase, tool: &'a str) -> Self {
        let mut invocation = Self::with_base(BaseRef::Borrowed(base));
        invocation.tool = tool;
        invocation
    }

    fn with_base(base: BaseRef<'a>) -> Self {
        Self {
            call_id: OnceLock::new(),
            base,
            cancel: OnceLock::new(),
            progress: None,
            tool: "",
            interaction: None,
            log: None,
            span: None,
        }
    }

    /// Sends questions to `handler` ([`ask`](Self::ask) and its forms).
    pub fn with_interaction_handler(self, handler: impl InteractionHandler) -> Self {
        self.with_interaction_handler_arc(Arc::new(handler) as Arc<dyn InteractionHandler>)
    }

    /// [`with_interaction_handler`](Self::with_interaction_handler) with a
    /// handler the caller already holds.
    pub fn with_interaction_handler_arc(mut self, handler: Arc<dyn InteractionHandler>) -> Self {
        self.set_interaction(handler);
        self
    }

    pub(crate) fn set_interaction(&mut self, handler: Arc<dyn InteractionHandler>) {
        self.interaction = Some(handler);
    }

    /// Sends log messages to `sink` (as well as to tracing).
    pub fn with_log(self, sink: impl Fn(ToolLog) + Send + Sync + 'static) -> Self {
        self.with_log_arc(Arc::new(sink) as LogSink)
    }

    /// [`with_log`](Self::with_log) with a sink the caller already holds.
    pub fn with_log_arc(mut self, sink: LogSink) -> Self {
        self.set_log(sink);
        self
    }

    pub(crate) fn set_log(&mut self, sink: LogSink) {
        self.log = Some(sink);
    }

    /// Uses `token` for cancellation.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.set_cancellation(token);
        self
    }

    pub(crate) fn set_cancellation(&mut self, token: CancellationToken) {
        self.cancel = OnceLock::from(token);
    }

    /// Sends progress updates to `sink`.
    pub fn with_progress(self, sink: impl Fn(ToolProgress) + Send + Sync + 'static) -> Self {
        self.with_progress_arc(Arc::new(sink) as ProgressSink)
    }

    /// [`with_progress`](Self::with_progress) with a sink the caller
    /// already holds.
    pub fn with_progress_arc(mut self, sink: ProgressSink) -> Self {
        self.set_progress(sink);
        self
    }

    pub(crate) fn set_progress(&mut self, sink: ProgressSink) {
        self.progress = Some(sink);
    }

    /// Uses `policy` for processes started by this call.
    pub fn with_spawn_policy(mut self, policy: ProcessSpawnPolicy) -> Self {
        self.base = BaseRef::Owned(Arc::new(CallBase {
            user: self.base.user.clone(),
            spawn: Some(policy),
            redactors: self.base.redactors.clone(),
        }));
        self
    }

    /// This call's id.
    pub fn call_id(&self) -> CallId {
        *self.call_id.get_or_init(CallId::next)
    }

    /// The calling user's id.
    pub fn user_id(&self) -> &str {
        self.base.user.id()
    }

    /// The calling user.
    pub fn user(&self) -> &UserInfo {
        &self.base.user
    }

    /// The call's cancellation token. Long-running tools should watch it;
    /// the host stops awaiting a cancelled call either way: at once, or
    /// once the grace period its caller gave the body to clean up in is
    /// over (the host's `cancellation_grace`).
    pub fn cancellation_token(&self) -> &CancellationToken {
        self.cancel.get_or_init(CancellationToken::new)
    }

    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel
            .get()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Reports progress to the host (dropped when nobody listens).
    pub fn report(&self, progress: ToolProgress) {
        if let Some(sink) = &self.progress {
            sink(progress);
        }
    }

    /// The wire name of the tool being called (empty for a handle a test
    /// built on its own).
    pub fn tool_name(&self) -> &str {
        self.tool
    }

    /// The call's tracing span: `execute_tool`, with the OpenTelemetry GenAI
    /// attributes (`gen_ai.tool.name`, `gen_ai.tool.call.id`, the plugin id,
    /// `user.id`; see the host's `invoke` module). A host opens it when the
    /// call starts and the call runs inside it; a handle made outside a host
    /// makes one when it is made. [`log`](Self::log) records in it; a tool
    /// may enter it for its own events too. While nobody listens it is
    /// disabled.
    #[inline]
    pub fn span(&self) -> &tracing::Span {
        self.span.as_ref().unwrap_or_else(|| disabled_span())
    }

    /// Opens the call's span for a tool of `plugin`, unless it has one.
    ///
    /// With nobody listening the span is disabled, and it is neither kept
    /// nor given the call's id: filling a `OnceLock` and taking an id from
    /// the process-wide counter were a tenth of a small call's cost.
    #[inline]
    pub(crate) fn start_span(&mut self, plugin: &str) {
        // No subscriber was ever installed (one atomic load): nothing could
        // be listening, so do not even ask the call site.
        if self.span.is_none() && tracing::dispatcher::has_been_set() {
            self.open_span(plugin);
        }
    }

    /// [`start_span`](Self::start_span) once a subscriber exists, out of
    /// line so the check above costs no call.
    #[inline(never)]
    fn open_span(&mut self, plugin: &str) {
        let span = super::span::call_span(self.tool, plugin, self.user_id());
        self.set_span(span);
    }

    /// Gives the call the span its host opened for it.
    pub(crate) fn set_span(&mut self, span: tracing::Span) {
        if span.is_disabled() {
            return;
        }
        super::span::record_call_id(&span, self.call_id());
        self.span = Some(span);
    }

    /// Logs `message` at `level`: to tracing, inside the call's
    /// [`span`](Self::span), and to the host's log sink for the call (an
    /// MCP client's `notifications/message`, say). The message passes the
    /// scope's redaction first.
    ///
    /// ```
    /// use oscova_core::{ToolInvocation, UserInfo};
    /// use oscova_core::tool::LogLevel;
    /// let inv = ToolInvocation::new(UserInfo::new("alice").into());
    /// inv.log(LogLevel::Info, "fetched 3 pages");
    /// ```
    pub fn log(&self, level: LogLevel, message: impl Into<String>) {
        let mut message = message.into();
        self.base.redact(&mut message);
        self.span().in_scope(|| match level {
            LogLevel::Debug => tracing::debug!(target: "oscova::tool", "{message}"),
            LogLevel::Info | LogLevel::Notice => {
                tracing::info!(target: "oscova::tool", level = level.as_str(), "{message}");
            }
            LogLevel::Warning => tracing::warn!(target: "oscova::tool", "{message}"),
            _ => tracing::error!(target: "oscova::tool", level = level.as_str(), "{message}"),
        });
        if let Some(sink) = &self.log {
            sink(ToolLog { level, message });
        }
    }

    /// Asks the person `question` through the host's handler and returns
    /// the answer, checked against the question (see
    /// [`crate::interaction`]). Stops waiting when the call is cancelled.
    pub async fn ask(&self, mut question: Question) -> Result<Answer, AskError> {
        let Some(handler) = &self.interaction else {
            return Err(AskError::NoOneToAsk(
                "this host did not give the call a way to ask the person".to_owned(),
            ));
        };
        self.base.redact(question.message_mut());
        let request = InteractionRequest {
            tool: self.tool.to_owned(),
            call_id: self.call_id(),
            user_id: self.user_id().to_owned(),
            question: question.clone(),
        };
        let asking = handler.ask(request);
        let token = self.cancellation_token();
        let answer = tokio::select! {
            biased;
            () = token.cancelled() => return Err(AskError::Cancelled),
            answer = asking => answer?,
        };
        match answer {
            Answer::Accept(values) => question.check_answer(values).map(Answer::Accept),
            other => Ok(other),
        }
    }

    /// Asks a yes/no question: `Ok(true)` for yes, `Ok(false)` for no.
    pub async fn confirm(&self, message: impl Into<String>) -> Result<bool, AskError> {
        let message = message.into();
        match self.ask(Question::Confirm { message }).await? {
            Answer::Accept(_) => Ok(true),
            Answer::Decline => Ok(false),
            Answer::Cancel => Err(AskError::Dismissed),
        }
    }

    /// Asks the person to choose one of `options`; returns its index.
    pub async fn choose(
        &self,
        message: impl Into<String>,
        options: impl IntoIterator<Item = impl Into<String>>,
    ) -> Result<usize, AskError> {
        let options: Vec<String> = options.into_iter().map(Into::into).collect();
        let question = Question::Choose {
            message: message.into(),
            options: options.clone(),
        };
        let values = accepted(self.ask(question).await?)?;
        let choice = values
            .get(crate::interaction::CHOICE_FIELD)
            .and_then(|v| v.as_str());
        options
            .iter()
            .position(|o| Some(o.as_str()) == choice)
            .ok_or_else(|| AskError::InvalidAnswer("no option was chosen".to_owned()))
    }

    /// Asks for a line of text, offering `default`.
    pub async fn ask_text(
        &self,
        message: impl Into<String>,
        default: Option<&str>,
    ) -> Result<String, AskError> {
        let question = Question::Text {
            message: message.into(),
            default: default.map(str::to_owned),
        };
        let values = accepted(self.ask(question).await?)?;
        match values.get(TEXT_FIELD) {
            Some(serde_json::Value::String(text)) => Ok(text.clone()),
            _ => Err(AskError::InvalidAnswer("no text was entered".to_owned())),
        }
    }

    /// Asks the person to fill `form`; returns the values by field name,
    /// defaults filled in.
    pub async fn fill(
        &self,
        message: impl Into<String>,
        form: Form,
    ) -> Result<serde_json::Map<String, serde_json::Value>, AskError> {
        let question = Question::Form {
            message: message.into(),
            form,
        };
        accepted(self.ask(question).await?)
    }

    /// The process spawn policy for this call: processes a tool starts get
    /// a filtered environment and the user's `TZ`.
    pub fn spawn_policy(&self) -> ProcessSpawnPolicy {
        self.base.spawn.clone().unwrap_or_default()
    }

    /// A spawn request for `command` already carrying the user's time zone.
    pub fn process(&self, command: impl Into<std::ffi::OsString>) -> ProcessSpawnRequest {
        let request = ProcessSpawnRequest::new(command);
        match self.base.user.time_zone() {
            Some(tz) => request.time_zone(tz),
            None => request,
        }
    }
}

fn accepted(answer: Answer) -> Result<serde_json::Map<String, serde_json::Value>, AskError> {
    match answer {
        Answer::Accept(values) => Ok(values),
        Answer::Decline => Err(AskError::Declined),
        Answer::Cancel => Err(AskError::Dismissed),
    }
}

impl fmt::Debug for ToolInvocation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolInvocation")
            .field("call_id", &self.call_id.get())
            .field("user", &self.base.user.id())
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}
