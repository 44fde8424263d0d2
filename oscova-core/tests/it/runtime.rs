//! Runtime toolsets go through the same publication, approval, hooks,
//! network scope, cancellation and redaction as `#[toolset]` tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_core::args::ArgError;
use oscova_core::host::PublicationError;
use oscova_core::prelude::*;
use oscova_core::runtime::{RuntimeCall, ToolHandler};
use oscova_core::tool::ToolFuture;
use oscova_core::tool::{ToolInfo, ToolsetInfo};
use oscova_core::{ExposeSecret, InvokeError, SecretString};
use serde_json::{Value, json};

/// Static tools beside the runtime ones, to collide with.
pub struct NotesToolset;

#[toolset]
impl NotesToolset {
    /// The static one.
    pub fn shout_text(text: String) -> String {
        text.to_uppercase()
    }
}

/// What every runtime tool does, chosen by its name as given.
struct Handler {
    calls: Arc<AtomicUsize>,
    secret: Option<String>,
}

impl ToolHandler for Handler {
    fn call<'a>(&'a self, call: RuntimeCall<'a>) -> Result<ToolFuture<'a>, ArgError> {
        if call.args.get("bad").is_some() {
            return Err(ArgError::new("/bad", "not accepted"));
        }
        let name = call.tool.display_name().to_owned();
        if name == "Needs-Approval" {
            self.calls.fetch_add(1, Ordering::SeqCst);
        }
        let args = call.args;
        let invocation = call.invocation;
        Ok(Box::pin(async move {
            match name.as_str() {
                "Echo" => ToolResult::text(args.to_string()).with_details(args),
                "Leak" => ToolResult::text(format!(
                    "secret={}",
                    self.secret.as_deref().unwrap_or("none")
                )),
                "Fetch" => {
                    let client = HttpClient::default();
                    match client.get("http://127.0.0.1:9/").send().await {
                        Ok(_) => ToolResult::text("connected"),
                        Err(e) => ToolResult::error(e.to_string()),
                    }
                }
                "Wait" => {
                    invocation.report(ToolProgress::ratio("waiting", 1.0, Some(2.0)));
                    invocation.cancellation_token().cancelled().await;
                    ToolResult::text("cancelled seen")
                }
                "Panic" => panic!("runtime tool panicked"),
                _ => ToolResult::error("unknown"),
            }
        }))
    }
}

fn schema() -> Value {
    json!({"type": "object", "properties": {"text": {"type": "string"}}})
}

fn tools() -> ToolsetInfo {
    ToolsetInfo::new(
        "Notes",
        [
            ToolInfo::new("Echo", "Echoes.", schema())
                .with_approval(ToolApprovalMode::NotRequired)
                .with_sequential(true)
                .with_prompt_snippet("Echoes the text\n   back.")
                .with_prompt_guidelines(["Echo only what the user wrote.", "\n", "Say\r\nwhy."]),
            ToolInfo::new("Leak", "Tells the secret.", schema()),
            ToolInfo::new("Fetch", "Tries the network.", schema())
                .with_network_scope(NetworkScope::None),
            ToolInfo::new("Wait", "Waits to be cancelled.", schema()),
            ToolInfo::new("Panic", "Panics.", schema()),
            ToolInfo::new("Needs-Approval", "Asks first.", schema())
                .with_approval(ToolApprovalMode::Required),
            // Collides with the static `shout_text` registered first.
            ToolInfo::new("Shout-Text", "A duplicate.", schema()),
            ToolInfo::new("!!!", "Normalises to nothing.", schema()),
            ToolInfo::new("NotAnObject", "Bad schema.", json!(true)),
            ToolInfo::new("x".repeat(60), "Too long.", schema()),
        ],
    )
}

/// The plugin under test.
#[plugin(id = "Test.Runtime")]
pub struct RuntimePlugin;

/// How often `Needs-Approval` ran, in this whole test binary. Only the one
/// test that calls it reads it: the other tests call other tools at the
/// same time, so a count of every call raced them.
static CALLS: std::sync::OnceLock<Arc<AtomicUsize>> = std::sync::OnceLock::new();

fn calls() -> Arc<AtomicUsize> {
    CALLS.get_or_init(Default::default).clone()
}

impl AgentPlugin for RuntimePlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| NotesToolset);
        builder.add_runtime_toolset(tools(), |ctx: &AgentPluginContext| Handler {
            calls: calls(),
            secret: ctx
                .credentials()
                .get("notes.token")
                .map(|s| s.expose_secret().to_owned()),
        });
    }
}

fn host() -> PluginHost {
    PluginHost::builder()
        .plugins(oscova_core::linked_plugins![RuntimePlugin])
        .credentials(|_: &UserInfo, key: &str| {
            (key == "notes.token").then(|| SecretString::from("s3cr3t-value"))
        })
        .build()
        .unwrap()
}

