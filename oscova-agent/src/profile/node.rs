//! What the profiles read and write on one schema node: its `type`
//! names, whether it is an object, an array or nullable, its `required`
//! names, and the `null` schema and union splicing both rewrites use.
//!
//! Rules: these look at one node only (its `$ref` and `allOf` already
//! merged away by the walk in `convert.rs`); a `type` that is not a
//! name or a list of names is refused at its path.

use serde_json::{Map, Value};

use super::SchemaProfileError;
use super::convert::{child, unsupported};

/// The names in `type`, if any.
pub(super) fn type_names(
    m: &Map<String, Value>,
    path: &str,
) -> Result<Option<Vec<String>>, SchemaProfileError> {
    let invalid = || {
        unsupported(
            &child(path, "type"),
            "`type` must be a string or an array of strings",
        )
    };
    match m.get("type") {
        None => Ok(None),
        Some(Value::String(t)) => Ok(Some(vec![t.clone()])),
        Some(Value::Array(ts)) => ts
            .iter()
            .map(|t| t.as_str().map(str::to_owned).ok_or_else(invalid))
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(invalid()),
    }
}

pub(super) fn is_object(m: &Map<String, Value>, types: Option<&[String]>) -> bool {
    match types {
        Some(types) => types.iter().any(|t| t == "object"),
        None => ["properties", "additionalProperties", "patternProperties"]
            .iter()
            .any(|k| m.contains_key(*k)),
    }
}

pub(super) fn is_array(m: &Map<String, Value>, types: Option<&[String]>) -> bool {
    match types {
        Some(types) => types.iter().any(|t| t == "array"),
        None => m.contains_key("items") || m.contains_key("prefixItems"),
    }
}

pub(super) fn required_names(m: &Map<String, Value>) -> Vec<String> {
    m.get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn copy_keys(from: &Map<String, Value>, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(v) = from.get(*key) {
            to.insert((*key).to_owned(), v.clone());
        }
    }
}

pub(super) fn null_schema() -> Value {
    let mut m = Map::new();
    m.insert("type".into(), Value::from("null"));
    Value::Object(m)
}

/// Whether a converted schema accepts `null`.
pub(super) fn is_nullable(s: &Map<String, Value>) -> bool {
    if let Some(c) = s.get("const") {
        return c.is_null();
    }
    let checks = [
        s.get("type").map(|t| match t {
            Value::String(t) => t == "null",
            Value::Array(ts) => ts.iter().any(|t| t == "null"),
            _ => false,
        }),
        s.get("enum")
            .map(|e| e.as_array().is_some_and(|e| e.contains(&Value::Null))),
        s.get("anyOf").map(|a| {
            a.as_array()
                .is_some_and(|a| a.iter().any(|b| b.as_object().is_some_and(is_nullable)))
        }),
    ];
    checks.iter().any(Option::is_some) && checks.iter().flatten().all(|ok| *ok)
}

/// Whether a resolved input schema only accepts `null`.
pub(super) fn is_null_schema(m: &Map<String, Value>) -> bool {
    let only_null_type = match m.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => matches!(ts.as_slice(), [t] if t == "null"),
        _ => false,
    };
    only_null_type
        || m.get("const").is_some_and(Value::is_null)
        || m.get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| matches!(e.as_slice(), [Value::Null]))
}

/// Splices branches that are bare unions (`anyOf` plus annotations) into
/// the parent union; a spliced branch's `description` moves to `parent`
/// when `parent` has none.
pub(super) fn splice_unions(branches: Vec<Value>, parent: &mut Map<String, Value>) -> Vec<Value> {
    let mut out = Vec::with_capacity(branches.len());
    for branch in branches {
        match branch {
            Value::Object(mut b)
                if b.keys()
                    .all(|k| ["anyOf", "description", "title"].contains(&k.as_str())) =>
            {
                if let Some(description) = b.remove("description") {
                    parent.entry("description").or_insert(description);
                }
                match b.remove("anyOf") {
                    Some(Value::Array(inner)) => out.extend(inner),
                    _ => out.push(Value::Object(b)),
                }
            }
            other => out.push(other),
        }
    }
    out
}
