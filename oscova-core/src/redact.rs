//! Redaction of secret values the host knows.
//!
//! The host learns secret values as it works (API keys it resolved, a user's credential
//! fetched mid-call), and text that leaves it (tool output, logs, model messages) must
//! not carry them. A [`Redactor`] holds those values and replaces them by [`REDACTED`].
//! The rules:
//!
//! - Matching is by value, never by pattern: only what is known to be secret is touched,
//!   so ordinary text that merely looks like a key survives. A value is also found in the
//!   forms the host's own code derives from it (see `matching.rs`): percent-encoded in
//!   either hex case, with `+` for a space, with `/` for `\` (URL parsing), and in any
//!   ASCII case (URL parsing lower-cases host names). So a passphrase in a URL's query,
//!   userinfo or path, or a key in a host name, is caught after `reqwest` or `url` has
//!   serialised it. A text that differs from a secret only in ASCII case is redacted too:
//!   that errs on the side of hiding.
//! - Text that arrives in pieces (a streamed model answer) goes through a
//!   [`RedactStream`], which holds back a tail that could be the start of a secret, so a
//!   secret split across pieces is still caught.
//! - Values are trimmed of surrounding whitespace, since a value read from a file or a
//!   prompt often carries a newline the text will not; values shorter than 4 characters
//!   are ignored, because redacting `a` or `no` would destroy the text while protecting
//!   nothing worth protecting.
//! - Every byte covered by any occurrence of any known value is replaced, and overlapping
//!   occurrences become one [`REDACTED`]. A secret that contains another is thus replaced
//!   whole, and two secrets that overlap leave no fragment of either; this is the intent
//!   of "longest first" without its ordering artefacts.
//! - Matching runs once over the original text, so the replacement is never matched again
//!   (a known value such as `DACT` does not mangle `[REDACTED]` it just produced).
//! - Values are only ever added: something that was once secret stays redacted.
//! - When nothing matches, nothing is allocated, and when nothing is known, no lock is
//!   taken: redaction sits on every output path.

mod matching;
mod stream;

pub use stream::RedactStream;

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::{Map, Value};

/// The replacement text.
pub const REDACTED: &str = "[REDACTED]";

/// Shorter values are not treated as secrets.
const MIN_SECRET_CHARS: usize = 4;

#[derive(Default)]
struct Inner {
    /// Set once the first value is added; lets the empty case skip the lock.
    known: AtomicBool,
    /// Longest first, then by value, without duplicates.
    secrets: RwLock<Vec<Box<str>>>,
}

/// A set of secret values a host knows, shared (cheap Clone, Arc inside, thread-safe),
/// to which values can be added at any time (a user's credential resolved mid-call).
///
/// Clones share the same set: a value added through one is redacted by all.
#[derive(Clone, Default)]
pub struct Redactor {
    inner: Arc<Inner>,
}

impl Redactor {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a secret value; empty values and values shorter than 4 characters are ignored
    /// (redacting "a" would destroy text). Duplicates ignored.
    ///
    /// Surrounding whitespace is trimmed first and the length counted in characters, so
    /// `"abc\n"` is ignored and `"äöüß"` is kept.
    pub fn add(&self, secret: &str) {
        let secret = secret.trim();
        if secret.chars().count() < MIN_SECRET_CHARS {
            return;
        }
        // The data is a plain list that no panic can leave half-updated, so a poisoned
        // lock is still safe to use; refusing to redact would be the worse outcome.
        let mut secrets = self
            .inner
            .secrets
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let position = secrets.binary_search_by(|known| {
            secret
                .len()
                .cmp(&known.len())
                .then_with(|| (**known).cmp(secret))
        });
        if let Err(index) = position {
            secrets.insert(index, secret.into());
        }
        self.inner.known.store(true, Ordering::Release);
    }

    /// Whether no value is known yet; cheap, takes no lock.
    #[inline]
    pub fn is_empty(&self) -> bool {
        !self.inner.known.load(Ordering::Acquire)
    }

