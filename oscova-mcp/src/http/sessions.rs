//! Sessions: each bound to the user who opened it, and bounded per user
//! and in total.
//!
//! Rules: [`Sessions`] is the session manager `rmcp` calls; it wraps
//! `rmcp`'s in-memory one and owns, beside it, who opened each session.
//! The owner is recorded inside [`SessionManager::create_session`], the
//! one place every session is created, from the user of the request
//! being served (the task-local set around `rmcp`'s handling of it), so
//! no request, whatever its headers said, opens a session without an
//! owner; a session created with no user to bind it to is refused. At
//! most `per_user` sessions of one user and `total` sessions in all are
//! open: opening one past a bound first closes the session that has been
//! idle longest (of that user, for the per-user bound; of anyone, for
//! the total), and when every candidate is busy (a response to one of its
//! requests still being sent) the new session is refused, answered by
//! the server with 429 (per user) or 503 (in total). The sessions to
//! close are chosen and taken out of the book under one hold of its lock,
//! the lock a request takes to mark its session busy, so a session is
//! never closed under a request that started on it: a request that comes
//! after finds no session (404). They are closed after the lock that
//! orders session openings is released, by a task of their own, so a
//! session worker slow to take its close delays no one's `initialize`.
//! A closed session's client gets 404 on its next request, and per the
//! protocol opens a new one. When a session ends (closed, idle past the timeout, or the server
//! shutting down), its owner is forgotten with it.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Instant;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};

/// Why a session was not opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    /// The user has `max` sessions open, each busy.
    #[error(
        "too many sessions: this user already has {max} open, each with a request in flight \
         (the bound per user); close one (DELETE) or wait for one to finish"
    )]
    PerUser {
        /// The bound.
        max: usize,
    },
    /// The server has `max` sessions open, each busy.
    #[error(
        "too many sessions: the server already has {max} open, each with a request in flight \
         (its bound for all users); retry later"
    )]
    Total {
        /// The bound.
        max: usize,
    },
    /// No user was known for the request (a bug, never a client's doing).
    #[error("no user for this request")]
    NoUser,
}

/// The session manager's errors: `rmcp`'s own, or a refusal.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionsError {
    /// From `rmcp`'s in-memory manager.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    /// The session was not opened.
    #[error(transparent)]
    Refused(Refusal),
}

/// Whose a session is, as a request's user sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The session is the user's.
    Theirs,
    /// The session is another user's.
    Other,
    /// No such session.
    Unknown,
}

/// One open session.
#[derive(Debug)]
struct Record {
    user: Arc<str>,
    /// Requests of the session whose responses are still being sent.
    busy: AtomicUsize,
    /// When the session was last used, in milliseconds since
    /// [`Sessions::epoch`].
    used: AtomicU64,
}

/// The sessions of a server, with their owners and bounds.
pub(crate) struct Sessions {
    local: LocalSessionManager,
    book: Mutex<HashMap<SessionId, Arc<Record>>>,
    /// Held while a session is opened, so two opened at once are counted
    /// one after the other.
    opening: tokio::sync::Mutex<()>,
    per_user: usize,
    total: usize,
    epoch: Instant,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("per_user", &self.per_user)
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

impl Sessions {
    /// Sessions kept by `local`, at most `per_user` per user and `total`
    /// in all.
    pub(crate) fn new(local: LocalSessionManager, per_user: usize, total: usize) -> Self {
        Self {
            local,
            book: Mutex::new(HashMap::new()),
            opening: tokio::sync::Mutex::new(()),
            per_user,
            total,
            epoch: Instant::now(),
        }
    }

    fn book(&self) -> MutexGuard<'_, HashMap<SessionId, Arc<Record>>> {
        // Every change under the lock is one insert or remove.
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Whose the session `id` is, as `user` sees it.
    pub(crate) fn owner(&self, id: &str, user: &str) -> Owner {
        match self.book().get(id) {
            None => Owner::Unknown,
            Some(record) if &*record.user == user => Owner::Theirs,
            Some(_) => Owner::Other,
        }
    }

    /// Takes out of the book the sessions to close so that `user` may
    /// open one more, or says why not: the longest idle first, busy ones
    /// never. Chosen and removed under one hold of the book's lock, which
    /// [`claim`](Self::claim) takes too, so a request that starts on a
    /// session either made it busy before (it is not chosen) or finds it
    /// gone (it is not served by a session being closed).
    fn make_room(&self, user: &str) -> Result<Vec<SessionId>, Refusal> {
        let mut book = self.book();
        let idle = |record: &Record| record.busy.load(Ordering::SeqCst) == 0;
        let oldest =
            |book: &HashMap<SessionId, Arc<Record>>, mine: bool, skip: Option<&SessionId>| {
                book.iter()
                    .filter(|(id, r)| (!mine || &*r.user == user) && Some(*id) != skip && idle(r))
                    .min_by_key(|(_, r)| r.used.load(Ordering::SeqCst))
                    .map(|(id, _)| id.clone())
            };
        let mut close = Vec::new();
        let theirs = book.values().filter(|r| &*r.user == user).count();
        if theirs >= self.per_user {
            let id = oldest(&book, true, None).ok_or(Refusal::PerUser { max: self.per_user })?;
            close.push(id);
        }
        if book.len() - close.len() >= self.total {
            let id =
                oldest(&book, false, close.first()).ok_or(Refusal::Total { max: self.total })?;
            close.push(id);
        }
        for id in &close {
            book.remove(id);
        }
        Ok(close)
    }

