//! Export a tool's input JSON Schema in the dialect that a model API accepts.
//!
//! Tools describe their input with a JSON Schema (draft 2020-12, as produced
//! by `schemars` 1.x). Model APIs accept different subsets of JSON Schema, so
//! [`export_schema`] rewrites one schema for one [`SchemaProfile`].
//!
//! # Rules common to all profiles
//!
//! * The input is only read, never mutated; `raw` returns it unchanged.
//! * `openai`, `gemini` and `anthropic` require the root to be an object
//!   schema (`type: "object"`, not a union): tool arguments are an object.
//! * `openai` and `gemini` inline every local `$ref` (`#`, `#/$defs/...`,
//!   `#/definitions/...`, any JSON pointer, percent-escapes decoded), merging
//!   keywords written beside the `$ref` and the members of `allOf` (equal
//!   values kept, annotations such as `description` overridden, `required`
//!   and `properties` unioned, any other conflict an error). A `$ref` that
//!   comes back to a schema being inlined is a
//!   [`SchemaProfileError::Recursive`] error; one that leaves the document is
//!   [`SchemaProfileError::UnresolvedRef`].
//! * A construct a profile cannot express is
//!   [`SchemaProfileError::Unsupported`], whose `path` is the JSON pointer
//!   (RFC 6901) of the offending node or keyword **in the input document**,
//!   after following `$ref`s (empty for the root). Such constructs are maps
//!   (for `openai`), schemas that accept any value (`true`, `{}`), a lone
//!   `null` type (for `gemini`), and nesting deeper than 128 levels or more
//!   than 100 000 inlined nodes.
//! * Keywords outside a profile's subset that only narrow values
//!   (`minLength`, `uniqueItems`, `not`, unlisted `format`s, ...) are dropped,
//!   so an export may accept values that the original schema rejects. The
//!   tool still deserializes its input, and that remains the final check.
//! * Tuples (`prefixItems`) cannot be typed by position: the array's `items`
//!   becomes the `anyOf` of the distinct element schemas, and `minItems` and
//!   `maxItems` are kept.
//! * Size limits that the APIs document (property counts, nesting depth,
//!   enum sizes) vary by model and over time, and are not checked here.
//!
//! # `openai`: strict function calling and Structured Outputs
//!
//! Follows the "Supported schemas" rules of OpenAI's Structured Outputs guide:
//!
//! * "Root objects must not be `anyOf` and must be an object".
//! * "All fields must be required": every property is listed in `required`.
//!   Optional properties become nullable instead, "emulating an optional
//!   parameter" by a union with `null`: `"null"` is added to `type` (and to
//!   `enum`), `{"type": "null"}` is added to an `anyOf`, or else the schema is
//!   wrapped in `anyOf: [schema, {"type": "null"}]` with its `description`
//!   moved to the wrapper. As a consequence, the model may send `null` for a
//!   field that Rust fills from `#[serde(default)]`. Callers should remove
//!   `null` members before they deserialize such input.
//! * "`additionalProperties: false` must always be set in objects". A map
//!   (`additionalProperties` holding a schema, or `true`) or
//!   `patternProperties` cannot be expressed, so it is an error.
//! * The supported types are string, number, boolean, integer, object,
//!   array, enum and `anyOf`, so `oneOf` becomes `anyOf` (a member that is
//!   itself a bare `anyOf` is spliced into its parent).
//! * The supported constraints are `pattern` and `format` (`date-time`,
//!   `time`, `date`, `duration`, `email`, `hostname`, `ipv4`, `ipv6`, `uuid`)
//!   for strings; `multipleOf`, `minimum`, `maximum`, `exclusiveMinimum` and
//!   `exclusiveMaximum` for numbers; and `minItems` and `maxItems` for arrays.
//!   Other formats (such as schemars' `uint32` or `int64`) are dropped.
//! * Only these keywords are emitted: `type`, `properties`, `required`,
//!   `additionalProperties`, `items`, `enum`, `const`, `anyOf`,
//!   `description`, `title`, and the constraints above. `default` is dropped
//!   because strict mode has rejected it ("'default' is not permitted").
//!   `$schema`, `$defs`, `examples` and the rest are dropped too.
//! * Strict mode documents `$defs` and recursive schemas as supported. Even
//!   so, this profile inlines everything (plain inline schemas are the most
//!   widely accepted form), which makes recursive types an error.
//!
//! # `gemini`: function declarations
//!
//! Follows the Gemini API `Schema` reference, "a select subset of an OpenAPI
//! 3.0 schema object":
//!
//! * Only documented fields are emitted: `type`, `format`, `title`,
//!   `description`, `nullable`, `enum`, `items`, `minItems`, `maxItems`,
//!   `properties`, `required`, `minProperties`, `maxProperties`, `minLength`,
//!   `maxLength`, `pattern`, `minimum`, `maximum`, `anyOf`, `default` and
//!   `example`. `$schema`, `$defs`, `additionalProperties`,
//!   `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf` and the rest are
//!   dropped. Type names stay in lowercase JSON Schema spelling.
//! * `type` is one name: `type: [X, "null"]`, or a union with
//!   `{"type": "null"}`, becomes `type: X` plus `nullable: true`. A union
//!   without its own `type` carries `nullable` on each member. Several
//!   non-null types are an error.
//! * `enum` holds strings only, so `const` becomes a one-value `enum`, and a
//!   `oneOf`/`anyOf` made only of string constants becomes `type: string`
//!   plus one `enum` (per-variant descriptions are lost). Other `oneOf`
//!   become `anyOf`. A non-string `enum` or `const` value is an error.
//! * `format` is kept only where documented: `int32`/`int64` for integers,
//!   `float`/`double` for numbers, and `date-time`/`enum` for strings.
//! * `additionalProperties` is removed everywhere, so a map becomes
//!   `type: object` with no `properties`, and its value schema is lost. Some
//!   Gemini versions have rejected objects without properties ("should be
//!   non-empty for OBJECT type"). `required` keeps only declared properties,
//!   and an empty `required` or `properties` is omitted.
//!
//! # `anthropic`: tool `input_schema`
//!
//! Follows Anthropic's tool-use documentation: `input_schema` is a JSON Schema
//! whose root must be `type: "object"`, and any other root is an error.
//! Anthropic accepts full JSON Schema, so only `$schema` is removed, and
//! `$defs` and `$ref` are kept as they are.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

