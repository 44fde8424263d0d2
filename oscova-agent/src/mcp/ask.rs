//! Asking the person at the other end of an MCP session: tools' questions
//! and approval, through `elicitation/create`.
//!
//! Rules: a client that did not declare the `elicitation` capability (form
//! mode) cannot be asked, and a tool that asks gets
//! [`AskError::NoOneToAsk`] saying so, which its error result passes on.
//! Protocol 2026-07-28 forbids server-to-client requests; rmcp refuses
//! them there, and the tool is told the same. A question becomes a form
//! elicitation with the question's message and its restricted schema;
//! accept, decline and cancel map one to one. Approval of a call that
//! needs it is a confirmation naming the tool and its arguments, redacted
//! and cut to a few hundred bytes; only an accept approves.

use oscova_core::UserScope;
use oscova_core::host::{ApprovalDecision, ApprovalHandler, ApprovalRequest};
use oscova_core::interaction::{Answer, AskError, InteractionRequest, Question};
use oscova_core::provider::BoxFuture;
use oscova_core::text::{Limit, cut};
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, ServiceError};
use rmcp::{Peer, RoleServer};
use serde_json::Value;

/// At most this many bytes of a call's arguments are shown in an approval
/// prompt.
const MAX_SHOWN_ARGUMENTS: usize = 300;

/// Whether the client declared form elicitation.
pub(super) fn can_elicit(peer: &Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
}

/// Sends `question` as a form elicitation and reads the answer.
async fn elicit(peer: Peer<RoleServer>, question: &Question) -> Result<Answer, AskError> {
    if !can_elicit(&peer) {
        return Err(AskError::NoOneToAsk(
            "the MCP client did not declare the elicitation capability, so it cannot ask the person"
                .to_owned(),
        ));
    }
    let schema: ElicitationSchema = serde_json::from_value(question.requested_schema())
        .map_err(|e| AskError::Failed(format!("the question has no MCP form: {e}")))?;
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.message().to_owned(),
        requested_schema: schema,
    };
    let result = peer.create_elicitation(params).await.map_err(|e| match e {
        ServiceError::McpError(data) if data.message.contains("2026-07-28") => {
            AskError::NoOneToAsk(format!(
                "this MCP session's protocol has no server-to-client requests, so the server cannot ask the person ({})",
                data.message
            ))
        }
        other => AskError::Failed(format!("the MCP client did not answer: {other}")),
    })?;
    Ok(match result.action {
        ElicitationAction::Accept => match result.content {
            Some(Value::Object(values)) => Answer::Accept(values),
            None | Some(Value::Null) => Answer::Accept(Default::default()),
            Some(other) => {
                return Err(AskError::InvalidAnswer(format!(
                    "the client's answer is not an object: {}",
                    cut(&other.to_string(), Limit::Bytes(100))
                )));
            }
        },
        ElicitationAction::Decline => Answer::Decline,
        ElicitationAction::Cancel => Answer::Cancel,
        // A later action rmcp learns is not an answer.
        #[allow(unreachable_patterns)]
        _ => Answer::Cancel,
    })
}

/// Answers a call's questions through the client.
pub(super) fn interaction(
    peer: Peer<RoleServer>,
) -> impl Fn(InteractionRequest) -> BoxFuture<'static, Result<Answer, AskError>> + Send + Sync + 'static
{
    move |request: InteractionRequest| {
        let peer = peer.clone();
        Box::pin(async move { elicit(peer, &request.question).await })
    }
}

/// Approves calls by asking the person through the client.
pub(super) struct ElicitApproval {
    pub(super) peer: Peer<RoleServer>,
    pub(super) scope: UserScope,
}

impl ElicitApproval {
    /// The confirmation shown for `request`.
    pub(super) fn question(&self, request: &ApprovalRequest<'_>) -> Question {
        let arguments = request.arguments.to_string();
        let arguments = self.scope.redact(&arguments);
        let shown = cut(&arguments, Limit::Bytes(MAX_SHOWN_ARGUMENTS));
        Question::Confirm {
            message: format!(
                "Allow the tool `{}` to run with these arguments? {shown}",
                request.wire_name
            ),
        }
    }
}

impl ApprovalHandler for ElicitApproval {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision> {
        let question = self.question(request);
        let peer = self.peer.clone();
        Box::pin(async move {
            match elicit(peer, &question).await {
                Ok(Answer::Accept(_)) => ApprovalDecision::Approve,
                Ok(Answer::Decline) => ApprovalDecision::Deny(Some(
                    "the person declined, asked by the MCP client".into(),
                )),
                Ok(Answer::Cancel) => {
                    ApprovalDecision::Deny(Some("the person dismissed the approval request".into()))
                }
                Err(e) => ApprovalDecision::Deny(Some(format!("approval could not be asked: {e}"))),
            }
        })
    }
}
