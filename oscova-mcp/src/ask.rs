//! Asking the person at the other end of an MCP session: tools' questions
//! and approval, as form elicitations.
//!
//! Rules: a client that did not declare the `elicitation` capability (form
//! mode; on 2026-07-28 in the request's own `_meta`) cannot be asked, and
//! a tool that asks gets [`AskError::NoOneToAsk`] saying so, which its
//! error result passes on. Before 2026-07-28 a question is an
//! `elicitation/create` request to the client, answered in place. From
//! 2026-07-28 a server sends no requests to the client, so the question
//! goes to the call's driver, which answers the `tools/call` with
//! `input_required` and gets the answer from the client's retry
//! (`rounds.rs`). Either way the question is a form with the question's
//! message and its restricted schema, and accept, decline and cancel map
//! one to one. Approval of a call that needs it is a confirmation naming
//! the tool and its arguments, redacted and cut to a few hundred bytes;
//! only an accept approves.

use std::sync::{Arc, LazyLock};

use oscova_core::UserScope;
use oscova_core::host::{ApprovalDecision, ApprovalHandler, ApprovalRequest};
use oscova_core::interaction::{
    Answer, AskError, InteractionHandler, InteractionRequest, Question,
};
use oscova_core::provider::BoxFuture;
use oscova_core::text::{Limit, cut};
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, ProtocolVersion,
};
use rmcp::service::{RequestContext, ServiceError};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::oneshot;

use super::rounds::{CallEvent, CallEvents};

/// At most this many bytes of a call's arguments are shown in an approval
/// prompt.
const MAX_SHOWN_ARGUMENTS: usize = 300;

/// Why a client without the elicitation capability cannot be asked.
const NO_ELICITATION: &str =
    "the MCP client did not declare the elicitation capability, so it cannot ask the person";

/// Where the answer to a question on its way to the driver goes.
pub(super) type RoundReply = oneshot::Sender<Result<Answer, AskError>>;

/// A question on its way to the call's driver, and where the answer goes.
pub(super) struct RoundAsk {
    pub(super) question: Question,
    pub(super) reply: RoundReply,
    /// Whether it is asked before the tool's body runs (its approval),
    /// rather than by the body.
    pub(super) before_body: bool,
}

/// Whether the request's client declared form elicitation: in the
/// request's `_meta` on 2026-07-28, else at `initialize`.
pub(super) fn can_elicit(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|caps| caps.elicitation)
        // A declaration naming neither mode means form (2025-06-18).
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// Whether the request speaks 2026-07-28 or later, where questions take
/// a round trip of their own.
pub(super) fn in_rounds(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// How a call's questions reach the person.
#[derive(Clone)]
pub(super) enum Asker {
    /// The client did not declare elicitation, so nobody can be asked.
    Nobody,
    /// `elicitation/create` to the client, answered in place.
    Peer(Peer<RoleServer>),
    /// To the call's driver, answered by the client's next round.
    Rounds(Arc<CallEvents>),
}

impl Asker {
    /// The asker for a call made by `context`; questions go to the
    /// call's `events` on 2026-07-28 and later.
    pub(super) fn for_request(
        context: &RequestContext<RoleServer>,
        events: &Arc<CallEvents>,
    ) -> Self {
        if !can_elicit(context) {
            Self::Nobody
        } else if in_rounds(context) {
            Self::Rounds(events.clone())
        } else {
            Self::Peer(context.peer.clone())
        }
    }

    /// Whether anyone can be asked.
    pub(super) fn can_ask(&self) -> bool {
        !matches!(self, Self::Nobody)
    }

    /// Asks `question` and returns the answer; `before_body` when it is
    /// the call's approval, asked before the tool's body runs.
    async fn ask(&self, question: Question, before_body: bool) -> Result<Answer, AskError> {
        match self {
            Self::Nobody => Err(AskError::NoOneToAsk(NO_ELICITATION.to_owned())),
            Self::Peer(peer) => {
                let params = form_params(&question)?;
                let result = peer.create_elicitation(params).await.map_err(|e| match e {
                    ServiceError::McpError(data) if data.message.contains("2026-07-28") => {
                        AskError::NoOneToAsk(format!(
                            "this MCP session's protocol has no server-to-client requests, so the server cannot ask the person ({})",
                            data.message
                        ))
                    }
                    other => AskError::Failed(format!("the MCP client did not answer: {other}")),
                })?;
                answer_of(result)
            }
            Self::Rounds(events) => {
                let (reply, rx) = oneshot::channel();
                let ask = RoundAsk {
                    question,
                    reply,
                    before_body,
                };
                events
                    .push(CallEvent::Ask(ask))
                    .map_err(|_| AskError::Failed("the MCP request has ended".to_owned()))?;
                rx.await.map_err(|_| {
                    AskError::Failed("the MCP client did not come back with an answer".to_owned())
                })?
            }
        }
    }
}

/// `question` as the parameters of a form elicitation.
pub(super) fn form_params(question: &Question) -> Result<ElicitRequestParams, AskError> {
    let schema: ElicitationSchema = serde_json::from_value(question.requested_schema())
        .map_err(|e| AskError::Failed(format!("the question has no MCP form: {e}")))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.message().to_owned(),
        requested_schema: schema,
    })
}

/// The person's answer in the client's elicitation result.
pub(super) fn answer_of(result: ElicitResult) -> Result<Answer, AskError> {
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

/// Answers a call's questions through `asker`. Calls from clients that
/// cannot ask, the common case, share one handler.
pub(super) fn interaction(asker: Asker) -> Arc<dyn InteractionHandler> {
    static NOBODY: LazyLock<Arc<dyn InteractionHandler>> = LazyLock::new(|| through(Asker::Nobody));
    match asker {
        Asker::Nobody => NOBODY.clone(),
        asker => through(asker),
    }
}

fn through(asker: Asker) -> Arc<dyn InteractionHandler> {
    Arc::new(move |request: InteractionRequest| {
        let asker = asker.clone();
        Box::pin(async move { asker.ask(request.question, false).await })
            as BoxFuture<'static, Result<Answer, AskError>>
    })
}

/// Approves calls by asking the person through the client.
pub(super) struct ElicitApproval {
    pub(super) asker: Asker,
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
        Box::pin(async move {
            match self.asker.ask(question, true).await {
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
