//! Asking a person about a session's tool call with the wait kept in the
//! session first (the rules are [`session::wait`](crate::session::CallWait)'s).
//!
//! Rules: before the person is asked, the call's [`CallWait`] is appended
//! and committed; a wait that cannot be recorded is not asked and the
//! call does not run. The wait's expiry is the earlier record's for the
//! same call when the branch has one (a call asked again after a
//! restart), else now plus the session's
//! [`wait_expiry`](super::AgentSessionOptions::wait_expiry). An answer
//! that has not come by then ends the wait: the call does not run and
//! its result says it expired. A scope tool's approval goes through
//! [`KeptApproval`], the call's own approval handler, which asks the
//! session's ([`AgentSessionOptions::approval_handler`](super::AgentSessionOptions::approval_handler))
//! when it has one, else the host's; an extension tool's through [`ask_kept`] around the person's
//! confirmation.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_core::host::ApprovalHandler;
use oscova_core::provider::BoxFuture;
use oscova_core::{ApprovalDecision, ApprovalRequest, ToolResult};
use serde_json::{Value, json};

use super::AgentEvent;
use super::state::Shared;
use crate::session::{
    AgentMessage, CallWait, EntryKind, Session, iso_to_millis, millis_to_iso, now_iso,
};

/// How long a session's call waits for a person when its options do not
/// say (see [`AgentSessionOptions::wait_expiry`](super::AgentSessionOptions::wait_expiry)).
pub(crate) const WAIT_EXPIRY: Duration = Duration::from_secs(24 * 60 * 60);

/// Why a kept wait ended without the person's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WaitEnd {
    /// Its expiry (ISO 8601) passed.
    Expired(String),
    /// It could not be recorded, so nobody was asked.
    NotRecorded(String),
}

impl WaitEnd {
    /// What the model is told about the call of `tool` (the host hears of
    /// it as of any call's end: [`AgentEvent::ToolFinished`], with
    /// `details.error` `expired` or `blocked`).
    pub(crate) fn result(&self, tool: &str) -> ToolResult {
        if let Self::Expired(at) = self {
            tracing::warn!(%tool, expired_at = %at, "tool call's wait for approval expired; not run");
        }
        match self {
            Self::Expired(at) => expired_result(tool, at),
            Self::NotRecorded(reason) => ToolResult::error(format!(
                "tool `{tool}` was not run: its wait for approval could not be recorded in the \
                 session ({reason})"
            ))
            .with_details(json!({ "error": "blocked" })),
        }
    }
}

/// The result of a call whose wait for approval expired at `expires_at`.
pub(crate) fn expired_result(tool: &str, expires_at: &str) -> ToolResult {
    ToolResult::error(format!(
        "expired: the approval the call of `{tool}` waited for was not given before \
         {expires_at}. The call did not run; ask the person again if it is still wanted."
    ))
    .with_details(json!({ "error": "expired" }))
}

fn now_millis() -> i64 {
    iso_to_millis(&now_iso()).unwrap_or(0)
}

/// The expiry of an earlier wait for `call_id` in the branch's last batch.
fn earlier_expiry(session: &Session, call_id: &str) -> Option<i64> {
    for entry in session.ancestors() {
        if let EntryKind::Message {
            message: AgentMessage::Assistant(_),
        } = &entry.kind
        {
            return None;
        }
        if let Some(wait) = entry.kind.call_wait()
            && wait.tool_call_id == call_id
        {
            return Some(wait.expires_at_millis().unwrap_or(i64::MIN));
        }
    }
    None
}

/// Records that the call `call_id` of `tool` waits for the person to
/// answer `asked` about `arguments`, then awaits `answer` until the wait
/// expires (see the module rules).
pub(crate) async fn ask_kept<T>(
    shared: &Shared,
    call_id: &str,
    tool: &str,
    asked: &str,
    arguments: &Value,
    answer: impl Future<Output = T>,
) -> Result<T, WaitEnd> {
    let now = now_millis();
    let expires = {
        let session = shared.session.lock().await;
        earlier_expiry(&session, call_id)
    };
    let expires = expires.unwrap_or_else(|| {
        let expiry = i64::try_from(shared.wait_expiry.as_millis()).unwrap_or(i64::MAX);
        now.saturating_add(expiry)
    });
    let expires_at = millis_to_iso(expires);
    if now >= expires {
        return Err(WaitEnd::Expired(expires_at));
    }
    let mut arguments = arguments.clone();
    shared.scope.redact_json(&mut arguments);
    let wait = CallWait::new(
        call_id,
        tool,
        shared.scope.user().id(),
        shared.scope.redact(asked).into_owned(),
        arguments,
        expires_at.clone(),
    );
    let recorded = shared
        .session
        .lock()
        .await
        .append(EntryKind::call_waiting(&wait))
        .await;
    if let Err(error) = recorded {
        let reason = shared.scope.redact(&error.to_string()).into_owned();
        return Err(WaitEnd::NotRecorded(reason));
    }
    shared.emit(AgentEvent::CallWaiting(wait));
    let left = Duration::from_millis(u64::try_from(expires - now).unwrap_or(0));
    tokio::select! {
        answered = answer => Ok(answered),
        () = tokio::time::sleep(left) => Err(WaitEnd::Expired(expires_at)),
    }
}

/// A scope tool call's approval handler: the session's own
/// ([`AgentSessionOptions::approval_handler`](super::AgentSessionOptions::approval_handler))
/// else the host's, behind the kept wait. How the wait ended, when it ended without an answer, is left in
/// [`ended`](Self::ended) for the call's result.
pub(crate) struct KeptApproval {
    pub(crate) shared: Arc<Shared>,
    pub(crate) call_id: String,
    pub(crate) tool: String,
    pub(crate) ended: Arc<Mutex<Option<WaitEnd>>>,
}

impl ApprovalHandler for KeptApproval {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision> {
        Box::pin(async move {
            // The session's own handler, else the host's; what the
            // pipeline says when nobody can be asked: no wait.
            let own = self.shared.approval.clone();
            let Some(handler) = own.or_else(|| self.shared.host.plugins.approval_handler()) else {
                return ApprovalDecision::Deny(Some(
                    "this host has no approval handler, and the tool requires approval".to_owned(),
                ));
            };
            let asked = format!("Allow the tool `{}` to run?", request.wire_name);
            let answer = handler.approve(request);
            let kept = ask_kept(
                &self.shared,
                &self.call_id,
                &self.tool,
                &asked,
                request.arguments,
                answer,
            );
            match kept.await {
                Ok(decision) => decision,
                Err(end) => {
                    let reason = match &end {
                        WaitEnd::Expired(at) => format!("the wait for approval expired at {at}"),
                        WaitEnd::NotRecorded(reason) => {
                            format!("the wait for approval could not be recorded ({reason})")
                        }
                    };
                    *self.ended.lock().unwrap_or_else(|p| p.into_inner()) = Some(end);
                    ApprovalDecision::Deny(Some(reason))
                }
            }
        })
    }
}
