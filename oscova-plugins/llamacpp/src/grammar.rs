//! The JSON Schema every tool call is decoded under.
//!
//! Rules: a call is one JSON object `{"name": N, "arguments": A}` where N
//! is one of the active tools' names and A is valid for that tool's
//! parameters schema; the schema here says exactly that (`oneOf` one
//! branch per tool, `name` a `const`, no other keys), and llama.cpp's
//! JSON-schema-to-grammar turns it into the grammar the sampler enforces,
//! so a call cannot be malformed, name a tool that is not offered, or
//! miss a required argument. Each tool's own definitions (`$defs`,
//! `definitions`) move to the root under a prefix (`t3_Name`) with its
//! `$ref`s rewritten, since the converter resolves references from the
//! root. A tool whose schema the converter cannot express (or whose
//! references point elsewhere) keeps the object shape with free
//! arguments, `{"type": "object"}`: it is still called by a valid name
//! with a JSON object, and the host's argument check judges the rest
//! before the tool runs (named in [`CallSchema::unconstrained`]).

use oscova_core::provider::model::ToolSpec;
use serde_json::{Map, Value, json};

/// The schema of one tool call, and the tools whose arguments it leaves
/// free.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallSchema {
    /// The JSON Schema of a call.
    pub(crate) schema: Value,
    /// Tools whose arguments are any object (their schema could not be
    /// expressed as a grammar).
    pub(crate) unconstrained: Vec<String>,
}

/// The call schema for `tools`; `expressible` says whether the grammar
/// converter takes a standalone schema.
pub(crate) fn call_schema(tools: &[ToolSpec], expressible: impl Fn(&Value) -> bool) -> CallSchema {
    let mut defs = Map::new();
    let mut branches = Vec::with_capacity(tools.len());
    let mut unconstrained = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let arguments = match hoisted(&tool.parameters, &format!("t{i}_")) {
            Some((arguments, tool_defs)) if expressible(&standalone(&arguments, &tool_defs)) => {
                defs.extend(tool_defs);
                arguments
            }
            _ => {
                unconstrained.push(tool.name.clone());
                json!({"type": "object"})
            }
        };
        branches.push(json!({
            "type": "object",
            "properties": {
                "name": {"const": tool.name},
                "arguments": arguments,
            },
            "required": ["name", "arguments"],
            "additionalProperties": false,
        }));
    }
    let mut schema = if branches.len() == 1 {
        branches.remove(0)
    } else {
        json!({"oneOf": branches})
    };
    if !defs.is_empty() {
        schema["$defs"] = Value::Object(defs);
    }
    CallSchema {
        schema,
        unconstrained,
    }
}

/// `arguments` with `defs` beside it, as the converter reads one schema.
fn standalone(arguments: &Value, defs: &Map<String, Value>) -> Value {
    let mut schema = arguments.clone();
    if !defs.is_empty() {
        if let Value::Object(map) = &mut schema {
            map.insert("$defs".into(), Value::Object(defs.clone()));
        } else {
            return json!({"allOf": [schema], "$defs": defs});
        }
    }
    schema
}

/// The tool's schema without its definitions and `$schema`, its
/// references rewritten to `#/$defs/{prefix}Name`, and the definitions so
/// renamed; `None` when a reference points anywhere else.
fn hoisted(parameters: &Value, prefix: &str) -> Option<(Value, Map<String, Value>)> {
    let mut schema = match parameters {
        Value::Object(map) => map.clone(),
        Value::Bool(true) | Value::Null => return Some((json!({"type": "object"}), Map::new())),
        _ => return None,
    };
    schema.remove("$schema");
    let mut defs = Map::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(found)) = schema.remove(key) {
            for (name, def) in found {
                defs.insert(format!("{prefix}{name}"), def);
            }
        }
    }
    let mut schema = Value::Object(schema);
    if !rewrite_refs(&mut schema, prefix) {
        return None;
    }
    for def in defs.values_mut() {
        if !rewrite_refs(def, prefix) {
            return None;
        }
    }
    Some((schema, defs))
}

fn rewrite_refs(value: &mut Value, prefix: &str) -> bool {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get_mut("$ref") {
                let name = target
                    .strip_prefix("#/$defs/")
                    .or_else(|| target.strip_prefix("#/definitions/"));
                match name {
                    Some(name) if !name.contains('/') => {
                        *target = format!("#/$defs/{prefix}{name}")
                    }
                    _ => return false,
                }
            }
            map.values_mut().all(|v| rewrite_refs(v, prefix))
        }
        Value::Array(items) => items.iter_mut().all(|v| rewrite_refs(v, prefix)),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, parameters: Value) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            parameters,
        }
    }

    #[test]
    fn one_branch_per_tool_with_the_name_as_a_const() {
        let tools = [
            tool(
                "a",
                json!({"type": "object", "properties": {"x": {"type": "integer"}}}),
            ),
            tool("b", json!({"$schema": "x", "type": "object"})),
        ];
        let call = call_schema(&tools, |_| true);
        assert!(call.unconstrained.is_empty());
        let branches = call.schema["oneOf"].as_array().unwrap();
        assert_eq!(branches[0]["properties"]["name"]["const"], "a");
        assert_eq!(
            branches[0]["properties"]["arguments"]["properties"]["x"]["type"],
            "integer"
        );
        assert_eq!(
            branches[1]["properties"]["arguments"],
            json!({"type": "object"})
        );
        assert_eq!(branches[1]["additionalProperties"], false);
    }

    #[test]
    fn definitions_move_to_the_root_with_their_references() {
        let tools = [tool(
            "a",
            json!({
                "type": "object",
                "properties": {"p": {"$ref": "#/$defs/Point"}},
                "$defs": {"Point": {"type": "object", "properties": {"n": {"$ref": "#/definitions/N"}}}},
                "definitions": {"N": {"type": "number"}},
            }),
        )];
        let call = call_schema(&tools, |_| true);
        assert_eq!(
            call.schema["properties"]["arguments"]["properties"]["p"]["$ref"],
            "#/$defs/t0_Point"
        );
        assert_eq!(
            call.schema["$defs"]["t0_Point"]["properties"]["n"]["$ref"],
            "#/$defs/t0_N"
        );
        assert_eq!(call.schema["$defs"]["t0_N"]["type"], "number");
    }

    #[test]
    fn a_schema_the_grammar_cannot_express_leaves_that_tools_arguments_free() {
        let tools = [
            tool("ok", json!({"type": "object"})),
            tool(
                "odd",
                json!({"type": "object", "properties": {"r": {"$ref": "https://x/y"}}}),
            ),
            tool("hard", json!({"type": "object", "not": {}})),
        ];
        let call = call_schema(&tools, |s| s.get("not").is_none());
        assert_eq!(call.unconstrained, ["odd", "hard"]);
        assert_eq!(
            call.schema["oneOf"][1]["properties"]["arguments"],
            json!({"type": "object"})
        );
    }
}
