//! Users' scopes, and their tools as MCP lists them, built on a user's
//! first request and kept in a bounded cache.
//!
//! Rules: at most `capacity` scopes are kept; past it, the one used least
//! recently is dropped (its sessions keep their handle to it, so nothing
//! running is cut short) and built again on that user's next request. A
//! scope is built under the cache's lock, so two first requests of one
//! user build it once; building a scope and converting its tool list is
//! cheap (about half a million instructions for the `oscova` binary's
//! tools, once per user) and calls nothing outside the process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use oscova_core::{PluginHost, UserInfo};

use crate::mcp::handler::Served;
use crate::mcp::names::ShortNames;

/// Turns a user id into the user a scope is built for (time zone and the
/// like from the host's configuration).
pub type UserDirectory = Arc<dyn Fn(&str) -> UserInfo + Send + Sync>;

pub(crate) struct ScopeCache {
    host: PluginHost,
    users: UserDirectory,
    capacity: usize,
    /// Short names, when tools are served under them.
    names: Option<Arc<ShortNames>>,
    inner: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    tick: u64,
    scopes: HashMap<String, (Served, u64)>,
}

impl ScopeCache {
    pub(crate) fn new(
        host: PluginHost,
        users: UserDirectory,
        capacity: usize,
        names: Option<Arc<ShortNames>>,
    ) -> Self {
        Self {
            host,
            users,
            capacity: capacity.max(1),
            names,
            inner: Mutex::new(Entries::default()),
        }
    }

    /// `user`'s scope and tools, built now when not cached.
    pub(crate) fn scope(&self, user: &str) -> Served {
        // A panic while the lock was held cannot leave the map half
        // changed: every change below is one insert or one remove.
        let mut entries = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        entries.tick += 1;
        let tick = entries.tick;
        if let Some((scope, used)) = entries.scopes.get_mut(user) {
            *used = tick;
            return scope.clone();
        }
        if entries.scopes.len() >= self.capacity {
            let oldest = entries
                .scopes
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                entries.scopes.remove(&oldest);
            }
        }
        let scope = self.host.user_scope((self.users)(user));
        for d in scope.diagnostics() {
            tracing::warn!(user, diagnostic = %d, "building a user's scope");
        }
        let served = Served::new(scope, self.names.clone());
        entries
            .scopes
            .insert(user.to_owned(), (served.clone(), tick));
        served
    }

    /// How many scopes are cached.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .scopes
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keeps_at_most_its_capacity_dropping_the_least_recent() {
        let host = PluginHost::builder().no_linked_plugins().build().unwrap();
        let cache = ScopeCache::new(host, Arc::new(|id: &str| UserInfo::new(id)), 2, None);
        let a = cache.scope("a");
        assert_eq!(a.scope.user().id(), "a");
        cache.scope("b");
        cache.scope("a");
        cache.scope("c");
        assert_eq!(cache.len(), 2);
        let inner = cache.inner.lock().unwrap();
        assert!(inner.scopes.contains_key("a"));
        assert!(!inner.scopes.contains_key("b"), "b was the least recent");
    }
}
