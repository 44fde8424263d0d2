//! The retry of a 2026-07-28 `tools/call` that carries a `requestState`,
//! and the wait a parking call keeps in the store first.
//!
//! Rules: without a wait store, the handle names a call parked in this
//! process's memory or nothing (`rounds.rs`). With one
//! ([`crate::wait`]), a call that parks is kept in the store before its
//! `input_required` goes out (a wait that cannot be kept is not asked:
//! the question fails, and the tool's approval is denied, saying why),
//! and a retry first takes the wait out of the store, matching the handle,
//! the user and the tool in one conditional statement, so one retry of a
//! handle, on one instance, goes on; then:
//!
//! 1. no wait: the handle was used already (here or on another instance),
//!    its call gave way to newer ones, it is another user's or another
//!    tool's, or it never was: an invalid-params error saying nothing of
//!    which (a call of it still parked here is dropped and so cancelled);
//! 2. an expired wait: a tool error result saying so (`details.error`
//!    `expired`); the call does not run (again), and one still parked
//!    here is dropped;
//! 3. the call is parked here: it gets the answer and goes on, as without
//!    a store;
//! 4. else (another instance parked it, or this process before a
//!    restart), a call whose body had started (it asked a question of its
//!    own) is not run again unless its tool is idempotent
//!    (`annotations.idempotent`): a tool error result says it was
//!    interrupted (`details.error` `interrupted`);
//! 5. otherwise it runs afresh here with the retry's arguments, which must
//!    be the call's (compared redacted; otherwise an invalid-params
//!    error), and the recorded answers given again to the same questions,
//!    then the new answer to the question the wait asked: a call whose
//!    approval was waited for runs once, on the instance that got the yes.

use oscova_core::ToolResult;
use oscova_core::interaction::{Answer, AskError};
use rmcp::model::{ElicitResult, JsonObject};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use super::{McpHandler, RunningCall};
use crate::ask;
use crate::rounds::{INPUT_KEY, PARK_TIMEOUT, Parked};
use crate::wait::{Answered, KeptWait, WaitStore, expiry_after, now_millis};

/// Where a retry goes.
pub(super) enum Retry {
    /// The call goes on (parked here, or run afresh).
    Goes(RunningCall),
    /// The call ends with this result, unrun.
    Ends(ToolResult),
}

/// The invalid-params answer to a handle that names no waiting call.
fn no_call() -> ErrorData {
    ErrorData::invalid_params(
        "`requestState` names no call of this tool waiting for an answer: \
         it was answered already, waited too long, or is not this user's",
        None,
    )
}

/// The answer in a retry's `inputResponses[INPUT_KEY]`.
pub(super) fn answer_in(response: Option<&Value>) -> Result<Answer, AskError> {
    let Some(response) = response.filter(|r| !r.is_null()) else {
        return Err(AskError::Failed(format!(
            "the client came back without an answer under `inputResponses.{INPUT_KEY}`"
        )));
    };
    let result: ElicitResult = serde_json::from_value(response.clone()).map_err(|e| {
        AskError::InvalidAnswer(format!("the client's answer is no elicitation result: {e}"))
    })?;
    ask::answer_of(result)
}

/// Gives `parked` the answer in `response`, and the call back.
fn answered(parked: Parked, response: Option<&Value>) -> RunningCall {
    // A call that ended meanwhile (cancelled, say) still reports.
    let _ = parked.answer.send(answer_in(response));
    let mut call = parked.call;
    let answer = response.cloned().unwrap_or(Value::Null);
    call.answered.push(Answered::new(parked.asked, answer));
    call
}

/// The result of a call whose wait expired.
fn expired(tool: &str, wait: &KeptWait) -> ToolResult {
    tracing::warn!(%tool, "a tool call's wait for an answer expired; not run");
    let text = if wait.started {
        format!(
            "expired: the call of `{tool}` waited for the person's answer longer than its \
             wait allows ({} s) and was ended there; it was not run again, so whether what it \
             did before asking took effect is unknown. Check before calling it again.",
            PARK_TIMEOUT.as_secs()
        )
    } else {
        format!(
            "expired: the call of `{tool}` waited for the person's approval longer than its \
             wait allows ({} s); the call did not run. Call it again if it is still wanted.",
            PARK_TIMEOUT.as_secs()
        )
    };
    ToolResult::error(text).with_details(json!({
        "error": "expired",
        "expiresAt": wait.expires_at,
        "started": wait.started,
    }))
}

