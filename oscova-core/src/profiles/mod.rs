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

use serde_json::{Map, Value};

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

const ROOT_NOT_OBJECT: &str = "the root schema must be `type: \"object\"`";

/// Deepest schema nesting followed before giving up.
const MAX_DEPTH: usize = 128;
/// Most schema nodes one export may produce (guards against `$ref` fan-out).
const MAX_NODES: usize = 100_000;

const OPENAI_STRING_FORMATS: [&str; 9] = [
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
const OPENAI_NUMBER_KEYWORDS: [&str; 5] = [
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
];
/// Keywords whose conflicting values can be overridden when merging
/// `$ref` siblings or `allOf` members (the later value wins).
const ANNOTATIONS: [&str; 12] = [
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

fn unsupported(path: &str, reason: impl Into<String>) -> SchemaProfileError {
    SchemaProfileError::Unsupported {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

fn child(path: &str, token: &str) -> String {
    let escaped = token.replace('~', "~0").replace('/', "~1");
    format!("{path}/{escaped}")
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    OpenAi,
    Gemini,
}

/// A schema node with its top-level `$ref` and `allOf` merged away.
struct Resolved {
    /// `None` for the boolean schemas; `Some` for object schemas.
    node: ResolvedNode,
    /// Pointer used for errors about this node.
    path: String,
    /// How many `$ref` targets were pushed on the cycle stack.
    pushed: usize,
}

enum ResolvedNode {
    Bool(bool),
    Map(Map<String, Value>),
}

struct Converter<'a> {
    root: &'a Value,
    target: Target,
    /// Pointers of the `$ref` targets being expanded; `""` is the root.
    stack: Vec<String>,
    /// Nesting of `convert` calls.
    depth: usize,
    /// Nesting of `resolve` calls.
    resolving: usize,
    /// Schema nodes produced so far.
    nodes: usize,
}

impl<'a> Converter<'a> {
    fn new(root: &'a Value, target: Target) -> Self {
        Converter {
            root,
            target,
            stack: vec![String::new()],
            depth: 0,
            resolving: 0,
            nodes: 0,
        }
    }

    fn run(mut self) -> Result<Value, SchemaProfileError> {
        let resolved = self.resolve(self.root, "")?;
        let is_object = match &resolved.node {
            ResolvedNode::Map(m) => {
                !m.contains_key("anyOf")
                    && !m.contains_key("oneOf")
                    && match m.get("type") {
                        Some(t) => t.as_str() == Some("object"),
                        None => m.contains_key("properties"),
                    }
            }
            ResolvedNode::Bool(_) => false,
        };
        if !is_object {
            return Err(unsupported("", ROOT_NOT_OBJECT));
        }
        self.convert_resolved(resolved)
    }

    fn ref_name(&self, pointer: &str) -> String {
        if pointer.is_empty() {
            return self
                .root
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or("#")
                .to_owned();
        }
        let last = pointer.rsplit('/').next().unwrap_or(pointer);
        last.replace("~1", "/").replace("~0", "~")
    }

    /// Finds a local `$ref` target: returns its JSON pointer and value.
    fn lookup(
        &self,
        reference: &str,
        path: &str,
    ) -> Result<(String, &'a Value), SchemaProfileError> {
        let unresolved = || SchemaProfileError::UnresolvedRef {
            path: path.to_owned(),
            reference: reference.to_owned(),
        };
        let fragment = reference.strip_prefix('#').ok_or_else(unresolved)?;
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(unresolved());
        }
        let pointer = percent_decode(fragment).ok_or_else(unresolved)?;
        let target = self.root.pointer(&pointer).ok_or_else(unresolved)?;
        Ok((pointer, target))
    }

    /// Follows the node's top-level `$ref` and merges its `allOf`, pushing
    /// every followed target on the cycle stack.
    fn resolve(&mut self, node: &Value, path: &str) -> Result<Resolved, SchemaProfileError> {
        self.resolving += 1;
        if self.resolving > MAX_DEPTH {
            return Err(unsupported(
                path,
                format!("`$ref`/`allOf` chains deeper than {MAX_DEPTH} levels are not supported"),
            ));
        }
        let resolved = self.resolve_inner(node, path);
        self.resolving -= 1;
        resolved
    }

    fn resolve_inner(&mut self, node: &Value, path: &str) -> Result<Resolved, SchemaProfileError> {
        let mut map = match node {
            Value::Object(m) => m.clone(),
            Value::Bool(b) => {
                return Ok(Resolved {
                    node: ResolvedNode::Bool(*b),
                    path: path.to_owned(),
                    pushed: 0,
                });
            }
            _ => {
                return Err(unsupported(
                    path,
                    "a schema must be a JSON object or a boolean",
                ));
            }
        };
        let mut path = path.to_owned();
        let mut pushed = 0;

        if let Some(reference) = map.remove("$ref") {
            let reference = reference
                .as_str()
                .ok_or_else(|| unsupported(&child(&path, "$ref"), "`$ref` must be a string"))?;
            let (pointer, target) = self.lookup(reference, &path)?;
            if self.stack.contains(&pointer) {
                return Err(SchemaProfileError::Recursive {
                    name: self.ref_name(&pointer),
                });
            }
            self.stack.push(pointer.clone());
            pushed += 1;
            let inner = self.resolve(target, &pointer)?;
            pushed += inner.pushed;
            let mut base = match inner.node {
                ResolvedNode::Map(m) => m,
                ResolvedNode::Bool(true) => Map::new(),
                ResolvedNode::Bool(false) => {
                    return Err(unsupported(&pointer, "the `false` schema accepts no value"));
                }
            };
            merge_into(&mut base, map, &path)?;
            map = base;
            path = inner.path;
        }

        if let Some(all_of) = map.remove("allOf") {
            let all_path = child(&path, "allOf");
            let members = all_of
                .as_array()
                .ok_or_else(|| unsupported(&all_path, "`allOf` must be an array"))?;
            let mut merged = Map::new();
            for (i, member) in members.iter().enumerate() {
                let member = self.resolve(member, &child(&all_path, &i.to_string()))?;
                pushed += member.pushed;
                match member.node {
                    ResolvedNode::Map(m) => merge_into(&mut merged, m, &all_path)?,
                    ResolvedNode::Bool(true) => {}
                    ResolvedNode::Bool(false) => {
                        return Err(unsupported(
                            &member.path,
                            "the `false` schema accepts no value",
                        ));
                    }
                }
            }
            merge_into(&mut merged, map, &path)?;
            map = merged;
        }

        Ok(Resolved {
            node: ResolvedNode::Map(map),
            path,
            pushed,
        })
    }

    fn release(&mut self, pushed: usize) {
        let keep = self.stack.len().saturating_sub(pushed);
        self.stack.truncate(keep);
    }

    fn convert(&mut self, node: &Value, path: &str) -> Result<Value, SchemaProfileError> {
        let resolved = self.resolve(node, path)?;
        self.convert_resolved(resolved)
    }

    fn convert_resolved(&mut self, resolved: Resolved) -> Result<Value, SchemaProfileError> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(unsupported(
                &resolved.path,
                format!("inlining would produce more than {MAX_NODES} schema nodes"),
            ));
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(unsupported(
                &resolved.path,
                format!("schemas nested deeper than {MAX_DEPTH} levels are not supported"),
            ));
        }
        let out = match resolved.node {
            ResolvedNode::Bool(true) => Err(unsupported(
                &resolved.path,
                "a schema accepting any JSON value cannot be expressed",
            )),
            ResolvedNode::Bool(false) => Err(unsupported(
                &resolved.path,
                "the `false` schema accepts no value",
            )),
            ResolvedNode::Map(map) => match self.target {
                Target::OpenAi => self.openai_node(&map, &resolved.path),
                Target::Gemini => self.gemini_node(&map, &resolved.path),
            },
        };
        self.depth -= 1;
        self.release(resolved.pushed);
        out.map(Value::Object)
    }

    /// Converts `items` / `prefixItems` (tuples become a union of element schemas).
    fn convert_items(
        &mut self,
        m: &Map<String, Value>,
        path: &str,
    ) -> Result<Value, SchemaProfileError> {
        let mut elements: Vec<(&Value, String)> = Vec::new();
        if let Some(prefix) = m.get("prefixItems") {
            let prefix_path = child(path, "prefixItems");
            let prefix = prefix
                .as_array()
                .ok_or_else(|| unsupported(&prefix_path, "`prefixItems` must be an array"))?;
            for (i, item) in prefix.iter().enumerate() {
                elements.push((item, child(&prefix_path, &i.to_string())));
            }
        }
        match m.get("items") {
            // Old-style tuple (`items: [..]`).
            Some(Value::Array(tuple)) => {
                let items_path = child(path, "items");
                for (i, item) in tuple.iter().enumerate() {
                    elements.push((item, child(&items_path, &i.to_string())));
                }
            }
            // After `prefixItems`, `items: false` only closes the tuple.
            Some(Value::Bool(false)) if !elements.is_empty() => {}
            Some(items) => elements.push((items, child(path, "items"))),
            None => {}
        }
        if elements.is_empty() {
            return Err(unsupported(path, "an array must describe its items"));
        }
        let mut converted: Vec<Value> = Vec::new();
        for (item, item_path) in elements {
            let c = self.convert(item, &item_path)?;
            if !converted.contains(&c) {
                converted.push(c);
            }
        }
        if converted.len() == 1 {
            Ok(converted.remove(0))
        } else {
            let mut union = Map::new();
            union.insert("anyOf".into(), Value::Array(converted));
            Ok(Value::Object(union))
        }
    }

    /// The `anyOf` (or `oneOf`) members of a node, with the keyword's pointer.
    fn union_of<'m>(
        m: &'m Map<String, Value>,
        path: &str,
    ) -> Result<Option<(&'m Vec<Value>, String)>, SchemaProfileError> {
        match (m.get("anyOf"), m.get("oneOf")) {
            (Some(_), Some(_)) => Err(unsupported(path, "both `anyOf` and `oneOf` on one schema")),
            (Some(v), None) | (None, Some(v)) => {
                let key = if m.contains_key("anyOf") {
                    "anyOf"
                } else {
                    "oneOf"
                };
                let union_path = child(path, key);
                let members = v
                    .as_array()
                    .ok_or_else(|| unsupported(&union_path, format!("`{key}` must be an array")))?;
                Ok(Some((members, union_path)))
            }
            (None, None) => Ok(None),
        }
    }

    fn openai_node(
        &mut self,
        m: &Map<String, Value>,
        path: &str,
    ) -> Result<Map<String, Value>, SchemaProfileError> {
        let mut out = Map::new();
        for key in ["title", "description"] {
            if let Some(v) = m.get(key) {
                out.insert(key.into(), v.clone());
            }
        }
        let types = type_names(m, path)?;
        if let Some(t) = m.get("type") {
            out.insert("type".into(), t.clone());
        }
        if let Some((members, union_path)) = Self::union_of(m, path)? {
            let mut branches = Vec::with_capacity(members.len());
            for (i, member) in members.iter().enumerate() {
                branches.push(self.convert(member, &child(&union_path, &i.to_string()))?);
            }
            let branches = splice_unions(branches, &mut out);
            out.insert("anyOf".into(), Value::Array(branches));
        }
        for key in ["enum", "const"] {
            if let Some(v) = m.get(key) {
                out.insert(key.into(), v.clone());
            }
        }

        if is_object(m, types.as_deref()) {
            if m.get("patternProperties")
                .is_some_and(|p| p.as_object().is_none_or(|p| !p.is_empty()))
            {
                return Err(unsupported(
                    &child(path, "patternProperties"),
                    "pattern-keyed maps cannot be expressed in OpenAI strict mode",
                ));
            }
            match m.get("additionalProperties") {
                None | Some(Value::Bool(false)) => {}
                Some(Value::Bool(true)) => {
                    return Err(unsupported(
                        &child(path, "additionalProperties"),
                        "an object open to any extra property cannot be expressed in OpenAI strict mode",
                    ));
                }
                Some(_) => {
                    return Err(unsupported(
                        &child(path, "additionalProperties"),
                        "a map (`additionalProperties` with a schema) cannot be expressed in OpenAI strict mode, which requires every key to be declared",
                    ));
                }
            }
            let required = required_names(m);
            let props_path = child(path, "properties");
            let mut props = Map::new();
            if let Some(properties) = m.get("properties") {
                let properties = properties
                    .as_object()
                    .ok_or_else(|| unsupported(&props_path, "`properties` must be an object"))?;
                for (name, schema) in properties {
                    let converted = self.convert(schema, &child(&props_path, name))?;
                    let converted = if required.iter().any(|r| r == name) {
                        converted
                    } else {
                        openai_nullable(converted)
                    };
                    props.insert(name.clone(), converted);
                }
            }
            let names = props.keys().cloned().map(Value::String).collect();
            out.entry("type").or_insert_with(|| Value::from("object"));
            out.insert("properties".into(), Value::Object(props));
            out.insert("required".into(), Value::Array(names));
            out.insert("additionalProperties".into(), Value::Bool(false));
        }

        if is_array(m, types.as_deref()) {
            let items = self.convert_items(m, path)?;
            out.entry("type").or_insert_with(|| Value::from("array"));
            out.insert("items".into(), items);
            copy_keys(m, &mut out, &["minItems", "maxItems"]);
        }

        if let Some(Value::String(pattern)) = m.get("pattern") {
            out.insert("pattern".into(), Value::String(pattern.clone()));
        }
        if let Some(Value::String(format)) = m.get("format")
            && OPENAI_STRING_FORMATS.contains(&format.as_str())
        {
            out.insert("format".into(), Value::String(format.clone()));
        }
        for key in OPENAI_NUMBER_KEYWORDS {
            if let Some(v @ Value::Number(_)) = m.get(key) {
                out.insert(key.into(), v.clone());
            }
        }

        if !["type", "anyOf", "enum", "const"]
            .iter()
            .any(|k| out.contains_key(*k))
        {
            return Err(unsupported(
                path,
                "a schema accepting any JSON value cannot be expressed in OpenAI strict mode",
            ));
        }
        Ok(out)
    }

    fn gemini_node(
        &mut self,
        m: &Map<String, Value>,
        path: &str,
    ) -> Result<Map<String, Value>, SchemaProfileError> {
        let mut out = Map::new();
        let mut nullable = false;

        if let Some((members, union_path)) = Self::union_of(m, path)? {
            let mut branches: Vec<Map<String, Value>> = Vec::with_capacity(members.len());
            for (i, member) in members.iter().enumerate() {
                let member_path = child(&union_path, &i.to_string());
                let resolved = self.resolve(member, &member_path)?;
                if let ResolvedNode::Map(rm) = &resolved.node
                    && is_null_schema(rm)
                {
                    nullable = true;
                    self.release(resolved.pushed);
                    continue;
                }
                if let Value::Object(b) = self.convert_resolved(resolved)? {
                    branches.push(b);
                }
            }
            if branches.is_empty() {
                return Err(unsupported(
                    &union_path,
                    "a union of `null` alone cannot be expressed for Gemini",
                ));
            }
            if branches.len() == 1 {
                out = branches.remove(0);
            } else {
                let spliced =
                    splice_unions(branches.into_iter().map(Value::Object).collect(), &mut out);
                let branches: Vec<Map<String, Value>> = spliced
                    .into_iter()
                    .filter_map(|b| match b {
                        Value::Object(b) => Some(b),
                        _ => None,
                    })
                    .collect();
                if let Some(values) = string_enum_union(&branches) {
                    out.insert("type".into(), Value::from("string"));
                    out.insert("enum".into(), Value::Array(values));
                } else {
                    out.insert(
                        "anyOf".into(),
                        Value::Array(branches.into_iter().map(Value::Object).collect()),
                    );
                }
            }
        }

        for key in ["title", "description", "default", "example"] {
            if let Some(v) = m.get(key) {
                out.insert(key.into(), v.clone());
            }
        }

        let types = type_names(m, path)?;
        if let Some(types) = &types {
            let non_null: Vec<&str> = types
                .iter()
                .map(String::as_str)
                .filter(|t| *t != "null")
                .collect();
            nullable |= non_null.len() < types.len();
            match non_null.as_slice() {
                [one] => {
                    out.insert("type".into(), Value::from(*one));
                }
                [] => {
                    return Err(unsupported(
                        path,
                        "a schema of type `null` alone cannot be expressed for Gemini",
                    ));
                }
                _ => {
                    return Err(unsupported(
                        &child(path, "type"),
                        "Gemini accepts a single `type` (plus `nullable`), not several",
                    ));
                }
            }
        }

        let mut values: Option<Vec<Value>> = None;
        if let Some(c) = m.get("const") {
            values = Some(vec![c.clone()]);
        }
        if let Some(e) = m.get("enum") {
            let e = e
                .as_array()
                .ok_or_else(|| unsupported(&child(path, "enum"), "`enum` must be an array"))?;
            values = Some(e.clone());
        }
        if let Some(values) = values {
            let mut strings = Vec::with_capacity(values.len());
            for v in values {
                match v {
                    Value::Null => nullable = true,
                    Value::String(_) => strings.push(v),
                    _ => {
                        return Err(unsupported(path, "Gemini enums can only hold strings"));
                    }
                }
            }
            out.entry("type").or_insert_with(|| Value::from("string"));
            out.insert("enum".into(), Value::Array(strings));
        }

        if is_object(m, types.as_deref()) {
            out.entry("type").or_insert_with(|| Value::from("object"));
            let props_path = child(path, "properties");
            let mut props = Map::new();
            if let Some(properties) = m.get("properties") {
                let properties = properties
                    .as_object()
                    .ok_or_else(|| unsupported(&props_path, "`properties` must be an object"))?;
                for (name, schema) in properties {
                    props.insert(
                        name.clone(),
                        self.convert(schema, &child(&props_path, name))?,
                    );
                }
            }
            let required: Vec<Value> = required_names(m)
                .into_iter()
                .filter(|r| props.contains_key(r))
                .map(Value::String)
                .collect();
            if !props.is_empty() {
                out.insert("properties".into(), Value::Object(props));
            }
            if !required.is_empty() {
                out.insert("required".into(), Value::Array(required));
            }
            copy_keys(m, &mut out, &["minProperties", "maxProperties"]);
        }

        if is_array(m, types.as_deref()) {
            let items = self.convert_items(m, path)?;
            out.entry("type").or_insert_with(|| Value::from("array"));
            out.insert("items".into(), items);
            copy_keys(m, &mut out, &["minItems", "maxItems"]);
        }

        copy_keys(
            m,
            &mut out,
            &["minLength", "maxLength", "pattern", "minimum", "maximum"],
        );

        if let (Some(Value::String(format)), Some(Value::String(ty))) =
            (m.get("format"), out.get("type"))
        {
            let allowed: &[&str] = match ty.as_str() {
                "integer" => &["int32", "int64"],
                "number" => &["float", "double"],
                "string" => &["date-time", "enum"],
                _ => &[],
            };
            if allowed.contains(&format.as_str()) {
                out.insert("format".into(), Value::String(format.clone()));
            }
        }

        if nullable {
            // A union without its own `type` is nullable through its branches.
            let typeless_union = !out.contains_key("type") && out.contains_key("anyOf");
            match out.get_mut("anyOf") {
                Some(Value::Array(branches)) if typeless_union => {
                    for branch in branches.iter_mut().filter_map(Value::as_object_mut) {
                        branch.insert("nullable".into(), Value::Bool(true));
                    }
                }
                _ => {
                    out.insert("nullable".into(), Value::Bool(true));
                }
            }
        }
        if !out.contains_key("type") && !out.contains_key("anyOf") {
            return Err(unsupported(
                path,
                "a schema accepting any JSON value cannot be expressed for Gemini",
            ));
        }
        Ok(out)
    }
}

