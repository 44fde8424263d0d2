//! Validators for each model API's documented rules, walking a whole
//! exported entry: the entry's shape and name, then every schema node.
//!
//! The schema walkers follow the rules the core crate's profile tests
//! check (OpenAI strict mode's "Supported schemas", the Gemini `Schema`
//! object, Anthropic's `input_schema`); the entry checks follow each API's
//! tool declaration: OpenAI `{type: "function", function: {name,
//! description, parameters, strict}}` with names `^[a-zA-Z0-9_-]{1,64}$`,
//! Gemini `{name, description, parameters}` with names that start with a
//! letter or `_` and use `[a-zA-Z0-9_.:-]`, at most 64, and Anthropic
//! `{name, description, input_schema}` with names `^[a-zA-Z0-9_-]{1,64}$`.

#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeSet;

use oscova_core::SchemaProfile;
use serde_json::{Map, Value, json};

/// Panics with every broken rule of `profile` in `entry`.
pub fn assert_entry(profile: SchemaProfile, entry: &Value) {
    let problems = entry_problems(profile, entry);
    assert!(
        problems.is_empty(),
        "{profile} entry breaks its rules: {problems:#?}\n{}",
        serde_json::to_string_pretty(entry).unwrap_or_default()
    );
}

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

fn name_ok(name: &str, extra: &[char], first_letter: bool) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || extra.contains(&c);
    let first = name.chars().next();
    (1..=64).contains(&name.len())
        && name.chars().all(allowed)
        && (!first_letter || first.is_some_and(|c| c.is_ascii_alphabetic() || c == '_'))
}

fn entry_problems(profile: SchemaProfile, entry: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut want = |present: BTreeSet<&str>, expected: &[&str]| {
        let expected: BTreeSet<&str> = expected.iter().copied().collect();
        if present != expected {
            problems.push(format!("keys {present:?}, expected {expected:?}"));
        }
    };
    let (name, schema) = match profile {
        SchemaProfile::OpenAi => {
            want(keys(entry), &["type", "function"]);
            let f = &entry["function"];
            want(keys(f), &["name", "description", "parameters", "strict"]);
            if entry["type"] != "function" || f["strict"] != true {
                problems.push("not a strict function".into());
            }
            (&f["name"], &f["parameters"])
        }
        SchemaProfile::Gemini => {
            want(keys(entry), &["name", "description", "parameters"]);
            (&entry["name"], &entry["parameters"])
        }
        SchemaProfile::Anthropic => {
            want(keys(entry), &["name", "description", "input_schema"]);
            (&entry["name"], &entry["input_schema"])
        }
        _ => {
            want(
                keys(entry),
                &[
                    "name",
                    "description",
                    "plugin",
                    "approval",
                    "network_scope",
                    "input_schema",
                ],
            );
            (&entry["name"], &entry["input_schema"])
        }
    };
    let name = name.as_str().unwrap_or_default();
    let name_fits = match profile {
        SchemaProfile::Gemini => name_ok(name, &['.', ':'], true),
        _ => name_ok(name, &[], false),
    };
    if !name_fits {
        problems.push(format!("name {name:?} breaks the API's name rule"));
    }
    problems.extend(match profile {
        SchemaProfile::OpenAi => openai_problems(schema),
        SchemaProfile::Gemini => gemini_problems(schema),
        SchemaProfile::Anthropic => anthropic_problems(schema),
        _ => raw_problems(schema),
    });
    problems
}

fn raw_problems(v: &Value) -> Vec<String> {
    match v.get("type") {
        Some(t) if t == "object" => Vec::new(),
        _ => vec!["root: not `type: object`".into()],
    }
}
/// Calls `f` on every schema node, with its JSON pointer.
fn walk(v: &Value, path: &str, f: &mut dyn FnMut(&Map<String, Value>, &str)) {
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

fn type_list(m: &Map<String, Value>) -> Vec<String> {
    match m.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

fn key_set(v: Option<&Value>) -> BTreeSet<String> {
    match v {
        Some(Value::Object(m)) => m.keys().cloned().collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect(),
        _ => BTreeSet::new(),
    }
}

fn root_is_object(v: &Value, problems: &mut Vec<String>) {
    if v.get("type") != Some(&json!("object")) {
        problems.push("root: not `type: object`".into());
    }
    if v.get("anyOf").is_some() || v.get("oneOf").is_some() {
        problems.push("root: is a union".into());
    }
}

fn openai_problems(v: &Value) -> Vec<String> {
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

fn gemini_problems(v: &Value) -> Vec<String> {
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

fn anthropic_problems(v: &Value) -> Vec<String> {
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