/// The result of a started call that cannot run again here.
fn interrupted(tool: &str) -> ToolResult {
    tracing::warn!(%tool, "a started tool call's wait was answered where it is not running; not run again");
    ToolResult::error(format!(
        "interrupted: the call of `{tool}` had started and was waiting for the person's answer \
         in another server process (another instance, or this one before a restart), which \
         no longer holds it. It was not run again, so whether what it did before asking took \
         effect is unknown; check before calling it again."
    ))
    .with_details(json!({ "error": "interrupted" }))
}

impl McpHandler {
    /// The retry of a call with `handle` and the client's `response` (see
    /// the module rules); `arguments` are the retry's.
    pub(super) async fn retry(
        &self,
        handle: &str,
        name: &str,
        arguments: Option<JsonObject>,
        response: Option<&Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<Retry, ErrorData> {
        let user = self.scope.user().id();
        let Some(store) = &self.waits else {
            let parked = self.parked.take(handle, user, name).ok_or_else(no_call)?;
            return Ok(Retry::Goes(answered(parked, response)));
        };
        let kept = store.take(handle, user, name).await.map_err(|e| {
            let message = format!("the waiting call could not be read: {e}");
            ErrorData::internal_error(self.scope.redact(&message).into_owned(), None)
        })?;
        // Taken from memory whatever the store said: a call it no longer
        // keeps goes no further here either (dropping it cancels it).
        let parked = self.parked.take(handle, user, name);
        let Some(kept) = kept else {
            return Err(no_call());
        };
        if kept.is_expired_at(now_millis()) {
            return Ok(Retry::Ends(expired(name, &kept)));
        }
        if let Some(parked) = parked {
            return Ok(Retry::Goes(answered(parked, response)));
        }
        let idempotent = self
            .scope
            .tool(name)
            .and_then(|tool| tool.annotations().idempotent())
            == Some(true);
        if kept.started && !idempotent {
            return Ok(Retry::Ends(interrupted(name)));
        }
        let mut given = Value::Object(arguments.clone().unwrap_or_default());
        self.scope.redact_json(&mut given);
        if given != kept.arguments {
            return Err(ErrorData::invalid_params(
                "the retry's `arguments` are not those of the call its `requestState` names",
                None,
            ));
        }
        let mut replay: std::collections::VecDeque<Answered> = kept.answered.into();
        let answer = response.cloned().unwrap_or(Value::Null);
        replay.push_back(Answered::new(kept.asked, answer));
        Ok(Retry::Goes(
            self.start_call(name, arguments, context, replay),
        ))
    }

    /// The wait of `call` of `name`, parking under `handle` with
    /// `arguments` and asking `asked` (redacted); `before_body` when it is
    /// the call's approval.
    pub(super) fn kept_wait(
        &self,
        handle: &str,
        name: &str,
        arguments: Option<JsonObject>,
        call: &RunningCall,
        (asked, before_body): (&Value, bool),
    ) -> KeptWait {
        let mut arguments = Value::Object(arguments.unwrap_or_default());
        self.scope.redact_json(&mut arguments);
        KeptWait::new(
            handle,
            (self.scope.user().id(), name),
            arguments,
            asked.clone(),
            !before_body,
            expiry_after(PARK_TIMEOUT),
        )
        .with_answered(call.answered.clone())
    }

    /// Keeps `wait` in `store`, within its user's bound; why not, redacted.
    pub(super) async fn keep(&self, store: &dyn WaitStore, wait: &KeptWait) -> Result<(), String> {
        store.put(wait, self.parked.per_user()).await.map_err(|e| {
            let reason = format!("its wait could not be kept: {e}");
            let reason = self.scope.redact(&reason).into_owned();
            tracing::warn!(tool = %wait.tool, %reason, "a tool call's question was not asked");
            reason
        })
    }
}
