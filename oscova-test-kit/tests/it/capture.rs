//! The kit records what a tool logs and asks, and answers its questions
//! from the test's script.

use oscova_core::interaction::{Answer, Question};
use oscova_core::prelude::*;
use oscova_core::tool::LogLevel;
use oscova_test_kit::TestHost;

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
