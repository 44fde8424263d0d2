//! Walking a schema and reading its keywords, shared by the validators.
//! Every child a keyword can hold is visited, whether or not the API
//! allows the keyword, so a forbidden keyword's children are judged too.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// Calls `f` on every schema node, with its JSON pointer.
pub(super) fn walk(v: &Value, path: &str, f: &mut dyn FnMut(&Map<String, Value>, &str)) {
    let Some(m) = v.as_object() else { return };
    f(m, path);
    for key in ["properties", "$defs", "definitions", "patternProperties"] {
        if let Some(Value::Object(children)) = m.get(key) {
            for (name, c) in children {
                walk(c, &format!("{path}/{key}/{name}"), f);
            }
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(children)) = m.get(key) {
            for (i, c) in children.iter().enumerate() {
                walk(c, &format!("{path}/{key}/{i}"), f);
            }
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(c) = m.get(key) {
            walk(c, &format!("{path}/{key}"), f);
        }
    }
}

/// The names in `type`, whether one string or a list.
pub(super) fn type_list(m: &Map<String, Value>) -> Vec<String> {
    match m.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// The keys of an object, or the strings of a list (as in `required`).
pub(super) fn key_set(v: Option<&Value>) -> BTreeSet<String> {
    match v {
        Some(Value::Object(m)) => m.keys().cloned().collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect(),
        _ => BTreeSet::new(),
    }
}

/// The root must be a plain `type: object`, not a union.
pub(super) fn root_is_object(v: &Value, problems: &mut Vec<String>) {
    if v.get("type") != Some(&json!("object")) {
        problems.push("root: not `type: object`".into());
    }
    if v.get("anyOf").is_some() || v.get("oneOf").is_some() {
        problems.push("root: is a union".into());
    }
}
