//! Each user's bound on calls in flight, shared by all the user's
//! sessions and requests.
//!
//! Rules: one semaphore per user id, handed to the user's cached scope
//! when it is built; it lives while anything holds it (the cached scope,
//! a session's handler, a running call's permit) and is forgotten after,
//! so a user whose scope left the cache while calls ran finds the same
//! bound, with those calls still counted, when it is built again. Ids no
//! longer held are swept when the table has doubled since the last sweep.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use tokio::sync::Semaphore;

/// The per-user bounds of a server.
#[derive(Debug)]
pub(crate) struct UserBounds {
    max: usize,
    inner: Mutex<Table>,
}

#[derive(Debug)]
struct Table {
    users: HashMap<String, Weak<Semaphore>>,
    /// Sweep when the table reaches this size.
    sweep_at: usize,
}

/// The least size the table is swept at.
const SWEEP_FROM: usize = 64;

impl UserBounds {
    /// Bounds of `max` calls per user (checked by the server's builder).
    pub(crate) fn new(max: usize) -> Self {
        Self {
            max: max.min(Semaphore::MAX_PERMITS),
            inner: Mutex::new(Table {
                users: HashMap::new(),
                sweep_at: SWEEP_FROM,
            }),
        }
    }

    /// The bound's size.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// `user`'s bound: the one still held, else a fresh one.
    pub(crate) fn of(&self, user: &str) -> Arc<Semaphore> {
        // Every change under the lock is one insert or one sweep.
        let mut table = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(live) = table.users.get(user).and_then(Weak::upgrade) {
            return live;
        }
        if table.users.len() >= table.sweep_at {
            table.users.retain(|_, bound| bound.strong_count() > 0);
            table.sweep_at = (table.users.len() * 2).max(SWEEP_FROM);
        }
        let fresh = Arc::new(Semaphore::new(self.max));
        table.users.insert(user.to_owned(), Arc::downgrade(&fresh));
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_held_is_found_again_and_one_let_go_is_swept() {
        let bounds = UserBounds::new(2);
        let alice = bounds.of("alice");
        let _permit = alice.clone().try_acquire_owned().unwrap();
        assert!(Arc::ptr_eq(&alice, &bounds.of("alice")));
        drop(alice);
        let again = bounds.of("alice");
        assert_eq!(
            again.available_permits(),
            1,
            "the running call still counts"
        );
        for i in 0..SWEEP_FROM * 2 {
            drop(bounds.of(&format!("user{i}")));
        }
        let table = bounds.inner.lock().unwrap();
        assert!(table.users.len() <= SWEEP_FROM, "{}", table.users.len());
        assert!(table.users.contains_key("alice"));
    }
}
