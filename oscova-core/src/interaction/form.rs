//! Forms: named fields in order, each a [`FormField`] of one [`FieldKind`].
//!
//! Rules: a form is flat (no nested objects, no arrays other than a
//! multiple choice), the subset MCP elicitation allows. A field says what
//! it means where it is added: `required_*`/`optional_*` on [`Form`] for
//! the plain case, a typed builder from [`FormField`]'s constructors for a
//! default, bounds or labels; no call takes a positional `Option` or
//! `bool`.

use serde::{Deserialize, Serialize};

use super::field::{
    BooleanField, ChoiceField, ChoiceOption, IntegerField, MultiChoiceField, NumberField, TextField,
};

/// A flat form: named fields, in order.
///
/// Plain fields are added by what they are, `required_*` or `optional_*`;
/// a field with a default, bounds or option labels is built from
/// [`FormField`] and added with [`Form::field`].
///
/// ```
/// use oscova_core::interaction::{Form, FormField};
/// let form = Form::new()
///     .required_text("name", "Your name")
///     .optional_number("score", "Score")
///     .field(FormField::integer("age", "Age").with_default(30).minimum(0))
///     .field(FormField::boolean("subscribe", "Subscribe").with_default(false))
///     .field(FormField::choice("size", "Size", ["S", "M"]).with_default("M"))
///     .required_choice("plan", "Plan", [("free", "Free"), ("pro", "Professional")])
///     .optional_multi_choice("topics", "Topics", ["news", "sport"]);
/// assert_eq!(form.fields().len(), 7);
/// let schema = form.requested_schema();
/// assert_eq!(schema["properties"]["age"]["type"], "integer");
/// assert_eq!(schema["properties"]["plan"]["oneOf"][1]["title"], "Professional");
/// assert_eq!(schema["properties"]["topics"]["items"]["enum"][0], "news");
/// assert_eq!(schema["required"], serde_json::json!(["name", "plan"]));
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Form {
    pub(super) fields: Vec<FormField>,
}

/// One field of a [`Form`].
///
/// The constructors named for a kind ([`FormField::text`],
/// [`FormField::integer`], ...) start a typed builder whose methods are the
/// settings that kind has; [`FormField::new`] takes a [`FieldKind`] built
/// in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FormField {
    /// The property name in the answer.
    pub name: String,
    /// The label shown to the person.
    pub title: String,
    /// Whether the answer must have it.
    #[serde(default)]
    pub required: bool,
    /// Its type and default.
    pub kind: FieldKind,
}

/// The type of a form field, with its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum FieldKind {
    /// A string.
    Text {
        /// The default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<String>,
    },
    /// A number.
    Number {
        /// The default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<f64>,
        /// The smallest number allowed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        minimum: Option<f64>,
        /// The largest number allowed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        maximum: Option<f64>,
    },
    /// A whole number.
    Integer {
        /// The default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<i64>,
        /// The smallest number allowed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        minimum: Option<i64>,
        /// The largest number allowed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        maximum: Option<i64>,
    },
    /// A boolean.
    Boolean {
        /// The default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<bool>,
    },
    /// One of several strings.
    Choice {
        /// The options: the values an answer carries.
        options: Vec<String>,
        /// The label shown for each option, in the options' order; empty
        /// when the options are their own labels. An option without a
        /// label here is shown as itself.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        titles: Vec<String>,
        /// The default, one of the options.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default: Option<String>,
        /// Sends the labels as the deprecated `enumNames` list that MCP
        /// clients from before protocol 2025-11-25 read, instead of
        /// `oneOf` with `const` and `title` (SEP-1330).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        legacy_titles: bool,
    },
    /// Any number of several strings (a multi-select).
    MultiChoice {
        /// The options: the values an answer carries.
        options: Vec<String>,
        /// The label shown for each option, as for [`FieldKind::Choice`].
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        titles: Vec<String>,
        /// The options chosen by default.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        default: Vec<String>,
        /// The fewest options an answer may choose.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_items: Option<u64>,
        /// The most options an answer may choose.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_items: Option<u64>,
    },
}

impl FieldKind {
    /// The options of a choice as `(value, label)` pairs, in order, a
    /// missing label being the value itself; empty for other kinds. What
    /// a host shows the person and what it maps their pick back to.
    ///
    /// ```
    /// use oscova_core::interaction::Form;
    /// let form = Form::new().required_choice("plan", "Plan", [("pro", "Professional")]);
    /// assert_eq!(form.fields()[0].kind.labelled_options(), vec![("pro", "Professional")]);
    /// ```
    pub fn labelled_options(&self) -> Vec<(&str, &str)> {
        match self {
            Self::Choice {
                options, titles, ..
            }
            | Self::MultiChoice {
                options, titles, ..
            } => options
                .iter()
                .enumerate()
                .map(|(i, option)| (option.as_str(), titles.get(i).unwrap_or(option).as_str()))
                .collect(),
            _ => Vec::new(),
        }
    }
}

impl FormField {
    /// A field of a kind built in full; optional unless
    /// [`FormField::required`] is called. For one kind's settings by name,
    /// start from [`FormField::text`], [`FormField::integer`] and the rest.
    ///
    /// ```
    /// use oscova_core::interaction::{FieldKind, Form, FormField};
    /// let guests = FieldKind::Integer { default: Some(2), minimum: Some(1), maximum: Some(8) };
    /// let form = Form::new().field(FormField::new("guests", "Guests", guests).required());
    /// assert_eq!(form.requested_schema()["properties"]["guests"]["maximum"], 8);
    /// ```
    pub fn new(name: impl Into<String>, title: impl Into<String>, kind: FieldKind) -> Self {
        Self {
            name: name.into(),
            title: title.into(),
            required: false,
            kind,
        }
    }