/// A model API dialect that a tool's input schema can be exported to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SchemaProfile {
    /// The schema exactly as the tool produced it.
    Raw,
    /// OpenAI strict function calling / Structured Outputs.
    OpenAi,
    /// Gemini function declarations (an OpenAPI 3.0 subset).
    Gemini,
    /// Anthropic tool `input_schema`.
    Anthropic,
}

impl SchemaProfile {
    /// Every profile, in a stable order.
    pub const ALL: [SchemaProfile; 4] = [
        SchemaProfile::Raw,
        SchemaProfile::OpenAi,
        SchemaProfile::Gemini,
        SchemaProfile::Anthropic,
    ];

    /// The profile's lowercase name, as accepted by [`FromStr`].
    pub fn as_str(&self) -> &'static str {
        match self {
            SchemaProfile::Raw => "raw",
            SchemaProfile::OpenAi => "openai",
            SchemaProfile::Gemini => "gemini",
            SchemaProfile::Anthropic => "anthropic",
        }
    }
}

impl fmt::Display for SchemaProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SchemaProfile {
    type Err = SchemaProfileError;

    /// Parses `raw`, `openai`, `gemini` or `anthropic`, ignoring ASCII case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SchemaProfile::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| SchemaProfileError::UnknownProfile {
                given: s.to_owned(),
            })
    }
}

/// Why a schema could not be exported, or a profile name not parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaProfileError {
    /// The name given is not a known profile.
    #[error("unknown schema profile `{given}`; valid profiles are: raw, openai, gemini, anthropic")]
    UnknownProfile {
        /// The name that was given.
        given: String,
    },
    /// A construct the profile cannot express.
    #[error("schema at {} cannot be exported: {reason}", display_pointer(.path))]
    Unsupported {
        /// JSON pointer (RFC 6901) of the node in the input document; empty for the root.
        path: String,
        /// What the profile cannot express.
        reason: String,
    },
    /// A recursive type, which cannot be inlined.
    #[error("schema `{name}` is recursive and cannot be inlined")]
    Recursive {
        /// The definition's name (the root's `title`, or `#`, for the root).
        name: String,
    },
    /// A `$ref` that does not point into the schema document.
    #[error("`$ref` `{reference}` at {} cannot be resolved", display_pointer(.path))]
    UnresolvedRef {
        /// JSON pointer of the node holding the `$ref`.
        path: String,
        /// The `$ref` value.
        reference: String,
    },
}

fn display_pointer(path: &str) -> String {
    if path.is_empty() {
        "the root".to_owned()
    } else {
        format!("`{path}`")
    }
}

/// Export one tool's input schema in a profile. Never mutates the input.
///
/// See the module documentation for each profile's rules.
///
/// ```
/// use oscova_agent::profile::{SchemaProfile, export_schema};
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
///     "required": ["city"]
/// });
/// // Strict function calling: every property required, optional ones nullable.
/// let strict = export_schema(&schema, SchemaProfile::OpenAi)?;
/// assert_eq!(strict["required"], json!(["city", "days"]));
/// assert_eq!(strict["properties"]["days"]["type"], json!(["integer", "null"]));
/// assert_eq!(strict["additionalProperties"], json!(false));
/// assert_eq!(export_schema(&schema, SchemaProfile::Raw)?, schema);
/// # Ok::<(), oscova_agent::profile::SchemaProfileError>(())
/// ```
pub fn export_schema(schema: &Value, profile: SchemaProfile) -> Result<Value, SchemaProfileError> {
    match profile {
        SchemaProfile::Raw => Ok(schema.clone()),
        SchemaProfile::Anthropic => export_anthropic(schema),
        SchemaProfile::OpenAi => Converter::new(schema, Target::OpenAi).run(),
        SchemaProfile::Gemini => Converter::new(schema, Target::Gemini).run(),
    }
}

fn export_anthropic(schema: &Value) -> Result<Value, SchemaProfileError> {
    match schema.as_object() {
        Some(root) if root.get("type").and_then(Value::as_str) == Some("object") => {
            let mut out = root.clone();
            out.remove("$schema");
            Ok(Value::Object(out))
        }
        _ => Err(unsupported("", ROOT_NOT_OBJECT)),
    }
}

mod convert;
mod gemini;
mod merge;
mod node;
mod openai;

use convert::*;

#[cfg(test)]
mod tests;
