//! The `openai` profile's rewriting of one resolved node (strict function
//! calling: closed objects, every property required, nullable optionals).

use serde_json::{Map, Value};

use super::SchemaProfileError;
use super::convert::*;
use super::node::*;

impl Converter<'_> {
    pub(super) fn openai_node(
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
}

/// Makes a converted OpenAI schema accept `null` as well.
pub(super) fn openai_nullable(schema: Value) -> Value {
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
