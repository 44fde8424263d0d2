//! A call through the host's layers (`host/layer.rs`): the pipeline's
//! part, and [`UserScope::layered`] for a tool the host does not publish.
//!
//! Rules: the call's own layer ([`Invoke::layer`](super::Invoke::layer))
//! runs outermost, then the host's hooks (one layer), then the host's
//! layers in registration order, then the rest of the pipeline (approval,
//! the start hook, the body, redaction). What comes out is redacted
//! again, errors on their way to the caller (`future.rs`) and results
//! here: a layer may have put a secret back. A call with no layer at all
//! never comes here (`pipeline.rs`).

use std::future::Future;

use super::InvokeError;
use crate::host::layer::{self, CallOutcome, Innermost, ToolCall, ToolLayer};
use crate::host::scope::UserScope;

impl UserScope {
    /// Runs a tool the host does not publish (a session extension's) under
    /// the host's hooks and layers, as every call through
    /// [`invoke`](Self::invoke) runs, with `outer`, a layer of the
    /// caller's own, outside them; `inner` runs the tool with the call's
    /// arguments as the layers left them (and does its own approval,
    /// argument checks and redaction). The outcome is redacted with this
    /// scope's and the host's secrets.
    ///
    /// ```
    /// use oscova_core::prelude::*;
    /// use oscova_core::host::layer::{ToolCall, layer_fn};
    /// use oscova_core::tool::ToolInfo;
    ///
    /// pub struct ShellToolset;
    /// #[toolset]
    /// impl ShellToolset {
    ///     /// Runs a command (here: says it would).
    ///     pub fn run(command: String) -> String { format!("would run {command}") }
    /// }
    /// let info: &ToolInfo = &ShellToolset::toolset_info().tools()[0];
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let host = PluginHost::builder()
    ///     .no_linked_plugins()
    ///     .layer(layer_fn(|call, next| Box::pin(async move {
    ///         if call.arguments["command"] == "rm -rf /" {
    ///             return Err(call.refuse("no"));
    ///         }
    ///         next.run(call).await
    ///     })))
    ///     .build()?;
    /// let scope = host.user_scope(UserInfo::new("alice"));
    /// let call = ToolCall::new("run", info, scope.user(), json!({"command": "rm -rf /"}));
    /// let outcome = scope
    ///     .layered(None, call, |call| async move {
    ///         Ok(ToolResult::text(format!("ran {}", call.arguments["command"])))
    ///     })
    ///     .await;
    /// assert_eq!(outcome.unwrap_err().kind(), "blocked");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn layered<'a, F, Fut>(
        &'a self,
        outer: Option<&'a dyn ToolLayer>,
        call: ToolCall<'a>,
        inner: F,
    ) -> CallOutcome
    where
        F: FnOnce(ToolCall<'a>) -> Fut + Send + 'a,
        Fut: Future<Output = CallOutcome> + Send + 'a,
    {
        let inner: Innermost<'a> = Box::new(move |call| Box::pin(inner(call)));
        let layers = &self.inner.host.policy.layers;
        let pipeline = super::pipeline::Pipeline(self);
        match layer::run(outer, layers, call, inner).await {
            Ok(mut result) => {
                pipeline.redact_result(&mut result);
                Ok(result)
            }
            Err(error) => Err(pipeline.redact_error(error)),
        }
    }
}

/// Whether a call passes through any layer.
#[inline]
pub(super) fn has_layers(scope: &UserScope, own: Option<&dyn ToolLayer>) -> bool {
    own.is_some() || !scope.inner.host.policy.layers.is_empty()
}

/// Runs the pipeline's call through the layers; `rest` is the pipeline
/// after them.
pub(super) async fn through<'a>(
    scope: &'a UserScope,
    own: Option<&'a dyn ToolLayer>,
    call: ToolCall<'a>,
    rest: Innermost<'a>,
) -> Result<crate::tool::ToolResult, InvokeError> {
    let mut outcome = layer::run(own, &scope.inner.host.policy.layers, call, rest).await;
    if let Ok(result) = &mut outcome {
        super::pipeline::Pipeline(scope).redact_result(result);
    }
    outcome
}
