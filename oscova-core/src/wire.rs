//! Wire names: `{plugin}__{owner}__{tool}`.
//!
//! Every segment is normalised by one rule, here and in the macros alike:
//! `heck` snake_case, then every character outside `[a-z0-9]` becomes `_`,
//! runs of `_` collapse to one, and `_` is trimmed at both ends. An empty
//! segment is invalid. The composed name must fit model APIs
//! (`^[a-zA-Z0-9_-]{1,64}$`), so a name over 64 characters is an error that
//! names the tool and its length, never a silent truncation.

use std::borrow::Borrow;
use std::fmt;

use heck::ToSnakeCase;

/// The longest wire name model APIs accept.
pub const MAX_WIRE_NAME_LEN: usize = 64;

/// The separator between wire-name segments.
pub const SEGMENT_SEPARATOR: &str = "__";

/// Normalises one wire-name segment.
///
/// ```
/// use oscova_core::wire::normalize_segment;
/// assert_eq!(normalize_segment("acme.search"), "acme_search");
/// assert_eq!(normalize_segment("SearchRecords"), "search_records");
/// assert_eq!(normalize_segment("  --Weird..Name--  "), "weird_name");
/// assert_eq!(normalize_segment("!!!"), "");
/// ```
pub fn normalize_segment(raw: &str) -> String {
    let snake = raw.to_snake_case();
    let mut out = String::with_capacity(snake.len());
    let mut last_underscore = true; // trims leading `_`
    for c in snake.chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '_'
        };
        if c == '_' {
            if !last_underscore {
                out.push('_');
            }
            last_underscore = true;
        } else {
            out.push(c);
            last_underscore = false;
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

/// Why a wire name could not be composed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireNameError {
    /// A segment normalised to nothing.
    #[error("the {part} segment {raw:?} normalises to an empty name")]
    EmptySegment {
        /// Which segment: `plugin`, `owner` or `tool`.
        part: &'static str,
        /// The segment as written.
        raw: String,
    },
    /// The composed name is longer than model APIs accept.
    #[error(
        "wire name `{name}` is {len} characters long; model APIs accept at most {max}",
        max = MAX_WIRE_NAME_LEN
    )]
    TooLong {
        /// The composed name.
        name: String,
        /// Its length in characters.
        len: usize,
    },
}

/// A validated, normalised tool name as models see it.
///
/// ```
/// use oscova_core::wire::WireName;
/// let name = WireName::compose("acme.search", "ExampleToolset", "search_records")?;
/// assert_eq!(name.as_str(), "acme_search__example_toolset__search_records");
/// # Ok::<(), oscova_core::wire::WireNameError>(())
/// ```
///
/// `compose` normalises every segment as given; stripping the `Toolset`
/// suffix from a type name is the job of [`owner_segment`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WireName(Box<str>);

impl WireName {
    /// Normalises and joins the three segments, checking each and the length.
    pub fn compose(plugin: &str, owner: &str, tool: &str) -> Result<Self, WireNameError> {
        let mut name = String::with_capacity(plugin.len() + owner.len() + tool.len() + 4);
        for (part, raw) in [("plugin", plugin), ("owner", owner), ("tool", tool)] {
            let seg = normalize_segment(raw);
            if seg.is_empty() {
                return Err(WireNameError::EmptySegment {
                    part,
                    raw: raw.to_owned(),
                });
            }
            if !name.is_empty() {
                name.push_str(SEGMENT_SEPARATOR);
            }
            name.push_str(&seg);
        }
        let len = name.chars().count();
        if len > MAX_WIRE_NAME_LEN {
            return Err(WireNameError::TooLong { name, len });
        }
        Ok(Self(name.into_boxed_str()))
    }

    /// A name the host already checked piece by piece.
    pub(crate) fn from_checked(name: Box<str>) -> Self {
        Self(name)
    }

    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The three segments: plugin, owner, tool.
    pub fn segments(&self) -> (&str, &str, &str) {
        let mut parts = self.0.splitn(3, SEGMENT_SEPARATOR);
        let plugin = parts.next().unwrap_or_default();
        let owner = parts.next().unwrap_or_default();
        let tool = parts.next().unwrap_or_default();
        (plugin, owner, tool)
    }
}

impl fmt::Display for WireName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for WireName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for WireName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// The owner segment of a toolset type: the type name with one trailing
/// `Toolset` removed (kept whole if nothing would be left), normalised.
///
/// ```
/// use oscova_core::wire::owner_segment;
/// assert_eq!(owner_segment("ExampleToolset"), "example");
/// assert_eq!(owner_segment("Toolset"), "toolset");
/// assert_eq!(owner_segment("WeatherToolsetToolset"), "weather_toolset");
/// ```
pub fn owner_segment(type_name: &str) -> String {
    let stripped = match type_name.strip_suffix("Toolset") {
        Some(rest) if !rest.is_empty() => rest,
        _ => type_name,
    };
    normalize_segment(stripped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_like_the_contract() {
        let cases = [
            ("acme.search", "acme_search"),
            ("ExampleToolset", "example_toolset"),
            ("search_records", "search_records"),
            ("example_echo", "example_echo"),
            ("HTTPServer", "http_server"),
            ("a--b", "a_b"),
            ("__x__", "x"),
            ("Grüße", "gr_e"),
            ("v2Api", "v2_api"),
            ("", ""),
            ("___", ""),
        ];
        for (raw, want) in cases {
            assert_eq!(normalize_segment(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn composes_the_seed_example() {
        let name = WireName::compose("acme.search", "example", "search_records").unwrap();
        assert_eq!(name.as_str(), "acme_search__example__search_records");
        assert_eq!(
            name.segments(),
            ("acme_search", "example", "search_records")
        );
    }

    #[test]
    fn rejects_empty_segments_and_long_names() {
        assert_eq!(
            WireName::compose("...", "a", "b"),
            Err(WireNameError::EmptySegment {
                part: "plugin",
                raw: "...".into()
            })
        );
        let long = "x".repeat(60);
        match WireName::compose("p", "o", &long) {
            Err(WireNameError::TooLong { len, .. }) => assert_eq!(len, 66),
            other => panic!("unexpected {other:?}"),
        }
        // Exactly 64 is fine.
        let tool = "t".repeat(64 - "p__o__".len());
        assert_eq!(
            WireName::compose("p", "o", &tool).unwrap().as_str().len(),
            64
        );
    }
}
