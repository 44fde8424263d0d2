//! Every tool call runs in one `execute_tool` span with OpenTelemetry's
//! GenAI attributes: in place or awaited, succeeded, failed or refused,
//! and the tool's log messages are events inside it.

use oscova_core::UserScope;
use oscova_core::host::invoke::Arguments;
use oscova_core::prelude::*;
use oscova_core::tool::LogLevel;
use oscova_test_support::trace::{Recorder, SeenSpan};

/// Tools that succeed, fail, log and wait.
pub struct TracedToolset;

#[toolset]
impl TracedToolset {
    /// Says hello, logging as it goes.
    pub fn hello(&self, invocation: &ToolInvocation<'_>) -> String {
        invocation.log(LogLevel::Info, "saying hello");
        "hello".into()
    }

    /// Fails the way a tool reports a failure to the model.
    pub async fn broken(&self) -> Result<String, String> {
        tokio::task::yield_now().await;
        Err("the disk is full".into())
    }
}

/// The plugin.
#[plugin(id = "trace.demo")]
pub struct TracedPlugin;

impl AgentPlugin for TracedPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| TracedToolset);
    }
}

fn recorded<F: std::future::Future>(run: impl FnOnce(UserScope) -> F) -> Vec<SeenSpan> {
    let recorder = Recorder::default();
    recorder.record(|| {
        let host = PluginHost::builder()
            .plugins(linked_plugins![TracedPlugin])
            .build()
            .unwrap();
        let scope = host.user_scope(UserInfo::new("alice"));
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(run(scope));
    });
    recorder.spans_named("execute_tool")
}

#[test]
fn a_call_in_place_has_the_genai_attributes_and_its_logs() {
    let spans = recorded(|scope| async move {
        let r = scope.invoke("trace_demo__traced__hello", json!({})).await;
        assert_eq!(r.content, "hello");
    });
    let [span] = &spans[..] else {
        panic!("{spans:#?}")
    };
    let f = &span.fields;
    assert_eq!(f["otel.name"], "execute_tool trace_demo__traced__hello");
    assert_eq!(f["gen_ai.operation.name"], "execute_tool");
    assert_eq!(f["gen_ai.tool.name"], "trace_demo__traced__hello");
    assert_eq!(f["gen_ai.tool.type"], "function");
    assert_eq!(f["oscova.plugin.id"], "trace.demo");
    assert_eq!(f["user.id"], "alice");
    assert!(
        f["gen_ai.tool.call.id"].parse::<u64>().unwrap() > 0,
        "{f:?}"
    );
    assert!(!f.contains_key("error.type"), "{f:?}");
    assert_eq!(span.events, ["saying hello"]);
    assert!(span.closed);
}

#[test]
fn an_awaited_call_that_fails_records_the_error_type() {
    let spans = recorded(|scope| async move {
        let r = scope.invoke("trace_demo__traced__broken", json!({})).await;
        assert!(r.is_error);
    });
    let [span] = &spans[..] else {
        panic!("{spans:#?}")
    };
    assert_eq!(
        span.fields["gen_ai.tool.name"],
        "trace_demo__traced__broken"
    );
    assert_eq!(span.fields["error.type"], "tool_error");
    assert_eq!(span.fields["otel.status_code"], "ERROR");
    assert!(span.closed);
}

#[test]
fn refused_calls_have_spans_too_with_unknown_names_cut_short() {
    let long = "x".repeat(100_000);
    let spans = recorded(|scope| async move {
        let r = scope
            .invoke("trace_demo__traced__hello", Arguments::json("{not json"))
            .await;
        assert!(r.is_error);
        let r = scope.invoke(&long, json!({})).await;
        assert!(r.is_error);
    });
    let [bad_json, unknown] = &spans[..] else {
        panic!("{spans:#?}")
    };
    assert_eq!(bad_json.fields["error.type"], "invalid_arguments");
    assert_eq!(unknown.fields["error.type"], "unknown_tool");
    assert!(unknown.fields["gen_ai.tool.name"].len() < 1_000);
}
