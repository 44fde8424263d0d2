//! Anthropic's `input_schema`: any JSON Schema with an object root, but no
//! `$schema` at the root, and every `$ref` resolving inside the output
//! (nothing is fetched).

use serde_json::{Value, json};

use super::walk::walk;

/// Every rule of Anthropic's `input_schema` that the schema `v` breaks.
///
/// ```
/// use oscova_test_support::schema_rules::anthropic_problems;
/// use serde_json::json;
///
/// let dangling = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}});
/// assert_eq!(
///     anthropic_problems(&dangling),
///     ["/properties/a: `$ref` #/$defs/A does not resolve in the output"],
/// );
/// ```
pub fn anthropic_problems(v: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if v.get("type") != Some(&json!("object")) {
        problems.push("root: not `type: object`".into());
    }
    if v.get("$schema").is_some() {
        problems.push("root: `$schema` present".into());
    }
    walk(v, "", &mut |m, path| {
        if let Some(r) = m.get("$ref").and_then(Value::as_str) {
            let target = r.strip_prefix('#').and_then(|p| v.pointer(p));
            if target.is_none() {
                problems.push(format!("{path}: `$ref` {r} does not resolve in the output"));
            }
        }
    });
    problems
}
