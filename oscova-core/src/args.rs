//! Reading a tool's JSON arguments, with errors that name the JSON path.
//!
//! Generated dispatch code reads each parameter by name and then calls
//! [`ArgReader::finish`], so every problem is found before the method runs:
//! a non-object, a missing required property, a wrong type (with the path
//! inside the value, `/filter/0/id`), and properties the tool does not take.
//! All of them are reported at once, so a model can fix a call in one go.

mod error;
mod strict;

pub(crate) use error::shorten;
pub use error::{ArgError, ArgProblem};
pub use strict::{DEFAULT_MAX_ARGUMENT_BYTES, parse_arguments};

use serde::de::DeserializeOwned;
use serde_json::Value;

use error::{humanize, pointer_segment};

/// Reads parameters out of an argument object. Used by generated code.
///
/// The object is walked once and each property dropped into the slot of
/// the parameter with its name (`N` parameters, names given up front), so
/// reading costs no more than a derived `Deserialize` would.
#[derive(Debug)]
#[doc(hidden)]
pub struct ArgReader<const N: usize> {
    names: &'static [&'static str; N],
    slots: [Option<Value>; N],
    /// Made on the first unknown property or problem: arguments that read
    /// cleanly cost one check to finish and to drop, not two vectors each.
    trouble: Option<Box<Trouble>>,
}

/// What went wrong while reading.
#[derive(Debug, Default)]
struct Trouble {
    unknown: Vec<String>,
    problems: Vec<ArgProblem>,
}

impl<const N: usize> ArgReader<N> {
    /// [`start`](Self::start) and [`read`](Self::read), searching `names`.
    pub fn new(args: Value, names: &'static [&'static str; N]) -> Result<Self, ArgError> {
        let mut reader = Self::start(names);
        reader.read(args, |key| names.iter().position(|n| *n == key))?;
        Ok(reader)
    }

    /// A reader for parameters `names` with nothing read yet, for
    /// [`read`](Self::read) to fill in place: returning it inside a
    /// `Result` copied it twice per call in the small-tool bench.
    #[inline]
    pub fn start(names: &'static [&'static str; N]) -> Self {
        Self {
            names,
            slots: [const { None }; N],
            trouble: None,
        }
    }

    /// Drops each property of `args` into the slot of the parameter
    /// `lookup` names for it; `null` counts as an empty object, since many
    /// clients send it for tools without parameters. Generated code passes
    /// a `match` on the names, which compiles to inline comparisons where
    /// a search through `names` would call `memcmp` for each one.
    #[inline]
    pub fn read(
        &mut self,
        args: Value,
        lookup: impl Fn(&str) -> Option<usize>,
    ) -> Result<(), ArgError> {
        match args {
            Value::Object(map) => {
                for (key, value) in map {
                    match lookup(&key).and_then(|i| self.slots.get_mut(i)) {
                        Some(slot) => *slot = Some(value),
                        None => self.trouble.get_or_insert_default().unknown.push(key),
                    }
                }
                Ok(())
            }
            Value::Null => Ok(()),
            other => {
                let found = describe_value(&other);
                let message = format!("arguments must be a JSON object, found {found}");
                Err(ArgError::new("", message))
            }
        }
    }

    /// Takes parameter number `index`. A missing optional parameter reads
    /// as JSON `null` (so `Option<T>` becomes `None`); a missing required
    /// one is a problem. Returns `None` after recording a problem.
    #[inline]
    pub fn take<T: DeserializeOwned>(&mut self, index: usize, required: bool) -> Option<T> {
        let value = match self.slots.get_mut(index).and_then(Option::take) {
            Some(v) => v,
            None if required => {
                self.problem_at(index, "missing required property".to_owned());
                return None;
            }
            None => Value::Null,
        };
        // A scalar has no inside, so its path is the property's own: read it
        // without path tracking, which costs as much again as the read.
        if !matches!(value, Value::Array(_) | Value::Object(_)) {
            return match T::deserialize(value) {
                Ok(v) => Some(v),
                Err(err) => {
                    self.problem_at(index, humanize(&err.to_string()));
                    None
                }
            };
        }
        match serde_path_to_error::deserialize::<_, T>(value) {
            Ok(v) => Some(v),
            Err(err) => {
                let mut path = pointer_segment(self.name(index));
                for seg in err.path().iter() {
                    use serde_path_to_error::Segment;
                    match seg {
                        Segment::Seq { index } => {
                            path.push('/');
                            path.push_str(&index.to_string());
                        }
                        Segment::Map { key } | Segment::Enum { variant: key } => {
                            path.push_str(&pointer_segment(key));
                        }
                        Segment::Unknown => {}
                    }
                }
                let message = err.into_inner().to_string();
                // serde reports a missing field at the struct that lacks it;
                // point at the field itself, as a missing parameter is.
                if let Some(field) = message
                    .strip_prefix("missing field `")
                    .and_then(|rest| rest.strip_suffix('`'))
                {
                    path.push_str(&pointer_segment(field));
                }
                self.problem(ArgProblem {
                    path,
                    message: humanize(&message),
                });
                None
            }
        }
    }

    /// The name of parameter `index`; looked up only to report a problem.
    fn name(&self, index: usize) -> &'static str {
        self.names.get(index).copied().unwrap_or_default()
    }

    /// Ends reading: properties no parameter has are problems too, the
    /// first 20 one by one and the rest counted in one more, so ten thousand
    /// stray properties make a short error. By reference, so the reader
    /// stays where it was built (by value, it moved once more per call).
    #[inline]
    pub fn finish(&mut self) -> Result<(), ArgError> {
        match self.trouble.take() {
            None => Ok(()),
            Some(trouble) => Err(trouble.into_error()),
        }
    }

    #[cold]
    fn problem(&mut self, problem: ArgProblem) {
        self.trouble.get_or_insert_default().problems.push(problem);
    }

    #[cold]
    fn problem_at(&mut self, index: usize, message: String) {
        let path = pointer_segment(self.name(index));
        self.problem(ArgProblem { path, message });
    }
}

