//! Hand-written schemas for the edges schemars does not emit: `$ref`
//! forms, `allOf`, untyped values, nullable unions, pathological inputs.

use serde_json::{Map, Value, json};

use super::*;

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
