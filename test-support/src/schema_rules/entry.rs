//! Whole exported tool entries: each API's declaration shape and name rule,
//! then its schema rules on the schema inside. Problems come in that order:
//! shape, name, schema.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{anthropic_problems, gemini_problems, openai_problems};

/// Every rule of an OpenAI tool declaration that `entry` breaks:
/// `{type: "function", function: {name, description, parameters, strict:
/// true}}`, a name of 1 to 64 of `[a-zA-Z0-9_-]`, and strict mode's schema
/// rules on `parameters`.
///
/// ```
/// use oscova_test_support::schema_rules::openai_entry_problems;
/// use serde_json::json;
///
/// let entry = json!({"type": "function", "function": {
///     "name": "time__now", "description": "The time.", "strict": true,
///     "parameters": {"type": "object", "properties": {}, "required": [],
///                    "additionalProperties": false}}});
/// assert!(openai_entry_problems(&entry).is_empty());
/// ```
pub fn openai_entry_problems(entry: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    want_keys(entry, &["type", "function"], &mut problems);
    let function = &entry["function"];
    want_keys(
        function,
        &["name", "description", "parameters", "strict"],
        &mut problems,
    );
    if entry["type"] != "function" || function["strict"] != true {
        problems.push("not a strict function".into());
    }
    name_rule(&function["name"], &[], false, &mut problems);
    problems.extend(openai_problems(&function["parameters"]));
    problems
}

/// Every rule of a Gemini function declaration that `entry` breaks:
/// `{name, description, parameters}`, a name of at most 64 of
/// `[a-zA-Z0-9_.:-]` starting with a letter or `_`, and the `Schema`
/// object's rules on `parameters`.
///
/// ```
/// use oscova_test_support::schema_rules::gemini_entry_problems;
/// use serde_json::json;
///
/// let entry = json!({"name": "9lives", "description": "", "parameters": {"type": "object"}});
/// assert_eq!(gemini_entry_problems(&entry), [r#"name "9lives" breaks the API's name rule"#]);
/// ```
pub fn gemini_entry_problems(entry: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    want_keys(entry, &["name", "description", "parameters"], &mut problems);
    name_rule(&entry["name"], &['.', ':'], true, &mut problems);
    problems.extend(gemini_problems(&entry["parameters"]));
    problems
}

/// Every rule of an Anthropic tool definition that `entry` breaks:
/// `{name, description, input_schema}`, a name of 1 to 64 of
/// `[a-zA-Z0-9_-]`, and the `input_schema` rules.
///
/// ```
/// use oscova_test_support::schema_rules::anthropic_entry_problems;
/// use serde_json::json;
///
/// let entry = json!({"name": "a", "description": "", "input_schema": {"type": "object"}});
/// assert!(anthropic_entry_problems(&entry).is_empty());
/// ```
pub fn anthropic_entry_problems(entry: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    want_keys(
        entry,
        &["name", "description", "input_schema"],
        &mut problems,
    );
    name_rule(&entry["name"], &[], false, &mut problems);
    problems.extend(anthropic_problems(&entry["input_schema"]));
    problems
}

/// Every rule of Oscova's own raw entry that `entry` breaks: `{name,
/// title?, description, plugin, approval, network_scope, annotations,
/// input_schema, output_schema?}`, a name of 1 to 64 of `[a-zA-Z0-9_-]`,
/// `annotations` an object, an `input_schema` of `type: object` and an
/// `output_schema`, when there is one, an object.
///
/// ```
/// use oscova_test_support::schema_rules::raw_entry_problems;
/// use serde_json::json;
///
/// let entry = json!({"name": "a", "description": "", "plugin": "p", "approval": "never",
///                    "network_scope": "none", "annotations": {},
///                    "input_schema": {"type": "string"}});
/// assert_eq!(raw_entry_problems(&entry), ["root: not `type: object`"]);
/// ```
pub fn raw_entry_problems(entry: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    // `title` and `output_schema` are there only when the tool has them.
    let mut keys = vec![
        "name",
        "description",
        "plugin",
        "approval",
        "network_scope",
        "annotations",
        "input_schema",
    ];
    for optional in ["title", "output_schema"] {
        if entry.get(optional).is_some() {
            keys.push(optional);
        }
    }
    want_keys(entry, &keys, &mut problems);
    if !entry["annotations"].is_object() {
        problems.push("annotations: not an object".into());
    }
    if entry.get("output_schema").is_some_and(|s| !s.is_object()) {
        problems.push("output_schema: not an object".into());
    }
    name_rule(&entry["name"], &[], false, &mut problems);
    match entry["input_schema"].get("type") {
        Some(t) if t == "object" => {}
        _ => problems.push("root: not `type: object`".into()),
    }
    problems
}

/// `v` must be an object with exactly the keys `expected`.
fn want_keys(v: &Value, expected: &[&str], problems: &mut Vec<String>) {
    let present: BTreeSet<&str> = v
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let expected: BTreeSet<&str> = expected.iter().copied().collect();
    if present != expected {
        problems.push(format!("keys {present:?}, expected {expected:?}"));
    }
}

/// 1 to 64 ASCII letters, digits, `_`, `-` and `extra`; with
/// `first_letter`, starting with a letter or `_`.
fn name_rule(name: &Value, extra: &[char], first_letter: bool, problems: &mut Vec<String>) {
    let name = name.as_str().unwrap_or_default();
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || extra.contains(&c);
    let first = name.chars().next();
    let fits = (1..=64).contains(&name.len())
        && name.chars().all(allowed)
        && (!first_letter || first.is_some_and(|c| c.is_ascii_alphabetic() || c == '_'));
    if !fits {
        problems.push(format!("name {name:?} breaks the API's name rule"));
    }
}
