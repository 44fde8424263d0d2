//! Tool results, metadata and interaction through a real `PluginHost`:
//! content blocks (redacted on every text field), output schemas that the
//! structured results conform to (checked with a JSON Schema validator),
//! annotations and titles in the catalog, auto-approval of read-only tools,
//! questions answered by the host's or the call's handler (and abandoned
//! on cancellation), and log messages.

use std::sync::{Arc, Mutex};

use oscova_core::host::DefaultApproval;
use oscova_core::interaction::{Answer, AskError, Form, FormField, InteractionRequest, Question};
use oscova_core::prelude::*;
use oscova_core::tool::{ContentBlock, LogLevel, ToolLog};
use serde::Serialize;

const SECRET: &str = "hunter2-secret";

/// A row the search returns.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Row {
    /// The row's id.
    pub id: u32,
    /// Its label.
    pub label: String,
    /// Tags, maybe none.
    pub tags: Vec<String>,
}

/// A summary of rows.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Summary {
    /// How many rows.
    pub count: usize,
    /// The rows.
    pub rows: Vec<Row>,
}

/// Serialises but has no schema.
#[derive(Serialize)]
pub struct Opaque {
    /// Anything.
    pub value: i32,
}

/// Tools for every kind of result.
pub struct ResultsToolset;

#[toolset]
impl ResultsToolset {
    /// Draws a picture and says so, quoting a secret everywhere it can;
    /// nothing is left to do after it (a terminating result).
    #[tool(title = "Draw a picture", read_only, idempotent)]
    pub fn draw() -> ToolResult {
        ToolResult::text(format!("drawn with {SECRET}"))
            .with_image(vec![0x89, b'P', b'N', b'G'], "image/png")
            .with_audio(b"RIFF".to_vec(), "audio/wav")
            .with_block(ContentBlock::text(format!("caption {SECRET}")))
            .with_resource_text(
                format!("file:///{SECRET}.txt"),
                Some("text/plain"),
                format!("body {SECRET}"),
            )
            .terminating()
    }

    /// Summarises rows.
    #[tool(network = Internet, destructive = false)]
    pub fn summary(count: u32) -> Summary {
        let rows = (0..count)
            .map(|id| Row {
                id,
                label: format!("row {id}"),
                tags: vec!["a".into()],
            })
            .collect::<Vec<_>>();
        Summary {
            count: rows.len(),
            rows,
        }
    }

    /// Lists labels, or fails.
    #[tool(destructive)]
    pub fn labels(fail: bool) -> Result<Vec<String>, String> {
        if fail {
            Err("no labels".into())
        } else {
            Ok(vec!["x".into(), "y".into()])
        }
    }

    /// Plain text: no output schema.
    #[tool(network = Internet, open_world = false)]
    pub fn plain() -> String {
        "plain".into()
    }

    /// A value without a schema.
    pub fn opaque() -> Opaque {
        Opaque { value: 7 }
    }

    /// Asks before doing anything.
    pub async fn ask(invocation: &ToolInvocation) -> Result<String, String> {
        invocation.log(LogLevel::Info, format!("asking about {SECRET}"));
        let yes = invocation
            .confirm(format!("Really use {SECRET}?"))
            .await
            .map_err(|e| e.to_string())?;
        if !yes {
            return Ok("declined".into());
        }
        let pick = invocation
            .choose("Which colour?", ["red", "green"])
            .await
            .map_err(|e| e.to_string())?;
        let form = invocation
            .fill(
                "Details",
                Form::new()
                    .required_text("name", "Name")
                    .field(FormField::number("size", "Size").with_default(3.0)),
            )
            .await
            .map_err(|e| e.to_string())?;
        invocation.log(LogLevel::Warning, "done");
        Ok(format!("{pick} {} {}", form["name"], form["size"]))
    }

    /// Reads the default-approval policy's way: read-only, Default mode.
    #[tool(read_only)]
    pub fn look() -> String {
        "looked".into()
    }
}

/// The plugin.
#[plugin(id = "res.tools")]
pub struct ResultsPlugin;

impl AgentPlugin for ResultsPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| ResultsToolset);
    }
}

fn name(tool: &str) -> String {
    format!("res_tools__results__{tool}")
}

