//! The requested schema: the JSON Schema of an answer to a [`Form`], in
//! the restricted shape MCP's `elicitation/create` takes.
//!
//! Rules: one flat object; every property carries its field's title; a
//! setting a field does not have (no default, no bound) is left out, never
//! sent as `null`; labelled choices take SEP-1330's `oneOf`/`anyOf` of
//! `const` and `title`, or the legacy `enumNames` when the field asks.

use serde_json::{Map, Value, json};

use super::{FieldKind, Form};

impl Form {
    /// The JSON Schema of an answer: a flat object, as MCP elicitation's
    /// `requestedSchema` allows.
    ///
    /// ```
    /// use oscova_core::interaction::Form;
    /// let schema = Form::new().required_text("name", "Name").requested_schema();
    /// assert_eq!(
    ///     schema,
    ///     serde_json::json!({
    ///         "type": "object",
    ///         "properties": {"name": {"type": "string", "title": "Name"}},
    ///         "required": ["name"],
    ///     })
    /// );
    /// ```
    pub fn requested_schema(&self) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for field in &self.fields {
            let mut schema = property(&field.kind);
            if let Value::Object(map) = &mut schema {
                map.retain(|_, v| !v.is_null());
                map.insert("title".to_owned(), Value::from(field.title.clone()));
            }
            properties.insert(field.name.clone(), schema);
            if field.required {
                required.push(Value::from(field.name.clone()));
            }
        }
        json!({"type": "object", "properties": properties, "required": required})
    }
}

/// One field's schema, unset settings still `null`.
fn property(kind: &FieldKind) -> Value {
    match kind {
        FieldKind::Text { default } => json!({"type": "string", "default": default}),
        FieldKind::Number {
            default,
            minimum,
            maximum,
        } => {
            json!({"type": "number", "default": default, "minimum": minimum, "maximum": maximum})
        }
        FieldKind::Integer {
            default,
            minimum,
            maximum,
        } => {
            json!({"type": "integer", "default": default, "minimum": minimum, "maximum": maximum})
        }
        FieldKind::Boolean { default } => json!({"type": "boolean", "default": default}),
        FieldKind::Choice {
            options,
            titles,
            default,
            legacy_titles,
        } => {
            let labels = labels(options, titles);
            match (titles.is_empty(), legacy_titles) {
                (true, _) => json!({"type": "string", "enum": options, "default": default}),
                (false, true) => json!({
                    "type": "string", "enum": options, "enumNames": labels, "default": default,
                }),
                (false, false) => json!({
                    "type": "string", "oneOf": const_titles(options, &labels), "default": default,
                }),
            }
        }
        FieldKind::MultiChoice {
            options,
            titles,
            default,
            min_items,
            max_items,
        } => {
            let items = if titles.is_empty() {
                json!({"type": "string", "enum": options})
            } else {
                json!({"anyOf": const_titles(options, &labels(options, titles))})
            };
            let default = (!default.is_empty()).then_some(default);
            json!({
                "type": "array", "items": items, "default": default,
                "minItems": min_items, "maxItems": max_items,
            })
        }
    }
}

/// Each option's label: its title, or the option itself.
fn labels(options: &[String], titles: &[String]) -> Vec<String> {
    options
        .iter()
        .enumerate()
        .map(|(i, option)| titles.get(i).unwrap_or(option).clone())
        .collect()
}

/// `[{"const": option, "title": label}, ...]`, SEP-1330's titled options.
fn const_titles(options: &[String], labels: &[String]) -> Vec<Value> {
    options
        .iter()
        .zip(labels)
        .map(|(option, label)| json!({"const": option, "title": label}))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::FormField;
    use super::*;

    #[test]
    fn titled_and_multiple_choices_take_the_sep_1330_shapes() {
        let form = Form::new()
            .optional_choice("plain", "Plain", ["x", "y"])
            .field(
                FormField::choice("titled", "Titled", [("v1", "First"), ("v2", "Second")])
                    .with_default("v2"),
            )
            .field(
                FormField::choice("legacy", "Legacy", [("a", "Apple"), ("b", "Banana")])
                    .legacy_titles(),
            )
            .field(FormField::multi_choice("many", "Many", ["p", "q"]).with_default(["q"]))
            .required_multi_choice("tmany", "Titled many", [("m1", "One"), ("m2", "Two")]);
        let p = &form.requested_schema()["properties"];
        assert_eq!(
            p["plain"],
            json!({"type": "string", "title": "Plain", "enum": ["x", "y"]})
        );
        assert_eq!(
            p["titled"],
            json!({"type": "string", "title": "Titled", "default": "v2",
                   "oneOf": [{"const": "v1", "title": "First"}, {"const": "v2", "title": "Second"}]})
        );
        assert_eq!(
            p["legacy"],
            json!({"type": "string", "title": "Legacy", "enum": ["a", "b"], "enumNames": ["Apple", "Banana"]})
        );
        assert_eq!(
            p["many"],
            json!({"type": "array", "title": "Many", "default": ["q"],
                   "items": {"type": "string", "enum": ["p", "q"]}})
        );
        assert_eq!(
            p["tmany"]["items"],
            json!({"anyOf": [{"const": "m1", "title": "One"}, {"const": "m2", "title": "Two"}]})
        );
    }

    #[test]
    fn an_option_without_a_label_among_labelled_ones_is_shown_as_itself() {
        let form = Form::new().required_choice(
            "plan",
            "Plan",
            [
                crate::interaction::ChoiceOption::from(("pro", "Professional")),
                "free".into(),
            ],
        );
        assert_eq!(
            form.requested_schema()["properties"]["plan"]["oneOf"],
            json!([{"const": "pro", "title": "Professional"}, {"const": "free", "title": "free"}])
        );
    }

    #[test]
    fn bounds_are_sent_only_when_set() {
        let form = Form::new()
            .field(
                FormField::integer("guests", "Guests")
                    .with_default(2)
                    .minimum(1)
                    .maximum(8)
                    .required(),
            )
            .field(
                FormField::multi_choice("pick", "Pick", ["a", "b", "c"])
                    .min_items(1)
                    .max_items(2),
            )
            .optional_number("n", "N");
        let p = &form.requested_schema()["properties"];
        assert_eq!(
            p["guests"],
            json!({"type": "integer", "title": "Guests", "default": 2, "minimum": 1, "maximum": 8})
        );
        assert_eq!(
            (p["pick"]["minItems"].clone(), p["pick"]["maxItems"].clone()),
            (json!(1), json!(2))
        );
        assert_eq!(p["n"], json!({"type": "number", "title": "N"}));
    }
}