    /// Opens a session for `user`, bound to them before it is returned
    /// (so before `rmcp` can answer with its id). The sessions closed to
    /// make room are taken out of `rmcp`'s map at once, and their close is
    /// sent by a task of its own once the `opening` lock is released: a
    /// closing session's worker may be slow to take the close, and no
    /// user's session waits for it.
    async fn open_as(
        &self,
        user: Arc<str>,
    ) -> Result<
        (
            SessionId,
            <LocalSessionManager as SessionManager>::Transport,
        ),
        SessionsError,
    > {
        let refuse = |refusal: Refusal| {
            super::serve::note_refusal(refusal.clone());
            SessionsError::Refused(refusal)
        };
        let opening = self.opening.lock().await;
        let evicted = self.make_room(&user).map_err(refuse)?;
        let mut closing = Vec::new();
        if !evicted.is_empty() {
            let mut local = self.local.sessions.write().await;
            for id in &evicted {
                tracing::info!(session = %id, "closing the longest idle session to open a new one");
                closing.extend(local.remove(id));
            }
        }
        let created = self.local.create_session().await;
        if let Ok((id, _)) = &created {
            let record = Record {
                user,
                busy: AtomicUsize::new(0),
                used: AtomicU64::new(self.now()),
            };
            self.book().insert(id.clone(), Arc::new(record));
        }
        drop(opening);
        if !closing.is_empty() {
            // Sending the close waits for room in the session's channel.
            tokio::spawn(async move {
                for handle in closing {
                    let _ = handle.close().await;
                }
            });
        }
        Ok(created?)
    }

    /// Marks the session used now and busy until the guard is dropped,
    /// under the book's lock (see [`make_room`](Self::make_room)).
    fn claim(&self, id: &SessionId) -> BusyGuard {
        let book = self.book();
        let record = book.get(id).cloned();
        if let Some(record) = &record {
            record.used.store(self.now(), Ordering::SeqCst);
            record.busy.fetch_add(1, Ordering::SeqCst);
        }
        BusyGuard {
            record,
            epoch: self.epoch,
        }
    }

