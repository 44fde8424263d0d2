//! Input schemas: one JSON Schema object per tool.
//!
//! The object form is fixed so every model API can take it: `type: object`,
//! `properties` (keyed by parameter name), `required` for every non-`Option`
//! parameter, `additionalProperties: false` (unknown properties are refused
//! at call time too), and parameter doc comments as `description`s. Types
//! that schemars does not inline land in `$defs`.

use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value};

/// The JSON Schema dialect of every input schema.
pub const SCHEMA_DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// Builds a tool's input schema, one parameter at a time. Generated code
/// uses it; hosts and hand-written toolsets may too.
///
/// ```
/// use oscova_core::tool::InputSchemaBuilder;
/// let mut b = InputSchemaBuilder::new();
/// b.param::<String>("query", "Words to look for.", true);
/// b.param::<Option<u32>>("limit", "", false);
/// let schema = b.finish();
/// assert_eq!(schema["required"], serde_json::json!(["query"]));
/// assert_eq!(schema["additionalProperties"], false);
/// ```
#[derive(Debug)]
#[doc(hidden)]
pub struct InputSchemaBuilder {
    generator: SchemaGenerator,
    properties: Map<String, Value>,
    required: Vec<Value>,
}

impl Default for InputSchemaBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl InputSchemaBuilder {
    /// An empty argument object.
    pub fn new() -> Self {
        Self {
            generator: SchemaSettings::draft2020_12()
                .for_deserialize()
                .into_generator(),
            properties: Map::new(),
            required: Vec::new(),
        }
    }

    /// Adds a property of type `T`; an empty `description` adds none.
    pub fn param<T: JsonSchema + ?Sized>(
        &mut self,
        name: &str,
        description: &str,
        required: bool,
    ) -> &mut Self {
        let mut schema = self.generator.subschema_for::<T>().to_value();
        if !description.is_empty()
            && let Value::Object(obj) = &mut schema
        {
            obj.insert(
                "description".to_owned(),
                Value::String(description.to_owned()),
            );
        }
        self.properties.insert(name.to_owned(), schema);
        if required {
            self.required.push(Value::String(name.to_owned()));
        }
        self
    }

    /// The finished schema.
    pub fn finish(mut self) -> Value {
        let mut root = Map::new();
        root.insert(
            "$schema".to_owned(),
            Value::String(SCHEMA_DIALECT.to_owned()),
        );
        root.insert("type".to_owned(), Value::String("object".to_owned()));
        root.insert("properties".to_owned(), Value::Object(self.properties));
        root.insert("required".to_owned(), Value::Array(self.required));
        root.insert("additionalProperties".to_owned(), Value::Bool(false));
        let defs = self.generator.take_definitions(true);
        if !defs.is_empty() {
            root.insert("$defs".to_owned(), Value::Object(defs));
        }
        Value::Object(root)
    }
}

/// The output schema of a tool returning `T`: schemars' schema of `T` as
/// serialised, in the same dialect as input schemas, its named types in
/// `$defs`. The root is whatever `T` is; MCP, which wants an object, gets
/// non-object roots wrapped by the host that serves it.
///
/// ```
/// let s = oscova_core::tool::output_schema_for::<Vec<u32>>();
/// assert_eq!(s["type"], "array");
/// ```
pub fn output_schema_for<T: JsonSchema + ?Sized>() -> Value {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Filter {
        field: String,
    }

    #[test]
    fn builds_an_object_schema_with_defs() {
        let mut b = InputSchemaBuilder::new();
        b.param::<String>("query", "Words.", true)
            .param::<Option<u32>>("limit", "", false)
            .param::<Vec<Filter>>("filters", "", true);
        let s = b.finish();
        assert_eq!(s["type"], "object");
        assert_eq!(s["properties"]["query"]["description"], "Words.");
        assert_eq!(s["properties"]["limit"]["type"], json!(["integer", "null"]));
        assert_eq!(s["required"], json!(["query", "filters"]));
        assert_eq!(
            s["properties"]["filters"]["items"]["$ref"],
            "#/$defs/Filter"
        );
        assert!(s["$defs"]["Filter"].is_object());
    }
}
