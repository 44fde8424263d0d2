//! Runtime behaviour of `#[toolset]` toolsets, through a `PluginHost` and
//! `UserScope` and through `Toolset::call_tool` directly: argument errors
//! with JSON paths (the method is never called), panics, cancellation,
//! injected parameters, progress, input schemas, wire-name normalisation,
//! and concurrent calls.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use oscova_core::prelude::*;
use oscova_core::{
    InvokeError, UserScope, args::ArgError, tool::ToolInfo, wire::normalize_segment,
    wire::owner_segment,
};
use serde_json::{Value, json};

/// One condition on a row.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct Filter {
    /// The field to look at.
    pub field: String,
    /// The smallest value it may have.
    pub min: u32,
}

/// The toolset under test. `calls` counts every method body that ran.
pub struct SearchToolset {
    calls: Arc<AtomicUsize>,
}

impl SearchToolset {
    fn called(&self) {
        self.calls.fetch_add(1, Ordering::SeqCst);
    }
}

#[toolset]
impl SearchToolset {
    /// Searches the records index.
    #[tool(name = "search_records")]
    pub fn search(
        &self,
        /// Words to look for.
        query: String,
        /// At most this many rows.
        limit: Option<u32>,
        /// Conditions every row must meet.
        filters: Option<Vec<Filter>>,
    ) -> String {
        self.called();
        format!(
            "{query}:{}:{}",
            limit.unwrap_or(10),
            filters.map_or(0, |f| f.len())
        )
    }

    /// Counts up to a limit.
    pub fn count(&self, limit: u32) -> u32 {
        self.called();
        limit
    }

    /// Echoes after yielding once, so concurrent calls interleave.
    pub async fn echo(&self, text: String) -> String {
        tokio::task::yield_now().await;
        self.called();
        text
    }

    /// Panics at once.
    pub fn explode(&self) -> String {
        self.called();
        panic!("sync boom")
    }

    /// Panics after a suspension point.
    pub async fn explode_later(&self) -> String {
        self.called();
        tokio::task::yield_now().await;
        panic!("async boom")
    }

    /// Sleeps for 30 seconds and ignores cancellation.
    pub async fn sleepy(&self) -> String {
        self.called();
        tokio::time::sleep(Duration::from_secs(30)).await;
        "woke up".to_owned()
    }

    /// Cancels the token it was handed and says who called.
    pub fn cancel_own(&self, token: CancellationToken, invocation: &ToolInvocation) -> String {
        self.called();
        token.cancel();
        invocation.user_id().to_owned()
    }

    /// Reports one progress update per step.
    pub async fn progress(&self, steps: u32, invocation: &ToolInvocation) -> u32 {
        self.called();
        for step in 1..=steps {
            invocation.report(ToolProgress::ratio(
                format!("step {step}"),
                f64::from(step),
                Some(f64::from(steps)),
            ));
            tokio::task::yield_now().await;
        }
        steps
    }

    /// This doc comment loses to the attribute.
    #[tool(description = "Described by the attribute.")]
    pub fn described() {}
}

/// Plugin `test.toolsets` contributes `SearchToolset`; each user gets the
/// counter registered under their id.
#[plugin(id = "test.toolsets")]
pub struct TestPlugin;

impl AgentPlugin for TestPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|ctx: &AgentPluginContext| SearchToolset {
            calls: counter_for(ctx.user_id()),
        });
    }
}

fn counter_for(user: &str) -> Arc<AtomicUsize> {
    static COUNTERS: OnceLock<Mutex<HashMap<String, Arc<AtomicUsize>>>> = OnceLock::new();
    let mut map = COUNTERS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    map.entry(user.to_owned()).or_default().clone()
}

/// A fresh host and a scope for `user` (unique per test), with its counter.
fn scope(user: &str) -> (PluginHost, UserScope, Arc<AtomicUsize>) {
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![TestPlugin])
        .strict(true)
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new(user));
    assert!(scope.diagnostics().is_empty(), "{:?}", scope.diagnostics());
    (host, scope, counter_for(user))
}

fn wire(tool: &str) -> String {
    format!("test_toolsets__search__{tool}")
}

fn info(name: &str) -> (usize, &'static ToolInfo) {
    SearchToolset::toolset_info()
        .tools()
        .iter()
        .enumerate()
        .find(|(_, t)| t.name() == name)
        .unwrap_or_else(|| panic!("no tool `{name}`"))
}