    /// Marks the session used now.
    fn touch(&self, id: &SessionId) -> Option<Arc<Record>> {
        let record = self.book().get(id).cloned()?;
        record.used.store(self.now(), Ordering::SeqCst);
        Some(record)
    }
}

/// Keeps a session busy until dropped, then marks it used.
struct BusyGuard {
    record: Option<Arc<Record>>,
    /// What [`Sessions::now`] reads, for when the response ends.
    epoch: Instant,
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        if let Some(record) = &self.record {
            let now = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
            record.used.store(now, Ordering::SeqCst);
            record.busy.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A response stream that keeps its session busy until it is dropped.
struct Busy<S> {
    inner: Pin<Box<S>>,
    _guard: BusyGuard,
}

impl<S: Stream> Stream for Busy<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.get_mut().inner.as_mut().poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let Some(user) = super::serve::current_user() else {
            super::serve::note_refusal(Refusal::NoUser);
            return Err(SessionsError::Refused(Refusal::NoUser));
        };
        self.open_as(user).await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.local.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        // A session taken out of the book to make room is gone, even
        // while its close is on its way.
        Ok(self.book().contains_key(id) && self.local.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.book().remove(id);
        Ok(self.local.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // Busy from before the message goes in, so the session cannot be
        // closed for room while its request starts.
        let guard = self.claim(id);
        if guard.record.is_none() {
            return Err(LocalSessionManagerError::SessionNotFound(id.clone()).into());
        }
        let stream = self.local.create_stream(id, message).await?;
        Ok(Busy {
            inner: Box::pin(stream),
            _guard: guard,
        })
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.local.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.local.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.local.resume(id, last_event_id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sessions with `ids` open, each (id, user), oldest first.
    fn book(per_user: usize, total: usize, ids: &[(&str, &str)]) -> Sessions {
        let sessions = Sessions::new(LocalSessionManager::default(), per_user, total);
        for (used, (id, user)) in (0u64..).zip(ids) {
            let record = Record {
                user: Arc::from(*user),
                busy: AtomicUsize::new(0),
                used: AtomicU64::new(used),
            };
            sessions.book().insert(Arc::from(*id), Arc::new(record));
        }
        sessions
    }

    // Issue 24, finding 5: a session chosen for room is out of the book
    // before the lock is let go, so a request starting on it afterwards
    // finds it gone instead of being served by a session being closed.
    #[test]
    fn a_session_chosen_for_room_is_gone_before_a_request_can_claim_it() {
        let sessions = book(1, 10, &[("a1", "alice")]);
        assert_eq!(sessions.make_room("alice"), Ok(vec![Arc::from("a1")]));
        let guard = sessions.claim(&Arc::from("a1"));
        assert!(guard.record.is_none(), "claimed a session chosen to close");
        assert_eq!(sessions.owner("a1", "alice"), Owner::Unknown);
    }

    // The other order: a request that claimed its session first keeps it,
    // and the session is a candidate again once the response is sent.
    #[test]
    fn a_claimed_session_is_never_chosen_for_room() {
        let sessions = book(1, 10, &[("a1", "alice")]);
        let guard = sessions.claim(&Arc::from("a1"));
        assert_eq!(
            sessions.make_room("alice"),
            Err(Refusal::PerUser { max: 1 })
        );
        assert_eq!(sessions.owner("a1", "alice"), Owner::Theirs);
        drop(guard);
        assert_eq!(sessions.make_room("alice"), Ok(vec![Arc::from("a1")]));
    }

    // The total bound takes the longest idle session of anyone but a busy
    // one, and takes it out of the book at once too.
    #[test]
    fn the_total_bound_skips_busy_sessions_and_takes_the_oldest_idle() {
        let sessions = book(10, 3, &[("b1", "bob"), ("b2", "bob"), ("c1", "carol")]);
        let _busy = sessions.claim(&Arc::from("b1"));
        assert_eq!(sessions.make_room("alice"), Ok(vec![Arc::from("b2")]));
        assert_eq!(sessions.owner("b2", "bob"), Owner::Unknown);
        assert_eq!(sessions.owner("b1", "bob"), Owner::Theirs);
        let _busy = sessions.claim(&Arc::from("c1"));
        assert_eq!(sessions.make_room("alice"), Ok(vec![]));
        let sessions = book(10, 2, &[("b1", "bob"), ("c1", "carol")]);
        let _b = sessions.claim(&Arc::from("b1"));
        let _c = sessions.claim(&Arc::from("c1"));
        assert_eq!(sessions.make_room("alice"), Err(Refusal::Total { max: 2 }));
    }

    // Issue 24, finding 1: the owner is recorded by the one call that
    // creates a session, before its id is handed to anyone, not once
    // `rmcp` has answered or on some path of the request's headers.
    #[tokio::test]
    async fn a_session_is_bound_to_its_user_where_it_is_created() {
        let sessions = book(2, 10, &[]);
        let (id, _transport) = sessions.open_as(Arc::from("alice")).await.unwrap();
        assert_eq!(sessions.owner(&id, "alice"), Owner::Theirs);
        assert_eq!(sessions.owner(&id, "bob"), Owner::Other);
        assert!(sessions.has_session(&id).await.unwrap());
    }

    // With no user to bind it to, no session is created at all.
    #[tokio::test]
    async fn a_session_with_no_user_to_bind_it_to_is_refused() {
        let sessions = book(2, 10, &[]);
        let refused = sessions.create_session().await.err();
        assert!(
            matches!(refused, Some(SessionsError::Refused(Refusal::NoUser))),
            "{refused:?}"
        );
        assert!(sessions.local.sessions.read().await.is_empty());
    }

    // Were a session ever created without its owner recorded, it would
    // serve no one (404), rather than whoever sends its id.
    #[tokio::test]
    async fn a_session_without_an_owner_is_served_to_no_one() {
        let sessions = book(2, 10, &[]);
        let (id, _transport) = sessions.local.create_session().await.unwrap();
        assert!(!sessions.has_session(&id).await.unwrap());
        let message: ClientJsonRpcMessage =
            serde_json::from_str(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#)
                .unwrap();
        assert!(sessions.create_stream(&id, message).await.is_err());
    }

    // Opening past the bound forgets the evicted session in both books at
    // once (its close follows in the background) and binds the new one.
    #[tokio::test]
    async fn opening_past_the_bound_forgets_the_evicted_session_at_once() {
        let sessions = book(1, 10, &[]);
        let (old, _old_transport) = sessions.open_as(Arc::from("alice")).await.unwrap();
        let (new, _new_transport) = sessions.open_as(Arc::from("alice")).await.unwrap();
        assert_ne!(old, new);
        assert!(!sessions.has_session(&old).await.unwrap());
        assert!(!sessions.local.sessions.read().await.contains_key(&old));
        assert_eq!(sessions.owner(&old, "alice"), Owner::Unknown);
        assert_eq!(sessions.owner(&new, "alice"), Owner::Theirs);
    }
}
