//! Tests of the schema profiles: fixtures from schemars, a validator per
//! API, and golden snapshots under `tests/golden/profiles/`.

use std::collections::HashMap;
use std::path::PathBuf;

use oscova_test_support::schema_rules;
use schemars::{JsonSchema, schema_for};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

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

// ----- hand-written schemas for the edges schemars does not emit -----

fn object_with(props: Value, required: Value) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

#[test]
fn refs_definitions_siblings_and_escapes() {
    let s = json!({
        "type": "object",
        "properties": {
            "a": {"$ref": "#/definitions/A", "description": "outer"},
            "b": {"$ref": "#/definitions/B%20c~1d"}
        },
        "required": ["a", "b"],
        "definitions": {
            "A": {"type": "string", "description": "inner", "format": "email"},
            "B c/d": {"type": "boolean"}
        }
    });
    let o = export_ok(&s, SchemaProfile::OpenAi);
    assert_eq!(
        o["properties"]["a"],
        json!({"type": "string", "description": "outer", "format": "email"})
    );
    assert_eq!(o["properties"]["b"], json!({"type": "boolean"}));
    let g = export_ok(&s, SchemaProfile::Gemini);
    assert_eq!(
        g["properties"]["a"],
        json!({"type": "string", "description": "outer"})
    );

    for bad in ["#/definitions/Missing", "other.json#/A", "#anchor"] {
        let s = object_with(json!({"a": {"$ref": bad}}), json!(["a"]));
        for p in [SchemaProfile::OpenAi, SchemaProfile::Gemini] {
            assert_eq!(
                export_schema(&s, p),
                Err(SchemaProfileError::UnresolvedRef {
                    path: "/properties/a".into(),
                    reference: bad.into()
                })
            );
        }
    }
}

#[test]
fn all_of_is_merged() {
    let s = json!({
        "type": "object",
        "properties": {"p": {"allOf": [
            {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
            {"properties": {"y": {"type": "string"}}, "description": "both"}
        ]}},
        "required": ["p"]
    });
    let o = export_ok(&s, SchemaProfile::OpenAi);
    assert_eq!(
        o["properties"]["p"],
        json!({
            "type": "object",
            "description": "both",
            "properties": {"x": {"type": "integer"}, "y": {"type": ["string", "null"]}},
            "required": ["x", "y"],
            "additionalProperties": false
        })
    );
    let conflict = object_with(
        json!({"p": {"allOf": [{"type": "string"}, {"type": "integer"}]}}),
        json!(["p"]),
    );
    assert_eq!(
        unsupported_path(export_schema(&conflict, SchemaProfile::OpenAi)),
        "/properties/p/allOf"
    );
    let cycle = json!({
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}]}}
    });
    assert_eq!(
        export_schema(&cycle, SchemaProfile::Gemini),
        Err(SchemaProfileError::Recursive { name: "A".into() })
    );
}

#[test]
fn untyped_values_are_unsupported() {
    for any in [json!(true), json!({}), json!({"description": "anything"})] {
        let s = object_with(json!({"v": any}), json!(["v"]));
        for p in [SchemaProfile::OpenAi, SchemaProfile::Gemini] {
            assert_eq!(
                unsupported_path(export_schema(&s, p)),
                "/properties/v",
                "{any} {p}"
            );
        }
    }
    let open = object_with(
        json!({"m": {"type": "object", "additionalProperties": true}}),
        json!([]),
    );
    assert_eq!(
        unsupported_path(export_schema(&open, SchemaProfile::OpenAi)),
        "/properties/m/additionalProperties"
    );
    assert_eq!(
        export_ok(&open, SchemaProfile::Gemini)["properties"]["m"],
        json!({"type": "object"})
    );
    let only_null = object_with(json!({"u": {"type": "null"}}), json!(["u"]));
    assert_eq!(
        export_ok(&only_null, SchemaProfile::OpenAi)["properties"]["u"],
        json!({"type": "null"})
    );
    assert_eq!(
        unsupported_path(export_schema(&only_null, SchemaProfile::Gemini)),
        "/properties/u"
    );
    let not_object = json!({"type": "array", "items": {"type": "string"}});
    for p in [
        SchemaProfile::OpenAi,
        SchemaProfile::Gemini,
        SchemaProfile::Anthropic,
    ] {
        assert_eq!(unsupported_path(export_schema(&not_object, p)), "", "{p}");
    }
}

#[test]
fn openai_nullable_forms() {
    let s = object_with(
        json!({
            "c": {"const": "x", "description": "constant"},
            "e": {"type": "string", "enum": ["a", "b"]},
            "u": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "n": {"type": ["string", "null"]},
            "bare": {"enum": [1, 2]}
        }),
        json!([]),
    );
    let o = export_ok(&s, SchemaProfile::OpenAi);
    let p = &o["properties"];
    assert_eq!(
        p["c"],
        json!({"description": "constant", "anyOf": [{"const": "x"}, {"type": "null"}]})
    );
    assert_eq!(
        p["e"],
        json!({"type": ["string", "null"], "enum": ["a", "b", null]})
    );
    assert_eq!(
        p["u"],
        json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})
    );
    assert_eq!(p["n"], json!({"type": ["string", "null"]}));
    assert_eq!(p["bare"], json!({"enum": [1, 2, null]}));
    let g = export_schema(&s, SchemaProfile::Gemini);
    assert_eq!(unsupported_path(g), "/properties/bare");
}

