//! The per-call handle a tool may take as `&ToolInvocation`.
//!
//! Creating one is cheap on purpose (it sits on every call's path): the
//! cancellation token is created lazily when nobody supplied one, because a
//! token no caller holds can never be cancelled anyway.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::context::UserInfo;
use crate::process::{ProcessSpawnPolicy, ProcessSpawnRequest};

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

/// A progress update from a running tool.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolProgress {
    /// What is happening, for a person.
    pub message: String,
    /// Work done so far, in any unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<f64>,
    /// Total work, in the same unit, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
}

impl ToolProgress {
    /// A message with no figures.
    pub fn message(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            progress: None,
            total: None,
        }
    }

    /// A message with `done` of `total`.
    pub fn ratio(message: impl Into<String>, done: f64, total: Option<f64>) -> Self {
        Self {
            message: message.into(),
            progress: Some(done),
            total,
        }
    }
}

/// Receives progress updates; the host supplies one per call.
pub type ProgressSink = Arc<dyn Fn(ToolProgress) + Send + Sync>;

/// What every call of one user scope shares. A call borrows it from its
/// scope, so starting a call touches no reference count.
#[derive(Debug)]
pub(crate) struct InvocationShared {
    pub(crate) user: Arc<UserInfo>,
    pub(crate) spawn: Option<ProcessSpawnPolicy>,
}

/// A call's view of its scope's shared part: borrowed from a user scope,
/// owned by a handle built on its own.
enum Shared<'a> {
    Borrowed(&'a InvocationShared),
    Owned(Arc<InvocationShared>),
}

impl std::ops::Deref for Shared<'_> {
    type Target = InvocationShared;

    #[inline]
    fn deref(&self) -> &InvocationShared {
        match self {
            Self::Borrowed(shared) => shared,
            Self::Owned(shared) => shared,
        }
    }
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
    shared: Shared<'a>,
    cancel: OnceLock<CancellationToken>,
    progress: Option<ProgressSink>,
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
        Self::with_shared(Shared::Owned(Arc::new(InvocationShared {
            user,
            spawn: None,
        })))
    }
}

impl<'a> ToolInvocation<'a> {
    /// A handle borrowing a user scope's shared part.
    pub(crate) fn borrowing(shared: &'a InvocationShared) -> Self {
        Self::with_shared(Shared::Borrowed(shared))
    }

    fn with_shared(shared: Shared<'a>) -> Self {
        Self {
            call_id: OnceLock::new(),
            shared,
            cancel: OnceLock::new(),
            progress: None,
        }
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
    pub fn with_progress(mut self, sink: ProgressSink) -> Self {
        self.set_progress(sink);
        self
    }

    pub(crate) fn set_progress(&mut self, sink: ProgressSink) {
        self.progress = Some(sink);
    }

    /// Uses `policy` for processes started by this call.
    pub fn with_spawn_policy(mut self, policy: ProcessSpawnPolicy) -> Self {
        self.shared = Shared::Owned(Arc::new(InvocationShared {
            user: self.shared.user.clone(),
            spawn: Some(policy),
        }));
        self
    }

    /// This call's id.
    pub fn call_id(&self) -> CallId {
        *self.call_id.get_or_init(CallId::next)
    }

    /// The calling user's id.
    pub fn user_id(&self) -> &str {
        self.shared.user.id()
    }

    /// The calling user.
    pub fn user(&self) -> &UserInfo {
        &self.shared.user
    }

    /// The call's cancellation token. Long-running tools should watch it;
    /// the host stops awaiting a cancelled call either way.
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

    /// The process spawn policy for this call: processes a tool starts get
    /// a filtered environment and the user's `TZ`.
    pub fn spawn_policy(&self) -> ProcessSpawnPolicy {
        self.shared.spawn.clone().unwrap_or_default()
    }

    /// A spawn request for `command` already carrying the user's time zone.
    pub fn process(&self, command: impl Into<std::ffi::OsString>) -> ProcessSpawnRequest {
        let request = ProcessSpawnRequest::new(command);
        match self.shared.user.time_zone() {
            Some(tz) => request.time_zone(tz),
            None => request,
        }
    }
}

impl fmt::Debug for ToolInvocation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolInvocation")
            .field("call_id", &self.call_id.get())
            .field("user", &self.shared.user.id())
            .field("cancelled", &self.is_cancelled())
            .finish_non_exhaustive()
    }
}
