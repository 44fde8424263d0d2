//! The composed wire name and why one could not be composed.
//!
//! Rules: a [`WireName`] always holds three segments in normal form joined
//! by [`SEGMENT_SEPARATOR`], at most [`MAX_WIRE_NAME_LEN`] characters in
//! all; every constructor checks both, and none cuts a long name short.

use std::borrow::Borrow;
use std::error::Error;
use std::fmt;
use std::str::FromStr;

use crate::segment::{is_normalized_segment, normalize_segment};
use crate::{MAX_WIRE_NAME_LEN, SEGMENT_SEPARATOR};

/// Which of the three segments of a wire name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SegmentKind {
    /// The plugin id.
    Plugin,
    /// The toolset's owner.
    Owner,
    /// The tool's name.
    Tool,
}

impl SegmentKind {
    /// The segments in wire order.
    const ALL: [Self; 3] = [Self::Plugin, Self::Owner, Self::Tool];

    /// The segment's name as messages use it: `plugin`, `owner` or `tool`.
    ///
    /// ```
    /// assert_eq!(oscova_wire::SegmentKind::Owner.as_str(), "owner");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plugin => "plugin",
            Self::Owner => "owner",
            Self::Tool => "tool",
        }
    }
}

impl fmt::Display for SegmentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a wire name could not be composed or parsed.
///
/// ```
/// use oscova_wire::{SegmentKind, WireName, WireNameError};
///
/// let err = WireName::compose("...", "example", "echo").unwrap_err();
/// assert_eq!(err, WireNameError::EmptySegment { part: SegmentKind::Plugin, raw: "...".into() });
/// assert_eq!(err.to_string(), r#"the plugin segment "..." normalises to an empty name"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireNameError {
    /// A segment normalised to nothing.
    EmptySegment {
        /// Which segment.
        part: SegmentKind,
        /// The segment as written.
        raw: String,
    },
    /// A segment that should already be normalised is not.
    NotNormalized {
        /// Which segment.
        part: SegmentKind,
        /// The segment as given.
        segment: String,
    },
    /// A name received as text does not have three segments.
    SegmentCount {
        /// The text.
        name: String,
        /// How many `__`-separated segments it has.
        found: usize,
    },
    /// The composed name is longer than model APIs accept.
    TooLong {
        /// The composed name.
        name: String,
        /// Its length in characters.
        len: usize,
    },
}

impl fmt::Display for WireNameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptySegment { part, raw } => {
                write!(f, "the {part} segment {raw:?} normalises to an empty name")
            }
            Self::NotNormalized { part, segment } => write!(
                f,
                "the {part} segment {segment:?} is not a normalised name ([a-z0-9] runs joined by single `_`)"
            ),
            Self::SegmentCount { name, found } => write!(
                f,
                "`{name}` is not a wire name: it has {found} segment(s) separated by `{SEGMENT_SEPARATOR}`, not three (plugin{SEGMENT_SEPARATOR}owner{SEGMENT_SEPARATOR}tool)"
            ),
            Self::TooLong { name, len } => write!(
                f,
                "wire name `{name}` is {len} characters long; model APIs accept at most {MAX_WIRE_NAME_LEN}"
            ),
        }
    }
}

impl Error for WireNameError {}

/// A validated, normalised tool name as models see it:
/// `{plugin}__{owner}__{tool}`.
///
/// ```
/// use oscova_wire::WireName;
///
/// let name = WireName::compose("acme.search", "ExampleToolset", "search_records")?;
/// assert_eq!(name.as_str(), "acme_search__example_toolset__search_records");
/// # Ok::<(), oscova_wire::WireNameError>(())
/// ```
///
/// `compose` normalises every segment as given; removing the `Toolset`
/// suffix from a type name is the job of [`owner_segment`](crate::owner_segment).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WireName(Box<str>);

impl WireName {
    /// Normalises the three segments and joins them, checking that none is
    /// empty and that the name fits [`MAX_WIRE_NAME_LEN`].
    ///
    /// ```
    /// use oscova_wire::WireName;
    ///
    /// let name = WireName::compose("Oscova.LocalSpeech", "speak", "Say-It")?;
    /// assert_eq!(name, "oscova_local_speech__speak__say_it");
    /// # Ok::<(), oscova_wire::WireNameError>(())
    /// ```
    pub fn compose(plugin: &str, owner: &str, tool: &str) -> Result<Self, WireNameError> {
        let mut segments = [String::new(), String::new(), String::new()];
        for ((slot, part), raw) in segments
            .iter_mut()
            .zip(SegmentKind::ALL)
            .zip([plugin, owner, tool])
        {
            *slot = normalize_segment(raw);
            if slot.is_empty() {
                return Err(WireNameError::EmptySegment {
                    part,
                    raw: raw.to_owned(),
                });
            }
        }
        let [plugin, owner, tool] = &segments;
        Self::join(plugin, owner, tool)
    }

