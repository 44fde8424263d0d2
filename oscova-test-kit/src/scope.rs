//! [`TestScope`]: one test user's scope over a [`TestHost`](crate::TestHost),
//! and the calls made through it.
//!
//! Rules: a name given to a call is a wire name or the unique tool whose
//! wire name ends with `__{name}`, resolved when the call is made (not when
//! it is awaited), so a wrong name panics at the test's own line; every
//! call answers approvals and questions from the host's script and records
//! what the tool reported.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use oscova_core::host::invoke::{Arguments, InvokeError};
use oscova_core::{CancellationToken, PluginHost, UserScope};

use crate::call::{Call, Capture, Questions, Recorder, Script};

/// One test user's scope: calls tools as that user and records what each
/// call reported and asked for.
pub struct TestScope {
    pub(crate) scope: UserScope,
    pub(crate) files: Option<tempfile::TempDir>,
    pub(crate) script: Script,
    pub(crate) host: Arc<PluginHost>,
    pub(crate) grace: Duration,
}

impl std::fmt::Debug for TestScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestScope")
            .field("user", &self.scope.user().id())
            .finish_non_exhaustive()
    }
}

impl std::ops::Deref for TestScope {
    type Target = UserScope;

    fn deref(&self) -> &UserScope {
        &self.scope
    }
}

impl TestScope {
    /// The real scope (also reached by `Deref`: `scope.tools()`).
    pub fn user_scope(&self) -> &UserScope {
        &self.scope
    }

    /// The user's files root, when the user has one.
    pub fn files_root(&self) -> Option<&std::path::Path> {
        self.files
            .as_ref()
            .map(tempfile::TempDir::path)
            .or_else(|| self.scope.user().files_root())
    }

    /// The wire names of the tools this user has.
    pub fn tool_names(&self) -> Vec<String> {
        self.scope
            .tools()
            .map(|t| t.wire_name().to_owned())
            .collect()
    }

    /// The wire name `name` stands for: `name` itself when a tool has it,
    /// else the one tool whose wire name ends with `__{name}` (the tool
    /// segment, or `owner__tool`).
    ///
    /// # Panics
    ///
    /// When no tool, or more than one, matches: the message lists the
    /// user's tools.
    #[track_caller]
    pub fn wire_name(&self, name: &str) -> String {
        if self.scope.tool(name).is_some() {
            return name.to_owned();
        }
        let suffix = format!("__{name}");
        let matches: Vec<String> = self
            .tool_names()
            .into_iter()
            .filter(|w| w.ends_with(&suffix))
            .collect();
        match matches.as_slice() {
            [one] => one.clone(),
            [] => panic!(
                "no tool is named `{name}` for user `{}`; the tools are: {}",
                self.scope.user().id(),
                self.tool_names().join(", ")
            ),
            many => panic!(
                "`{name}` names more than one tool ({}); give more of the wire name",
                many.join(", ")
            ),
        }
    }

    /// Calls the tool `name` (a wire name or a short one, see
    /// [`wire_name`](Self::wire_name)) with `args`, and records its
    /// progress and the approvals it needed. A host refusal (unknown
    /// arguments, a denied approval) comes back as an error result, as a
    /// model would see it.
    ///
    /// # Panics
    ///
    /// As [`wire_name`](Self::wire_name), at the caller's line: the name
    /// is resolved when `call` is called, before the future is awaited.
    #[track_caller]
    pub fn call(&self, name: &str, args: serde_json::Value) -> impl Future<Output = Call> + '_ {
        let wire_name = self.wire_name(name);
        async move {
            let capture = Capture::default();
            let result = self.invoke(&wire_name, args.into(), &capture).await;
            capture.finish(wire_name, result)
        }
    }

    /// [`call`](Self::call), with the host's refusals apart: `Err` when
    /// the host did not run the tool (bad arguments, denied, blocked,
    /// cancelled, panicked), `Ok` with the tool's own result otherwise.
    /// `args` may be a JSON value or [`Arguments::json`] text.
    ///
    /// # Panics
    ///
    /// As [`call`](Self::call).
    #[track_caller]
    pub fn try_call<'a>(
        &'a self,
        name: &str,
        args: impl Into<Arguments<'a>>,
    ) -> impl Future<Output = Result<Call, InvokeError>> + 'a {
        let wire_name = self.wire_name(name);
        let args = args.into();
        async move {
            let capture = Capture::default();
            let result = self.invoke(&wire_name, args, &capture).checked().await?;
            Ok(capture.finish(wire_name, result))
        }
    }

    /// [`call`](Self::call) with a cancellation token the test holds. The
    /// host stops awaiting the call as soon as the token fires, so the
    /// tool's own cleanup is not seen: to see it, [`start`](Self::start)
    /// the call and cancel the [`RunningCall`](crate::RunningCall).
    ///
    /// # Panics
    ///
    /// As [`call`](Self::call).
    #[track_caller]
    pub fn call_cancellable(
        &self,
        name: &str,
        args: serde_json::Value,
        token: CancellationToken,
    ) -> impl Future<Output = Call> + '_ {
        let wire_name = self.wire_name(name);
        async move {
            let capture = Capture::default();
            let result = self
                .invoke(&wire_name, args.into(), &capture)
                .cancellation(token)
                .await;
            capture.finish(wire_name, result)
        }
    }

    /// A handle on the same scope for a task of its own: it shares the
    /// host, the script and the user, but not the temporary files root,
    /// which stays with `self`.
    pub(crate) fn detached(&self) -> Self {
        Self {
            scope: self.scope.clone(),
            files: None,
            script: self.script.clone(),
            host: self.host.clone(),
            grace: self.grace,
        }
    }

    pub(crate) fn invoke<'a>(
        &'a self,
        wire_name: &'a str,
        args: Arguments<'a>,
        capture: &Capture,
    ) -> oscova_core::host::invoke::Invoke<'a, oscova_core::host::invoke::CallOptions> {
        let (progress, logs) = (capture.progress.clone(), capture.logs.clone());
        self.scope
            .invoke(wire_name, args)
            .progress(move |p| lock(&progress).push(p))
            .log(move |l| lock(&logs).push(l))
            .approval_handler(Recorder {
                script: self.script.clone(),
                asked: capture.approvals.clone(),
            })
            .interaction_handler(Questions {
                script: self.script.clone(),
                asked: capture.questions.clone(),
            })
    }

    /// The host this scope belongs to.
    pub fn plugin_host(&self) -> &PluginHost {
        &self.host
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