    /// Makes the field one every answer must have.
    #[must_use]
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// A text field, optional and without a default until told.
    pub fn text(name: impl Into<String>, title: impl Into<String>) -> TextField {
        TextField::new(name, title)
    }

    /// A number field, unbounded unless told.
    pub fn number(name: impl Into<String>, title: impl Into<String>) -> NumberField {
        NumberField::new(name, title)
    }

    /// A whole-number field, unbounded unless told.
    pub fn integer(name: impl Into<String>, title: impl Into<String>) -> IntegerField {
        IntegerField::new(name, title)
    }

    /// A yes/no field.
    pub fn boolean(name: impl Into<String>, title: impl Into<String>) -> BooleanField {
        BooleanField::new(name, title)
    }

    /// A choice of one of `options`: plain values (`["S", "M"]`), each
    /// shown as itself, or `(value, label)` pairs, where the person sees
    /// the label and the answer carries the value.
    pub fn choice<O: Into<ChoiceOption>>(
        name: impl Into<String>,
        title: impl Into<String>,
        options: impl IntoIterator<Item = O>,
    ) -> ChoiceField {
        ChoiceField::new(name, title, options)
    }

    /// A choice of any number of `options`, given as for
    /// [`FormField::choice`].
    pub fn multi_choice<O: Into<ChoiceOption>>(
        name: impl Into<String>,
        title: impl Into<String>,
        options: impl IntoIterator<Item = O>,
    ) -> MultiChoiceField {
        MultiChoiceField::new(name, title, options)
    }
}

impl Form {
    /// A form with no fields.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a field: a [`FormField`] or any of its typed builders.
    #[must_use]
    pub fn field(mut self, field: impl Into<FormField>) -> Self {
        self.fields.push(field.into());
        self
    }

    /// Adds a text field every answer must have.
    #[must_use]
    pub fn required_text(self, name: impl Into<String>, title: impl Into<String>) -> Self {
        self.field(FormField::text(name, title).required())
    }

    /// Adds a text field an answer may leave out.
    #[must_use]
    pub fn optional_text(self, name: impl Into<String>, title: impl Into<String>) -> Self {
        self.field(FormField::text(name, title))
    }

    /// Adds a number field every answer must have.
    #[must_use]
    pub fn required_number(self, name: impl Into<String>, title: impl Into<String>) -> Self {
        self.field(FormField::number(name, title).required())
    }

    /// Adds a number field an answer may leave out.
    #[must_use]
    pub fn optional_number(self, name: impl Into<String>, title: impl Into<String>) -> Self {
        self.field(FormField::number(name, title))
    }

    /// Adds a whole-number field every answer must have.
    #[must_use]
    pub fn required_integer(self, name: impl Into<String>, title: impl Into<String>) -> Self {
        self.field(FormField::integer(name, title).required())
    }

    /// Adds a whole-number field an answer may leave out.
    #[must_use]
    pub fn optional_integer(self, name: impl Into<String>, title: impl Into<String>) -> Self {
        self.field(FormField::integer(name, title))
    }

    /// Adds a yes/no field every answer must have.
    #[must_use]
    pub fn required_boolean(self, name: impl Into<String>, title: impl Into<String>) -> Self {
        self.field(FormField::boolean(name, title).required())
    }

    /// Adds a yes/no field an answer may leave out.
    #[must_use]
    pub fn optional_boolean(self, name: impl Into<String>, title: impl Into<String>) -> Self {
        self.field(FormField::boolean(name, title))
    }

    /// Adds a choice of one of `options` (see [`FormField::choice`]) every
    /// answer must make.
    #[must_use]
    pub fn required_choice<O: Into<ChoiceOption>>(
        self,
        name: impl Into<String>,
        title: impl Into<String>,
        options: impl IntoIterator<Item = O>,
    ) -> Self {
        self.field(FormField::choice(name, title, options).required())
    }

    /// Adds a choice of one of `options` (see [`FormField::choice`]) an
    /// answer may leave out.
    #[must_use]
    pub fn optional_choice<O: Into<ChoiceOption>>(
        self,
        name: impl Into<String>,
        title: impl Into<String>,
        options: impl IntoIterator<Item = O>,
    ) -> Self {
        self.field(FormField::choice(name, title, options))
    }

    /// Adds a choice of any number of `options` every answer must have
    /// (an empty list is an answer, unless
    /// [`MultiChoiceField::min_items`] says otherwise).
    #[must_use]
    pub fn required_multi_choice<O: Into<ChoiceOption>>(
        self,
        name: impl Into<String>,
        title: impl Into<String>,
        options: impl IntoIterator<Item = O>,
    ) -> Self {
        self.field(FormField::multi_choice(name, title, options).required())
    }

    /// Adds a choice of any number of `options` an answer may leave out.
    #[must_use]
    pub fn optional_multi_choice<O: Into<ChoiceOption>>(
        self,
        name: impl Into<String>,
        title: impl Into<String>,
        options: impl IntoIterator<Item = O>,
    ) -> Self {
        self.field(FormField::multi_choice(name, title, options))
    }

    /// The fields, in order.
    pub fn fields(&self) -> &[FormField] {
        &self.fields
    }
}