    /// Replace every occurrence of every known secret by REDACTED. Longer secrets first so
    /// a secret containing another is fully replaced. Returns Cow::Borrowed when nothing
    /// matched (no allocation).
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.is_empty() || text.is_empty() {
            return Cow::Borrowed(text);
        }
        let spans = self.with_secrets(|secrets| covered_spans(text, secrets).0);
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        Cow::Owned(replace_spans(text, &spans))
    }

    /// Runs `f` over the known values, longest first.
    fn with_secrets<R>(&self, f: impl FnOnce(&[Box<str>]) -> R) -> R {
        let secrets = self
            .inner
            .secrets
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        f(&secrets)
    }

    /// Redact every string (and object key) inside a JSON value in place; returns whether
    /// anything changed.
    ///
    /// Two keys of one object that both redact to the same text would collide; the later
    /// ones get a ` (2)`, ` (3)`… suffix so that no value is lost. Keys that change are
    /// reinserted after the unchanged ones, which matters only for order-preserving maps.
    pub fn redact_json(&self, value: &mut Value) -> bool {
        if self.is_empty() {
            return false;
        }
        match value {
            Value::String(text) => self.redact_string(text),
            Value::Array(items) => items
                .iter_mut()
                .fold(false, |changed, item| self.redact_json(item) | changed),
            Value::Object(map) => self.redact_object(map),
            Value::Null | Value::Bool(_) | Value::Number(_) => false,
        }
    }

    fn redact_string(&self, text: &mut String) -> bool {
        let redacted = match self.redact(text) {
            Cow::Borrowed(_) => return false,
            Cow::Owned(redacted) => redacted,
        };
        *text = redacted;
        true
    }

    fn redact_object(&self, map: &mut Map<String, Value>) -> bool {
        let mut changed = map
            .values_mut()
            .fold(false, |changed, item| self.redact_json(item) | changed);
        if !map
            .keys()
            .any(|key| matches!(self.redact(key), Cow::Owned(_)))
        {
            return changed;
        }

        let mut renamed = Vec::new();
        for (key, item) in std::mem::take(map) {
            let new_key = match self.redact(&key) {
                Cow::Borrowed(_) => None,
                Cow::Owned(new_key) => Some(new_key),
            };
            match new_key {
                None => {
                    map.insert(key, item);
                }
                Some(new_key) => renamed.push((new_key, item)),
            }
        }
        for (key, item) in renamed {
            let key = free_key(map, key);
            map.insert(key, item);
            changed = true;
        }
        changed
    }
}

/// What hides known secrets in text on its way out: a [`Redactor`] (its own values), or a
/// [`UserScope`](crate::UserScope), whose redaction covers the scope's values and the
/// host's. Anything that leaves for a model or lands in a store is redacted with the
/// user's scope, so a credential the host configured is hidden there as in tool output.
pub trait Redact: Send + Sync {
    /// `text` with every known value replaced by [`REDACTED`].
    fn redact_text<'a>(&self, text: &'a str) -> Cow<'a, str>;
}

impl Redact for Redactor {
    fn redact_text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.redact(text)
    }
}

impl fmt::Debug for Redactor {
    // The values are exactly what must never be printed; the count is enough to debug.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self
            .inner
            .secrets
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("Redactor")
            .field("secrets", &count)
            .finish_non_exhaustive()
    }
}

/// `text` with every span (sorted, disjoint) replaced by [`REDACTED`].
fn replace_spans(text: &str, spans: &[(usize, usize)]) -> String {
    let mut redacted = String::with_capacity(text.len());
    let mut position = 0;
    for &(start, end) in spans {
        // Spans start and end on character boundaries, so these slices exist.
        redacted.push_str(text.get(position..start).unwrap_or_default());
        redacted.push_str(REDACTED);
        position = end;
    }
    redacted.push_str(text.get(position..).unwrap_or_default());
    redacted
}

/// The byte ranges of `text` covered by any occurrence of any secret, sorted, with
/// overlapping ranges merged, and where the earliest occurrence that the end of the text
/// cuts short starts, if any. Occurrences of one secret may overlap each other too
/// (`aaaa` in `aaaaa`), so every position is tried.
fn covered_spans(text: &str, secrets: &[Box<str>]) -> (Vec<(usize, usize)>, Option<usize>) {
    let mut spans = Vec::new();
    let mut partial: Option<usize> = None;
    for secret in secrets {
        if let Some(start) = matching::occurrences(text, secret, &mut spans) {
            partial = Some(partial.map_or(start, |p| p.min(start)));
        }
    }
    if spans.len() < 2 {
        return (spans, partial);
    }
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start < last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    (merged, partial)
}