    /// Joins three segments that are already normalised (as the macros
    /// emit them), checking each and the length without normalising again.
    ///
    /// ```
    /// use oscova_wire::{SegmentKind, WireName, WireNameError};
    ///
    /// let name = WireName::from_segments("acme_search", "example", "search_records")?;
    /// assert_eq!(name, "acme_search__example__search_records");
    /// assert!(matches!(
    ///     WireName::from_segments("acme_search", "Example", "search_records"),
    ///     Err(WireNameError::NotNormalized { part: SegmentKind::Owner, .. })
    /// ));
    /// # Ok::<(), WireNameError>(())
    /// ```
    pub fn from_segments(plugin: &str, owner: &str, tool: &str) -> Result<Self, WireNameError> {
        for (part, segment) in SegmentKind::ALL.into_iter().zip([plugin, owner, tool]) {
            if !is_normalized_segment(segment) {
                return Err(WireNameError::NotNormalized {
                    part,
                    segment: segment.to_owned(),
                });
            }
        }
        Self::join(plugin, owner, tool)
    }

    /// Joins checked segments and checks the length.
    fn join(plugin: &str, owner: &str, tool: &str) -> Result<Self, WireNameError> {
        let sep = SEGMENT_SEPARATOR.len();
        let mut name = String::with_capacity(plugin.len() + owner.len() + tool.len() + 2 * sep);
        name.push_str(plugin);
        name.push_str(SEGMENT_SEPARATOR);
        name.push_str(owner);
        name.push_str(SEGMENT_SEPARATOR);
        name.push_str(tool);
        // Normalised segments are ASCII, so bytes are characters.
        let len = name.len();
        if len > MAX_WIRE_NAME_LEN {
            return Err(WireNameError::TooLong { name, len });
        }
        Ok(Self(name.into_boxed_str()))
    }

    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The three segments: plugin, owner, tool.
    ///
    /// ```
    /// let name: oscova_wire::WireName = "acme_search__example__echo".parse()?;
    /// assert_eq!(name.segments(), ("acme_search", "example", "echo"));
    /// # Ok::<(), oscova_wire::WireNameError>(())
    /// ```
    pub fn segments(&self) -> (&str, &str, &str) {
        // A segment never contains the separator, so the split is exact.
        let mut parts = self.0.splitn(3, SEGMENT_SEPARATOR);
        let plugin = parts.next().unwrap_or_default();
        let owner = parts.next().unwrap_or_default();
        let tool = parts.next().unwrap_or_default();
        (plugin, owner, tool)
    }
}

/// Parses a complete wire name, such as one a model sent back: three
/// normalised segments joined by `__`, at most [`MAX_WIRE_NAME_LEN`]
/// characters. Nothing is normalised here; a name that is not already a
/// wire name is an error.
///
/// ```
/// use oscova_wire::{WireName, WireNameError};
///
/// let name: WireName = "acme_search__example__echo".parse()?;
/// assert_eq!(name.as_str(), "acme_search__example__echo");
/// assert!(matches!(
///     "acme_search__echo".parse::<WireName>(),
///     Err(WireNameError::SegmentCount { found: 2, .. })
/// ));
/// # Ok::<(), WireNameError>(())
/// ```
impl FromStr for WireName {
    type Err = WireNameError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = name.split(SEGMENT_SEPARATOR).collect();
        match parts.as_slice() {
            [plugin, owner, tool] => Self::from_segments(plugin, owner, tool),
            _ => Err(WireNameError::SegmentCount {
                name: name.to_owned(),
                found: parts.len(),
            }),
        }
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

impl PartialEq<str> for WireName {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for WireName {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn plugin_ids_are_segments_like_any_other() {
        for (id, segment) in [
            ("Oscova.LocalSpeech", "oscova_local_speech"),
            ("Ceo.Probe-Tools", "ceo_probe_tools"),
            ("acme__search", "acme_search"),
        ] {
            let name = WireName::compose(id, "o", "t").unwrap();
            assert_eq!(name.segments().0, segment, "{id}");
        }
    }

