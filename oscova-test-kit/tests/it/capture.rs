//! The kit records what a tool logs and asks, and answers its questions
//! from the test's script.

use oscova_core::interaction::{Answer, Question};
use oscova_core::prelude::*;
use oscova_core::tool::LogLevel;
use oscova_test_kit::{TestHost, accept};

/// Asks before it acts, and logs what it does.
pub struct CarefulToolset;

#[toolset]
impl CarefulToolset {
    /// Deletes a file once the person confirms.
    pub async fn delete(&self, invocation: &ToolInvocation<'_>, path: String) -> String {
        invocation.log(LogLevel::Info, format!("asked to delete {path}"));
        match invocation.confirm(format!("Delete {path}?")).await {
            Ok(true) => format!("deleted {path}"),
            Ok(false) => format!("kept {path}"),
            Err(e) => format!("could not ask: {e}"),
        }
    }
}

#[tokio::test]
async fn logs_and_questions_are_recorded_and_answered_from_the_script() {
    let kit = TestHost::for_toolset(|_: &AgentPluginContext| CarefulToolset);
    kit.answer_questions([Answer::Accept(Default::default())]);

    let call = kit
        .call("delete", json!({"path": "a.txt"}))
        .await
        .assert_ok();
    assert_eq!(call.text(), "deleted a.txt");
    assert_eq!(call.logs.len(), 1);
    assert_eq!(call.logs[0].level, LogLevel::Info);
    assert_eq!(call.logs[0].message, "asked to delete a.txt");
    let [asked] = &call.questions[..] else {
        panic!("{:?}", call.questions)
    };
    assert!(
        matches!(&asked.request.question, Question::Confirm { message } if message == "Delete a.txt?"),
        "{asked:?}"
    );
    assert_eq!(asked.answer, Answer::Accept(Default::default()));

    // With the script used up, a question is declined.
    let call = kit
        .call("delete", json!({"path": "b.txt"}))
        .await
        .assert_ok();
    assert_eq!(call.text(), "kept b.txt");
    assert_eq!(call.questions[0].answer, Answer::Decline);
}

/// Books trips, asking where to.
pub struct TripToolset;

#[toolset]
impl TripToolset {
    /// Books a trip after asking for the city and the length of stay.
    pub async fn book(&self, invocation: &ToolInvocation<'_>) -> String {
        let form = oscova_core::interaction::Form::new()
            .required_text("city", "City")
            .required_integer("days", "Days");
        match invocation.fill("Where to?", form).await {
            Ok(fields) => format!(
                "{} for {} days",
                fields["city"].as_str().unwrap_or("?"),
                fields["days"]
            ),
            Err(e) => format!("not booked: {e}"),
        }
    }
}

#[tokio::test]
async fn a_form_is_answered_from_a_json_object() {
    let kit = TestHost::for_toolset(|_: &AgentPluginContext| TripToolset);
    kit.answer_questions([accept(json!({"city": "Paris", "days": 3}))]);
    let call = kit.call("book", json!({})).await.assert_ok();
    assert_eq!(call.text(), "Paris for 3 days");
}

#[test]
#[should_panic(expected = "an accepted answer is a JSON object of fields, not [1,2]")]
fn an_answer_that_is_not_an_object_is_refused() {
    let _ = accept(json!([1, 2]));
}
