//! Several prompt sources served as one: names kept unique across them
//! (`review`, `review:2`), get and completion routed to the owner, the
//! list-changed signal raised when any source's is.

use std::time::Duration;

use oscova_mcp::McpServer;
use oscova_mcp::prompt::{PromptArg, PromptRole, PromptSources, PromptTemplate, PromptTemplates};
use rmcp::ServiceExt;
use rmcp::model::{ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, Reference};
use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::timeout;

use super::offer::{Changing, Updates, args, code, prompts, scope, serve};

fn others() -> PromptTemplates {
    PromptTemplates::new([
        PromptTemplate::new("review", "Reviews a person")
            .argument(PromptArg::new("who").with_required(true))
            .argument(PromptArg::new("mood").with_choices(["calm", "cross"]))
            .text(PromptRole::User, "Review {who}."),
        PromptTemplate::new("summary", "Summarises").text(PromptRole::User, "Sum up."),
    ])
    .unwrap()
}

#[tokio::test]
async fn names_stay_unique_and_requests_reach_the_source_that_listed_them() {
    let (_host, scope) = scope(None);
    let sources = PromptSources::new().with(prompts()).with(others());
    let client = ().serve(serve(McpServer::new(scope).prompts(sources))).await.unwrap();
    let caps = &client.peer_info().unwrap().capabilities;
    assert_eq!(
        caps.prompts.as_ref().unwrap().list_changed,
        None,
        "no source changes"
    );

    let listed = client.list_all_prompts().await.unwrap();
    let names: Vec<_> = listed.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["review", "review:2", "summary"]);
    assert_eq!(listed[1].description.as_deref(), Some("Reviews a person"));

    let get =
        |name: &str, arguments| GetPromptRequestParams::new(name).with_arguments(args(arguments));
    let first = client
        .get_prompt(get("review", json!({"path": "a.rs"})))
        .await
        .unwrap();
    let first = serde_json::to_value(&first.messages).unwrap();
    assert_eq!(first[0]["content"]["text"], "Review a.rs {as JSON}; be .");
    let second = client
        .get_prompt(get("review:2", json!({"who": "Ada"})))
        .await
        .unwrap();
    let second = serde_json::to_value(&second.messages).unwrap();
    assert_eq!(second[0]["content"]["text"], "Review Ada.");

    // The owner checks its own arguments: `path` is the first's, not the
    // second's.
    let refused = client
        .get_prompt(get("review:2", json!({"path": "a.rs"})))
        .await
        .unwrap_err();
    let (code_of, message) = code(refused);
    assert_eq!(code_of, -32602, "{message}");
    assert!(message.contains("`path`"), "{message}");
    for name in ["review:3", "summary:2"] {
        let unknown = client
            .get_prompt(GetPromptRequestParams::new(name))
            .await
            .unwrap_err();
        let (code_of, message) = code(unknown);
        assert_eq!(code_of, -32602, "{message}");
        assert!(message.contains("unknown prompt"), "{message}");
    }

    let complete = |name: &str, argument: &str, value: &str| {
        CompleteRequestParams::new(
            Reference::for_prompt(name),
            ArgumentInfo::new(argument, value),
        )
    };
    let done = client
        .complete(complete("review", "tone", "b"))
        .await
        .unwrap();
    assert_eq!(done.completion.values, ["blunt", "brief"]);
    let done = client
        .complete(complete("review:2", "mood", "c"))
        .await
        .unwrap();
    assert_eq!(done.completion.values, ["calm", "cross"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_change_of_any_source_is_a_list_changed_notification() {
    let (notifier, changes) = oscova_mcp::list_changes();
    let (_host, scope) = scope(None);
    let changing = Changing {
        prompts: others(),
        changes,
    };
    let sources = PromptSources::new().with(prompts()).with(changing);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client = Updates(tx)
        .serve(serve(McpServer::new(scope).prompts(sources)))
        .await
        .unwrap();
    let caps = &client.peer_info().unwrap().capabilities;
    assert_eq!(caps.prompts.as_ref().unwrap().list_changed, Some(true));
    // The session listens a moment after `initialize` answered: change
    // until a notification comes.
    let mut tries = 0;
    let said = loop {
        notifier.changed();
        match timeout(Duration::from_millis(500), rx.recv()).await {
            Ok(said) => break said.unwrap(),
            Err(_) if tries < 20 => tries += 1,
            Err(_) => panic!("no notifications/prompts/list_changed"),
        }
    };
    assert_eq!(said, "prompts/list_changed");
    client.cancel().await.unwrap();
}
