//! The typed field builders [`FormField`]'s constructors start: each has
//! the settings of its kind and nothing else, and becomes a [`FormField`]
//! through `From` (which [`Form::field`](super::Form::field) takes).
//!
//! Rules: a builder starts optional, with no default and no bounds; each
//! setting is a method named for what it sets; a choice's options are
//! plain values or `(value, label)` pairs ([`ChoiceOption`]), and the
//! labels are kept only when at least one option has one.

use super::{FieldKind, FormField};

/// One option of a choice: the value an answer carries and, if it has
/// one, the label the person sees. Made from a value (`"pro"`, a
/// `String`) or a `(value, label)` pair.
///
/// ```
/// use oscova_core::interaction::ChoiceOption;
/// let plain = ChoiceOption::from("pro");
/// let labelled = ChoiceOption::from(("pro", "Professional"));
/// assert_eq!((plain.value(), plain.label()), ("pro", None));
/// assert_eq!(labelled.label(), Some("Professional"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChoiceOption {
    value: String,
    label: Option<String>,
}

impl ChoiceOption {
    /// The value an answer carries.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The label shown instead of the value, if any.
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }
}

impl From<&str> for ChoiceOption {
    fn from(value: &str) -> Self {
        Self {
            value: value.to_owned(),
            label: None,
        }
    }
}

impl From<String> for ChoiceOption {
    fn from(value: String) -> Self {
        Self { value, label: None }
    }
}

impl From<&String> for ChoiceOption {
    fn from(value: &String) -> Self {
        Self::from(value.clone())
    }
}

impl<V: Into<String>, L: Into<String>> From<(V, L)> for ChoiceOption {
    fn from((value, label): (V, L)) -> Self {
        Self {
            value: value.into(),
            label: Some(label.into()),
        }
    }
}

/// Splits options into their values and labels; the labels are empty
/// when no option has one, and an option without one is labelled by its
/// value.
fn split<O: Into<ChoiceOption>>(
    options: impl IntoIterator<Item = O>,
) -> (Vec<String>, Vec<String>) {
    let options: Vec<ChoiceOption> = options.into_iter().map(Into::into).collect();
    let labelled = options.iter().any(|o| o.label.is_some());
    let mut values = Vec::with_capacity(options.len());
    let mut labels = Vec::new();
    for option in options {
        if labelled {
            labels.push(option.label.unwrap_or_else(|| option.value.clone()));
        }
        values.push(option.value);
    }
    (values, labels)
}

/// What every builder holds besides its kind's settings.
#[derive(Debug, Clone, PartialEq)]
struct Head {
    name: String,
    title: String,
    required: bool,
}

impl Head {
    fn new(name: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: title.into(),
            required: false,
        }
    }

    fn into_field(self, kind: FieldKind) -> FormField {
        FormField {
            name: self.name,
            title: self.title,
            required: self.required,
            kind,
        }
    }
}

/// `required()` and the conversion to [`FormField`], the same on every
/// builder.
macro_rules! builder {
    ($ty:ident, |$b:ident| $kind:expr) => {
        impl $ty {
            /// Makes the field one every answer must have.
            pub fn required(mut self) -> Self {
                self.head.required = true;
                self
            }
        }

        impl From<$ty> for FormField {
            fn from($b: $ty) -> Self {
                let kind = $kind;
                $b.head.into_field(kind)
            }
        }
    };
}

/// A text field being built ([`FormField::text`]).
///
/// ```
/// use oscova_core::interaction::{Form, FormField};
/// let form = Form::new().field(FormField::text("name", "Name").with_default("John Doe"));
/// assert_eq!(form.requested_schema()["properties"]["name"]["default"], "John Doe");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct TextField {
    head: Head,
    default: Option<String>,
}

impl TextField {
    pub(super) fn new(name: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            head: Head::new(name, title),
            default: None,
        }
    }

    /// The text offered, and used when the answer leaves the field out.
    pub fn with_default(mut self, default: impl Into<String>) -> Self {
        self.default = Some(default.into());
        self
    }
}

builder!(TextField, |b| FieldKind::Text { default: b.default });

/// A number field being built ([`FormField::number`]).
///
/// ```
/// use oscova_core::interaction::{Form, FormField};
/// let score = FormField::number("score", "Score").with_default(95.5).minimum(0.0).maximum(100.0);
/// let schema = Form::new().field(score).requested_schema();
/// assert_eq!(schema["properties"]["score"]["maximum"], 100.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct NumberField {
    head: Head,
    default: Option<f64>,
    minimum: Option<f64>,
    maximum: Option<f64>,
}

impl NumberField {
    pub(super) fn new(name: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            head: Head::new(name, title),
            default: None,
            minimum: None,
            maximum: None,
        }
    }

    /// The number offered, and used when the answer leaves the field out.
    pub fn with_default(mut self, default: f64) -> Self {
        self.default = Some(default);
        self
    }

    /// The smallest number an answer may give.
    pub fn minimum(mut self, minimum: f64) -> Self {
        self.minimum = Some(minimum);
        self
    }

    /// The largest number an answer may give.
    pub fn maximum(mut self, maximum: f64) -> Self {
        self.maximum = Some(maximum);
        self
    }
}

builder!(NumberField, |b| FieldKind::Number {
    default: b.default,
    minimum: b.minimum,
    maximum: b.maximum,
});