#[test]
fn publication_checks_runtime_tools_like_static_ones() {
    let host = host();
    let names: Vec<&str> = host.tools().iter().map(|t| t.wire_name()).collect();
    assert_eq!(
        names,
        [
            "test_runtime__notes__shout_text",
            "test_runtime__notes__echo",
            "test_runtime__notes__leak",
            "test_runtime__notes__fetch",
            "test_runtime__notes__wait",
            "test_runtime__notes__panic",
            "test_runtime__notes__needs_approval",
        ]
    );
    // The earlier (static) tool is kept.
    let kept = host.tool("test_runtime__notes__shout_text").unwrap();
    assert_eq!(kept.description(), "The static one.");
    let errors = host.publication_errors();
    assert_eq!(errors.len(), 4, "{errors:#?}");
    assert!(matches!(
        &errors[0],
        PublicationError::DuplicateWireName { method, kept_method, .. }
            if method == "Shout-Text" && kept_method == "shout_text"
    ));
    let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert!(text[1].contains("normalises to nothing"), "{}", text[1]);
    assert!(text[2].contains("not a JSON object"), "{}", text[2]);
    assert!(text[3].contains("64"), "{}", text[3]);

    let echo = host.tool("test_runtime__notes__echo").unwrap();
    assert_eq!(echo.info().display_name(), "Echo");
    assert_eq!(echo.approval(), ToolApprovalMode::NotRequired);
    assert_eq!(echo.input_schema(), &schema());
    assert_eq!(echo.toolset_type(), "Notes");
    assert!(echo.info().is_runtime());
    assert!(!kept.info().is_runtime());
    // What an agent reads besides the schema, each prompt text one line.
    assert!(echo.sequential());
    assert_eq!(echo.prompt_snippet(), Some("Echoes the text back."));
    assert_eq!(
        echo.prompt_guidelines(),
        ["Echo only what the user wrote.", "Say why."]
    );
    let leak = host.tool("test_runtime__notes__leak").unwrap();
    assert!(!leak.sequential());
    assert_eq!(leak.prompt_snippet(), None);
    assert!(leak.prompt_guidelines().is_empty());
}

#[tokio::test]
async fn calls_run_through_the_pipeline() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("alice"));
    let result = scope
        .invoke("test_runtime__notes__echo", json!({"text": "hi"}))
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.details, json!({"text": "hi"}));

    // The handler's argument error is a bad-arguments refusal.
    let refused = scope
        .invoke("test_runtime__notes__echo", json!({"bad": 1}))
        .checked()
        .await
        .unwrap_err();
    assert!(matches!(refused, InvokeError::InvalidArguments { .. }));
    assert!(refused.to_string().contains("/bad"), "{refused}");

    // A credential the factory resolved is redacted from what comes back.
    let leak = scope.invoke("test_runtime__notes__leak", json!({})).await;
    assert_eq!(leak.content, "secret=[REDACTED]");

    // A panic is an error result; the host carries on.
    let panicked = scope
        .invoke("test_runtime__notes__panic", json!({}))
        .checked()
        .await
        .unwrap_err();
    assert_eq!(panicked.kind(), "panicked");
}

#[tokio::test]
async fn network_scope_is_enforced_while_a_runtime_tool_runs() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("alice"));
    let result = scope.invoke("test_runtime__notes__fetch", json!({})).await;
    assert!(result.is_error, "{result:?}");
    assert!(result.content.contains("network"), "{}", result.content);
}

#[tokio::test]
async fn approval_and_hooks_apply() {
    let seen = Arc::new(AtomicUsize::new(0));
    let hook_seen = seen.clone();
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![RuntimePlugin])
        .before_tool_call(move |event| {
            if event.wire_name == "test_runtime__notes__echo" {
                hook_seen.fetch_add(1, Ordering::SeqCst);
                event.arguments["text"] = json!("from the hook");
            }
        })
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("bob"));
    let before = calls().load(Ordering::SeqCst);
    let denied = scope
        .invoke("test_runtime__notes__needs_approval", json!({}))
        .checked()
        .await
        .unwrap_err();
    assert_eq!(denied.kind(), "denied");
    assert_eq!(calls().load(Ordering::SeqCst), before, "a denied call ran");

    let approved = scope
        .invoke("test_runtime__notes__needs_approval", json!({}))
        .approval_handler(|_: &ApprovalRequest<'_>| ApprovalDecision::Approve)
        .await;
    assert_eq!(approved.content, "unknown");

    let echo = scope
        .invoke("test_runtime__notes__echo", json!({"text": "x"}))
        .await;
    assert_eq!(echo.details, json!({"text": "from the hook"}));
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn progress_and_cancellation_reach_the_handler() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("alice"));
    let cancel = CancellationToken::new();
    let progress = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = progress.clone();
    let trigger = cancel.clone();
    let call = scope
        .invoke("test_runtime__notes__wait", json!({}))
        .cancellation(cancel)
        .progress(move |p: ToolProgress| {
            sink.lock().unwrap().push(p.message.clone());
            trigger.cancel();
        })
        .checked();
    // The sink cancels inside the tool's own poll, so the tool sees its
    // token fire before the host stops waiting.
    let outcome = call.await.unwrap();
    assert_eq!(outcome.content, "cancelled seen");
    assert_eq!(progress.lock().unwrap().as_slice(), ["waiting"]);
}

#[tokio::test]
async fn with_a_grace_period_a_cancelled_body_answers_and_without_one_it_is_dropped() {
    let host = host();
    let scope = host.user_scope(UserInfo::new("alice"));
    for grace in [Some(std::time::Duration::from_secs(30)), None] {
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        let call = scope
            .invoke("test_runtime__notes__wait", json!({}))
            .cancellation(cancel);
        let call = match grace {
            Some(grace) => call.cancellation_grace(grace),
            None => call,
        };
        // The body is waiting on its token when the test cancels.
        let (outcome, ()) = tokio::join!(call.checked(), async {
            tokio::task::yield_now().await;
            trigger.cancel();
        });
        match grace {
            Some(_) => assert_eq!(outcome.unwrap().content, "cancelled seen"),
            None => assert_eq!(outcome.unwrap_err().kind(), "cancelled"),
        }
    }
}
