//! The seed plugin tested as its author would, with nothing but the
//! public test kit: a host from the plugin in one line, calls by short
//! name, progress and approvals recorded, scripted answers.

use example_hello_plugin::ExampleAgentPlugin;
use oscova_core::prelude::*;
use oscova_test_kit::TestHost;

#[tokio::test]
async fn echo_by_short_name() {
    let kit = TestHost::for_plugin::<ExampleAgentPlugin>();
    assert_eq!(
        kit.tool_names(),
        [
            "acme_search__example__example_echo",
            "acme_search__example__search_records",
            "acme_search__example__slow_count"
        ]
    );
    let call = kit
        .call("example_echo", json!({"text": "hi"}))
        .await
        .assert_ok();
    assert_eq!(call.wire_name, "acme_search__example__example_echo");
    assert_eq!(call.result, ToolResult::text("hi"));
    assert!(call.approvals.is_empty(), "echo needs no approval");
}

#[tokio::test]
async fn search_asks_for_approval_and_honours_the_answer() {
    let kit = TestHost::for_plugin::<ExampleAgentPlugin>();
    let call = kit
        .call("search_records", json!({"query": "quarterly", "limit": 1}))
        .await
        .assert_ok();
    assert_eq!(
        call.details(),
        &json!([{"id": 1, "title": "Quarterly report"}])
    );
    assert_eq!(call.progress_messages(), ["searching for \"quarterly\""]);
    assert_eq!(call.approvals.len(), 1);
    assert_eq!(call.approvals[0].arguments["query"], "quarterly");

    kit.answer_approvals([ApprovalDecision::Deny(Some("not today".into()))]);
    let denied = kit
        .call("search_records", json!({"query": "plan"}))
        .await
        .assert_error("not today");
    assert!(denied.progress.is_empty(), "a denied call never runs");

    let refused = kit
        .try_call("search_records", json!({"query": "plan"}))
        .await;
    assert!(refused.is_ok(), "approved again once the script is used up");
}

#[tokio::test]
async fn errors_the_model_can_act_on() {
    let kit = TestHost::for_plugin::<ExampleAgentPlugin>();
    kit.call("search_records", json!({"query": "  "}))
        .await
        .assert_error("give at least one word");
    let err = kit
        .try_call("example_echo", json!({"text": 5}))
        .await
        .expect_err("bad arguments are a host refusal");
    assert!(err.to_string().contains("text"), "{err}");
}

#[tokio::test]
async fn slow_count_reports_each_step_and_stops_when_cancelled() {
    let kit = TestHost::for_plugin::<ExampleAgentPlugin>();
    let call = kit
        .call("slow_count", json!({"to": 3, "delay_ms": 1}))
        .await
        .assert_ok();
    assert_eq!(
        call.progress_messages(),
        ["counted to 1", "counted to 2", "counted to 3"]
    );
    assert_eq!(call.progress[2].total, Some(3.0));

    let token = CancellationToken::new();
    token.cancel();
    let cancelled = kit
        .call_cancellable("slow_count", json!({"to": 5, "delay_ms": 1000}), token)
        .await;
    assert!(cancelled.is_error(), "{}", cancelled.text());
}
