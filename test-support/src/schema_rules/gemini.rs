//! The Gemini `Schema` object: a closed keyword list, one non-null type
//! name per node (or `anyOf`), string enums only, formats per type.

use serde_json::Value;

use super::walk::{key_set, root_is_object, walk};

const ALLOWED: [&str; 21] = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "items",
    "minItems",
    "maxItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "anyOf",
    "default",
    "example",
];

/// Every rule of the Gemini `Schema` object that the schema `v` breaks.
///
/// ```
/// use oscova_test_support::schema_rules::gemini_problems;
/// use serde_json::json;
///
/// let nullable = json!({"type": "object", "properties": {"n": {"type": ["integer", "null"]}}});
/// assert_eq!(
///     gemini_problems(&nullable),
///     [r#"/properties/n: type ["integer","null"] is not a single non-null name"#,
///      "/properties/n: neither type nor anyOf"],
/// );
/// ```
pub fn gemini_problems(v: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    root_is_object(v, &mut problems);
    walk(v, "", &mut |m, path| {
        for k in m.keys() {
            if !ALLOWED.contains(&k.as_str()) {
                problems.push(format!("{path}: keyword `{k}` not in the Gemini Schema"));
            }
        }
        let ty = match m.get("type") {
            None => None,
            Some(Value::String(t)) if t != "null" => Some(t.as_str()),
            Some(other) => {
                problems.push(format!(
                    "{path}: type {other} is not a single non-null name"
                ));
                None
            }
        };
        if ty.is_none() && !m.contains_key("anyOf") {
            problems.push(format!("{path}: neither type nor anyOf"));
        }
        if let Some(Value::Array(values)) = m.get("enum")
            && !values.iter().all(Value::is_string)
        {
            problems.push(format!("{path}: non-string enum value"));
        }
        if let Some(f) = m.get("format").and_then(Value::as_str) {
            let ok = match ty {
                Some("integer") => ["int32", "int64"].contains(&f),
                Some("number") => ["float", "double"].contains(&f),
                Some("string") => ["date-time", "enum"].contains(&f),
                _ => false,
            };
            if !ok {
                problems.push(format!("{path}: format `{f}` not documented for {ty:?}"));
            }
        }
        if m.contains_key("properties") && ty != Some("object") {
            problems.push(format!("{path}: properties on a non-object"));
        }
        let props = key_set(m.get("properties"));
        if !key_set(m.get("required")).is_subset(&props) {
            problems.push(format!("{path}: required names a missing property"));
        }
    });
    problems
}
