//! The server side of the hop limit: a task runs inside the hop count of
//! its message's metadata, so a tool call of the run that sends to
//! another agent carries one more hop, and a chain of agents calling
//! each other is refused at `max_hops`. Here the server calls itself.

use serde_json::{Value, json};

use crate::support::{ALICE, Server};

/// The text of the task's artifact.
fn answer(result: &Value) -> String {
    result["result"]["task"]["artifacts"][0]["parts"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no artifact text in {result}"))
        .to_owned()
}

fn chain(metadata: Value) -> Value {
    json!({"message": {"messageId": format!("m-{metadata}"), "role": "ROLE_USER",
        "parts": [{"text": "chain on"}], "metadata": metadata}})
}

#[tokio::test]
async fn a_chain_of_calls_to_itself_is_refused_at_max_hops() {
    let server = Server::start_chain(2).await;
    let result = server.rpc(ALICE, "SendMessage", chain(json!({}))).await;
    let text = answer(&result);
    // Hops 0 and 1 forwarded; the run at hop 2 was refused its send.
    assert_eq!(text.matches("Tool said:").count(), 3, "{text}");
    assert!(text.contains("hop"), "{text}");
    assert!(
        text.contains("max_hops") || text.contains("limit"),
        "{text}"
    );

    // A message that arrives at the limit forwards nothing.
    let result = server
        .rpc(ALICE, "SendMessage", chain(json!({"oscova.hops": 2})))
        .await;
    let text = answer(&result);
    assert_eq!(text.matches("Tool said:").count(), 1, "{text}");
    assert!(text.contains("hop"), "{text}");
    server.stop().await;
}
