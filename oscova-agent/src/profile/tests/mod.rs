//! Tests of the schema profiles: fixtures from schemars, a validator per
//! API, hand-written schemas for the edges schemars does not emit
//! (`edges`), and golden snapshots under `tests/golden/profiles/`
//! (`golden`).

mod edges;
mod golden;

use std::collections::HashMap;

use oscova_test_support::schema_rules;
use schemars::{JsonSchema, schema_for};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{SchemaProfile, SchemaProfileError, export_schema};

/// A flat tool input.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Flat {
    /// The name to look up.
    name: String,
    /// At most this many results.
    limit: Option<u32>,
    verbose: bool,
    tags: Vec<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Inner {
    x: i64,
    /// A label.
    label: Option<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Nested {
    /// The main inner value.
    inner: Inner,
    list: Vec<Inner>,
    maybe: Option<Inner>,
}

/// A colour.
#[derive(Serialize, Deserialize, JsonSchema)]
enum Color {
    Red,
    /// The green one.
    Green,
    Blue,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind")]
enum Shape {
    Circle {
        radius: f64,
    },
    /// A rectangle.
    Rect {
        w: f64,
        h: f64,
    },
    Empty,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Loose {
    Num(i32),
    Text(String),
    Flag { on: bool },
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Choices {
    color: Color,
    shape: Shape,
    loose: Loose,
    maybe_color: Option<Color>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct WithMap {
    counts: HashMap<String, u32>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Node {
    name: String,
    children: Vec<Node>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Tree {
    root: Node,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Defaults {
    #[serde(default)]
    n: u16,
    #[serde(default = "default_s")]
    s: String,
    pair: (i32, String),
}

fn default_s() -> String {
    "hi".to_owned()
}

fn schema<T: JsonSchema>() -> Value {
    serde_json::to_value(schema_for!(T)).expect("schema serializes")
}

fn fixtures() -> Vec<(&'static str, Value)> {
    vec![
        ("flat", schema::<Flat>()),
        ("nested", schema::<Nested>()),
        ("choices", schema::<Choices>()),
        ("map", schema::<WithMap>()),
        ("unit_enum", schema::<Color>()),
        ("tagged_enum", schema::<Shape>()),
        ("untagged_enum", schema::<Loose>()),
        ("option_nested", schema::<Option<Inner>>()),
        ("recursive", schema::<Node>()),
        ("recursive_defs", schema::<Tree>()),
        ("defaults", schema::<Defaults>()),
    ]
}

// ----- validators: one per API, walking the whole output -----

/// Panics with every rule of `profile`'s API that `out` breaks; the rules
/// are written out in `oscova_test_support::schema_rules`, not taken from
/// the exporter under test.
fn check(profile: SchemaProfile, out: &Value) {
    let problems = match profile {
        SchemaProfile::Raw => Vec::new(),
        SchemaProfile::OpenAi => schema_rules::openai_problems(out),
        SchemaProfile::Gemini => schema_rules::gemini_problems(out),
        SchemaProfile::Anthropic => schema_rules::anthropic_problems(out),
    };
    assert!(
        problems.is_empty(),
        "{profile} output breaks its rules: {problems:#?}\n{}",
        serde_json::to_string_pretty(out).unwrap_or_default()
    );
}

fn export_ok(fixture: &Value, profile: SchemaProfile) -> Value {
    let out =
        export_schema(fixture, profile).unwrap_or_else(|e| panic!("{profile} export failed: {e}"));
    check(profile, &out);
    out
}

fn unsupported_path(result: Result<Value, SchemaProfileError>) -> String {
    match result {
        Err(SchemaProfileError::Unsupported { path, .. }) => path,
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

// ----- profile names -----

#[test]
fn profile_names_round_trip() {
    assert_eq!(SchemaProfile::ALL.len(), 4);
    for p in SchemaProfile::ALL {
        assert_eq!(p.to_string(), p.as_str());
        assert_eq!(p.as_str().parse::<SchemaProfile>(), Ok(p));
        assert_eq!(p.as_str().to_uppercase().parse::<SchemaProfile>(), Ok(p));
    }
    assert_eq!("OpenAI".parse::<SchemaProfile>(), Ok(SchemaProfile::OpenAi));
    let err = "claude".parse::<SchemaProfile>().expect_err("unknown name");
    let message = err.to_string();
    for p in SchemaProfile::ALL {
        assert!(message.contains(p.as_str()), "{message}");
    }
    assert!(message.contains("claude"));
}

// ----- every fixture through every profile -----

#[test]
fn raw_is_identity_and_input_is_untouched() {
    for (name, fixture) in fixtures() {
        let before = fixture.clone();
        for p in SchemaProfile::ALL {
            let _ = export_schema(&fixture, p);
            assert_eq!(fixture, before, "{name} mutated by {p}");
        }
        assert_eq!(export_ok(&fixture, SchemaProfile::Raw), fixture);
    }
}

#[test]
fn outcomes_per_fixture_and_profile() {
    use SchemaProfile::{Anthropic, Gemini, OpenAi};
    for (name, fixture) in fixtures() {
        for p in [OpenAi, Gemini, Anthropic] {
            let result = export_schema(&fixture, p);
            match (name, p) {
                ("unit_enum" | "tagged_enum" | "untagged_enum" | "option_nested", _) => {
                    assert_eq!(unsupported_path(result), "", "{name} {p}");
                }
                ("map", OpenAi) => assert_eq!(
                    unsupported_path(result),
                    "/properties/counts/additionalProperties"
                ),
                ("recursive" | "recursive_defs", OpenAi | Gemini) => assert_eq!(
                    result,
                    Err(SchemaProfileError::Recursive {
                        name: "Node".into()
                    }),
                    "{name} {p}"
                ),
                _ => {
                    let out = result.unwrap_or_else(|e| panic!("{name} {p}: {e}"));
                    check(p, &out);
                }
            }
        }
    }
}

#[test]
fn flat_details() {
    let flat = schema::<Flat>();
    let o = export_ok(&flat, SchemaProfile::OpenAi);
    assert_eq!(o["required"], json!(["limit", "name", "tags", "verbose"]));
    assert_eq!(
        o["properties"]["limit"],
        json!({"description": "At most this many results.", "type": ["integer", "null"], "minimum": 0})
    );
    assert_eq!(o["description"], json!("A flat tool input."));
    assert!(o.get("$schema").is_none());

    let g = export_ok(&flat, SchemaProfile::Gemini);
    assert_eq!(
        g["properties"]["limit"],
        json!({"description": "At most this many results.", "type": "integer", "nullable": true, "minimum": 0})
    );
    assert_eq!(g["required"], json!(["name", "verbose", "tags"]));

    let a = export_ok(&flat, SchemaProfile::Anthropic);
    let mut expected = flat.clone();
    if let Some(m) = expected.as_object_mut() {
        m.remove("$schema");
    }
    assert_eq!(a, expected);
}

#[test]
fn nested_is_inlined() {
    let nested = schema::<Nested>();
    let o = export_ok(&nested, SchemaProfile::OpenAi);
    let inner = json!({
        "type": "object",
        "properties": {
            "label": {"description": "A label.", "type": ["string", "null"]},
            "x": {"type": "integer"}
        },
        "required": ["label", "x"],
        "additionalProperties": false
    });
    let mut documented = inner.clone();
    documented["description"] = json!("The main inner value.");
    assert_eq!(o["properties"]["inner"], documented);
    assert_eq!(o["properties"]["list"]["items"], inner);
    assert_eq!(
        o["properties"]["maybe"],
        json!({"anyOf": [inner, {"type": "null"}]})
    );

    let g = export_ok(&nested, SchemaProfile::Gemini);
    assert_eq!(
        g["properties"]["maybe"],
        json!({
            "type": "object",
            "nullable": true,
            "properties": {
                "label": {"description": "A label.", "type": "string", "nullable": true},
                "x": {"type": "integer", "format": "int64"}
            },
            "required": ["x"]
        })
    );

    let a = export_ok(&nested, SchemaProfile::Anthropic);
    assert_eq!(a["$defs"], nested["$defs"]);
    assert_eq!(a["properties"]["inner"]["$ref"], json!("#/$defs/Inner"));
}

#[test]
fn enums_per_profile() {
    let choices = schema::<Choices>();
    let o = export_ok(&choices, SchemaProfile::OpenAi);
    let color = json!({
        "description": "A colour.",
        "anyOf": [
            {"type": "string", "enum": ["Red", "Blue"]},
            {"description": "The green one.", "type": "string", "const": "Green"}
        ]
    });
    assert_eq!(o["properties"]["color"], color);
    assert_eq!(
        o["properties"]["maybe_color"],
        json!({
            "description": "A colour.",
            "anyOf": [
                {"type": "string", "enum": ["Red", "Blue"]},
                {"description": "The green one.", "type": "string", "const": "Green"},
                {"type": "null"}
            ]
        })
    );
    let shapes = o["properties"]["shape"]["anyOf"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(shapes.len(), 3);
    assert_eq!(
        shapes[2]["properties"]["kind"],
        json!({"type": "string", "const": "Empty"})
    );
    assert_eq!(
        o["properties"]["loose"]["anyOf"][0],
        json!({"type": "integer"}),
        "int32 is not an OpenAI string format"
    );

    let g = export_ok(&choices, SchemaProfile::Gemini);
    assert_eq!(
        g["properties"]["color"],
        json!({"description": "A colour.", "type": "string", "enum": ["Red", "Blue", "Green"]})
    );
    assert_eq!(
        g["properties"]["maybe_color"],
        json!({"description": "A colour.", "type": "string", "enum": ["Red", "Blue", "Green"], "nullable": true})
    );
    assert_eq!(
        g["properties"]["shape"]["anyOf"][0]["properties"]["kind"],
        json!({"type": "string", "enum": ["Circle"]})
    );
    assert_eq!(
        g["properties"]["loose"]["anyOf"][0],
        json!({"type": "integer", "format": "int32"})
    );
}

#[test]
fn map_per_profile() {
    let map = schema::<WithMap>();
    let g = export_ok(&map, SchemaProfile::Gemini);
    assert_eq!(g["properties"]["counts"], json!({"type": "object"}));
    let a = export_ok(&map, SchemaProfile::Anthropic);
    assert_eq!(a["properties"]["counts"], map["properties"]["counts"]);
    let err = export_schema(&map, SchemaProfile::OpenAi).expect_err("maps are unsupported");
    assert!(
        err.to_string()
            .contains("/properties/counts/additionalProperties"),
        "{err}"
    );
}

#[test]
fn recursive_is_fine_for_anthropic() {
    let a = export_ok(&schema::<Node>(), SchemaProfile::Anthropic);
    assert_eq!(a["properties"]["children"]["items"], json!({"$ref": "#"}));
    let err = export_schema(&schema::<Tree>(), SchemaProfile::Gemini).expect_err("recursive");
    assert_eq!(
        err.to_string(),
        "schema `Node` is recursive and cannot be inlined"
    );
}

#[test]
fn optional_fields_become_nullable_for_openai() {
    let o = export_ok(&schema::<Defaults>(), SchemaProfile::OpenAi);
    assert_eq!(o["required"], json!(["n", "pair", "s"]));
    assert_eq!(
        o["properties"]["n"],
        json!({"type": ["integer", "null"], "minimum": 0, "maximum": 65535})
    );
    assert_eq!(o["properties"]["s"], json!({"type": ["string", "null"]}));
    assert_eq!(
        o["properties"]["pair"],
        json!({"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]}, "minItems": 2, "maxItems": 2})
    );
    let g = export_ok(&schema::<Defaults>(), SchemaProfile::Gemini);
    assert_eq!(
        g["properties"]["s"],
        json!({"type": "string", "default": "hi"})
    );
}
