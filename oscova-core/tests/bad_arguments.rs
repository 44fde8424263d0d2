//! Bad tool-call arguments, measured: a table of kinds of bad input thrown at
//! a real `UserScope`, mostly as argument text through `invoke_json` (as
//! models and MCP clients send it) and some as `Value`s through `invoke`.
//! Every case must give an error result that names the tool and the JSON
//! path of the problem, with content of a few KB at most, without a panic
//! and without calling the method.

#![allow(missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_core::prelude::*;
use oscova_core::{UserScope, args::DEFAULT_MAX_ARGUMENT_BYTES, host::invoke::Arguments};
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------- fixtures

/// A condition on one field.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct Filter {
    /// The field.
    pub field: String,
    /// Its smallest value.
    pub min: u32,
}

/// A colour.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Colour {
    /// Red.
    Red,
    /// Green.
    Green,
}

/// A shape, tagged by `kind`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// A circle.
    Circle {
        /// Radius.
        r: f64,
    },
    /// A square.
    Square {
        /// Side.
        side: f64,
    },
}

pub struct BadToolset {
    calls: Arc<AtomicUsize>,
}

#[toolset]
impl BadToolset {
    /// Takes one parameter of every kind.
    #[allow(clippy::too_many_arguments)]
    pub fn everything(
        &self,
        text: String,
        count: u32,
        small: u8,
        offset: i64,
        flag: bool,
        ids: Vec<u32>,
        filter: Filter,
        colour: Colour,
        shape: Shape,
        note: Option<String>,
    ) -> String {
        self.calls.fetch_add(1, Ordering::SeqCst);
        format!(
            "{text} {count} {small} {offset} {flag} {ids:?} {filter:?} {colour:?} {shape:?} {note:?}"
        )
    }
}

#[plugin(id = "test.bad")]
#[derive(Default)]
pub struct BadPlugin {
    calls: Arc<AtomicUsize>,
}

impl AgentPlugin for BadPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        let calls = self.calls.clone();
        builder.add_toolset(move |_: &AgentPluginContext| BadToolset {
            calls: calls.clone(),
        });
    }
}

const TOOL: &str = "test_bad__bad__everything";

/// Largest error content any case may produce.
const MAX_CONTENT: usize = 4 * 1024;

fn scope() -> (PluginHost, UserScope, Arc<AtomicUsize>) {
    let plugin = BadPlugin::default();
    let calls = plugin.calls.clone();
    let host = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(plugin)
        .strict(true)
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("bad"));
    assert!(scope.diagnostics().is_empty(), "{:?}", scope.diagnostics());
    (host, scope, calls)
}

/// Arguments the tool accepts.
fn valid() -> Value {
    json!({
        "text": "t",
        "count": 1,
        "small": 2,
        "offset": -3,
        "flag": true,
        "ids": [1, 2, 3],
        "filter": {"field": "f", "min": 4},
        "colour": "red",
        "shape": {"kind": "circle", "r": 1.5},
    })
}

/// `valid()` with one property replaced by `value`, as text.
fn with(name: &str, value: Value) -> String {
    let mut args = valid();
    args[name] = value;
    args.to_string()
}