/// A whole-number field being built ([`FormField::integer`]).
///
/// ```
/// use oscova_core::interaction::{Form, FormField};
/// let guests = FormField::integer("guests", "Guests").with_default(2).minimum(1).maximum(8);
/// let schema = Form::new().field(guests.required()).requested_schema();
/// assert_eq!(schema["properties"]["guests"]["minimum"], 1);
/// assert_eq!(schema["required"][0], "guests");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct IntegerField {
    head: Head,
    default: Option<i64>,
    minimum: Option<i64>,
    maximum: Option<i64>,
}

impl IntegerField {
    pub(super) fn new(name: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            head: Head::new(name, title),
            default: None,
            minimum: None,
            maximum: None,
        }
    }

    /// The number offered, and used when the answer leaves the field out.
    pub fn with_default(mut self, default: i64) -> Self {
        self.default = Some(default);
        self
    }

    /// The smallest number an answer may give.
    pub fn minimum(mut self, minimum: i64) -> Self {
        self.minimum = Some(minimum);
        self
    }

    /// The largest number an answer may give.
    pub fn maximum(mut self, maximum: i64) -> Self {
        self.maximum = Some(maximum);
        self
    }
}

builder!(IntegerField, |b| FieldKind::Integer {
    default: b.default,
    minimum: b.minimum,
    maximum: b.maximum,
});

/// A yes/no field being built ([`FormField::boolean`]).
///
/// ```
/// use oscova_core::interaction::{Form, FormField};
/// let form = Form::new().field(FormField::boolean("verified", "Verified").with_default(true));
/// assert_eq!(form.requested_schema()["properties"]["verified"]["default"], true);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct BooleanField {
    head: Head,
    default: Option<bool>,
}

impl BooleanField {
    pub(super) fn new(name: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            head: Head::new(name, title),
            default: None,
        }
    }

    /// The value offered, and used when the answer leaves the field out.
    pub fn with_default(mut self, default: bool) -> Self {
        self.default = Some(default);
        self
    }
}

builder!(BooleanField, |b| FieldKind::Boolean { default: b.default });

/// A choice of one option being built ([`FormField::choice`]).
///
/// ```
/// use oscova_core::interaction::{Form, FormField};
/// let legacy = FormField::choice("size", "Size", [("s", "Small"), ("m", "Medium")])
///     .with_default("m")
///     .legacy_titles();
/// let schema = Form::new().field(legacy).requested_schema();
/// assert_eq!(schema["properties"]["size"]["enumNames"][1], "Medium");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct ChoiceField {
    head: Head,
    options: Vec<String>,
    titles: Vec<String>,
    default: Option<String>,
    legacy_titles: bool,
}

impl ChoiceField {
    pub(super) fn new<O: Into<ChoiceOption>>(
        name: impl Into<String>,
        title: impl Into<String>,
        options: impl IntoIterator<Item = O>,
    ) -> Self {
        let (options, titles) = split(options);
        Self {
            head: Head::new(name, title),
            options,
            titles,
            default: None,
            legacy_titles: false,
        }
    }

    /// The option (its value) chosen unless the person changes it.
    pub fn with_default(mut self, default: impl Into<String>) -> Self {
        self.default = Some(default.into());
        self
    }

    /// Sends the labels as the deprecated `enumNames` list that MCP clients
    /// from before protocol 2025-11-25 read (see
    /// [`FieldKind::Choice::legacy_titles`](FieldKind::Choice)).
    pub fn legacy_titles(mut self) -> Self {
        self.legacy_titles = true;
        self
    }
}

builder!(ChoiceField, |b| FieldKind::Choice {
    options: b.options,
    titles: b.titles,
    default: b.default,
    legacy_titles: b.legacy_titles,
});

/// A choice of any number of options being built
/// ([`FormField::multi_choice`]).
///
/// ```
/// use oscova_core::interaction::{Form, FormField};
/// let diet = FormField::multi_choice("diet", "Diet", ["vegan", "halal", "kosher"])
///     .with_default(["vegan"])
///     .max_items(2);
/// let schema = Form::new().field(diet).requested_schema();
/// assert_eq!(schema["properties"]["diet"]["default"], serde_json::json!(["vegan"]));
/// assert_eq!(schema["properties"]["diet"]["maxItems"], 2);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct MultiChoiceField {
    head: Head,
    options: Vec<String>,
    titles: Vec<String>,
    default: Vec<String>,
    min_items: Option<u64>,
    max_items: Option<u64>,
}

impl MultiChoiceField {
    pub(super) fn new<O: Into<ChoiceOption>>(
        name: impl Into<String>,
        title: impl Into<String>,
        options: impl IntoIterator<Item = O>,
    ) -> Self {
        let (options, titles) = split(options);
        Self {
            head: Head::new(name, title),
            options,
            titles,
            default: Vec::new(),
            min_items: None,
            max_items: None,
        }
    }

    /// The options (their values) chosen unless the person changes them.
    pub fn with_default<S: Into<String>>(mut self, default: impl IntoIterator<Item = S>) -> Self {
        self.default = default.into_iter().map(Into::into).collect();
        self
    }

    /// The fewest options an answer may choose.
    pub fn min_items(mut self, min_items: u64) -> Self {
        self.min_items = Some(min_items);
        self
    }

    /// The most options an answer may choose.
    pub fn max_items(mut self, max_items: u64) -> Self {
        self.max_items = Some(max_items);
        self
    }
}

builder!(MultiChoiceField, |b| FieldKind::MultiChoice {
    options: b.options,
    titles: b.titles,
    default: b.default,
    min_items: b.min_items,
    max_items: b.max_items,
});