    #[test]
    fn rejects_empty_segments() {
        for (raw, part) in [
            (("...", "a", "b"), SegmentKind::Plugin),
            (("a", "__", "b"), SegmentKind::Owner),
            (("a", "b", ""), SegmentKind::Tool),
        ] {
            let (plugin, owner, tool) = raw;
            match WireName::compose(plugin, owner, tool) {
                Err(WireNameError::EmptySegment { part: p, .. }) => assert_eq!(p, part),
                other => panic!("{raw:?}: unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn rejects_names_over_64_characters_and_keeps_exactly_64() {
        let long = "x".repeat(60);
        match WireName::compose("p", "o", &long) {
            Err(WireNameError::TooLong { len, ref name }) => {
                assert_eq!(len, 66);
                assert_eq!(name.len(), 66, "the whole name is reported, not a cut one");
            }
            other => panic!("unexpected {other:?}"),
        }
        let tool = "t".repeat(MAX_WIRE_NAME_LEN - "p__o__".len());
        assert_eq!(
            WireName::compose("p", "o", &tool).unwrap().as_str().len(),
            MAX_WIRE_NAME_LEN
        );
        // Normalising shortens before the length is measured.
        let padded = format!("__{tool}__");
        assert!(WireName::compose("p", "o", &padded).is_ok());
    }

    #[test]
    fn from_segments_checks_without_normalising() {
        assert_eq!(
            WireName::from_segments("a", "b", "c").unwrap(),
            WireName::compose("a", "b", "c").unwrap()
        );
        for (segments, part, bad) in [
            (("a.b", "o", "t"), SegmentKind::Plugin, "a.b"),
            (("a", "o__x", "t"), SegmentKind::Owner, "o__x"),
            (("a", "o", "T"), SegmentKind::Tool, "T"),
            (("a", "o", ""), SegmentKind::Tool, ""),
        ] {
            let (plugin, owner, tool) = segments;
            match WireName::from_segments(plugin, owner, tool) {
                Err(WireNameError::NotNormalized { part: p, segment }) => {
                    assert_eq!((p, segment.as_str()), (part, bad), "{segments:?}");
                }
                other => panic!("{segments:?}: unexpected {other:?}"),
            }
        }
        let tool = "t".repeat(MAX_WIRE_NAME_LEN);
        assert!(matches!(
            WireName::from_segments("p", "o", &tool),
            Err(WireNameError::TooLong { .. })
        ));
    }

    #[test]
    fn parses_exactly_three_normalised_segments() {
        let name: WireName = "test_alpha__greet__hello".parse().unwrap();
        assert_eq!(name.segments(), ("test_alpha", "greet", "hello"));
        for (text, found) in [("a__b", 2), ("a__b__c__d", 4), ("abc", 1)] {
            match text.parse::<WireName>() {
                Err(WireNameError::SegmentCount { found: n, .. }) => assert_eq!(n, found, "{text}"),
                other => panic!("{text}: unexpected {other:?}"),
            }
        }
        // `____` is two separators around an empty segment.
        assert!(matches!(
            "a____b".parse::<WireName>(),
            Err(WireNameError::NotNormalized {
                part: SegmentKind::Owner,
                ..
            })
        ));
        assert!(matches!(
            "Acme__b__c".parse::<WireName>(),
            Err(WireNameError::NotNormalized {
                part: SegmentKind::Plugin,
                ..
            })
        ));
    }

    #[test]
    fn messages_name_the_problem() {
        let too_long = WireName::compose("p", "o", &"x".repeat(80)).unwrap_err();
        assert_eq!(
            too_long.to_string(),
            format!(
                "wire name `p__o__{}` is 86 characters long; model APIs accept at most 64",
                "x".repeat(80)
            )
        );
        let count = "a__b".parse::<WireName>().unwrap_err();
        assert_eq!(
            count.to_string(),
            "`a__b` is not a wire name: it has 2 segment(s) separated by `__`, not three (plugin__owner__tool)"
        );
        let not_normal = WireName::from_segments("a", "B", "c").unwrap_err();
        assert_eq!(
            not_normal.to_string(),
            r#"the owner segment "B" is not a normalised name ([a-z0-9] runs joined by single `_`)"#
        );
    }
}
