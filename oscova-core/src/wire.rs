//! Wire names: `{plugin}__{owner}__{tool}`.
//!
//! The rule lives in the `oscova-wire` crate, which the macros use at
//! compile time and the host at run time, so the two cannot drift apart;
//! this module only re-exports it. Every segment, the plugin id included,
//! is normalised the same way (`heck` snake_case, every character outside
//! `[a-z0-9]` to `_`, runs of `_` collapsed, ends trimmed); an empty
//! segment is invalid, and a name over [`MAX_WIRE_NAME_LEN`] characters is
//! an error that names the tool and its length, never a silent truncation.

pub use oscova_wire::{
    MAX_WIRE_NAME_LEN, SEGMENT_SEPARATOR, WireName, WireNameError, normalize_segment, owner_segment,
};
