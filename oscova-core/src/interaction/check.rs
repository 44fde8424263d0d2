//! Answer checks: the values of an accepted answer against a [`Form`],
//! before the tool sees them.
//!
//! Rules: a field's value must be of its type (a number or whole number
//! given as text is read), a choice among the options (the value, never the
//! label), a number within its bounds, a multiple choice distinct options
//! within its item bounds; a required field must be present; a missing
//! optional field gets its default; properties the form does not have are
//! dropped. Every refusal is [`AskError::InvalidAnswer`] naming the field.

use std::fmt;

use serde_json::{Map, Value};

use super::{AskError, FieldKind, Form};

impl Form {
    /// Checks answer values: each field of its type (a number given as
    /// text is read), each choice one of the options, each required field
    /// present; missing optional fields get their defaults; unknown
    /// properties are dropped.
    ///
    /// ```
    /// use oscova_core::interaction::{Form, FormField};
    /// let form = Form::new()
    ///     .required_text("name", "Name")
    ///     .field(FormField::integer("age", "Age").with_default(30));
    /// let answer = serde_json::json!({"name": "Ada", "extra": 1});
    /// let checked = form.check(answer.as_object().cloned().unwrap_or_default())?;
    /// assert_eq!(serde_json::Value::Object(checked), serde_json::json!({"name": "Ada", "age": 30}));
    /// # Ok::<(), oscova_core::interaction::AskError>(())
    /// ```
    pub fn check(&self, mut values: Map<String, Value>) -> Result<Map<String, Value>, AskError> {
        let mut out = Map::new();
        for field in &self.fields {
            let value = values.remove(&field.name).filter(|v| !v.is_null());
            let value = match (value, &field.kind) {
                (None, kind) => match default_of(kind) {
                    Some(v) => v,
                    None if field.required => {
                        return Err(AskError::InvalidAnswer(format!(
                            "the answer has no `{}`",
                            field.name
                        )));
                    }
                    None => continue,
                },
                (Some(v), kind) => check_value(&field.name, kind, v)?,
            };
            out.insert(field.name.clone(), value);
        }
        Ok(out)
    }
}

fn default_of(kind: &FieldKind) -> Option<Value> {
    match kind {
        FieldKind::Text { default } => default.clone().map(Value::from),
        FieldKind::Number { default, .. } => default.map(Value::from),
        FieldKind::Integer { default, .. } => default.map(Value::from),
        FieldKind::Boolean { default } => default.map(Value::from),
        FieldKind::Choice { default, .. } => default.clone().map(Value::from),
        FieldKind::MultiChoice { default, .. } if !default.is_empty() => {
            Some(Value::from(default.clone()))
        }
        FieldKind::MultiChoice { .. } => None,
    }
}

fn check_value(name: &str, kind: &FieldKind, value: Value) -> Result<Value, AskError> {
    let wrong = |what: &str| {
        AskError::InvalidAnswer(format!("`{name}` must be {what}, not {}", short(&value)))
    };
    match (kind, &value) {
        (FieldKind::Text { .. }, Value::String(_)) => Ok(value),
        (
            FieldKind::Number {
                minimum, maximum, ..
            },
            _,
        ) => {
            let number = match &value {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().parse::<f64>().ok(),
                _ => None,
            }
            .filter(|f| f.is_finite())
            .ok_or_else(|| wrong("a number"))?;
            if minimum.is_some_and(|min| number < min) || maximum.is_some_and(|max| number > max) {
                return Err(wrong(&format!("a number {}", range(minimum, maximum))));
            }
            Ok(Value::from(number))
        }
        (
            FieldKind::Integer {
                minimum, maximum, ..
            },
            _,
        ) => {
            let whole = match &value {
                Value::Number(n) => n.as_i64().or_else(|| {
                    // 30.0 is a whole number too.
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                        .map(|f| f as i64)
                }),
                Value::String(s) => s.trim().parse::<i64>().ok(),
                _ => None,
            }
            .ok_or_else(|| wrong("a whole number"))?;
            if minimum.is_some_and(|min| whole < min) || maximum.is_some_and(|max| whole > max) {
                return Err(wrong(&format!(
                    "a whole number {}",
                    range(minimum, maximum)
                )));
            }
            Ok(Value::from(whole))
        }
        (FieldKind::Boolean { .. }, Value::Bool(_)) => Ok(value),
        (FieldKind::Choice { options, .. }, Value::String(s)) if options.contains(s) => Ok(value),
        (FieldKind::Choice { options, .. }, _) => Err(wrong(&format!("one of {options:?}"))),
        (
            FieldKind::MultiChoice {
                options,
                min_items,
                max_items,
                ..
            },
            _,
        ) => {
            let among = || wrong(&format!("a list of distinct options among {options:?}"));
            let Value::Array(items) = &value else {
                return Err(among());
            };
            let mut chosen: Vec<&str> = Vec::with_capacity(items.len());
            for item in items {
                match item.as_str() {
                    Some(s) if options.iter().any(|o| o == s) && !chosen.contains(&s) => {
                        chosen.push(s)
                    }
                    _ => return Err(among()),
                }
            }
            let count = chosen.len() as u64;
            if min_items.is_some_and(|min| count < min) || max_items.is_some_and(|max| count > max)
            {
                let range = range(min_items, max_items);
                return Err(wrong(&format!("{range} options among {options:?}")));
            }
            Ok(value)
        }
        (FieldKind::Text { .. }, _) => Err(wrong("text")),
        (FieldKind::Boolean { .. }, _) => Err(wrong("true or false")),
    }
}

