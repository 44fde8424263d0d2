//! The names tools are served under: their wire names, or their tool
//! segments alone for clients that put the server's name in front of every
//! tool name themselves.
//!
//! Rules: short names are decided once, from the whole catalog served, so
//! every session and every user sees the same names; a tool segment that
//! two served tools share is a clash, and a server asked for short names
//! with a clash does not start (the error names the segment and both wire
//! names). A short name maps back to exactly one wire name; with short
//! names on, wire names are not accepted in `tools/call` (a client only
//! calls what it was listed).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use oscova_core::host::PublishedTool;

/// How tools are named to MCP clients.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolNames {
    /// `{plugin}__{owner}__{tool}`, unique by construction (the default).
    #[default]
    Wire,
    /// The tool segment alone, when it is unique among the tools served.
    Short,
}

/// Two served tools share a tool segment, so short names cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "short tool names clash: `{name}` is the tool segment of both `{first}` and `{second}`; \
     serve wire names (`--names wire`) or leave one of the plugins out"
)]
pub struct NameClash {
    /// The contested short name.
    pub name: String,
    /// The wire name that had it first.
    pub first: String,
    /// The wire name that had it too.
    pub second: String,
}

/// The short-name table: short name to wire name and back.
#[derive(Debug, Default)]
pub(crate) struct ShortNames {
    to_wire: HashMap<String, String>,
    to_short: HashMap<String, String>,
}

impl ShortNames {
    /// The table for `tools`, or the first clash.
    pub(crate) fn build<'a>(
        tools: impl IntoIterator<Item = &'a PublishedTool>,
    ) -> Result<Arc<Self>, NameClash> {
        let mut names = Self::default();
        for tool in tools {
            let short = tool.info().name();
            match names.to_wire.entry(short.to_owned()) {
                Entry::Occupied(taken) => {
                    return Err(NameClash {
                        name: short.to_owned(),
                        first: taken.get().clone(),
                        second: tool.wire_name().to_owned(),
                    });
                }
                Entry::Vacant(slot) => {
                    slot.insert(tool.wire_name().to_owned());
                }
            }
            names
                .to_short
                .insert(tool.wire_name().to_owned(), short.to_owned());
        }
        Ok(Arc::new(names))
    }

    /// The wire name a client's name stands for.
    pub(crate) fn wire<'a>(&'a self, short: &str) -> Option<&'a str> {
        self.to_wire.get(short).map(String::as_str)
    }

    /// The short name of a wire name.
    pub(crate) fn short<'a>(&'a self, wire: &str) -> Option<&'a str> {
        self.to_short.get(wire).map(String::as_str)
    }
}