/// `key`, or `key (n)` for the first `n` from 2 that the map does not hold yet.
fn free_key(map: &Map<String, Value>, key: String) -> String {
    if !map.contains_key(&key) {
        return key;
    }
    (2_usize..)
        .map(|n| format!("{key} ({n})"))
        .find(|candidate| !map.contains_key(candidate))
        .unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn redactor(secrets: &[&str]) -> Redactor {
        let redactor = Redactor::new();
        for secret in secrets {
            redactor.add(secret);
        }
        redactor
    }

    #[test]
    fn redacts_text() {
        let r = redactor(&["sk-live-123456"]);
        assert_eq!(
            r.redact("key is sk-live-123456, keep it"),
            "key is [REDACTED], keep it"
        );
        assert_eq!(r.redact("sk-live-123456"), REDACTED);
    }

    #[test]
    fn redacts_every_occurrence() {
        let r = redactor(&["hunter22", "ghp_abcd"]);
        assert_eq!(
            r.redact("hunter22 ghp_abcd hunter22hunter22 and ghp_abcd."),
            "[REDACTED] [REDACTED] [REDACTED][REDACTED] and [REDACTED]."
        );
    }

    #[test]
    fn secret_containing_another_is_replaced_whole() {
        // Added shortest first to show the order of `add` does not matter.
        let r = redactor(&["token", "my-token-123"]);
        assert_eq!(r.redact("a my-token-123 b"), "a [REDACTED] b");
        assert_eq!(r.redact("a token b"), "a [REDACTED] b");
    }

    #[test]
    fn overlapping_secrets_leave_no_fragment() {
        let r = redactor(&["abcdef", "defghi"]);
        assert_eq!(r.redact("xx abcdefghi yy"), "xx [REDACTED] yy");
        let r = redactor(&["aaaa"]);
        assert_eq!(r.redact("-aaaaaaa-"), "-[REDACTED]-");
    }

    #[test]
    fn replacement_is_not_matched_again() {
        let r = redactor(&["xyzw1234", "DACT"]);
        assert_eq!(r.redact("xyzw1234"), REDACTED);
        // In the original text the value is redacted wherever it is.
        assert_eq!(r.redact("[REDACTED]"), "[RE[REDACTED]ED]");
    }

    #[test]
    fn short_empty_and_duplicate_values_are_ignored() {
        let r = redactor(&["", "a", "abc", "  \n", "äöü", " abc \n"]);
        assert!(r.is_empty());
        assert_eq!(r.redact("a abc äöü"), "a abc äöü");
        r.add("abcd");
        r.add("abcd");
        r.add(" abcd\n");
        assert!(!r.is_empty());
        assert_eq!(format!("{r:?}"), "Redactor { secrets: 1, .. }");
        r.add("äöüß");
        assert_eq!(r.redact("x äöüß y"), "x [REDACTED] y");
    }

    #[test]
    fn trimmed_value_is_matched() {
        let r = redactor(&["s3cr3t-value\n"]);
        assert_eq!(r.redact("\"s3cr3t-value\""), "\"[REDACTED]\"");
    }

    #[test]
    fn unicode_around_and_inside_the_secret() {
        let r = redactor(&["pässwörd-🔑42", "éééé"]);
        assert_eq!(
            r.redact("Schlüssel: pässwörd-🔑42 ✓ — ünd 日本語pässwörd-🔑42"),
            "Schlüssel: [REDACTED] ✓ — ünd 日本語[REDACTED]"
        );
        assert_eq!(r.redact("ñéééééñ"), "ñ[REDACTED]ñ");
    }

    #[test]
    fn nothing_matched_borrows() {
        let empty = Redactor::new();
        assert!(matches!(
            empty.redact("anything"),
            Cow::Borrowed("anything")
        ));
        let r = redactor(&["sk-secret"]);
        assert!(matches!(r.redact("harmless"), Cow::Borrowed("harmless")));
        assert!(matches!(r.redact(""), Cow::Borrowed("")));
        assert!(matches!(r.redact("sk-secret"), Cow::Owned(_)));
    }

    #[test]
    fn redacts_json_in_place() {
        let r = redactor(&["sk-secret", "user-pass"]);
        let mut value = json!({
            "plain": "nothing here",
            "nested": {
                "list": ["a sk-secret b", 42, null, true, ["user-pass", {"deep": "x user-pass"}]],
                "sk-secret": "key is a secret",
            },
            "number": 1.5,
        });
        assert!(r.redact_json(&mut value));
        assert_eq!(
            value,
            json!({
                "plain": "nothing here",
                "nested": {
                    "list": ["a [REDACTED] b", 42, null, true, ["[REDACTED]", {"deep": "x [REDACTED]"}]],
                    "[REDACTED]": "key is a secret",
                },
                "number": 1.5,
            })
        );
        assert!(!r.redact_json(&mut value), "nothing left to change");
    }

    #[test]
    fn json_key_collisions_keep_every_value() {
        let r = redactor(&["key-one", "key-two"]);
        let mut value = json!({"key-one": 1, "key-two": 2, "[REDACTED]": 0});
        assert!(r.redact_json(&mut value));
        let map = value.as_object().expect("object");
        assert_eq!(map.len(), 3);
        assert_eq!(map.get("[REDACTED]"), Some(&json!(0)));
        let mut moved: Vec<_> = [map.get("[REDACTED] (2)"), map.get("[REDACTED] (3)")]
            .into_iter()
            .map(|v| v.and_then(Value::as_i64))
            .collect();
        moved.sort();
        assert_eq!(moved, [Some(1), Some(2)]);
    }

    #[test]
    fn json_without_matches_is_unchanged() {
        let r = Redactor::new();
        let mut value = json!({"a": ["b", {"c": "d"}]});
        let before = value.clone();
        assert!(!r.redact_json(&mut value));
        r.add("zzzz");
        assert!(!r.redact_json(&mut value));
        assert_eq!(value, before);
    }

    #[test]
    fn debug_prints_no_value() {
        let r = redactor(&["sk-very-secret", "another-one"]);
        let text = format!("{r:?}");
        assert!(!text.contains("sk-very-secret") && !text.contains("another-one"));
        assert!(text.contains('2'));
    }

    /// The forms the host's own code makes of a secret (percent-encoding in
    /// both hex cases, `+` for a space, URL normalisation, lower-cased host
    /// names), each as it reaches a tool result, an error or a log line.
    #[test]
    fn derived_forms_table() {
        let passphrase = "correct horse/Bättery:9@x";
        let host_key = "TenantKey-7Q2x";
        let r = redactor(&[passphrase, host_key]);
        let url = |text: &str| reqwest::Url::parse(text).unwrap().to_string();
        let cases: Vec<(&str, String)> = vec![
            ("literal", format!("k={passphrase}")),
            (
                "percent, upper hex",
                "k=correct%20horse%2FB%C3%A4ttery%3A9%40x".into(),
            ),
            (
                "percent, lower hex",
                "k=correct%20horse%2fb%c3%a4ttery%3a9%40x".into(),
            ),
            (
                "form encoding",
                "k=correct+horse%2FB%C3%A4ttery%3A9%40x".into(),
            ),
            (
                "partly encoded",
                "k=correct horse/B%C3%A4ttery:9%40x".into(),
            ),
            (
                "in a query, as reqwest serialises it",
                url(&format!("http://h/?k={passphrase}")),
            ),
            ("in a path", url(&format!("http://h/{passphrase}"))),
            (
                "in userinfo",
                url(&format!(
                    "http://u:{}@h/",
                    passphrase.replace('@', "%40").replace('/', "%2F")
                )),
            ),
            (
                "a host name, lower-cased",
                url(&format!("http://{host_key}.example/")),
            ),
            (
                "an HTTP error naming the host",
                format!(
                    "error sending request for url (http://{}.example/)",
                    host_key.to_ascii_lowercase()
                ),
            ),
            (
                "upper case",
                format!("KEY {}", host_key.to_ascii_uppercase()),
            ),
        ];
        let failures: Vec<String> = cases
            .iter()
            .filter_map(|(what, text)| {
                let redacted = r.redact(text);
                let leaked = ["horse", "ttery", "enantkey", "ENANTKEY"]
                    .iter()
                    .any(|fragment| redacted.contains(fragment));
                let changed = matches!(redacted, Cow::Owned(_));
                (leaked || !changed).then(|| format!("{what}: {text:?} -> {redacted:?}"))
            })
            .collect();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        // Text around an encoded secret is kept as it was.
        assert_eq!(
            r.redact("a=1&k=correct+horse%2fb%C3%A4ttery%3A9%40x&b=2"),
            "a=1&k=[REDACTED]&b=2"
        );
        // Near misses are not secrets.
        for text in [
            "correct horse/Bättery:9@y",
            "TenantKey-7Q2",
            "%%%%",
            "correct%2",
        ] {
            assert!(matches!(r.redact(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn clones_share_values_across_threads() {
        let r = Redactor::new();
        let clone = r.clone();
        std::thread::spawn(move || clone.add("added-later"))
            .join()
            .expect("thread");
        assert_eq!(r.redact("x added-later"), "x [REDACTED]");
    }
}
