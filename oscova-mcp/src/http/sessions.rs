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
//! the server with 429 (per user) or 503 (in total). A closed session's
//! client gets 404 on its next request, and per the protocol opens a new
//! one. When a session ends (closed, idle past the timeout, or the server
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

    /// The sessions to close so that `user` may open one more, or why
    /// not: the longest idle first, busy ones never.
    fn make_room(&self, user: &str) -> Result<Vec<SessionId>, Refusal> {
        let book = self.book();
        let idle = |record: &Record| record.busy.load(Ordering::SeqCst) == 0;
        let oldest = |mine: bool, skip: Option<&SessionId>| {
            book.iter()
                .filter(|(id, r)| (!mine || &*r.user == user) && Some(*id) != skip && idle(r))
                .min_by_key(|(_, r)| r.used.load(Ordering::SeqCst))
                .map(|(id, _)| id.clone())
        };
        let mut close = Vec::new();
        let theirs = book.values().filter(|r| &*r.user == user).count();
        if theirs >= self.per_user {
            let id = oldest(true, None).ok_or(Refusal::PerUser { max: self.per_user })?;
            close.push(id);
        }
        if book.len() - close.len() >= self.total {
            let id = oldest(false, close.first()).ok_or(Refusal::Total { max: self.total })?;
            close.push(id);
        }
        Ok(close)
    }

    /// Opens a session for the user of the request being handled,
    /// binding it to them.
    async fn open(
        &self,
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
        let user = super::serve::current_user().ok_or_else(|| refuse(Refusal::NoUser))?;
        let _opening = self.opening.lock().await;
        for id in self.make_room(&user).map_err(refuse)? {
            tracing::info!(session = %id, "closing the longest idle session to open a new one");
            self.book().remove(&id);
            self.local.close_session(&id).await?;
        }
        let (id, transport) = self.local.create_session().await?;
        let record = Record {
            user,
            busy: AtomicUsize::new(0),
            used: AtomicU64::new(self.now()),
        };
        self.book().insert(id.clone(), Arc::new(record));
        Ok((id, transport))
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
        self.open().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.local.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.local.has_session(id).await?)
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
        let record = self.touch(id);
        if let Some(record) = &record {
            record.busy.fetch_add(1, Ordering::SeqCst);
        }
        let guard = BusyGuard {
            record,
            epoch: self.epoch,
        };
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