impl Trouble {
    /// The error; never empty, as trouble is made with something in it.
    #[cold]
    fn into_error(mut self) -> ArgError {
        for key in self.unknown.iter().take(MAX_UNKNOWN_REPORTED) {
            self.problems.push(ArgProblem {
                path: pointer_segment(key),
                message: "unknown property".to_owned(),
            });
        }
        let more = self.unknown.len().saturating_sub(MAX_UNKNOWN_REPORTED);
        if more > 0 {
            self.problems.push(ArgProblem {
                path: String::new(),
                message: format!("{more} more unknown properties"),
            });
        }
        ArgError {
            problems: self.problems,
        }
    }
}

/// Unknown properties reported one by one; the rest are counted.
const MAX_UNKNOWN_REPORTED: usize = 20;

fn describe_value(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::error::MAX_QUOTED;
    use super::*;
    use serde_json::json;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Row {
        id: u32,
    }

    fn read(args: Value) -> Result<(String, Option<u32>, Vec<Row>), ArgError> {
        let mut r = ArgReader::new(args, &["query", "limit", "rows"])?;
        let a = r.take::<String>(0, true);
        let b = r.take::<Option<u32>>(1, false);
        let c = r.take::<Vec<Row>>(2, false);
        r.finish()?;
        match (a, b, c) {
            (Some(a), Some(b), Some(c)) => Ok((a, b, c)),
            _ => unreachable!("finish reports every missing value"),
        }
    }

    #[test]
    fn reads_and_defaults_optionals() {
        let got = read(json!({"query": "x", "rows": []})).unwrap();
        assert_eq!(got, ("x".into(), None, vec![]));
    }

    #[test]
    fn wrong_type_names_the_path() {
        let err = read(json!({"query": "x", "limit": "ten", "rows": []})).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"/limit: expected u32, found string "ten""#
        );
    }

    #[test]
    fn nested_paths_are_json_pointers() {
        let err = read(json!({"query": "x", "rows": [{"id": 1}, {"id": -1}]})).unwrap_err();
        assert_eq!(err.problems()[0].path, "/rows/1/id");
    }

    #[test]
    fn all_problems_are_reported() {
        let err = read(json!({"limit": true, "extra": 1, "a/b": 2})).unwrap_err();
        let paths: Vec<_> = err.problems().iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["/query", "/limit", "/rows", "/a~1b", "/extra"]);
        assert!(err.problems()[0].message.contains("missing required"));
        assert!(err.problems()[3].message.contains("unknown property"));
    }

    #[test]
    fn a_lookup_function_reads_like_the_name_list() {
        let lookup = |key: &str| match key {
            "query" => Some(0),
            "limit" => Some(1),
            // A lookup naming a slot past the end is an unknown property,
            // not a panic.
            "broken" => Some(7),
            _ => None,
        };
        let args = json!({"query": "x", "limit": 3, "broken": 1, "other": 2});
        let mut r = ArgReader::start(&["query", "limit"]);
        r.read(args, lookup).unwrap();
        assert_eq!(r.take::<String>(0, true).as_deref(), Some("x"));
        assert_eq!(r.take::<u32>(1, true), Some(3));
        let err = r.finish().unwrap_err();
        let paths: Vec<_> = err.problems().iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["/broken", "/other"]);
    }

    #[test]
    fn non_objects_are_refused_and_null_is_empty() {
        let err = ArgReader::new(json!([1]), &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/: arguments must be a JSON object, found an array"
        );
        assert!(ArgReader::new(Value::Null, &[]).unwrap().finish().is_ok());
    }

    #[test]
    fn long_values_are_not_quoted_whole() {
        let long = "x".repeat(1_000_000);
        let err = read(json!({"query": "q", "limit": long, "rows": []})).unwrap_err();
        let message = &err.problems()[0].message;
        assert!(message.len() < 400, "{}", message.len());
        assert!(message.ends_with("bytes in all)"), "{message}");
    }

    #[test]
    fn rows_without_required_fields_get_a_path() {
        let err = read(json!({"query": "q", "rows": [{}]})).unwrap_err();
        assert_eq!(err.problems()[0].path, "/rows/0/id");
        assert!(err.problems()[0].message.contains("missing field `id`"));
    }

    #[test]
    fn long_keys_are_cut_in_paths() {
        let key = "é".repeat(1_000);
        let err = read(json!({"query": "q", "rows": [], key: 1})).unwrap_err();
        let path = &err.problems()[0].path;
        assert!(path.len() <= MAX_QUOTED + 4, "{}", path.len());
        assert!(path.starts_with("/é") && path.ends_with('…'), "{path}");
        assert_eq!(pointer_segment("a~b/c"), "/a~0b~1c");
    }

    #[test]
    fn many_unknown_properties_are_counted_not_listed() {
        let mut args = json!({"query": "q", "rows": []});
        for i in 0..1_000 {
            args[format!("x{i:04}")] = json!(i);
        }
        let err = read(args).unwrap_err();
        assert_eq!(err.problems().len(), MAX_UNKNOWN_REPORTED + 1);
        assert_eq!(err.problems()[0].path, "/x0000");
        let last = &err.problems()[MAX_UNKNOWN_REPORTED];
        assert_eq!(last.to_string(), "/: 980 more unknown properties");
        assert!(err.to_string().len() < 1_000, "{err}");
    }
}
