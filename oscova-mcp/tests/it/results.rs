//! Rich results, metadata, questions, approval and logging over MCP, with
//! rmcp's own client as the person's side: content blocks, output schemas
//! and structured content (validated with a JSON Schema validator),
//! titles and annotations, elicitation for questions and approval,
//! `notifications/message` under `logging/setLevel`, ping, and the
//! protocol versions rmcp negotiates. Needs the `mcp` feature.

#![allow(deprecated)] // rmcp marks MCP logging deprecated; the 2025 protocols define it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oscova_core::prelude::*;
use oscova_mcp::McpServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    FormElicitationCapability, Implementation, InputResponses, JsonObject, LoggingLevel,
    LoggingMessageNotificationParam, PingRequest, ProtocolVersion, SetLevelRequestParams,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RunningService,
};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::time::timeout;

use super::studio::{SECRET, tool};
use oscova_mcp::INPUT_KEY;

const PATIENCE: Duration = Duration::from_secs(20);

/// The person at the client: answers elicitations from a script, records
/// questions and log messages.
#[derive(Default)]
struct Person {
    elicitation: bool,
    version: Option<ProtocolVersion>,
    answers: Mutex<VecDeque<ElicitResult>>,
    asked: Arc<Mutex<Vec<String>>>,
    schemas: Arc<Mutex<Vec<Value>>>,
    logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl ClientHandler for Person {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = &request
        {
            self.asked.lock().unwrap().push(message.clone());
            let schema = serde_json::to_value(requested_schema).unwrap();
            self.schemas.lock().unwrap().push(schema);
        }
        let next = self.answers.lock().unwrap().pop_front();
        Ok(next.unwrap_or_else(|| answer(ElicitationAction::Cancel, None)))
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params);
    }

    fn get_info(&self) -> ClientConfig {
        let mut caps = ClientCapabilities::default();
        if self.elicitation {
            let mut e = ElicitationCapability::new();
            e.form = Some(FormElicitationCapability::default());
            caps.elicitation = Some(e);
        }
        let mut info = ClientConfig::new(caps, Implementation::new("person", "1"));
        if let Some(v) = &self.version {
            info.protocol_version = v.clone();
        }
        info
    }
}

fn answer(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
    serde_json::from_value(json!({
        "action": action,
        "content": content,
    }))
    .unwrap()
}

fn server(allow: bool) -> McpServer {
    McpServer::new(super::studio::host().user_scope(UserInfo::new("alice")))
        .allow_approval_required(allow)
}

