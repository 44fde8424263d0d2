//! The list changes servers announce: `notifications/prompts/list_changed`
//! and `notifications/resources/list_changed` as they arrive on a
//! connection.
//!
//! Rules: nothing runs on its own here. A notification is recorded by the
//! connection's own task (the rmcp client handler of `connect.rs`): the
//! change count goes up by one, the server's last change of that list is
//! noted at the new count, and every callback the host registered
//! ([`McpUpstreams::on_list_changed`](crate::McpUpstreams::on_list_changed))
//! is called there and then, in registration order, so a callback must be
//! quick and must not block (raise a signal, send on a channel). A
//! change on a `per_user` server's connection names the user whose
//! connection it came on. Only servers' own announcements are recorded:
//! the host is not told that a list changed because a connection was made
//! or remade.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Which of a server's lists changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChangedList {
    /// Its prompts (`notifications/prompts/list_changed`).
    Prompts,
    /// Its resources (`notifications/resources/list_changed`).
    Resources,
}

/// One list change a server announced.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListChange {
    /// The server's configured name.
    pub server: String,
    /// Which list.
    pub list: ChangedList,
    /// The user whose connection it came on (a `per_user` server), or
    /// `None` for a shared server's connection.
    pub user: Option<String>,
    /// The change count after this change (see
    /// [`McpUpstreams::change_mark`](crate::McpUpstreams::change_mark)).
    pub mark: u64,
}

/// A callback the host registered.
type Callback = Arc<dyn Fn(&ListChange) + Send + Sync>;

/// Every change the plugin's connections announced.
#[derive(Default)]
pub(crate) struct ChangeLog {
    mark: AtomicU64,
    last: Mutex<HashMap<(String, ChangedList), u64>>,
    callbacks: Mutex<Vec<Callback>>,
}

impl std::fmt::Debug for ChangeLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeLog")
            .field("mark", &self.mark())
            .finish_non_exhaustive()
    }
}

impl ChangeLog {
    /// The change count so far.
    pub(crate) fn mark(&self) -> u64 {
        self.mark.load(Ordering::SeqCst)
    }

    /// The count at `server`'s last change of `list`, if it made one.
    pub(crate) fn last(&self, server: &str, list: ChangedList) -> Option<u64> {
        self.last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&(server.to_owned(), list))
            .copied()
    }

    /// Adds a callback called on each change from now on.
    pub(crate) fn subscribe(&self, callback: Callback) {
        self.callbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(callback);
    }

    /// Records a change and calls the callbacks (outside the locks).
    fn record(&self, server: &str, user: Option<&str>, list: ChangedList) {
        let mark = self.mark.fetch_add(1, Ordering::SeqCst).wrapping_add(1);
        self.last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((server.to_owned(), list), mark);
        let change = ListChange {
            server: server.to_owned(),
            list,
            user: user.map(str::to_owned),
            mark,
        };
        let callbacks = self
            .callbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for callback in callbacks {
            callback(&change);
        }
    }
}

/// Where one connection's announcements are recorded: the log, the
/// server and (for a `per_user` connection) the user.
#[derive(Debug, Clone)]
pub(crate) struct ChangeRoute {
    pub(crate) log: Arc<ChangeLog>,
    pub(crate) server: String,
    pub(crate) user: Option<String>,
}

impl ChangeRoute {
    /// Records that the server's `list` changed.
    pub(crate) fn record(&self, list: ChangedList) {
        self.log.record(&self.server, self.user.as_deref(), list);
    }
}