/// Calls tool `name` directly through the contract.
async fn call_direct(
    toolset: &SearchToolset,
    name: &str,
    args: Value,
    invocation: &ToolInvocation<'_>,
) -> Result<ToolResult, ArgError> {
    let (index, _) = info(name);
    Ok(toolset.call_tool(index, args, invocation)?.finish().await)
}

fn invocation() -> ToolInvocation<'static> {
    ToolInvocation::new(Arc::new(UserInfo::new("direct")))
}

// ---------------------------------------------------------------- arguments

/// Each bad input: the tool, the arguments, the one problem expected.
fn bad_inputs() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "search_records",
            json!({"query": "q", "colour": "red"}),
            "/colour: unknown property",
        ),
        (
            "search_records",
            json!({}),
            "/query: missing required property",
        ),
        (
            "search_records",
            json!({"limit": 3}),
            "/query: missing required property",
        ),
        (
            "count",
            json!({"limit": "ten"}),
            r#"/limit: expected u32, found string "ten""#,
        ),
        (
            "count",
            json!({"limit": -1}),
            "/limit: expected u32, found integer `-1`",
        ),
        (
            "search_records",
            json!({"query": "q", "filters": [{"field": "a", "min": 1}, {"field": "b", "min": "x"}]}),
            r#"/filters/1/min: expected u32, found string "x""#,
        ),
        (
            "search_records",
            json!({"query": "q", "filters": [{"field": "a"}]}),
            "/filters/0/min: missing field `min`",
        ),
        (
            "search_records",
            json!(["q", 3]),
            "/: arguments must be a JSON object, found an array",
        ),
        (
            "search_records",
            json!("q"),
            "/: arguments must be a JSON object, found a string",
        ),
        (
            "count",
            json!(10),
            "/: arguments must be a JSON object, found a number",
        ),
        (
            "search_records",
            json!({"query": null}),
            "/query: expected a string, found null",
        ),
        ("count", Value::Null, "/limit: missing required property"),
    ]
}

