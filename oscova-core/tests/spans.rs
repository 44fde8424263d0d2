//! Every tool call runs in one `execute_tool` span with OpenTelemetry's
//! GenAI attributes: in place or awaited, succeeded, failed or refused,
//! and the tool's log messages are events inside it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use oscova_core::UserScope;
use oscova_core::invoke::Arguments;
use oscova_core::prelude::*;
use oscova_core::tool::LogLevel;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::registry::LookupSpan;

/// A span as the layer saw it: its name and every field recorded on it.
#[derive(Debug, Clone, Default)]
struct Seen {
    name: String,
    fields: BTreeMap<String, String>,
    /// The messages of events recorded inside it.
    events: Vec<String>,
    closed: bool,
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Seen>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name().to_owned(),
            format!("{value:?}").trim_matches('"').to_owned(),
        );
    }
}

struct Index(usize);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut seen = Seen {
            name: attrs.metadata().name().to_owned(),
            ..Seen::default()
        };
        attrs.record(&mut Fields(&mut seen.fields));
        let mut spans = self.0.lock().unwrap();
        spans.push(seen);
        ctx.span(id)
            .unwrap()
            .extensions_mut()
            .insert(Index(spans.len() - 1));
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let span = ctx.span(id).unwrap();
        let index = span.extensions().get::<Index>().unwrap().0;
        values.record(&mut Fields(&mut self.0.lock().unwrap()[index].fields));
    }
    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.event_span(event) else {
            return;
        };
        let index = span.extensions().get::<Index>().unwrap().0;
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let message = fields.remove("message").unwrap_or_default();
        self.0.lock().unwrap()[index].events.push(message);
    }
    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let span = ctx.span(&id).unwrap();
        let index = span.extensions().get::<Index>().unwrap().0;
        self.0.lock().unwrap()[index].closed = true;
    }
}

impl Recorder {
    fn calls(&self) -> Vec<Seen> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.name == "execute_tool")
            .cloned()
            .collect()
    }
}

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

fn recorded<F: std::future::Future>(run: impl FnOnce(UserScope) -> F) -> Vec<Seen> {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry().with(recorder.clone());
    let _default = tracing::subscriber::set_default(subscriber);
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
    recorder.calls()
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
