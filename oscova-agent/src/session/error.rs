//! Why a session operation failed.
//!
//! Rules: one enum for the session module and every store, so a host
//! handles a conflict the same way whichever store it runs on.
//! [`SessionError::Changed`] is the optimistic-concurrency refusal: nothing
//! of the refused write was kept, and the cure is to resume the session
//! (read it again) and decide anew. A session of another user is
//! [`SessionError::NotFound`], word for word as a missing one, so no
//! answer tells whether someone else's session exists.

use super::id::EntryId;

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// No session with this id or name belongs to the user.
    #[error("no session `{session}` for this user")]
    NotFound {
        /// The id or name asked for.
        session: String,
    },
    /// The user already has a session with this name.
    #[error("this user already has a session named `{name}`")]
    NameTaken {
        /// The name.
        name: String,
    },
    /// Another writer moved the session's leaf since this writer read it.
    #[error(
        "the session changed; resume it (its leaf is now {}, this writer expected {}); nothing of this write was kept",
        show(.actual.as_ref()),
        show(.expected.as_ref())
    )]
    Changed {
        /// The leaf the writer expected.
        expected: Option<EntryId>,
        /// The leaf the store holds.
        actual: Option<EntryId>,
    },
    /// The entries do not extend the session's tree (an unknown parent, a
    /// broken chain, an id already used); nothing was kept.
    #[error("the entries cannot be appended: {0}; nothing was kept")]
    InvalidAppend(String),
    /// No entry with this id is in the session.
    #[error("no entry `{0}` in this session")]
    UnknownEntry(EntryId),
    /// A session id that breaks the rule (letters, digits, `.`, `_`, `-`).
    #[error("`{0}` is not a session id: use letters and digits, with `.`, `_` or `-` inside")]
    InvalidId(String),
    /// A stored entry could not be read back.
    #[error("session `{session}` holds an entry that cannot be read: {reason}")]
    Corrupt {
        /// The session id.
        session: String,
        /// What was wrong.
        reason: String,
    },
    /// Another process holds the session's lease: it is running the
    /// session now (`SessionStore::lease`).
    #[error(
        "session `{session}` is in use by another process, which holds its lease; \
         try again when it ends (a lease a stopped process held lapses within {ttl_secs} s)"
    )]
    Leased {
        /// The session's id.
        session: String,
        /// The lease's length, in seconds.
        ttl_secs: u64,
        /// Who holds it (`SessionLease`'s holders: `HOST:PID:RANDOM`).
        holder: String,
    },
    /// The operating system's random source failed.
    #[error("no random id could be drawn: {0}")]
    Random(String),
    /// No folder for the default store: neither `XDG_DATA_HOME` nor `HOME`
    /// is set.
    #[error(
        "no data folder for the session store: set XDG_DATA_HOME or HOME, or give the store a path"
    )]
    NoDataDir,
    /// The store's back end failed.
    #[error("the {backend} session store failed: {source}")]
    Backend {
        /// `sqlite`, `postgres`, ...
        backend: &'static str,
        /// The back end's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

fn show(leaf: Option<&EntryId>) -> String {
    leaf.map_or_else(|| "empty".to_owned(), |id| format!("`{id}`"))
}

impl SessionError {
    /// Whether this is the optimistic-concurrency refusal
    /// ([`SessionError::Changed`]).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Changed { .. })
    }
}