/// "from 1 to 8", "no less than 1", "no more than 8".
fn range<T: fmt::Display>(minimum: &Option<T>, maximum: &Option<T>) -> String {
    match (minimum, maximum) {
        (Some(min), Some(max)) => format!("from {min} to {max}"),
        (Some(min), None) => format!("no less than {min}"),
        (None, Some(max)) => format!("no more than {max}"),
        (None, None) => "of any size".to_owned(),
    }
}

fn short(value: &Value) -> String {
    crate::args::shorten(&value.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::FormField;
    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn defaults_fill_in_and_numbers_are_read_from_text() {
        let form = Form::new()
            .field(FormField::number("n", "N").with_default(2.0))
            .required_text("t", "T");
        assert_eq!(
            form.check(map(json!({"t": "x", "extra": 1}))).unwrap(),
            map(json!({"n": 2.0, "t": "x"}))
        );
        assert!(form.check(map(json!({"n": "3"}))).is_err());
        assert_eq!(
            form.check(map(json!({"n": "3", "t": ""}))).unwrap()["n"],
            3.0
        );
    }

    #[test]
    fn integers_are_whole_and_within_bounds() {
        let guests = FormField::integer("guests", "Guests")
            .with_default(2)
            .minimum(1)
            .maximum(8)
            .required();
        let form = Form::new().field(guests);
        assert_eq!(form.check(map(json!({}))).unwrap()["guests"], 2);
        assert_eq!(
            form.check(map(json!({"guests": 3.0}))).unwrap()["guests"],
            3
        );
        assert_eq!(
            form.check(map(json!({"guests": " 4 "}))).unwrap()["guests"],
            4
        );
        for bad in [json!(2.5), json!(0), json!(9), json!("two"), json!(true)] {
            let err = form.check(map(json!({ "guests": bad }))).unwrap_err();
            assert!(matches!(err, AskError::InvalidAnswer(_)), "{bad}: {err}");
        }
        let err = form.check(map(json!({"guests": 9}))).unwrap_err();
        assert!(err.to_string().contains("from 1 to 8"), "{err}");
    }

    #[test]
    fn choices_carry_values_and_multiple_choices_distinct_ones() {
        let form = Form::new()
            .field(
                FormField::choice("titled", "Titled", [("v1", "First"), ("v2", "Second")])
                    .with_default("v2"),
            )
            .field(FormField::multi_choice("many", "Many", ["p", "q"]).with_default(["q"]))
            .required_multi_choice("tmany", "Titled many", [("m1", "One"), ("m2", "Two")]);
        let answer = form
            .check(map(json!({"titled": "v1", "tmany": ["m2", "m1"]})))
            .unwrap();
        assert_eq!(answer["many"], json!(["q"]), "the default fills in");
        assert_eq!(answer["tmany"], json!(["m2", "m1"]));
        for bad in [json!(["m1", "m1"]), json!(["zz"]), json!("m1"), json!([1])] {
            let err = form.check(map(json!({ "tmany": bad }))).unwrap_err();
            assert!(matches!(err, AskError::InvalidAnswer(_)), "{bad}: {err}");
        }
        // A label is never an answer: the value is.
        assert!(
            form.check(map(json!({"titled": "First", "tmany": []})))
                .is_err()
        );
    }

    #[test]
    fn multiple_choices_honour_their_item_bounds() {
        let pick = FormField::multi_choice("pick", "Pick", ["a", "b", "c"])
            .min_items(1)
            .max_items(2);
        let form = Form::new().field(pick);
        assert!(form.check(map(json!({"pick": ["a"]}))).is_ok());
        let err = form.check(map(json!({"pick": []}))).unwrap_err();
        assert!(err.to_string().contains("from 1 to 2 options"), "{err}");
        assert!(form.check(map(json!({"pick": ["a", "b", "c"]}))).is_err());
        assert!(form.check(map(json!({}))).is_ok(), "optional and absent");
    }
}