#[tokio::test]
async fn bad_arguments_never_call_the_method_directly() {
    let calls = Arc::new(AtomicUsize::new(0));
    let toolset = SearchToolset {
        calls: calls.clone(),
    };
    for (tool, args, expected) in bad_inputs() {
        let err = call_direct(&toolset, tool, args.clone(), &invocation())
            .await
            .expect_err(&format!("{tool} accepted {args}"));
        assert_eq!(err.to_string(), expected, "{tool} with {args}");
        assert_eq!(err.problems().len(), 1, "{err}");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn bad_arguments_never_call_the_method_through_a_scope() {
    let (_host, scope, calls) = scope("args-scope");
    for (tool, args, expected) in bad_inputs() {
        let name = wire(tool);
        match scope.invoke(&name, args.clone()).checked().await {
            Err(InvokeError::InvalidArguments { tool: t, error }) => {
                assert_eq!(t, name);
                assert_eq!(error.to_string(), expected, "{tool} with {args}");
            }
            other => panic!("{tool} with {args}: {other:?}"),
        }
        // The model sees one error result naming the tool and the path.
        let result = scope.invoke(&name, args).await;
        assert!(result.is_error);
        assert_eq!(
            result.content,
            format!("invalid arguments for tool `{name}`: {expected}")
        );
        assert_eq!(result.details, json!({"error": "invalid_arguments"}));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn every_problem_is_reported_at_once() {
    let toolset = SearchToolset {
        calls: Arc::default(),
    };
    let err = call_direct(
        &toolset,
        "search_records",
        json!({"limit": "ten", "extra": true}),
        &invocation(),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"/query: missing required property; /limit: expected u32, found string "ten"; /extra: unknown property"#
    );
}

#[tokio::test]
async fn good_arguments_reach_the_method() {
    let (_host, scope, calls) = scope("good-args");
    let r = scope
        .invoke(
            &wire("search_records"),
            json!({"query": "q", "limit": null, "filters": [{"field": "a", "min": 1}]}),
        )
        .await;
    assert_eq!(r, ToolResult::text("q:10:1"));
    let r = scope.invoke(&wire("count"), json!({"limit": 7})).await;
    assert_eq!(r.content, "7");
    assert_eq!(r.details, json!(7));
    let r = scope.invoke(&wire("described"), Value::Null).await;
    assert_eq!(r.content, "null");
    assert!(!r.is_error);
    assert_eq!(calls.load(Ordering::SeqCst), 2, "`described` has no `self`");
}

// ------------------------------------------------------- panics and cancels

#[tokio::test]
async fn panics_become_error_results_and_the_scope_carries_on() {
    let (_host, scope, calls) = scope("panics");
    for (tool, message) in [("explode", "sync boom"), ("explode_later", "async boom")] {
        let name = wire(tool);
        let r = scope.invoke(&name, json!({})).await;
        assert!(r.is_error, "{r:?}");
        assert_eq!(
            r.content,
            format!("tool `{name}` failed unexpectedly: {message}")
        );
        assert_eq!(r.details, json!({"error": "panicked"}));
        // Later calls, to this tool and others, still work.
        let r = scope.invoke(&wire("count"), json!({"limit": 1})).await;
        assert_eq!(r.content, "1");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn cancellation_returns_promptly_even_if_the_body_ignores_it() {
    let (_host, scope, calls) = scope("cancel");
    let token = CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        canceller.cancel();
    });
    let started = Instant::now();
    let cancel = token;
    let outcome = scope
        .invoke(&wire("sleepy"), json!({}))
        .cancel_on(cancel)
        .checked()
        .await;
    let elapsed = started.elapsed();
    assert_eq!(outcome, Err(InvokeError::Cancelled(wire("sleepy"))));
    assert!(elapsed < Duration::from_secs(1), "took {elapsed:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the body did start");

    // An already cancelled token stops the call before the method runs.
    let token = CancellationToken::new();
    token.cancel();
    let cancel = token;
    let r = scope
        .invoke(&wire("sleepy"), json!({}))
        .cancel_on(cancel)
        .await;
    assert!(r.is_error);
    assert_eq!(r.details, json!({"error": "cancelled"}));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_synchronous_tool_finishes_in_the_first_poll() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    let (_host, scope, calls) = scope("first-poll");
    let mut cx = Context::from_waker(Waker::noop());
    // No runtime at all: nothing in a synchronous tool's call waits.
    let name = wire("count");
    let call = std::pin::pin!(scope.invoke(&name, json!({"limit": 4})));
    match call.poll(&mut cx) {
        Poll::Ready(r) => assert_eq!(r.content, "4"),
        Poll::Pending => panic!("a synchronous tool's call must not wait"),
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Nor does a refusal.
    let call = std::pin::pin!(scope.invoke("no_such_tool", json!({})));
    match call.poll(&mut cx) {
        Poll::Ready(r) => assert_eq!(r.details, json!({"error": "unknown_tool"})),
        Poll::Pending => panic!("an unknown tool is refused at once"),
    }
}

#[tokio::test]
async fn a_cancelled_token_stops_a_synchronous_tool_before_it_runs() {
    let (_host, scope, calls) = scope("cancel-sync");
    let token = CancellationToken::new();
    token.cancel();
    let cancel = token;
    let outcome = scope
        .invoke(&wire("count"), json!({"limit": 1}))
        .cancel_on(cancel)
        .checked()
        .await;
    assert_eq!(outcome, Err(InvokeError::Cancelled(wire("count"))));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_injected_token_and_invocation_are_the_callers() {
    let (_host, scope, _) = scope("token-owner");
    let token = CancellationToken::new();
    let cancel = token.clone();
    let r = scope
        .invoke(&wire("cancel_own"), json!({}))
        .cancel_on(cancel)
        .await;
    assert_eq!(r, ToolResult::text("token-owner"));
    assert!(
        token.is_cancelled(),
        "the tool cancelled the caller's token"
    );

    // Directly, with a token on the invocation.
    let toolset = SearchToolset {
        calls: Arc::default(),
    };
    let token = CancellationToken::new();
    let inv = invocation().with_cancellation(token.clone());
    let r = call_direct(&toolset, "cancel_own", json!({}), &inv)
        .await
        .unwrap();
    assert_eq!(r.content, "direct");
    assert!(token.is_cancelled());
    assert!(inv.is_cancelled());
}

#[tokio::test]
async fn progress_reports_arrive_at_the_sink() {
    let (_host, scope, _) = scope("progress");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let on_progress = move |p: ToolProgress| {
        sink.lock().unwrap().push(p);
    };
    let r = scope
        .invoke(&wire("progress"), json!({"steps": 3}))
        .progress(on_progress)
        .await;
    assert_eq!(r.content, "3");
    let seen = seen.lock().unwrap();
    let messages: Vec<_> = seen.iter().map(|p| p.message.as_str()).collect();
    assert_eq!(messages, ["step 1", "step 2", "step 3"]);
    assert_eq!(seen[2].progress, Some(3.0));
    assert_eq!(seen[2].total, Some(3.0));
}

// ---------------------------------------------------------------- metadata

#[test]
fn input_schemas_are_closed_objects() {
    let (_, search) = info("search_records");
    let schema = search.input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["query"]), "Options are optional");
    let props = schema["properties"].as_object().unwrap();
    let mut names: Vec<_> = props.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["filters", "limit", "query"]);
    assert_eq!(props["query"]["type"], "string");
    assert_eq!(props["query"]["description"], "Words to look for.");
    assert_eq!(props["limit"]["description"], "At most this many rows.");
    assert_eq!(props["limit"]["type"], json!(["integer", "null"]));
    assert_eq!(
        props["filters"]["description"],
        "Conditions every row must meet."
    );
    // Nested types land in `$defs`, with their own doc comments.
    let filter = &schema["$defs"]["Filter"];
    assert_eq!(filter["type"], "object");
    assert_eq!(filter["required"], json!(["field", "min"]));
    assert_eq!(
        filter["properties"]["field"]["description"],
        "The field to look at."
    );
    assert_eq!(
        props["filters"]["items"]["$ref"], "#/$defs/Filter",
        "{}",
        props["filters"]
    );

    // Injected parameters are not part of the schema.
    let (_, progress) = info("progress");
    assert_eq!(progress.input_schema()["required"], json!(["steps"]));
    let (_, cancel) = info("cancel_own");
    assert_eq!(cancel.input_schema()["properties"], json!({}));
    assert_eq!(cancel.input_schema()["required"], json!([]));

    // The host publishes the same cached schema.
    let (host, _, _) = scope("schemas");
    let published = host.tool(&wire("search_records")).unwrap();
    assert!(std::ptr::eq(published.input_schema(), schema));
}

#[test]
fn descriptions_come_from_the_attribute_or_the_doc_comment() {
    assert_eq!(
        info("search_records").1.description(),
        "Searches the records index."
    );
    assert_eq!(
        info("described").1.description(),
        "Described by the attribute."
    );
    let (_, search) = info("search_records");
    assert_eq!(search.display_name(), "search_records");
    assert_eq!(search.method(), "search");
    assert_eq!(search.approval(), ToolApprovalMode::Default);
    assert_eq!(search.network_scope(), NetworkScope::None);
}

/// Owner normalisation: the type name less one trailing `Toolset`.
pub mod owners {
    use oscova_core::toolset;

    /// An acronym before `Toolset`.
    pub struct HTTPServerToolset;
    #[toolset]
    impl HTTPServerToolset {
        /// A tool.
        pub fn ping() {}
    }

    /// Nothing would be left without `Toolset`, so it is kept.
    pub struct Toolset;
    #[toolset]
    impl Toolset {
        /// A tool.
        pub fn ping() {}
    }

    /// Only one trailing `Toolset` goes.
    pub struct XMLToolsetToolset;
    #[toolset]
    impl XMLToolsetToolset {
        /// A tool.
        pub fn ping() {}
    }

    /// No `Toolset` suffix at all.
    pub struct Weather;
    #[toolset]
    impl Weather {
        /// A tool.
        pub fn ping() {}
    }
}

#[test]
fn owners_are_normalised_type_names() {
    use oscova_core::Toolset as _;
    let cases = [
        (owners::HTTPServerToolset::toolset_info(), "http_server"),
        (
            <owners::Toolset as oscova_core::Toolset>::toolset_info(),
            "toolset",
        ),
        (owners::XMLToolsetToolset::toolset_info(), "xml_toolset"),
        (owners::Weather::toolset_info(), "weather"),
        (SearchToolset::toolset_info(), "search"),
    ];
    for (info, owner) in cases {
        assert_eq!(info.owner(), owner, "{}", info.type_name());
        assert_eq!(info.owner(), owner_segment(info.type_name()));
    }
}

/// Tricky display names; the macro normalises them at compile time.
pub struct NamesToolset;

#[toolset]
impl NamesToolset {
    /// A tool.
    #[tool(name = "HTTPServer")]
    pub fn t0() {}
    /// A tool.
    #[tool(name = "getURLForID")]
    pub fn t1() {}
    /// A tool.
    #[tool(name = "search-records")]
    pub fn t2() {}
    /// A tool.
    #[tool(name = "Search Records v2")]
    pub fn t3() {}
    /// A tool.
    #[tool(name = "  padded   name  ")]
    pub fn t4() {}
    /// A tool.
    #[tool(name = "dots.and..dots")]
    pub fn t5() {}
    /// A tool.
    #[tool(name = "ÜberTool")]
    pub fn t6() {}
    /// A tool.
    #[tool(name = "naïve café")]
    pub fn t7() {}
    /// A tool.
    #[tool(name = "名前 lookup")]
    pub fn t8() {}
    /// A tool.
    #[tool(name = "ABC123Def")]
    pub fn t9() {}
    /// A tool.
    #[tool(name = "x__y")]
    pub fn t10() {}
    /// A tool.
    #[tool(name = "__private__")]
    pub fn t11() {}
    /// A tool.
    #[tool(name = "9lives")]
    pub fn t12() {}
    /// A tool.
    #[tool(name = "tab\there")]
    pub fn t13() {}
    /// A tool.
    #[tool(name = "emoji🙂face")]
    pub fn t14() {}
    /// A tool.
    #[tool(name = "already_snake_case")]
    pub fn t15() {}
    /// A tool.
    #[tool(name = "a1B2c3")]
    pub fn t16() {}
    /// A tool.
    #[tool(name = "MixedUP-case_and.Stuff")]
    pub fn t17() {}
    /// A tool.
    #[tool(name = "X")]
    pub fn t18() {}
    /// A tool.
    pub fn r#type() {}
    /// A tool.
    #[allow(non_snake_case)]
    pub fn CamelMethod() {}
}

#[test]
fn macro_and_runtime_normalisation_agree() {
    let tools = NamesToolset::toolset_info().tools();
    assert_eq!(tools.len(), 21);
    for tool in tools {
        assert_eq!(
            tool.name(),
            normalize_segment(tool.display_name()),
            "display name {:?}",
            tool.display_name()
        );
        assert!(!tool.name().is_empty());
    }
    let names: Vec<_> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names[0], "http_server");
    assert_eq!(names[1], "get_url_for_id");
    assert_eq!(names[3], "search_records_v2");
    assert_eq!(names[4], "padded_name");
    assert_eq!(names[5], "dots_and_dots");
    assert_eq!(names[10], "x_y");
    assert_eq!(names[11], "private");
    assert_eq!(names[19], "type");
    assert_eq!(names[20], "camel_method");
}

// ------------------------------------------------------------- concurrency

#[test]
fn toolsets_scopes_and_calls_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>(_: &T) {}
    send_sync::<SearchToolset>();
    send_sync::<NamesToolset>();
    send_sync::<PluginHost>();
    send_sync::<UserScope>();
    send_sync::<ToolInvocation<'static>>();
    send_sync::<Box<dyn oscova_core::Toolset>>();
    let (_host, scope, _) = scope("send");
    let call = scope.invoke("anything", json!({}));
    send(&call);
    let toolset = SearchToolset {
        calls: Arc::default(),
    };
    let inv = invocation();
    let direct = toolset.call_tool(info("echo").0, json!({"text": "x"}), &inv);
    send(&direct);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hundred_concurrent_calls_on_one_scope() {
    let (_host, scope, calls) = scope("concurrent");
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let scope = scope.clone();
            tokio::spawn(async move {
                let (tool, args, expected) = if i % 2 == 0 {
                    (
                        "echo",
                        json!({"text": format!("call {i}")}),
                        format!("call {i}"),
                    )
                } else {
                    ("count", json!({"limit": i}), i.to_string())
                };
                let r = scope.invoke(&wire(tool), args).await;
                assert!(!r.is_error, "{r:?}");
                assert_eq!(r.content, expected);
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(calls.load(Ordering::SeqCst), 100);
}
