//! One call's outcome, with what happened on the way, and scripted
//! approval answers.
//!
//! Rules: every approval the host asks for during a call is recorded on
//! that call, with the answer given; answers come from the script in the
//! order they were queued, and when the script is empty from the kit's
//! default (approve, unless the host was built with
//! [`deny_approvals_by_default`](crate::TestHostBuilder::deny_approvals_by_default)).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use oscova_core::host::ApprovalHandler;
use oscova_core::interaction::{Answer, AskError, InteractionHandler, InteractionRequest};
use oscova_core::provider::BoxFuture;
use oscova_core::tool::ToolLog;
use oscova_core::{ApprovalDecision, ApprovalRequest, ToolProgress, ToolResult};
use serde_json::Value;

/// What one tool call returned, and what it reported and asked for while
/// it ran.
#[derive(Debug, Clone)]
pub struct Call {
    /// The wire name the call resolved to.
    pub wire_name: String,
    /// The result, as the host returned it (redacted).
    pub result: ToolResult,
    /// Progress updates, in the order the tool reported them.
    pub progress: Vec<ToolProgress>,
    /// Approvals the host asked for, with the answers given.
    pub approvals: Vec<AskedApproval>,
    /// Log messages the tool wrote, in order, redacted.
    pub logs: Vec<ToolLog>,
    /// Questions the tool asked the person, with the answers given
    /// (from [`TestHost::answer_questions`](crate::TestHost::answer_questions),
    /// else a decline).
    pub questions: Vec<AskedQuestion>,
}

impl Call {
    /// The result's text: what the model reads.
    pub fn text(&self) -> &str {
        &self.result.content
    }

    /// The result's structured details.
    pub fn details(&self) -> &Value {
        &self.result.details
    }

    /// Whether the result is an error result.
    pub fn is_error(&self) -> bool {
        self.result.is_error
    }

    /// The progress messages, in order.
    pub fn progress_messages(&self) -> Vec<&str> {
        self.progress.iter().map(|p| p.message.as_str()).collect()
    }

    /// Panics unless the call succeeded; returns it for further checks.
    #[track_caller]
    pub fn assert_ok(self) -> Self {
        assert!(
            !self.is_error(),
            "`{}` returned an error result: {}",
            self.wire_name,
            self.text()
        );
        self
    }

    /// Panics unless the call returned an error result whose text contains
    /// `needle`; returns it for further checks.
    #[track_caller]
    pub fn assert_error(self, needle: &str) -> Self {
        assert!(
            self.is_error(),
            "`{}` should have failed, but returned: {}",
            self.wire_name,
            self.text()
        );
        assert!(
            self.text().contains(needle),
            "`{}` failed with {:?}, which does not contain {needle:?}",
            self.wire_name,
            self.text()
        );
        self
    }
}

/// An accepted answer to a question, from a JSON object of its fields:
/// `accept(json!({"city": "Paris", "days": 3}))` answers a form, and
/// `accept(json!({}))` a confirmation. For the other answers, name
/// [`Answer::Decline`] or [`Answer::Cancel`].
///
/// ```
/// use oscova_core::interaction::Answer;
/// use oscova_test_kit::accept;
/// use serde_json::json;
///
/// let Answer::Accept(fields) = accept(json!({"city": "Paris"})) else { unreachable!() };
/// assert_eq!(fields["city"], "Paris");
/// ```
///
/// # Panics
///
/// At the caller's line, when `fields` is not a JSON object.
#[track_caller]
pub fn accept(fields: Value) -> Answer {
    match fields {
        Value::Object(fields) => Answer::Accept(fields),
        other => panic!("an accepted answer is a JSON object of fields, not {other}"),
    }
}

/// An approval the host asked for during a call.
#[derive(Debug, Clone, PartialEq)]
pub struct AskedApproval {
    /// The tool's wire name.
    pub wire_name: String,
    /// The user's id.
    pub user: String,
    /// The arguments the call would run with.
    pub arguments: Value,
    /// The answer the kit gave.
    pub decision: ApprovalDecision,
}

/// A question a tool asked during a call.
#[derive(Debug, Clone)]
pub struct AskedQuestion {
    /// What the host's handler was given (tool, call, user, question).
    pub request: InteractionRequest,
    /// The answer the test's script gave.
    pub answer: Answer,
}

/// What one call reported and asked, gathered while it runs.
#[derive(Default, Clone)]
pub(crate) struct Capture {
    pub(crate) progress: Arc<Mutex<Vec<ToolProgress>>>,
    pub(crate) approvals: Arc<Mutex<Vec<AskedApproval>>>,
    pub(crate) logs: Arc<Mutex<Vec<ToolLog>>>,
    pub(crate) questions: Arc<Mutex<Vec<AskedQuestion>>>,
}

impl Capture {
    pub(crate) fn finish(self, wire_name: String, result: ToolResult) -> Call {
        fn take<T>(m: &Mutex<Vec<T>>) -> Vec<T> {
            std::mem::take(&mut *m.lock().unwrap_or_else(PoisonError::into_inner))
        }
        Call {
            wire_name,
            result,
            progress: take(&self.progress),
            approvals: take(&self.approvals),
            logs: take(&self.logs),
            questions: take(&self.questions),
        }
    }
}

/// The queued answers, shared by every call of one host.
#[derive(Debug, Clone)]
pub(crate) struct Script {
    answers: Arc<Mutex<VecDeque<ApprovalDecision>>>,
    fallback: ApprovalDecision,
    questions: Arc<Mutex<VecDeque<Answer>>>,
}

impl Script {
    pub(crate) fn new(approve_by_default: bool) -> Self {
        Self {
            answers: Arc::default(),
            questions: Arc::default(),
            fallback: if approve_by_default {
                ApprovalDecision::Approve
            } else {
                ApprovalDecision::Deny(Some("denied by the test".into()))
            },
        }
    }

    pub(crate) fn push(&self, answers: impl IntoIterator<Item = ApprovalDecision>) {
        self.answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(answers);
    }

    pub(crate) fn push_questions(&self, answers: impl IntoIterator<Item = Answer>) {
        self.questions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(answers);
    }

    fn next_answer(&self) -> Answer {
        self.questions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
            .unwrap_or(Answer::Decline)
    }

    fn next(&self) -> ApprovalDecision {
        self.answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
            .unwrap_or_else(|| self.fallback.clone())
    }
}

/// The approval handler of one call: answers from the script and records
/// what it was asked.
pub(crate) struct Recorder {
    pub(crate) script: Script,
    pub(crate) asked: Arc<Mutex<Vec<AskedApproval>>>,
}

impl ApprovalHandler for Recorder {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision> {
        let decision = self.script.next();
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(AskedApproval {
                wire_name: request.wire_name.to_owned(),
                user: request.user.id().to_owned(),
                arguments: request.arguments.clone(),
                decision: decision.clone(),
            });
        Box::pin(std::future::ready(decision))
    }
}

/// The interaction handler of one call: answers from the script and
/// records what it was asked.
pub(crate) struct Questions {
    pub(crate) script: Script,
    pub(crate) asked: Arc<Mutex<Vec<AskedQuestion>>>,
}

impl InteractionHandler for Questions {
    fn ask(&self, request: InteractionRequest) -> BoxFuture<'static, Result<Answer, AskError>> {
        let answer = self.script.next_answer();
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(AskedQuestion {
                request,
                answer: answer.clone(),
            });
        Box::pin(std::future::ready(Ok(answer)))
    }
}
