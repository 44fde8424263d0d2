//! Parsing a tool call's argument text strictly, before any tool reads it.
//!
//! Rules: at most the host's byte cap, one JSON value with nothing after
//! it, nesting at most 128 deep (serde_json's limit), and no object with
//! the same property twice, which plain parsing would resolve silently by
//! keeping the last one. A refusal names the JSON pointer where parsing
//! stopped.

use std::fmt;

use serde_json::{Map, Value};

use super::ArgError;
use super::error::{pointer_segment, shorten};

/// The default cap on argument text, in bytes.
pub const DEFAULT_MAX_ARGUMENT_BYTES: usize = 16 * 1024 * 1024;

/// Parses a tool call's argument text strictly: at most `max_bytes`, one
/// JSON value with nothing after it, nesting at most 128 deep (serde_json's
/// limit), and no object with the same property twice (which plain parsing
/// would resolve silently by keeping the last one).
///
/// ```
/// use oscova_core::args::parse_arguments;
/// assert!(parse_arguments(r#"{"a": 1}"#, 1024).is_ok());
/// let err = parse_arguments(r#"{"a": 1, "a": 2}"#, 1024).unwrap_err();
/// assert_eq!(err.to_string(), "/: duplicate property `a` at line 1 column 12");
/// ```
pub fn parse_arguments(text: &str, max_bytes: usize) -> Result<Value, ArgError> {
    if text.len() > max_bytes {
        return Err(ArgError::new(
            "",
            format!(
                "the arguments are {} bytes; at most {max_bytes} are accepted",
                text.len()
            ),
        ));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize::<_, StrictValue>(&mut de)
        .map_err(|err| {
            let path = json_pointer(err.path());
            ArgError::new(path, shorten(&err.into_inner().to_string()))
        })
        .and_then(|v| {
            de.end()
                .map(|()| v.0)
                .map_err(|e| ArgError::new("", shorten(&e.to_string())))
        })
}

fn json_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => {
                out.push('/');
                out.push_str(&index.to_string());
            }
            Segment::Map { key } | Segment::Enum { variant: key } => {
                out.push_str(&pointer_segment(key));
            }
            Segment::Unknown => {}
        }
    }
    out
}

/// A JSON value that refuses duplicate object keys.
struct StrictValue(Value);

impl<'de> serde::Deserialize<'de> for StrictValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(StrictValue(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "duplicate property `{}`",
                    shorten(&key)
                )));
            }
            let StrictValue(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_parsing() {
        let v = parse_arguments(r#"{"a": [1, {"b": null}], "c": "d"}"#, 1024).unwrap();
        assert_eq!(v, json!({"a": [1, {"b": null}], "c": "d"}));
        let err = parse_arguments(r#"{"a": [1, {"b": 1, "b": 2}]}"#, 1024).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/a/1: duplicate property `b` at line 1 column 22"
        );
        let err = parse_arguments(r#"{"a": 1} x"#, 1024).unwrap_err();
        assert!(err.to_string().contains("trailing characters"), "{err}");
        let err = parse_arguments(r#""\ud800""#, 1024).unwrap_err();
        assert!(err.to_string().contains("escape"), "{err}");
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        let err = parse_arguments(&deep, usize::MAX).unwrap_err();
        assert!(err.to_string().contains("recursion limit"), "{err}");
        let err = parse_arguments("[1, 2, 3]", 4).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/: the arguments are 9 bytes; at most 4 are accepted"
        );
    }
}
