//! Merging a schema node's `allOf` members and `$ref` siblings into one
//! node, the same for every profile.
//!
//! Rules: equal values are kept; an annotation ([`ANNOTATIONS`]) from the
//! later member wins; `required` and `properties` are unioned (one
//! property defined two ways is an error at that property's path); any
//! other conflict is an error naming the keyword, never a silent choice.

use serde_json::{Map, Value};

use super::SchemaProfileError;
use super::convert::{child, unsupported};

/// Keywords whose conflicting values can be overridden when merging
/// `$ref` siblings or `allOf` members (the later value wins).
pub(super) const ANNOTATIONS: [&str; 12] = [
    "description",
    "title",
    "default",
    "examples",
    "example",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$defs",
    "definitions",
];

/// Merges `extra` into `base` (the rules of `allOf` / `$ref` siblings):
/// equal values are kept, annotations from `extra` win, `required` and
/// `properties` are unioned, and any other conflict is an error.
pub(super) fn merge_into(
    base: &mut Map<String, Value>,
    extra: Map<String, Value>,
    path: &str,
) -> Result<(), SchemaProfileError> {
    for (key, value) in extra {
        let Some(existing) = base.get_mut(&key) else {
            base.insert(key, value);
            continue;
        };
        if *existing == value {
            continue;
        }
        if ANNOTATIONS.contains(&key.as_str()) {
            *existing = value;
            continue;
        }
        match (key.as_str(), existing, value) {
            ("required", Value::Array(have), Value::Array(more)) => {
                for name in more {
                    if !have.contains(&name) {
                        have.push(name);
                    }
                }
            }
            ("properties", Value::Object(have), Value::Object(more)) => {
                for (name, schema) in more {
                    match have.get(&name) {
                        None => {
                            have.insert(name, schema);
                        }
                        Some(same) if *same == schema => {}
                        Some(_) => {
                            return Err(unsupported(
                                &child(&child(path, "properties"), &name),
                                "conflicting definitions of one property in `allOf` or `$ref` siblings",
                            ));
                        }
                    }
                }
            }
            _ => {
                return Err(unsupported(
                    path,
                    format!(
                        "conflicting `{key}` keywords in `allOf` or `$ref` siblings cannot be merged"
                    ),
                ));
            }
        }
    }
    Ok(())
}