/// `valid()` with one property spliced in as raw text, for what a `Value`
/// cannot hold (numbers out of range, lone surrogates, duplicate keys).
fn with_raw(name: &str, raw: &str) -> String {
    let mut args = valid();
    args[name] = json!("@@RAW@@");
    args.to_string().replace(r#""@@RAW@@""#, raw)
}

fn without(name: &str) -> String {
    let mut args = valid();
    args.as_object_mut().unwrap().remove(name);
    args.to_string()
}

/// `depth` arrays nested in each other, as text.
fn nested_arrays(depth: usize) -> String {
    "[".repeat(depth) + &"]".repeat(depth)
}

/// `depth` objects nested in each other, as a value.
fn nested_objects(depth: usize) -> Value {
    let mut value = json!("bottom");
    for _ in 0..depth {
        value = json!({ "a": value });
    }
    value
}

enum Input {
    Text(String),
    Value(Value),
}

/// One bad input: what it is, the input, the path the error must name.
struct Case {
    what: &'static str,
    input: Input,
    path: &'static str,
}

fn text(what: &'static str, args: String, path: &'static str) -> Case {
    Case {
        what,
        input: Input::Text(args),
        path,
    }
}

fn value(what: &'static str, args: Value, path: &'static str) -> Case {
    Case {
        what,
        input: Input::Value(args),
        path,
    }
}

fn cases() -> Vec<Case> {
    let mb = 1024 * 1024;
    let mut many_unknown = valid();
    for i in 0..10_000 {
        many_unknown[format!("extra{i}")] = json!(i);
    }
    let mut long_ids: Vec<Value> = (0..100_000).map(|i| json!(i)).collect();
    long_ids[99_999] = json!("last");
    vec![
        // Wrong types, one per kind of parameter.
        text("number for a string", with("text", json!(42)), "/text"),
        text("bool for a string", with("text", json!(true)), "/text"),
        text(
            "deep object for a string",
            with("text", nested_objects(100)),
            "/text",
        ),
        text("string for a u32", with("count", json!("ten")), "/count"),
        text("bool for a u32", with("count", json!(false)), "/count"),
        text("string for a bool", with("flag", json!("true")), "/flag"),
        text("number for a bool", with("flag", json!(1)), "/flag"),
        text("string for an array", with("ids", json!("1,2,3")), "/ids"),
        text("object for an array", with("ids", json!({"0": 1})), "/ids"),
        text(
            "array element of the wrong type",
            with("ids", json!([1, 2, "three"])),
            "/ids/2",
        ),
        text(
            "string for an object",
            with("filter", json!("f")),
            "/filter",
        ),
        text(
            "nested struct missing a field",
            with("filter", json!({"min": 1})),
            "/filter/field",
        ),
        text(
            "nested field of the wrong type",
            with("filter", json!({"field": "f", "min": -1})),
            "/filter/min",
        ),
        text(
            "enum variant that does not exist",
            with("colour", json!("purple")),
            "/colour",
        ),
        text("number for an enum", with("colour", json!(3)), "/colour"),
        text(
            "tagged enum missing its tag",
            with("shape", json!({"r": 1.0})),
            "/shape/kind",
        ),
        text(
            "tagged enum with an unknown tag",
            with("shape", json!({"kind": "hexagon"})),
            "/shape",
        ),
        text(
            "tagged enum variant missing a field",
            with("shape", json!({"kind": "square"})),
            "/shape/side",
        ),
        // Missing, extra and null.
        text("missing required", without("count"), "/count"),
        text(
            "null for a required string",
            with("text", Value::Null),
            "/text",
        ),
        text(
            "null for a required u32",
            with("count", Value::Null),
            "/count",
        ),
        text("extra field", with("colour2", json!("red")), "/colour2"),
        text("empty-string key", with("", json!(1)), "/"),
        text(
            "very long key",
            with(&"k".repeat(100_000), json!(1)),
            "/kkkk",
        ),
        text(
            "ten thousand unknown properties",
            many_unknown.to_string(),
            "/extra",
        ),
        // Numbers out of range.
        text("u8 = 300", with("small", json!(300)), "/small"),
        text("u8 = -1", with("small", json!(-1)), "/small"),
        text("negative for a u32", with("count", json!(-1)), "/count"),
        text(
            "u32 overflow",
            with("count", json!(4_294_967_296_u64)),
            "/count",
        ),
        text("float for an int", with("count", json!(1.5)), "/count"),
        text("exponent for an int", with_raw("count", "1e3"), "/count"),
        text("1e400", with_raw("offset", "1e400"), "/offset"),
        text(
            "i64 overflow",
            with_raw("offset", "9223372036854775808"),
            "/offset",
        ),
        text(
            "i64 underflow",
            with_raw("offset", "-9223372036854775809"),
            "/offset",
        ),
        text("NaN", with_raw("count", "NaN"), "/count"),
        // Size and depth.
        text(
            "10,000-deep nesting",
            with_raw("ids", &nested_arrays(10_000)),
            "/ids",
        ),
        text(
            "50 MB string (over the size cap)",
            with("text", json!("x".repeat(50 * mb))),
            "/",
        ),
        text(
            "10 MB string into a u32",
            with("count", json!("9".repeat(10 * mb))),
            "/count",
        ),
        text(
            "array of 100,000 with the last element wrong",
            with("ids", Value::Array(long_ids)),
            "/ids/99999",
        ),
        // Broken text.
        text("lone surrogate", with_raw("text", r#""\ud800""#), "/text"),
        text(
            "bad unicode escape",
            with_raw("text", r#""\uZZZZ""#),
            "/text",
        ),
        text(
            "raw control character in a string",
            with_raw("text", "\"a\u{1}b\""),
            "/text",
        ),
        text(
            "duplicate key (top level)",
            valid().to_string().replacen('{', r#"{"count": 2, "#, 1),
            "/",
        ),
        text(
            "duplicate key (nested)",
            with_raw("filter", r#"{"field": "a", "field": "b", "min": 1}"#),
            "/filter",
        ),
        text("trailing garbage", valid().to_string() + " trailing", "/"),
        text("two objects", valid().to_string() + "{}", "/"),
        text("empty text", String::new(), "/"),
        text("whitespace only", "  \n\t ".to_owned(), "/"),
        text("unquoted key", r#"{text: "t"}"#.to_owned(), "/"),
        text("missing value", r#"{"text": }"#.to_owned(), "/text"),
        text("unterminated", r#"{"text": "t""#.to_owned(), "/"),
        text("single quotes", r#"{'text': 't'}"#.to_owned(), "/"),
        // Not an object at all.
        text("array as the arguments", "[]".to_owned(), "/"),
        text("string as the arguments", r#""str""#.to_owned(), "/"),
        text("number as the arguments", "42".to_owned(), "/"),
        text("bool as the arguments", "true".to_owned(), "/"),
        text("null as the arguments", "null".to_owned(), "/text"),
        // The same mistakes as `Value`s, through `invoke`.
        value("Value: array", json!([1, 2]), "/"),
        value("Value: string", json!("str"), "/"),
        value("Value: number", json!(42), "/"),
        value(
            "Value: wrong type",
            serde_json::from_str(&with("count", json!("x"))).unwrap(),
            "/count",
        ),
        value(
            "Value: element of the wrong type",
            serde_json::from_str(&with("ids", json!([0, 1, {}]))).unwrap(),
            "/ids/2",
        ),
        value(
            "Value: 10 MB string into a u32",
            serde_json::from_str(&with("small", json!("y".repeat(10 * mb)))).unwrap(),
            "/small",
        ),
        value("Value: empty object", Value::Object(Map::new()), "/text"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_input_is_an_error_naming_tool_and_path() {
    let (_host, scope, calls) = scope();

    // The fixture works with good input.
    let ok = scope
        .invoke(TOOL, Arguments::json(&valid().to_string()))
        .await;
    assert!(!ok.is_error, "{ok:?}");
    assert_eq!(calls.swap(0, Ordering::SeqCst), 1);

    let cases = cases();
    let count = cases.len();
    let mut failures = Vec::new();
    for case in cases {
        let result = match case.input {
            Input::Text(args) => scope.invoke(TOOL, Arguments::json(&args)).await,
            Input::Value(args) => scope.invoke(TOOL, args).await,
        };
        let content = &result.content;
        let shown = content.get(..300).unwrap_or(content);
        let problem = if !result.is_error {
            Some("not an error")
        } else if result.details != json!({"error": "invalid_arguments"}) {
            Some("not an argument error")
        } else if !content.contains(&format!("`{TOOL}`")) {
            Some("does not name the tool")
        } else if !names_path(content, case.path) {
            Some("does not name the path")
        } else if content.len() > MAX_CONTENT {
            Some("content too long")
        } else {
            None
        };
        println!("{:<45} {:>5} B  {shown}", case.what, content.len());
        if let Some(problem) = problem {
            failures.push(format!(
                "{}: {problem} (want {}, {} bytes): {shown}",
                case.what,
                case.path,
                content.len()
            ));
        }
    }
    println!("{count} kinds of bad arguments");
    assert!(count >= 30);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(calls.load(Ordering::SeqCst), 0, "a method ran");
}

/// Whether `content` names `path` as a problem's path: after the tool name
/// (`...`: /path...`) or after another problem (`; /path...`).
fn names_path(content: &str, path: &str) -> bool {
    content.contains(&format!("`: {path}")) || content.contains(&format!("; {path}"))
}

#[tokio::test]
async fn an_unknown_tool_with_a_huge_name_gives_a_short_error() {
    let (_host, scope, calls) = scope();
    let name = "t".repeat(10 * 1024 * 1024);
    for result in [
        scope.invoke(&name, valid()).await,
        scope
            .invoke(&name, Arguments::json(&valid().to_string()))
            .await,
    ] {
        assert!(result.is_error);
        assert_eq!(result.details, json!({"error": "unknown_tool"}));
        assert!(
            result.content.starts_with("unknown tool `ttt"),
            "{}",
            &result.content[..100]
        );
        assert!(result.content.len() < 400, "{}", result.content.len());
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[test]
fn the_default_cap_is_16_mib() {
    assert_eq!(DEFAULT_MAX_ARGUMENT_BYTES, 16 * 1024 * 1024);
}

#[tokio::test]
async fn a_smaller_cap_is_honoured() {
    let plugin = BadPlugin::default();
    let calls = plugin.calls.clone();
    let host = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(plugin)
        .max_argument_bytes(64)
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("small-cap"));
    let result = scope
        .invoke(TOOL, Arguments::json(&valid().to_string()))
        .await;
    assert!(result.is_error);
    assert!(
        result.content.contains("at most 64 are accepted"),
        "{}",
        result.content
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}