async fn connect(server: McpServer, person: Person) -> RunningService<RoleClient, Person> {
    let (client, served) = tokio::io::duplex(256 * 1024);
    let (read, write) = tokio::io::split(served);
    tokio::spawn(server.serve_io(read, write));
    timeout(PATIENCE, person.serve(client))
        .await
        .unwrap()
        .unwrap()
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

async fn call(
    client: &RunningService<RoleClient, Person>,
    name: &str,
    args: Value,
) -> CallToolResult {
    timeout(
        PATIENCE,
        client.call_tool(CallToolRequestParams::new(tool(name)).with_arguments(object(args))),
    )
    .await
    .unwrap()
    .unwrap()
}

#[tokio::test]
async fn tools_carry_titles_annotations_and_output_schemas() {
    let client = connect(server(false), Person::default()).await;
    let info = client.peer_info().unwrap();
    let caps = serde_json::to_value(&info.capabilities).unwrap();
    assert!(caps["tools"].is_object(), "{caps}");
    assert!(caps["logging"].is_object(), "{caps}");

    let tools = client.list_all_tools().await.unwrap();
    let by = |name: &str| {
        let t = tools.iter().find(|t| t.name == tool(name)).unwrap();
        serde_json::to_value(t).unwrap()
    };
    let media = by("media");
    assert_eq!(media["title"], "Make media");
    assert_eq!(
        media["annotations"],
        json!({"title": "Make media", "readOnlyHint": true, "openWorldHint": true})
    );
    assert!(media.get("outputSchema").is_none());
    assert_eq!(
        by("clear")["annotations"],
        json!({"destructiveHint": true, "openWorldHint": false})
    );
    let rows = by("rows");
    assert_eq!(rows["outputSchema"]["type"], "object");
    assert_eq!(rows["outputSchema"]["required"], json!(["result"]));
    assert_eq!(
        rows["outputSchema"]["properties"]["result"]["type"],
        "array"
    );
    assert_eq!(
        by("summary")["outputSchema"]["properties"]["count"]["type"],
        "integer"
    );

    // Ping is answered.
    let pong = client
        .send_request(ClientRequest::PingRequest(PingRequest {
            method: Default::default(),
            extensions: Default::default(),
        }))
        .await;
    assert!(pong.is_ok(), "{pong:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn content_blocks_and_structured_results_survive_the_round_trip() {
    let client = connect(server(false), Person::default()).await;
    let media = serde_json::to_value(call(&client, "media", json!({})).await).unwrap();
    assert_eq!(
        media["content"],
        json!([
            {"type": "text", "text": "made with [REDACTED]"},
            {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///note.txt", "mimeType": "text/plain", "text": "a note"}}
        ])
    );

    let tools = client.list_all_tools().await.unwrap();
    for (name, args, expected) in [
        (
            "rows",
            json!({"n": 2}),
            json!({"result": [{"id": 0}, {"id": 1}]}),
        ),
        ("summary", json!({}), json!({"count": 2})),
    ] {
        let result = call(&client, name, args).await;
        let structured = result.structured_content.clone().unwrap();
        assert_eq!(structured, expected);
        let schema = tools
            .iter()
            .find(|t| t.name == tool(name))
            .and_then(|t| t.output_schema.clone())
            .unwrap();
        let validator = jsonschema::validator_for(&Value::Object((*schema).clone())).unwrap();
        let errors: Vec<_> = validator
            .iter_errors(&structured)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        // The text is the same JSON, for clients that read only text.
        let text = serde_json::to_value(&result.content).unwrap()[0]["text"].clone();
        let text: Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
        assert_eq!(
            text,
            if name == "rows" {
                expected["result"].clone()
            } else {
                expected
            }
        );
    }
    client.cancel().await.unwrap();
}

async fn survey_with(version: ProtocolVersion) {
    let person = Person {
        elicitation: true,
        version: Some(version.clone()),
        answers: Mutex::new(VecDeque::from([
            answer(ElicitationAction::Accept, Some(json!({}))),
            answer(ElicitationAction::Accept, Some(json!({"choice": "blue"}))),
            answer(ElicitationAction::Accept, Some(json!({"name": "Ada"}))),
        ])),
        ..Person::default()
    };
    let (asked, logs) = (person.asked.clone(), person.logs.clone());
    let client = connect(server(false), person).await;
    assert_eq!(client.peer_info().unwrap().protocol_version, version);
    let result = call(&client, "survey", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(
        serde_json::to_value(&result.content).unwrap()[0]["text"],
        r#"1 "Ada" true"#
    );
    assert_eq!(*asked.lock().unwrap(), ["Go on?", "Colour?", "Details"]);
    // The session starts at `info`: the debug message is not sent.
    let sent: Vec<_> = logs
        .lock()
        .unwrap()
        .iter()
        .map(|l| (l.level, l.data.clone(), l.logger.clone()))
        .collect();
    assert_eq!(
        sent,
        [(
            LoggingLevel::Warning,
            json!("careful with [REDACTED]"),
            Some(tool("survey"))
        )]
    );

    // `logging/setLevel` moves the threshold.
    logs.lock().unwrap().clear();
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Error))
        .await
        .unwrap();
    call(&client, "survey", json!({})).await; // the person is out of answers
    assert!(logs.lock().unwrap().is_empty());
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
        .await
        .unwrap();
    call(&client, "survey", json!({})).await;
    assert_eq!(logs.lock().unwrap().len(), 2);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn questions_are_elicited_and_logs_sent_on_2025_06_18() {
    survey_with(ProtocolVersion::V_2025_06_18).await;
}

#[tokio::test]
async fn questions_are_elicited_and_logs_sent_on_2025_11_25() {
    survey_with(ProtocolVersion::V_2025_11_25).await;
}

#[tokio::test]
async fn forms_with_integers_and_titled_and_multiple_choices_reach_the_client() {
    let person = Person {
        elicitation: true,
        version: Some(ProtocolVersion::V_2025_11_25),
        answers: Mutex::new(VecDeque::from([
            answer(
                ElicitationAction::Accept,
                Some(json!({"guests": 4, "room": "garden", "diet": ["vegan", "halal"]})),
            ),
            answer(ElicitationAction::Accept, Some(json!({"guests": 9}))),
            answer(
                ElicitationAction::Accept,
                Some(json!({"guests": 3, "diet": ["paleo"]})),
            ),
        ])),
        ..Person::default()
    };
    let schemas = person.schemas.clone();
    let client = connect(server(false), person).await;

    let ok = call(&client, "book", json!({})).await;
    assert_eq!(ok.is_error, Some(false), "{ok:?}");
    assert_eq!(
        serde_json::to_value(&ok.content).unwrap()[0]["text"],
        r#"4 in "garden" ["vegan","halal"]"#
    );
    let schema = schemas.lock().unwrap()[0].clone();
    let p = &schema["properties"];
    assert_eq!(
        p["guests"],
        json!({"type": "integer", "title": "Guests", "default": 2, "minimum": 1, "maximum": 8})
    );
    assert_eq!(
        p["room"]["oneOf"],
        json!([{"const": "main", "title": "Main hall"}, {"const": "garden", "title": "Garden"}])
    );
    assert_eq!(p["diet"]["type"], "array");
    assert_eq!(
        p["diet"]["items"]["enum"],
        json!(["vegan", "halal", "kosher"])
    );
    assert_eq!(schema["required"], json!(["guests"]));

    // The host checks what the client sends back before the tool sees it.
    for expected in ["from 1 to 8", "paleo"] {
        let bad = call(&client, "book", json!({})).await;
        assert_eq!(bad.is_error, Some(true), "{bad:?}");
        let text = serde_json::to_value(&bad.content).unwrap()[0]["text"].clone();
        assert!(text.as_str().unwrap().contains(expected), "{text}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn on_2026_07_28_questions_and_approval_take_rounds_of_input_required() {
    let person = Person {
        elicitation: true,
        version: Some(ProtocolVersion::V_2026_07_28),
        answers: Mutex::new(VecDeque::from([
            answer(ElicitationAction::Accept, Some(json!({}))),
            answer(ElicitationAction::Accept, Some(json!({"choice": "blue"}))),
            answer(ElicitationAction::Accept, Some(json!({"name": "Ada"}))),
            answer(ElicitationAction::Accept, Some(json!({}))),
        ])),
        ..Person::default()
    };
    let asked = person.asked.clone();
    // 2026-07-28 starts with `server/discover`, not `initialize`.
    let (ours, served) = tokio::io::duplex(256 * 1024);
    let (read, write) = tokio::io::split(served);
    tokio::spawn(server(false).serve_io(read, write));
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = timeout(PATIENCE, person.serve_with_lifecycle(ours, lifecycle))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        client.peer_info().map(|i| i.protocol_version.clone()),
        Some(ProtocolVersion::V_2026_07_28)
    );

    // rmcp's client answers each `input_required` through its handler and
    // retries with the answer and the echoed `requestState`.
    let result = call(&client, "survey", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(
        serde_json::to_value(&result.content).unwrap()[0]["text"],
        r#"1 "Ada" true"#
    );
    let room = format!("lab {SECRET}");
    let cleared = call(&client, "clear", json!({ "room": room })).await;
    assert_eq!(cleared.is_error, Some(false), "{cleared:?}");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(&asked[..3], ["Go on?", "Colour?", "Details"]);
    assert!(asked[3].contains(&tool("clear")) && asked[3].contains("[REDACTED]"));

    // One round at a time, by hand: the state names the parked call.
    let params = CallToolRequestParams::new(tool("survey")).with_arguments(object(json!({})));
    let first = client.call_tool_once(params.clone()).await.unwrap();
    let CallToolResponse::InputRequired(first) = first else {
        panic!("a question first: {first:?}")
    };
    let state = first.request_state.clone().expect("a request state");
    let requests = first.input_requests.expect("the question");
    assert_eq!(requests.keys().collect::<Vec<_>>(), [INPUT_KEY]);

    // A forged state reaches no call.
    let forged = client
        .call_tool_once(
            params
                .clone()
                .with_request_state("0123456789abcdef0123456789abcdef"),
        )
        .await
        .unwrap_err();
    assert!(forged.to_string().contains("requestState"), "{forged}");

    // The answer resumes the call, once: declining "Go on?" stops it.
    let mut responses = InputResponses::new();
    responses.insert(INPUT_KEY.to_owned(), json!({"action": "decline"}));
    let done = client
        .call_tool_once(
            params
                .clone()
                .with_request_state(state.clone())
                .with_input_responses(responses.clone()),
        )
        .await
        .unwrap();
    let CallToolResponse::Complete(done) = done else {
        panic!("the call's end: {done:?}")
    };
    assert_eq!(
        serde_json::to_value(&done.content).unwrap()[0]["text"],
        "stopped"
    );
    let again = client
        .call_tool_once(
            params
                .with_request_state(state)
                .with_input_responses(responses),
        )
        .await;
    assert!(again.is_err(), "a state is good for one retry: {again:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_client_that_cannot_ask_gets_an_error_result_saying_so() {
    let client = connect(server(false), Person::default()).await;
    let result = call(&client, "survey", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    let text = serde_json::to_value(&result.content).unwrap()[0]["text"].clone();
    assert!(
        text.as_str()
            .unwrap()
            .contains("did not declare the elicitation capability"),
        "{text}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn required_tools_are_approved_through_elicitation() {
    let person = Person {
        elicitation: true,
        version: Some(ProtocolVersion::V_2025_06_18),
        answers: Mutex::new(VecDeque::from([
            answer(ElicitationAction::Accept, Some(json!({}))),
            answer(ElicitationAction::Decline, None),
        ])),
        ..Person::default()
    };
    let asked = person.asked.clone();
    let client = connect(server(false), person).await;
    let room = format!("lab {SECRET}");
    let yes = call(&client, "clear", json!({ "room": room })).await;
    assert_eq!(yes.is_error, Some(false), "{yes:?}");
    let no = call(&client, "clear", json!({ "room": "lab" })).await;
    assert_eq!(no.is_error, Some(true));
    let text = serde_json::to_value(&no.content).unwrap()[0]["text"].clone();
    assert!(text.as_str().unwrap().contains("declined"), "{text}");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2);
    assert!(asked[0].contains(&tool("clear")), "{}", asked[0]);
    assert!(asked[0].contains("[REDACTED]"), "{}", asked[0]);
    assert!(!asked[0].contains(SECRET), "{}", asked[0]);
    client.cancel().await.unwrap();

    // `--allow-approval-required` keeps its meaning: approved unasked.
    let person = Person {
        elicitation: true,
        ..Person::default()
    };
    let asked = person.asked.clone();
    let client = connect(server(true), person).await;
    let yes = call(&client, "clear", json!({ "room": "lab" })).await;
    assert_eq!(yes.is_error, Some(false));
    assert!(asked.lock().unwrap().is_empty());
    client.cancel().await.unwrap();
}
