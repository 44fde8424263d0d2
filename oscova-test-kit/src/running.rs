//! A call the test lets run while it acts: [`RunningCall`], from
//! [`TestScope::start`].
//!
//! Rules: the call runs on a task of its own, through the real host, with
//! a cancellation token only the test holds. Cancelling it does what a host
//! that gives tools a grace period does
//! ([`Invoke::cancellation_grace`](oscova_core::host::invoke::Invoke::cancellation_grace)):
//! the body sees the token through its invocation and has up to
//! [`CANCELLATION_GRACE`] (or the host's
//! [`TestHostBuilder::cancellation_grace`](crate::TestHostBuilder::cancellation_grace))
//! to clean up and answer, so a test observes the tool's own cleanup; a
//! body that ignores the token is dropped after that and the call ends
//! cancelled. A `RunningCall` dropped before it finished cancels its call
//! and stops its task.

use std::time::Duration;

use oscova_core::{CancellationToken, ToolProgress};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::call::{Call, Capture};
use crate::scope::{TestScope, lock};

/// How long a cancelled call's body has, by default, to clean up before
/// the host drops it.
pub const CANCELLATION_GRACE: Duration = Duration::from_secs(30);

/// A call running on its own task; see [`TestScope::start`].
///
/// ```
/// use oscova_core::prelude::*;
/// use oscova_core::tool::LogLevel;
/// use oscova_test_kit::TestHost;
///
/// /// Long work.
/// pub struct WorkToolset;
///
/// #[toolset]
/// impl WorkToolset {
///     /// Works until cancelled, then cleans up.
///     pub async fn work(invocation: &ToolInvocation<'_>) -> Result<String, String> {
///         invocation.report(ToolProgress::message("started"));
///         invocation.cancellation_token().cancelled().await;
///         invocation.log(LogLevel::Info, "removed the partial file");
///         Err("cancelled; nothing was kept".into())
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let kit = TestHost::for_toolset(|_: &AgentPluginContext| WorkToolset);
/// let mut running = kit.start("work", json!({}));
/// assert_eq!(running.next_progress().await.unwrap().message, "started");
/// running.cancel();
/// let call = running.finish().await.assert_error("nothing was kept");
/// assert_eq!(call.logs[0].message, "removed the partial file");
/// # });
/// ```
#[must_use = "a running call is cancelled when dropped"]
pub struct RunningCall {
    wire_name: String,
    cancel: CancellationToken,
    progress: mpsc::UnboundedReceiver<ToolProgress>,
    task: Option<JoinHandle<Call>>,
}

impl std::fmt::Debug for RunningCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningCall")
            .field("wire_name", &self.wire_name)
            .field("cancelled", &self.cancel.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl RunningCall {
    /// The wire name the call resolved to.
    pub fn wire_name(&self) -> &str {
        &self.wire_name
    }

    /// Cancels the call: the body sees its invocation's cancellation token
    /// fire, and has the grace period to clean up and answer.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The next progress update the tool reports (also kept on the
    /// finished [`Call`]); `None` once the call has ended and every update
    /// was read. A way to wait until the body is where the test wants it.
    pub async fn next_progress(&mut self) -> Option<ToolProgress> {
        self.progress.recv().await
    }

    /// Whether the call has ended.
    pub fn is_finished(&self) -> bool {
        self.task.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Waits for the call to end (for a cancelled one: for the body's
    /// cleanup, or the grace period) and returns it, as
    /// [`TestScope::call`] would have.
    ///
    /// # Panics
    ///
    /// When the kit's task panicked, with its message (a tool's own panic
    /// is an error result, not a panic here).
    pub async fn finish(mut self) -> Call {
        let Some(task) = self.task.take() else {
            unreachable!("a running call's task is taken only by `finish`, which consumes it")
        };
        match task.await {
            Ok(call) => call,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => panic!("the call `{}` was stopped: {e}", self.wire_name),
        }
    }
}

impl Drop for RunningCall {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            self.cancel.cancel();
            task.abort();
        }
    }
}

impl TestScope {
    /// Starts the tool `name` (a wire name or a short one) with `args` on
    /// a task of its own and returns at once, so the test can act while it
    /// runs: wait for its progress, [`cancel`](RunningCall::cancel) it and
    /// see the body's own cleanup, then [`finish`](RunningCall::finish) it.
    ///
    /// # Panics
    ///
    /// As [`wire_name`](Self::wire_name), at the caller's line, and when
    /// called outside a tokio runtime.
    #[track_caller]
    pub fn start(&self, name: &str, args: serde_json::Value) -> RunningCall {
        let wire_name = self.wire_name(name);
        let cancel = CancellationToken::new();
        let (sender, progress) = mpsc::unbounded_channel();
        let task = tokio::spawn(run(
            self.detached(),
            wire_name.clone(),
            args,
            cancel.clone(),
            sender,
        ));
        RunningCall {
            wire_name,
            cancel,
            progress,
            task: Some(task),
        }
    }
}

async fn run(
    scope: TestScope,
    wire_name: String,
    args: serde_json::Value,
    cancel: CancellationToken,
    sender: mpsc::UnboundedSender<ToolProgress>,
) -> Call {
    let capture = Capture::default();
    let recorded = capture.progress.clone();
    let grace = scope.grace;
    let result = scope
        .invoke(&wire_name, args.into(), &capture)
        .progress(move |p: ToolProgress| {
            // The test may have stopped listening; the update is kept on
            // the call either way.
            let _ = sender.send(p.clone());
            lock(&recorded).push(p);
        })
        .cancellation(cancel)
        .cancellation_grace(grace)
        .await;
    capture.finish(wire_name, result)
}
