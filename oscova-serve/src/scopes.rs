//! Users' scopes, and whatever a front end derives from one, built on a
//! user's first request and kept in a bounded cache.
//!
//! Rules: at most `capacity` entries are kept; past it, the one used least
//! recently is dropped (its sessions keep their handle to it, so nothing
//! running is cut short) and built again on that user's next request. An
//! entry is built under the cache's lock, so two first requests of one
//! user build it once; building a scope is cheap and calls nothing outside
//! the process, and so must the front end's own part be (the MCP server
//! converts the scope's tool list: about half a million instructions for
//! the `oscova` binary's tools, once per user). The scope's diagnostics are
//! logged as warnings when it is built.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use oscova_core::{PluginHost, UserInfo, UserScope};

/// Turns a user id into the user a scope is built for (time zone and the
/// like from the host's configuration).
pub type UserDirectory = Arc<dyn Fn(&str) -> UserInfo + Send + Sync>;

/// What a front end keeps per user, made from the user's fresh scope.
type Make<T> = Box<dyn Fn(UserScope) -> T + Send + Sync>;

/// A bounded cache of what a front end serves each user from: `T` is made
/// from the user's scope once and cloned out on every request (make it an
/// `Arc` or a cheap handle).
///
/// ```
/// use std::sync::Arc;
/// use oscova_core::{PluginHost, UserInfo, UserScope};
/// use oscova_serve::ScopeCache;
///
/// let host = PluginHost::builder().no_linked_plugins().build()?;
/// let users = Arc::new(|id: &str| UserInfo::new(id));
/// let cache = ScopeCache::new(host, users, 2, |scope: UserScope| scope);
/// assert_eq!(cache.get("alice").user().id(), "alice");
/// assert_eq!(cache.len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ScopeCache<T> {
    host: PluginHost,
    users: UserDirectory,
    capacity: usize,
    make: Make<T>,
    inner: Mutex<Entries<T>>,
}

impl<T> std::fmt::Debug for ScopeCache<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopeCache")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

struct Entries<T> {
    tick: u64,
    scopes: HashMap<String, (T, u64)>,
}

impl<T: Clone> ScopeCache<T> {
    /// A cache of at most `capacity` users' entries (at least 1), each made
    /// by `make` from the scope `host` builds for the user `users` gives.
    pub fn new(
        host: PluginHost,
        users: UserDirectory,
        capacity: usize,
        make: impl Fn(UserScope) -> T + Send + Sync + 'static,
    ) -> Self {
        Self {
            host,
            users,
            capacity: capacity.max(1),
            make: Box::new(make),
            inner: Mutex::new(Entries {
                tick: 0,
                scopes: HashMap::new(),
            }),
        }
    }

    /// `user`'s entry, built now when not cached.
    pub fn get(&self, user: &str) -> T {
        // A panic while the lock was held cannot leave the map half
        // changed: every change below is one insert or one remove.
        let mut entries = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        entries.tick += 1;
        let tick = entries.tick;
        if let Some((entry, used)) = entries.scopes.get_mut(user) {
            *used = tick;
            return entry.clone();
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
        let entry = (self.make)(scope);
        entries
            .scopes
            .insert(user.to_owned(), (entry.clone(), tick));
        entry
    }

    /// How many users' entries are cached.
    pub fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .scopes
            .len()
    }

    /// Whether no entry is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keeps_at_most_its_capacity_dropping_the_least_recent() {
        let host = PluginHost::builder().no_linked_plugins().build().unwrap();
        let cache = ScopeCache::new(host, Arc::new(|id: &str| UserInfo::new(id)), 2, |s| s);
        let a = cache.get("a");
        assert_eq!(a.user().id(), "a");
        cache.get("b");
        cache.get("a");
        cache.get("c");
        assert_eq!(cache.len(), 2);
        let inner = cache.inner.lock().unwrap();
        assert!(inner.scopes.contains_key("a"));
        assert!(!inner.scopes.contains_key("b"), "b was the least recent");
    }
}
