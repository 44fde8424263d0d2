//! OpenAI strict mode ("Structured Outputs", "Supported schemas"): a closed
//! keyword subset, every object closed with all its properties required,
//! every array with `items`, only the listed string formats.

use serde_json::{Value, json};

use super::walk::{key_set, root_is_object, type_list, walk};

const ALLOWED: [&str; 19] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "description",
    "title",
    "pattern",
    "format",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
];

const FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Every rule of OpenAI strict mode that the schema `v` breaks.
///
/// ```
/// use oscova_test_support::schema_rules::openai_problems;
/// use serde_json::json;
///
/// let closed = json!({
///     "type": "object",
///     "properties": {"city": {"type": "string"}},
///     "required": ["city"],
///     "additionalProperties": false
/// });
/// assert!(openai_problems(&closed).is_empty());
/// ```
pub fn openai_problems(v: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    root_is_object(v, &mut problems);
    walk(v, "", &mut |m, path| {
        for k in m.keys() {
            if !ALLOWED.contains(&k.as_str()) {
                problems.push(format!("{path}: keyword `{k}` not in the strict subset"));
            }
        }
        let types = type_list(m);
        if types.iter().any(|t| t == "object") || m.contains_key("properties") {
            if m.get("additionalProperties") != Some(&json!(false)) {
                problems.push(format!(
                    "{path}: object without additionalProperties: false"
                ));
            }
            if !m.contains_key("properties")
                || key_set(m.get("required")) != key_set(m.get("properties"))
            {
                problems.push(format!("{path}: required differs from the property keys"));
            }
        }
        if types.iter().any(|t| t == "array") && !m.contains_key("items") {
            problems.push(format!("{path}: array without items"));
        }
        if let Some(f) = m.get("format").and_then(Value::as_str)
            && !FORMATS.contains(&f)
        {
            problems.push(format!("{path}: format `{f}` not supported"));
        }
        if !["type", "anyOf", "enum", "const"]
            .iter()
            .any(|k| m.contains_key(*k))
        {
            problems.push(format!("{path}: untyped schema"));
        }
    });
    problems
}
