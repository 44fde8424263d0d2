//! Checking arguments against a server's input schema before the call.
//!
//! Rules: the keywords tool schemas use are checked (`type`, `required`,
//! `properties`, `additionalProperties: false`, `enum`, `const`, `items`,
//! `minimum`/`maximum`, `minLength`/`maxLength`, `minItems`/`maxItems`,
//! `anyOf`/`oneOf` as "one of these fits"); a keyword it does not know is
//! left for the server to check, so this never refuses what the schema
//! allows. The first problem is reported with its JSON path.

use oscova_core::args::ArgError;
use serde_json::Value;

/// Checks `args` against `schema`.
pub(crate) fn check(schema: &Value, args: &Value) -> Result<(), ArgError> {
    check_at(schema, args, &mut String::new(), 0)
}

/// How deep schemas are followed; deeper values go to the server unchecked.
const MAX_DEPTH: usize = 32;

fn check_at(
    schema: &Value,
    value: &Value,
    path: &mut String,
    depth: usize,
) -> Result<(), ArgError> {
    let Value::Object(schema) = schema else {
        // `true`, or a malformed schema: nothing to check here.
        return match schema {
            Value::Bool(false) => Err(problem(path, "no value is allowed here")),
            _ => Ok(()),
        };
    };
    if depth > MAX_DEPTH {
        return Ok(());
    }
    if let Some(types) = schema.get("type")
        && !type_matches(types, value)
    {
        return Err(problem(
            path,
            &format!("expected {}, got {}", describe(types), kind(value)),
        ));
    }
    if let Some(Value::Array(options)) = schema.get("enum")
        && !options.contains(value)
    {
        return Err(problem(path, "is not one of the allowed values"));
    }
    if let Some(expected) = schema.get("const")
        && expected != value
    {
        return Err(problem(path, &format!("must be {expected}")));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = schema.get(key)
            && !options
                .iter()
                .any(|s| check_at(s, value, &mut path.clone(), depth + 1).is_ok())
        {
            return Err(problem(path, "matches none of the allowed forms"));
        }
    }
    match value {
        Value::Object(map) => {
            if let Some(Value::Array(required)) = schema.get("required") {
                for name in required.iter().filter_map(Value::as_str) {
                    if !map.contains_key(name) {
                        return Err(problem(
                            path,
                            &format!("missing required property `{name}`"),
                        ));
                    }
                }
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
            for (name, item) in map {
                let len = path.len();
                path.push('/');
                path.push_str(&name.replace('~', "~0").replace('/', "~1"));
                let outcome = match properties.and_then(|p| p.get(name)) {
                    Some(sub) => check_at(sub, item, path, depth + 1),
                    None if closed => Err(problem(path, "is not a known property")),
                    None => match schema.get("additionalProperties") {
                        Some(sub @ Value::Object(_)) => check_at(sub, item, path, depth + 1),
                        _ => Ok(()),
                    },
                };
                outcome?;
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            bounds(schema, "minItems", "maxItems", items.len(), path, "items")?;
            if let Some(sub) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&i.to_string());
                    check_at(sub, item, path, depth + 1)?;
                    path.truncate(len);
                }
            }
        }
        Value::String(s) => {
            bounds(
                schema,
                "minLength",
                "maxLength",
                s.chars().count(),
                path,
                "characters",
            )?;
        }
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
                    && x < min
                {
                    return Err(problem(path, &format!("must be at least {min}")));
                }
                if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
                    && x > max
                {
                    return Err(problem(path, &format!("must be at most {max}")));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn bounds(
    schema: &serde_json::Map<String, Value>,
    min_key: &str,
    max_key: &str,
    len: usize,
    path: &str,
    unit: &str,
) -> Result<(), ArgError> {
    if let Some(min) = schema.get(min_key).and_then(Value::as_u64)
        && (len as u64) < min
    {
        return Err(problem(path, &format!("needs at least {min} {unit}")));
    }
    if let Some(max) = schema.get(max_key).and_then(Value::as_u64)
        && (len as u64) > max
    {
        return Err(problem(path, &format!("allows at most {max} {unit}")));
    }
    Ok(())
}

fn type_matches(types: &Value, value: &Value) -> bool {
    match types {
        Value::String(t) => one_type(t, value),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .any(|t| one_type(t, value)),
        _ => true,
    }
}

fn one_type(t: &str, value: &Value) -> bool {
    match t {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => true,
    }
}

fn describe(types: &Value) -> String {
    match types {
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        other => other.as_str().unwrap_or("a valid value").to_owned(),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn problem(path: &str, message: &str) -> ArgError {
    ArgError::new(if path.is_empty() { "/" } else { path }, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_the_first_problem_with_its_path() {
        let schema = json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "maxLength": 5},
                "times": {"type": "integer", "minimum": 1},
                "tags": {"type": "array", "items": {"enum": ["a", "b"]}}
            },
            "required": ["text"],
            "additionalProperties": false
        });
        assert!(check(&schema, &json!({"text": "hi", "times": 2, "tags": ["a"]})).is_ok());
        let cases = [
            (json!({}), "missing required property `text`"),
            (json!({"text": 3}), "/text"),
            (json!({"text": "toolong"}), "at most 5"),
            (json!({"text": "x", "times": 0}), "/times"),
            (json!({"text": "x", "tags": ["c"]}), "/tags/0"),
            (json!({"text": "x", "other": 1}), "/other"),
            (json!([1]), "expected object"),
        ];
        for (args, needle) in cases {
            let e = check(&schema, &args).expect_err("refused").to_string();
            assert!(e.contains(needle), "{args}: {e}");
        }
        assert!(check(&json!({"type": "integer"}), &json!(2.0)).is_ok());
        assert!(check(&json!(true), &json!({"any": 1})).is_ok());
    }
}
