//! The `gemini` profile's rewriting of one resolved node (the OpenAPI 3.0
//! subset: `nullable`, string enums, no `additionalProperties`).

use serde_json::{Map, Value};

use super::SchemaProfileError;
use super::convert::*;
use super::node::*;

impl Converter<'_> {
    pub(super) fn gemini_node(
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

/// If every converted Gemini branch is a bare string enum, their values.
pub(super) fn string_enum_union(branches: &[Map<String, Value>]) -> Option<Vec<Value>> {
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
