//! The wire-name rule of Oscova for Rust, in one place.
//!
//! A tool's wire name, the name a model calls it by, is
//! `{plugin}__{owner}__{tool}`: the plugin id, the toolset's owner and the
//! tool's name, each turned into a *segment* by the same rule, joined by
//! [`SEGMENT_SEPARATOR`]. `#[toolset]` and `#[plugin]` (in `oscova-macros`)
//! apply the rule at compile time, the host (in `oscova-core`) at run time;
//! both call this crate, so the two can never disagree.
//!
//! # 1. Normalise a segment
//!
//! [`normalize_segment`] converts with `heck`'s snake_case, turns every
//! character outside `[a-z0-9]` into `_`, collapses runs of `_` and trims
//! `_` at both ends. Capitals, dots, dashes, spaces, non-ASCII letters and
//! `__` are all normalised, never refused: a plugin id written the Oscova way
//! (`Oscova.LocalSpeech`) is as good as `oscova.local_speech`. Only a name
//! with no letter or digit at all normalises to nothing, and an empty segment
//! is invalid.
//!
//! ```
//! use oscova_wire::normalize_segment;
//!
//! assert_eq!(normalize_segment("acme.search"), "acme_search");
//! assert_eq!(normalize_segment("Oscova.LocalSpeech"), "oscova_local_speech");
//! assert_eq!(normalize_segment("Ceo.Probe-Tools"), "ceo_probe_tools");
//! assert_eq!(normalize_segment("a__b"), "a_b"); // `__` inside a name is normalised
//! assert_eq!(normalize_segment("..."), ""); // nothing left: invalid
//! ```
//!
//! # 2. Name the owner
//!
//! The owner segment of a toolset is its type name with one trailing
//! `Toolset` removed (kept whole if nothing would be left), normalised:
//!
//! ```
//! use oscova_wire::owner_segment;
//!
//! assert_eq!(owner_segment("ExampleToolset"), "example");
//! assert_eq!(owner_segment("Toolset"), "toolset");
//! ```
//!
//! # 3. Compose the wire name
//!
//! [`WireName::compose`] normalises three raw segments and joins them;
//! [`WireName::from_segments`] joins segments that are already normalised
//! (what the macros emit), checking them rather than recomputing them. Both
//! refuse an empty segment and a name longer than [`MAX_WIRE_NAME_LEN`]
//! characters, the limit of model APIs (`^[a-zA-Z0-9_-]{1,64}$`), rather
//! than cutting it.
//!
//! ```
//! use oscova_wire::{WireName, owner_segment};
//!
//! // The seed's example: plugin `acme.search`, type `ExampleToolset`,
//! // display name `search_records`.
//! let owner = owner_segment("ExampleToolset");
//! let name = WireName::compose("acme.search", &owner, "search_records")?;
//! assert_eq!(name, "acme_search__example__search_records");
//! assert_eq!(name.segments(), ("acme_search", "example", "search_records"));
//! # Ok::<(), oscova_wire::WireNameError>(())
//! ```
//!
//! Because a segment never contains `__`, a wire name splits back into its
//! three segments unambiguously ([`WireName::segments`], and
//! [`str::parse`] for a name received as text).

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod name;
mod segment;

pub use name::{SegmentKind, WireName, WireNameError};
pub use segment::{is_normalized_segment, normalize_segment, owner_segment};

/// The longest wire name model APIs accept, in characters.
pub const MAX_WIRE_NAME_LEN: usize = 64;

/// The separator between the segments of a wire name.
///
/// ```
/// assert_eq!(oscova_wire::SEGMENT_SEPARATOR, "__");
/// ```
pub const SEGMENT_SEPARATOR: &str = "__";
