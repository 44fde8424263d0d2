//! Hints about what a tool does ([`ToolAnnotations`]), as MCP's tool
//! annotations carry them.
//!
//! Rules: each hint is `None` until someone says, and a client then
//! applies MCP's defaults; every method is `const`, so `#[toolset]`
//! builds the hints into a tool's `static` metadata.

use serde::{Deserialize, Serialize};

/// Hints about what a tool does, as MCP's tool annotations carry them.
/// Each is `None` until someone says: a client then applies MCP's
/// defaults (not read-only, destructive, not idempotent, open world),
/// and a wrong hint is worse than none.
///
/// `#[tool(read_only, destructive, idempotent, open_world)]` sets them;
/// `open_world` not written follows the network scope (`Internet` is an
/// open world, anything else is not).
///
/// ```
/// use oscova_core::tool::ToolAnnotations;
/// const HINTS: ToolAnnotations = ToolAnnotations::new().with_read_only(true);
/// assert_eq!(HINTS.read_only(), Some(true));
/// assert_eq!(HINTS.destructive(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct ToolAnnotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    destructive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    idempotent: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    open_world: Option<bool>,
}

impl ToolAnnotations {
    /// No hints.
    pub const fn new() -> Self {
        Self {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        }
    }

    /// Says whether the tool only reads (changes nothing around it).
    pub const fn with_read_only(mut self, read_only: bool) -> Self {
        self.read_only = Some(read_only);
        self
    }

    /// Says whether the tool may destroy or overwrite things.
    pub const fn with_destructive(mut self, destructive: bool) -> Self {
        self.destructive = Some(destructive);
        self
    }

    /// Says whether calling it again with the same arguments changes
    /// nothing more.
    pub const fn with_idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = Some(idempotent);
        self
    }

    /// Says whether it reaches an open world (the Internet, other people)
    /// rather than a closed one it owns.
    pub const fn with_open_world(mut self, open_world: bool) -> Self {
        self.open_world = Some(open_world);
        self
    }

    /// Whether the tool only reads, if said.
    pub const fn read_only(&self) -> Option<bool> {
        self.read_only
    }

    /// Whether the tool may destroy or overwrite things, if said.
    pub const fn destructive(&self) -> Option<bool> {
        self.destructive
    }

    /// Whether repeating a call changes nothing more, if said.
    pub const fn idempotent(&self) -> Option<bool> {
        self.idempotent
    }

    /// Whether the tool reaches an open world, if said.
    pub const fn open_world(&self) -> Option<bool> {
        self.open_world
    }

    /// Whether no hint is set.
    pub const fn is_empty(&self) -> bool {
        self.read_only.is_none()
            && self.destructive.is_none()
            && self.idempotent.is_none()
            && self.open_world.is_none()
    }
}
