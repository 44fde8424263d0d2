//! The in-memory store, for tests and for hosts that embed sessions
//! without keeping them.
//!
//! Rules: the module rules of `store`, in one process: one mutex over
//! every session, held only for the check and the write (never across an
//! await), so a write is all-or-nothing and a read sees whole writes.
//! Nothing survives the process.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use oscova_core::UserInfo;

use super::{
    SessionInfo, SessionSnapshot, SessionStore, check_chain, duplicate_id, unknown_parent,
};
use crate::session::entry::SessionEntry;
use crate::session::error::SessionError;
use crate::session::id::{EntryId, SessionId, now_iso};

struct Stored {
    user: String,
    info: SessionInfo,
    entries: Vec<SessionEntry>,
    ids: HashSet<EntryId>,
    /// Who holds the lease, until when.
    lease: Option<(String, std::time::Instant)>,
}

/// Sessions in memory (see the module rules).
///
/// ```
/// use oscova_agent::session::{MemoryStore, SessionStore};
/// use oscova_core::UserInfo;
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = MemoryStore::new();
/// let alice = UserInfo::new("alice");
/// let info = store.create(&alice, "notes").await.unwrap();
/// assert_eq!(store.find(&alice, "notes").await.unwrap(), Some(info));
/// assert_eq!(store.find(&UserInfo::new("bob"), "notes").await.unwrap(), None);
/// # });
/// ```
#[derive(Default)]
pub struct MemoryStore {
    sessions: Mutex<HashMap<SessionId, Stored>>,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore").finish_non_exhaustive()
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<SessionId, Stored>> {
        // A panic while the lock was held cannot leave a half write: every
        // write checks first and mutates last.
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn mine<'a>(
    sessions: &'a mut HashMap<SessionId, Stored>,
    user: &UserInfo,
    id: &SessionId,
) -> Result<&'a mut Stored, SessionError> {
    sessions
        .get_mut(id)
        .filter(|s| s.user == user.id())
        .ok_or_else(|| SessionError::NotFound {
            session: id.to_string(),
        })
}

fn check_leaf(stored: &Stored, expected: Option<&EntryId>) -> Result<(), SessionError> {
    if stored.info.leaf.as_ref() == expected {
        Ok(())
    } else {
        Err(SessionError::Changed {
            expected: expected.cloned(),
            actual: stored.info.leaf.clone(),
        })
    }
}

#[async_trait]
impl SessionStore for MemoryStore {
    async fn create(&self, user: &UserInfo, name: &str) -> Result<SessionInfo, SessionError> {
        let id = SessionId::random()?;
        let mut sessions = self.lock();
        if sessions
            .values()
            .any(|s| s.user == user.id() && s.info.name == name)
        {
            return Err(SessionError::NameTaken { name: name.into() });
        }
        let now = now_iso();
        let info = SessionInfo {
            id: id.clone(),
            name: name.to_owned(),
            leaf: None,
            entry_count: 0,
            created: now.clone(),
            updated: now,
        };
        sessions.insert(
            id,
            Stored {
                user: user.id().to_owned(),
                info: info.clone(),
                entries: Vec::new(),
                ids: HashSet::new(),
                lease: None,
            },
        );
        Ok(info)
    }

    async fn find(&self, user: &UserInfo, name: &str) -> Result<Option<SessionInfo>, SessionError> {
        Ok(self
            .lock()
            .values()
            .find(|s| s.user == user.id() && s.info.name == name)
            .map(|s| s.info.clone()))
    }

    async fn load(&self, user: &UserInfo, id: &SessionId) -> Result<SessionSnapshot, SessionError> {
        let mut sessions = self.lock();
        let stored = mine(&mut sessions, user, id)?;
        Ok(SessionSnapshot {
            info: stored.info.clone(),
            entries: stored.entries.clone(),
        })
    }

    async fn append(
        &self,
        user: &UserInfo,
        id: &SessionId,
        expected_leaf: Option<&EntryId>,
        entries: &[SessionEntry],
    ) -> Result<SessionInfo, SessionError> {
        check_chain(entries)?;
        let mut sessions = self.lock();
        let stored = mine(&mut sessions, user, id)?;
        check_leaf(stored, expected_leaf)?;
        if let Some(parent) = entries.first().and_then(|e| e.parent_id.as_ref())
            && !stored.ids.contains(parent)
        {
            return Err(unknown_parent(parent));
        }
        if entries.iter().any(|e| stored.ids.contains(&e.id)) {
            return Err(duplicate_id());
        }
        stored.ids.extend(entries.iter().map(|e| e.id.clone()));
        stored.entries.extend_from_slice(entries);
        stored.info.leaf = entries.last().map(|e| e.id.clone());
        stored.info.entry_count = stored.entries.len() as u64;
        stored.info.updated = now_iso();
        Ok(stored.info.clone())
    }

    async fn set_leaf(
        &self,
        user: &UserInfo,
        id: &SessionId,
        expected_leaf: Option<&EntryId>,
        leaf: Option<&EntryId>,
    ) -> Result<SessionInfo, SessionError> {
        let mut sessions = self.lock();
        let stored = mine(&mut sessions, user, id)?;
        check_leaf(stored, expected_leaf)?;
        if let Some(leaf) = leaf
            && !stored.ids.contains(leaf)
        {
            return Err(SessionError::UnknownEntry(leaf.clone()));
        }
        stored.info.leaf = leaf.cloned();
        stored.info.updated = now_iso();
        Ok(stored.info.clone())
    }

    async fn list(&self, user: &UserInfo) -> Result<Vec<SessionInfo>, SessionError> {
        let mut out: Vec<SessionInfo> = self
            .lock()
            .values()
            .filter(|s| s.user == user.id())
            .map(|s| s.info.clone())
            .collect();
        out.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.name.cmp(&b.name)));
        Ok(out)
    }

    async fn delete(&self, user: &UserInfo, id: &SessionId) -> Result<bool, SessionError> {
        let mut sessions = self.lock();
        if mine(&mut sessions, user, id).is_err() {
            return Ok(false);
        }
        sessions.remove(id);
        Ok(true)
    }

    async fn lease(
        &self,
        user: &UserInfo,
        id: &SessionId,
        holder: &str,
        ttl: std::time::Duration,
    ) -> Result<(), SessionError> {
        let mut sessions = self.lock();
        let stored = mine(&mut sessions, user, id)?;
        let now = std::time::Instant::now();
        if let Some((other, until)) = &stored.lease
            && other != holder
            && *until > now
        {
            return Err(super::leased(id, ttl, other.clone()));
        }
        stored.lease = Some((holder.to_owned(), now + ttl));
        Ok(())
    }

    async fn take_over(
        &self,
        user: &UserInfo,
        id: &SessionId,
        from: &str,
        holder: &str,
        ttl: std::time::Duration,
    ) -> Result<(), SessionError> {
        let mut sessions = self.lock();
        let stored = mine(&mut sessions, user, id)?;
        match &stored.lease {
            Some((other, _)) if other != from => {
                return Err(super::leased(id, ttl, other.clone()));
            }
            _ => {}
        }
        stored.lease = Some((holder.to_owned(), std::time::Instant::now() + ttl));
        Ok(())
    }

    async fn release(&self, id: &SessionId, holder: &str) -> Result<(), SessionError> {
        if let Some(stored) = self.lock().get_mut(id)
            && stored.lease.as_ref().is_some_and(|(h, _)| h == holder)
        {
            stored.lease = None;
        }
        Ok(())
    }
}