/// Merges `extra` into `base` (the rules of `allOf` / `$ref` siblings):
/// equal values are kept, annotations from `extra` win, `required` and
/// `properties` are unioned, and any other conflict is an error.
fn merge_into(
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

/// Decodes `%XX` escapes of a URI fragment.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let mut out = Vec::with_capacity(s.len());
    let mut rest = s.as_bytes();
    while let Some((&byte, tail)) = rest.split_first() {
        if byte == b'%' {
            let hex = tail.get(..2).and_then(|h| std::str::from_utf8(h).ok())?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            rest = tail.get(2..)?;
        } else {
            out.push(byte);
            rest = tail;
        }
    }
    String::from_utf8(out).ok()
}

/// The names in `type`, if any.
fn type_names(
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

fn is_object(m: &Map<String, Value>, types: Option<&[String]>) -> bool {
    match types {
        Some(types) => types.iter().any(|t| t == "object"),
        None => ["properties", "additionalProperties", "patternProperties"]
            .iter()
            .any(|k| m.contains_key(*k)),
    }
}

fn is_array(m: &Map<String, Value>, types: Option<&[String]>) -> bool {
    match types {
        Some(types) => types.iter().any(|t| t == "array"),
        None => m.contains_key("items") || m.contains_key("prefixItems"),
    }
}

fn required_names(m: &Map<String, Value>) -> Vec<String> {
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

fn copy_keys(from: &Map<String, Value>, to: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        if let Some(v) = from.get(*key) {
            to.insert((*key).to_owned(), v.clone());
        }
    }
}

fn null_schema() -> Value {
    let mut m = Map::new();
    m.insert("type".into(), Value::from("null"));
    Value::Object(m)
}

/// Whether a converted schema accepts `null`.
fn is_nullable(s: &Map<String, Value>) -> bool {
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

/// Makes a converted OpenAI schema accept `null` as well.
fn openai_nullable(schema: Value) -> Value {
    let Value::Object(mut s) = schema else {
        return schema;
    };
    if is_nullable(&s) {
        return Value::Object(s);
    }
    let has = |k: &str| s.contains_key(k);
    let simple_type = has("type") && !has("anyOf") && !has("const");
    let simple_union = has("anyOf") && !has("type") && !has("enum") && !has("const");
    let bare_enum = has("enum") && !has("type") && !has("anyOf") && !has("const");
    if simple_type || simple_union || bare_enum {
        if let Some(t) = s.get_mut("type") {
            match t {
                Value::Array(ts) => {
                    if !ts.iter().any(|t| t == "null") {
                        ts.push(Value::from("null"));
                    }
                }
                other => *other = Value::Array(vec![other.take(), Value::from("null")]),
            }
        }
        if let Some(Value::Array(values)) = s.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
        if let Some(Value::Array(branches)) = s.get_mut("anyOf") {
            branches.push(null_schema());
        }
        return Value::Object(s);
    }
    let mut wrapper = Map::new();
    if let Some(description) = s.remove("description") {
        wrapper.insert("description".into(), description);
    }
    wrapper.insert(
        "anyOf".into(),
        Value::Array(vec![Value::Object(s), null_schema()]),
    );
    Value::Object(wrapper)
}

/// Splices branches that are bare unions (`anyOf` plus annotations) into
/// the parent union; a spliced branch's `description` moves to `parent`
/// when `parent` has none.
fn splice_unions(branches: Vec<Value>, parent: &mut Map<String, Value>) -> Vec<Value> {
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

/// Whether a resolved input schema only accepts `null`.
fn is_null_schema(m: &Map<String, Value>) -> bool {
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

/// If every converted Gemini branch is a bare string enum, their values.
fn string_enum_union(branches: &[Map<String, Value>]) -> Option<Vec<Value>> {
    let mut values: Vec<Value> = Vec::new();
    for b in branches {
        let plain = b
            .keys()
            .all(|k| ["type", "enum", "description", "title", "format"].contains(&k.as_str()));
        let string_typed = b.get("type").is_none_or(|t| t == "string");
        let enum_format = b.get("format").is_none_or(|f| f == "enum");
        let strings = b.get("enum")?.as_array()?;
        if !plain || !string_typed || !enum_format || !strings.iter().all(Value::is_string) {
            return None;
        }
        for v in strings {
            if !values.contains(v) {
                values.push(v.clone());
            }
        }
    }
    Some(values)
}

#[cfg(test)]
mod tests;
