//! Walking an input schema: resolving `$ref`s, merging `allOf` and
//! `$ref` siblings (`merge.rs`), detecting cycles, and the limits and
//! path helpers every profile shares. The profile-specific rewriting of
//! one node lives in `openai.rs` and `gemini.rs`, what they read of a
//! node in `node.rs`; this file decides what node to rewrite.

use serde_json::{Map, Value};

use super::SchemaProfileError;
use super::merge::merge_into;

pub(super) const ROOT_NOT_OBJECT: &str = "the root schema must be `type: \"object\"`";

/// Deepest schema nesting followed before giving up.
pub(super) const MAX_DEPTH: usize = 128;
/// Most schema nodes one export may produce (guards against `$ref` fan-out).
pub(super) const MAX_NODES: usize = 100_000;

pub(super) const OPENAI_STRING_FORMATS: [&str; 9] = [
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
pub(super) const OPENAI_NUMBER_KEYWORDS: [&str; 5] = [
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
];

pub(super) fn unsupported(path: &str, reason: impl Into<String>) -> SchemaProfileError {
    SchemaProfileError::Unsupported {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

pub(super) fn child(path: &str, token: &str) -> String {
    let escaped = token.replace('~', "~0").replace('/', "~1");
    format!("{path}/{escaped}")
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    OpenAi,
    Gemini,
}

/// A schema node with its top-level `$ref` and `allOf` merged away.
pub(super) struct Resolved {
    /// `None` for the boolean schemas; `Some` for object schemas.
    pub(super) node: ResolvedNode,
    /// Pointer used for errors about this node.
    pub(super) path: String,
    /// How many `$ref` targets were pushed on the cycle stack.
    pub(super) pushed: usize,
}

pub(super) enum ResolvedNode {
    Bool(bool),
    Map(Map<String, Value>),
}

pub(super) struct Converter<'a> {
    pub(super) root: &'a Value,
    pub(super) target: Target,
    /// Pointers of the `$ref` targets being expanded; `""` is the root.
    pub(super) stack: Vec<String>,
    /// Nesting of `convert` calls.
    pub(super) depth: usize,
    /// Nesting of `resolve` calls.
    pub(super) resolving: usize,
    /// Schema nodes produced so far.
    pub(super) nodes: usize,
}

impl<'a> Converter<'a> {
    pub(super) fn new(root: &'a Value, target: Target) -> Self {
        Converter {
            root,
            target,
            stack: vec![String::new()],
            depth: 0,
            resolving: 0,
            nodes: 0,
        }
    }

    pub(super) fn run(mut self) -> Result<Value, SchemaProfileError> {
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

    pub(super) fn ref_name(&self, pointer: &str) -> String {
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
    pub(super) fn lookup(
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
    pub(super) fn resolve(
        &mut self,
        node: &Value,
        path: &str,
    ) -> Result<Resolved, SchemaProfileError> {
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

    pub(super) fn resolve_inner(
        &mut self,
        node: &Value,
        path: &str,
    ) -> Result<Resolved, SchemaProfileError> {
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

    pub(super) fn release(&mut self, pushed: usize) {
        let keep = self.stack.len().saturating_sub(pushed);
        self.stack.truncate(keep);
    }

    pub(super) fn convert(
        &mut self,
        node: &Value,
        path: &str,
    ) -> Result<Value, SchemaProfileError> {
        let resolved = self.resolve(node, path)?;
        self.convert_resolved(resolved)
    }

    pub(super) fn convert_resolved(
        &mut self,
        resolved: Resolved,
    ) -> Result<Value, SchemaProfileError> {
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
    pub(super) fn convert_items(
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
    pub(super) fn union_of<'m>(
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
}

/// Decodes `%XX` escapes of a URI fragment.
pub(super) fn percent_decode(s: &str) -> Option<String> {
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