#[test]
fn gemini_multi_type_is_unsupported() {
    let s = object_with(json!({"t": {"type": ["string", "integer"]}}), json!(["t"]));
    assert_eq!(
        unsupported_path(export_schema(&s, SchemaProfile::Gemini)),
        "/properties/t/type"
    );
    let ok = export_ok(&s, SchemaProfile::OpenAi);
    assert_eq!(
        ok["properties"]["t"],
        json!({"type": ["string", "integer"]})
    );
}

#[test]
fn error_messages_name_the_location() {
    let err = SchemaProfileError::Unsupported {
        path: String::new(),
        reason: "why".into(),
    };
    assert_eq!(
        err.to_string(),
        "schema at the root cannot be exported: why"
    );
    let err = SchemaProfileError::UnresolvedRef {
        path: "/a~1b".into(),
        reference: "#/x".into(),
    };
    assert_eq!(
        err.to_string(),
        "`$ref` `#/x` at `/a~1b` cannot be resolved"
    );
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct MaybeShape {
    shape: Option<Shape>,
}

#[test]
fn nullable_unions() {
    let s = schema::<MaybeShape>();
    let g = export_ok(&s, SchemaProfile::Gemini);
    let branches = g["properties"]["shape"]["anyOf"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(branches.len(), 3);
    assert!(
        branches
            .iter()
            .all(|b| b["nullable"] == json!(true) && b["type"] == json!("object"))
    );
    assert!(g["properties"]["shape"].get("nullable").is_none());
    let o = export_ok(&s, SchemaProfile::OpenAi);
    let branches = o["properties"]["shape"]["anyOf"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(branches.len(), 4, "nested union spliced into one");
    assert_eq!(branches[3], json!({"type": "null"}));
}

#[test]
fn pathological_inputs_are_errors_not_crashes() {
    let mut deep = json!({"type": "string"});
    for _ in 0..200 {
        deep = json!({"type": "array", "items": deep});
    }
    let s = object_with(json!({"d": deep}), json!(["d"]));
    for p in [SchemaProfile::OpenAi, SchemaProfile::Gemini] {
        let err = export_schema(&s, p).expect_err("too deep");
        assert!(err.to_string().contains("deeper than"), "{err}");
    }

    // Each definition uses the next one twice: inlining doubles per level.
    let mut defs = Map::new();
    for i in 0..30 {
        let next = json!({"$ref": format!("#/$defs/D{}", i + 1)});
        defs.insert(
            format!("D{i}"),
            object_with(json!({"a": next, "b": next}), json!(["a", "b"])),
        );
    }
    defs.insert("D30".into(), json!({"type": "string"}));
    let s = json!({"type": "object", "properties": {"r": {"$ref": "#/$defs/D0"}}, "$defs": defs});
    let err = export_schema(&s, SchemaProfile::OpenAi).expect_err("too large");
    assert!(err.to_string().contains("schema nodes"), "{err}");
}

// ----- golden snapshots -----

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("golden")
        .join("profiles")
}

/// Compares exports with `tests/golden/<fixture>.<profile>.json`;
/// `UPDATE_GOLDEN=1` rewrites them.
#[test]
fn golden_snapshots() {
    let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let all = fixtures();
    let wanted: [(&str, &[SchemaProfile]); 4] = [
        ("flat", &SchemaProfile::ALL),
        ("nested", &SchemaProfile::ALL),
        ("choices", &SchemaProfile::ALL),
        (
            "map",
            &[
                SchemaProfile::Raw,
                SchemaProfile::Gemini,
                SchemaProfile::Anthropic,
            ],
        ),
    ];
    if update {
        std::fs::create_dir_all(golden_dir()).expect("create golden dir");
    }
    let mut stale = Vec::new();
    for (name, profiles) in wanted {
        let fixture = &all
            .iter()
            .find(|(n, _)| *n == name)
            .expect("fixture exists")
            .1;
        for &p in profiles {
            let out = export_ok(fixture, p);
            let file = golden_dir().join(format!("{name}.{p}.json"));
            let text = format!(
                "{}\n",
                serde_json::to_string_pretty(&out).expect("serializes")
            );
            if update {
                std::fs::write(&file, text).expect("write golden file");
                continue;
            }
            let expected = std::fs::read_to_string(&file)
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok());
            if expected.as_ref() != Some(&out) {
                stale.push(format!("{}:\n{text}", file.display()));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "golden files differ (rerun with UPDATE_GOLDEN=1 to rewrite):\n{}",
        stale.join("\n")
    );
}