fn host() -> PluginHost {
    let host = PluginHost::builder()
        .plugins(linked_plugins![ResultsPlugin])
        .build()
        .unwrap();
    host.redactor().add(SECRET);
    host
}

#[tokio::test]
async fn blocks_keep_their_order_and_every_text_field_is_redacted() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("u"));
    let r = scope.invoke(&name("draw"), json!({})).await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(r.content, "drawn with [REDACTED]");
    let kinds: Vec<_> = r.blocks.iter().map(ContentBlock::kind).collect();
    assert_eq!(kinds, ["image", "audio", "text", "resource"]);
    assert_eq!(r.blocks[0].bytes(), Some(&[0x89, b'P', b'N', b'G'][..]));
    assert_eq!(r.blocks[2].as_text(), Some("caption [REDACTED]"));
    let ContentBlock::Resource(res) = &r.blocks[3] else {
        panic!("{:?}", r.blocks[3]);
    };
    assert_eq!(res.uri, "file:///[REDACTED].txt");
    assert_eq!(r.blocks[3].as_text(), Some("body [REDACTED]"));
    let json = serde_json::to_string(&r).unwrap();
    assert!(!json.contains(SECRET), "{json}");
    // `terminate` is the host's: the pipeline and redaction keep it.
    assert!(r.terminate, "{r:?}");
    assert!(json.contains(r#""terminate":true"#), "{json}");
    assert_eq!(r.into_blocks().len(), 5);
    let plain = scope.invoke(&name("plain"), json!({})).await;
    assert!(!plain.terminate, "{plain:?}");
    let json = serde_json::to_string(&plain).unwrap();
    assert!(!json.contains("terminate"), "left out when false: {json}");
}

#[test]
fn annotations_titles_and_output_schemas_are_in_the_catalog() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("u"));
    let tool = |t: &str| scope.tool(&name(t)).unwrap();

    let draw = tool("draw");
    assert_eq!(draw.title(), Some("Draw a picture"));
    let a = draw.annotations();
    assert_eq!(
        (
            a.read_only(),
            a.destructive(),
            a.idempotent(),
            a.open_world()
        ),
        (Some(true), None, Some(true), Some(false))
    );
    assert!(draw.output_schema().is_none(), "a ToolResult has no schema");

    // open_world follows the network scope unless written.
    assert_eq!(tool("summary").annotations().open_world(), Some(true));
    assert_eq!(tool("summary").annotations().destructive(), Some(false));
    assert_eq!(tool("plain").annotations().open_world(), Some(false));
    assert_eq!(tool("labels").annotations().destructive(), Some(true));
    assert_eq!(tool("labels").title(), None);

    assert!(tool("plain").output_schema().is_none());
    assert!(tool("opaque").output_schema().is_none());
    let schema = tool("summary").output_schema().unwrap();
    assert_eq!(schema["type"], "object");
    assert_eq!(
        tool("labels").output_schema().unwrap()["type"],
        "array",
        "the T of Result<T, E>"
    );
}

#[tokio::test]
async fn structured_results_conform_to_their_output_schemas() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("u"));
    for (tool, args) in [
        ("summary", json!({"count": 0})),
        ("summary", json!({"count": 3})),
        ("labels", json!({"fail": false})),
    ] {
        let schema = scope.tool(&name(tool)).unwrap().output_schema().unwrap();
        let validator = jsonschema::validator_for(schema).unwrap();
        let r = scope.invoke(&name(tool), args).await;
        assert!(!r.is_error, "{}", r.content);
        let errors: Vec<_> = validator
            .iter_errors(&r.details)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{tool}: {errors:?} in {}", r.details);
        // And a value of another shape does not: the check checks.
        assert!(!validator.is_valid(&json!({"count": "many"})));
    }
}

#[tokio::test]
async fn read_only_default_tools_run_unasked_only_when_the_host_says_so() {
    for (auto, ran) in [(false, false), (true, true)] {
        let host = PluginHost::builder()
            .plugins(linked_plugins![ResultsPlugin])
            .default_approval(DefaultApproval::Required)
            .auto_approve_read_only(auto)
            .build()
            .unwrap();
        let scope = host.user_scope(UserInfo::new("u"));
        let r = scope.invoke(&name("look"), json!({})).await;
        assert_eq!(!r.is_error, ran, "auto={auto}: {}", r.content);
        // Not read-only: still asked, still denied without a handler.
        let r = scope.invoke(&name("plain"), json!({})).await;
        assert!(r.is_error, "{}", r.content);
    }
}

