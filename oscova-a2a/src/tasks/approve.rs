//! A scope tool's approval as the task's question: the session's own
//! approval handler
//! ([`AgentSessionOptions::approval_handler`](oscova_agent::session::agent::AgentSessionOptions::approval_handler))
//! in a task's run.
//!
//! Rules: a call that needs approval (a `Required` tool, and a `Default`
//! one when the host's policy says so) is first kept in the session (the
//! agent's `KeptApproval`: the call's `CallWait` committed), then asked
//! here: the task moves to `INPUT_REQUIRED` with the confirmation "Allow
//! the tool `WIRE` to run with these arguments? ARGS" (the arguments with
//! the host's secrets redacted, cut to [`MAX_SHOWN_ARGUMENTS`] bytes), its
//! [`TaskWait`](crate::store::TaskWait) kept in the store in the same
//! write, exactly as a tool's own question (`tasks/ask.rs`). The
//! client's yes runs the tool, once; anything else refuses it (the model
//! reads that it did not run). Answered through another process, or
//! after a restart, the run is resumed there on the session: the call had
//! not started, so its approval is asked again, gets the kept answer
//! without asking, and the tool runs once, there. An unanswered wait ends
//! the task `FAILED`, `expired:`, the tool unrun. With
//! [`A2aServer::allow_approval_required`](crate::A2aServer::allow_approval_required)
//! such calls are approved without asking, as MCP's
//! `allow_approval_required` does.

use oscova_core::host::{ApprovalDecision, ApprovalHandler, ApprovalRequest};
use oscova_core::interaction::{
    Answer, AskError, InteractionHandler, InteractionRequest, Question,
};
use oscova_core::provider::BoxFuture;
use oscova_core::text::{Limit, cut};
use oscova_core::tool::CallId;

use super::ask::TaskAsk;

/// The most bytes of a call's arguments its approval question shows (as
/// MCP's elicitation shows them).
pub(crate) const MAX_SHOWN_ARGUMENTS: usize = 300;

/// Asks the task's client to approve a call (see the module rules).
pub(crate) struct TaskApproval(pub(crate) TaskAsk);

impl TaskApproval {
    /// The confirmation asked for `request`: the same for the same call,
    /// in any process, so a resumed run's asking finds the kept answer.
    fn question(&self, request: &ApprovalRequest<'_>) -> Question {
        let arguments = self.0.runner.redact(&request.arguments.to_string());
        let shown = cut(&arguments, Limit::Bytes(MAX_SHOWN_ARGUMENTS));
        Question::Confirm {
            message: format!(
                "Allow the tool `{}` to run with these arguments? {shown}",
                request.wire_name
            ),
        }
    }
}

impl ApprovalHandler for TaskApproval {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision> {
        // The wait names the call's arguments (redacted when kept).
        self.0.state.saw_call(request.wire_name, request.arguments);
        let asked = self.0.ask(InteractionRequest {
            tool: request.wire_name.to_owned(),
            call_id: CallId::next(),
            user_id: request.user.id().to_owned(),
            question: self.question(request),
        });
        Box::pin(async move {
            match asked.await {
                Ok(Answer::Accept(_)) => ApprovalDecision::Approve,
                Ok(Answer::Decline) => ApprovalDecision::Deny(Some(
                    "the person declined, asked by the A2A client".into(),
                )),
                Ok(Answer::Cancel) => {
                    ApprovalDecision::Deny(Some("the person dismissed the approval request".into()))
                }
                Err(AskError::Cancelled) => {
                    ApprovalDecision::Deny(Some("the task was cancelled while it waited".into()))
                }
                Err(error) => {
                    ApprovalDecision::Deny(Some(format!("approval could not be asked: {error}")))
                }
            }
        })
    }
}
