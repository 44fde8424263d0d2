//! The fields of a message this crate does not model, kept as read.
//!
//! Rules: a field read from JSON text is kept as its raw text and decoded
//! only when a caller asks for it ([`Extra::get`]); a field set in code is
//! kept as the value given. Fields are kept sorted by name, one per name
//! (a later one replaces an earlier one), and written back in that order,
//! exactly as the `Map<String, Value>` they replace wrote them, so a
//! session read and written again is the same JSON. Equality is by
//! meaning (decoded values), not by text. Why: resuming a session reads
//! every answer's `usage` object and the context needs none of them;
//! decoding each into a `Value` tree was about half of a resume's memory
//! and a fifth of its time. Measured with `benches/sessions.rs` (10,000
//! entries, fresh process, from SQLite, load average about 8): peak
//! memory growth 46.7 MiB with the trees, 27.8 MiB raw; 117 ms then,
//! 58 ms now, pi's 99 ms then and 78 ms now in the same runs.

use std::fmt;

use serde::de::DeserializeOwned;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// One kept field: raw text as read, or a value set in code.
#[derive(Clone)]
enum Field {
    Raw(Box<RawValue>),
    Value(Value),
}

impl Field {
    fn decode<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match self {
            Self::Raw(raw) => serde_json::from_str(raw.get()),
            Self::Value(value) => T::deserialize(value),
        }
    }
}

impl Serialize for Field {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Raw(raw) => raw.serialize(serializer),
            Self::Value(value) => value.serialize(serializer),
        }
    }
}

/// The fields of a message kept as read (pi's `api`, `usage`,
/// `stopReason`, a tool result's `details`, ...), written back unchanged.
///
/// ```
/// use oscova_agent::session::Extra;
/// use serde_json::json;
///
/// let mut extra = Extra::new();
/// extra.insert("stopReason", json!("stop"));
/// assert_eq!(extra.get("stopReason"), Some(json!("stop")));
/// assert_eq!(extra.keys().collect::<Vec<_>>(), ["stopReason"]);
/// assert!(extra.remove("stopReason") && extra.is_empty());
/// ```
#[derive(Clone, Default)]
pub struct Extra {
    fields: Vec<(Box<str>, Field)>,
}

impl Extra {
    /// No fields.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether there are no fields.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// How many fields there are.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// The field names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|(k, _)| &**k)
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.fields.binary_search_by(|(k, _)| (**k).cmp(key))
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// `key`'s value, decoded now; `None` when absent (or, for text that
    /// was valid JSON when read, never: it decodes).
    pub fn get(&self, key: &str) -> Option<Value> {
        self.get_as(key).and_then(Result::ok)
    }

    /// `key`'s value decoded as `T` (without building a `Value` first);
    /// `None` when absent.
    ///
    /// # Errors
    ///
    /// When the value is not a `T`.
    pub fn get_as<T: DeserializeOwned>(&self, key: &str) -> Option<Result<T, serde_json::Error>> {
        let at = self.find(key).ok()?;
        self.fields.get(at).map(|(_, field)| field.decode())
    }

    /// Sets `key` to `value`, replacing any earlier value.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) {
        self.put(key.into().into_boxed_str(), Field::Value(value));
    }

    /// Keeps `key`'s raw JSON text as read (the reader's path).
    pub(crate) fn insert_raw(&mut self, key: Box<str>, raw: Box<RawValue>) {
        self.put(key, Field::Raw(raw));
    }

    fn put(&mut self, key: Box<str>, field: Field) {
        // Readers meet keys in the order written, which is sorted for
        // anything this crate or pi (whose keys this order matches for the
        // kept fields) wrote: the common case is a push.
        if self.fields.last().is_none_or(|(last, _)| **last < *key) {
            self.fields.push((key, field));
            return;
        }
        match self.find(&key) {
            Ok(at) => self.fields[at].1 = field,
            Err(at) => self.fields.insert(at, (key, field)),
        }
    }

    /// Removes `key`; whether it was present.
    pub fn remove(&mut self, key: &str) -> bool {
        match self.find(key) {
            Ok(at) => {
                self.fields.remove(at);
                true
            }
            Err(_) => false,
        }
    }
}

impl PartialEq for Extra {
    fn eq(&self, other: &Self) -> bool {
        self.fields.len() == other.fields.len()
            && self
                .fields
                .iter()
                .zip(&other.fields)
                .all(|((ka, a), (kb, b))| {
                    ka == kb
                        && match (a, b) {
                            (Field::Raw(a), Field::Raw(b)) if a.get() == b.get() => true,
                            _ => a.decode::<Value>().ok() == b.decode::<Value>().ok(),
                        }
                })
    }
}

impl fmt::Debug for Extra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (key, field) in &self.fields {
            match field {
                Field::Raw(raw) => map.entry(key, &format_args!("{}", raw.get())),
                Field::Value(value) => map.entry(key, &format_args!("{value}")),
            };
        }
        map.finish()
    }
}

impl Serialize for Extra {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.fields.len()))?;
        for (key, field) in &self.fields {
            map.serialize_entry(&**key, field)?;
        }
        map.end()
    }
}

impl FromIterator<(String, Value)> for Extra {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        let mut extra = Self::new();
        for (key, value) in iter {
            extra.insert(key, value);
        }
        extra
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn kept_sorted_one_per_name_and_written_as_a_map_was() {
        let mut extra = Extra::new();
        extra.insert_raw("usage".into(), raw(r#"{"input":1}"#));
        extra.insert("api", json!("x"));
        extra.insert_raw("stopReason".into(), raw(r#""stop""#));
        extra.insert("api", json!("oscova"));
        assert_eq!(
            extra.keys().collect::<Vec<_>>(),
            ["api", "stopReason", "usage"]
        );
        let written = serde_json::to_string(&extra).unwrap();
        let map: serde_json::Map<String, Value> = serde_json::from_str(&written).unwrap();
        assert_eq!(written, serde_json::to_string(&map).unwrap());
        assert_eq!(serde_json::to_value(&extra).unwrap()["usage"]["input"], 1);
        assert_eq!(extra.get_as::<u64>("api").map(|r| r.is_err()), Some(true));
    }

    #[test]
    fn equal_by_meaning_not_by_text() {
        let mut a = Extra::new();
        a.insert_raw("usage".into(), raw(r#"{ "input" : 1 }"#));
        let mut b = Extra::new();
        b.insert("usage", json!({"input": 1}));
        assert_eq!(a, b);
        b.insert("usage", json!({"input": 2}));
        assert_ne!(a, b);
    }
}