/// Answers from a script and records what it was asked.
fn scripted(
    answers: Vec<Answer>,
    asked: Arc<Mutex<Vec<InteractionRequest>>>,
) -> impl oscova_core::interaction::InteractionHandler {
    let answers = Arc::new(Mutex::new(answers.into_iter()));
    move |req: InteractionRequest| {
        asked.lock().unwrap().push(req);
        let next = answers.lock().unwrap().next();
        async move { next.ok_or_else(|| AskError::Failed("no more answers".into())) }
    }
}

fn accept(v: serde_json::Value) -> Answer {
    match v {
        serde_json::Value::Object(m) => Answer::Accept(m),
        _ => unreachable!(),
    }
}

#[tokio::test]
async fn a_tool_asks_through_the_hosts_handler_and_logs_redacted() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let host = PluginHost::builder()
        .plugins(linked_plugins![ResultsPlugin])
        .interaction_handler(scripted(
            vec![
                accept(json!({})),
                accept(json!({"choice": "green"})),
                accept(json!({"name": "Ada"})),
            ],
            asked.clone(),
        ))
        .build()
        .unwrap();
    host.redactor().add(SECRET);
    let scope = host.user_scope(UserInfo::new("u"));
    let logs = Arc::new(Mutex::new(Vec::<ToolLog>::new()));
    let sink = logs.clone();
    let r = scope
        .invoke(&name("ask"), json!({}))
        .log(move |l| sink.lock().unwrap().push(l))
        .await;
    assert_eq!(r.content, r#"1 "Ada" 3.0"#, "defaults fill in");
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 3);
    assert_eq!(asked[0].tool, name("ask"));
    assert_eq!(asked[0].user_id, "u");
    assert_eq!(asked[0].question.message(), "Really use [REDACTED]?");
    assert!(matches!(asked[1].question, Question::Choose { .. }));
    let logs = logs.lock().unwrap();
    assert_eq!(
        logs.iter()
            .map(|l| (l.level, l.message.as_str()))
            .collect::<Vec<_>>(),
        [
            (LogLevel::Info, "asking about [REDACTED]"),
            (LogLevel::Warning, "done")
        ]
    );
}

#[tokio::test]
async fn the_calls_handler_wins_answers_are_checked_and_nobody_means_an_error() {
    let host = PluginHost::builder()
        .plugins(linked_plugins![ResultsPlugin])
        .interaction_handler(scripted(vec![], Arc::default()))
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("u"));

    let r = scope
        .invoke(&name("ask"), json!({}))
        .interaction_handler(scripted(vec![Answer::Decline], Arc::default()))
        .await;
    assert_eq!(r.content, "declined");

    // A choice that is not one of the options is refused before the tool
    // sees it.
    let r = scope
        .invoke(&name("ask"), json!({}))
        .interaction_handler(scripted(
            vec![accept(json!({})), accept(json!({"choice": "blue"}))],
            Arc::default(),
        ))
        .await;
    assert!(r.content.contains("does not fit"), "{}", r.content);

    // No handler at all: the tool is told nobody can be asked.
    let bare = PluginHost::builder()
        .plugins(linked_plugins![ResultsPlugin])
        .build()
        .unwrap();
    let r = bare
        .user_scope(UserInfo::new("u"))
        .invoke(&name("ask"), json!({}))
        .await;
    assert!(r.content.contains("nobody can be asked"), "{}", r.content);
}

#[tokio::test]
async fn cancelling_the_call_ends_the_wait_for_an_answer() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("u"));
    let cancel = CancellationToken::new();
    let never = |_: InteractionRequest| std::future::pending::<Result<Answer, AskError>>();
    let ask = name("ask");
    let call = scope
        .invoke(&ask, json!({}))
        .interaction_handler(never)
        .cancellation(cancel.clone())
        .checked();
    let canceller = async {
        tokio::task::yield_now().await;
        cancel.cancel();
    };
    let (outcome, ()) = tokio::join!(call, canceller);
    assert_eq!(outcome.unwrap_err().kind(), "cancelled");
}
