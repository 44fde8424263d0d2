//! Resource subscriptions: `resources/subscribe` and `unsubscribe` before
//! protocol 2026-07-28, `subscriptions/listen` from it, and the updates
//! both send when a subscribed resource changes.
//!
//! Rules: only a source that says it is subscribable takes
//! subscriptions (otherwise the capability is not advertised and
//! subscribing is invalid params). A session subscribes as one
//! subscriber of the server's one watcher (`watch.rs`, where the bounds
//! per session, per user and for the server are kept, and the one task
//! that asks for versions), made at its first subscribe and released
//! when its handler is dropped (the session closed, timed out or was
//! evicted, or its client went away); one task per session that
//! subscribed, idle until
//! the watcher puts a change in its outbox, sends
//! `notifications/resources/updated` for it, and stops with the session,
//! or when the client is gone (then the session's subscriptions are
//! released at once). A
//! `subscriptions/listen` request is a subscriber of its own for as long
//! as it lasts: it accepts the URIs it has room for (distinct ones, up to
//! [`MAX_SUBSCRIPTIONS`] and what is left of the user's and the server's
//! bounds, none longer than [`MAX_SUBSCRIBED_URI_BYTES`]), and ends with
//! the bound's error should another request of the user take that room
//! before it is recorded. A `resources/subscribe` takes the first version
//! before it answers; a `subscriptions/listen` can only take it once
//! `rmcp` has sent the acknowledgment, so a change made in that moment
//! may count as the first version rather than as an update.

use std::sync::{Arc, Mutex, PoisonError, Weak};

use oscova_core::UserScope;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::SubscriptionContext;
use rmcp::{ErrorData, Peer, RoleServer};

use tokio_util::sync::CancellationToken;

use super::watch::{MAX_SUBSCRIBED_URI_BYTES, MAX_SUBSCRIPTIONS, Subscriber, Watcher};
use crate::offer::ListChanges;
use crate::resource::ResourceSource;

/// One session's subscriptions (shared by its handler's clones).
#[derive(Debug, Clone)]
pub(crate) struct Subscriptions {
    inner: Arc<Mutex<Inner>>,
    watcher: Watcher,
}

#[derive(Debug, Default)]
struct Inner {
    /// The session as the watcher's subscriber, from its first subscribe.
    subscriber: Option<Arc<Subscriber>>,
    /// Cancelled when the session's handler is gone.
    ended: CancellationToken,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.ended.cancel();
    }
}

/// Which list changed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ListKind {
    Prompts,
    Resources,
}

fn lock(inner: &Mutex<Inner>) -> std::sync::MutexGuard<'_, Inner> {
    inner.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Subscriptions {
    /// The subscriptions of a new session of the server `watcher` watches
    /// for.
    pub(crate) fn new(watcher: Watcher) -> Self {
        Self {
            inner: Arc::default(),
            watcher,
        }
    }

    /// The server's watcher.
    pub(crate) fn watcher(&self) -> &Watcher {
        &self.watcher
    }

    /// Subscribes to `uri`, starting the session's sender on the first.
    pub(crate) async fn add(
        &self,
        source: Arc<dyn ResourceSource>,
        scope: UserScope,
        uri: String,
        peer: Peer<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (subscriber, fresh) = {
            let mut inner = lock(&self.inner);
            match &inner.subscriber {
                Some(subscriber) => (subscriber.clone(), None),
                None => {
                    let subscriber = Arc::new(self.watcher.subscriber(scope.user().id()));
                    inner.subscriber = Some(subscriber.clone());
                    (subscriber, Some(inner.ended.clone()))
                }
            }
        };
        if let Some(ended) = fresh {
            let outbox = subscriber.outbox();
            let session = Arc::downgrade(&self.inner);
            tokio::spawn(send_updates(session, outbox, ended, peer));
        }
        subscriber.add(&source, &scope, &uri).await
    }

    /// Sends `kind`'s list-changed notification on each of `changes` until
    /// the session ends or the client is gone.
    pub(crate) fn forward(&self, kind: ListKind, changes: ListChanges, peer: Peer<RoleServer>) {
        let ended = lock(&self.inner).ended.clone();
        let mut changes = changes.starting_now();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = ended.cancelled() => return,
                    more = changes.next() => {
                        if !more {
                            return;
                        }
                        let sent = match kind {
                            ListKind::Prompts => peer.notify_prompt_list_changed().await,
                            ListKind::Resources => peer.notify_resource_list_changed().await,
                        };
                        if sent.is_err() {
                            return;
                        }
                    }
                }
            }
        });
    }

    /// Forgets `uri`; no update is sent for it afterwards.
    pub(crate) fn remove(&self, uri: &str) {
        let subscriber = lock(&self.inner).subscriber.clone();
        if let Some(subscriber) = subscriber {
            subscriber.remove(uri);
        }
    }
}

/// Sends a legacy session's updates until the session ends; when the
/// client is gone first, releases the session's subscriptions.
async fn send_updates(
    session: Weak<Mutex<Inner>>,
    outbox: Arc<super::watch::Outbox>,
    ended: CancellationToken,
    peer: Peer<RoleServer>,
) {
    loop {
        let uris = tokio::select! {
            () = ended.cancelled() => return,
            uris = outbox.next() => uris,
        };
        for uri in uris {
            let update = ResourceUpdatedNotificationParam::new(uri);
            if peer.notify_resource_updated(update).await.is_err() {
                break;
            }
        }
        if peer.is_transport_closed() {
            break;
        }
    }
    // Nobody to send to: the session's subscriptions go now, not when the
    // handler is dropped.
    if let Some(session) = session.upgrade() {
        let released = lock(&session).subscriber.take();
        drop(released);
    }
}

/// The next change of `changes`, or never without any.
async fn next_change(changes: &mut Option<ListChanges>) -> bool {
    match changes {
        Some(changes) => changes.next().await,
        None => std::future::pending().await,
    }
}

/// The URIs of `requested` a `subscriptions/listen` request of `user`'s
/// accepts: distinct, none too long, as many as there is room for.
pub(crate) fn accepted_uris(watcher: &Watcher, user: &str, requested: &[String]) -> Vec<String> {
    let room = watcher.room(user);
    let mut seen = std::collections::HashSet::new();
    requested
        .iter()
        .filter(|uri| uri.len() <= MAX_SUBSCRIBED_URI_BYTES && seen.insert(uri.as_str()))
        .take(room)
        .cloned()
        .collect()
}

/// Runs one `subscriptions/listen` request until it is cancelled: updates
/// of the accepted resources, and the list changes it accepted. The
/// request is one subscriber of `watcher`'s, released when it ends.
pub(crate) async fn listen(
    resources: Option<Arc<dyn ResourceSource>>,
    prompt_changes: Option<ListChanges>,
    scope: UserScope,
    watcher: &Watcher,
    context: SubscriptionContext,
) -> Result<(), ErrorData> {
    let accepted = context.accepted().clone();
    let uris: Vec<String> = accepted.resource_subscriptions.clone().unwrap_or_default();
    let mut prompt_changes = prompt_changes
        .filter(|_| accepted.prompts_list_changed == Some(true))
        .map(ListChanges::starting_now);
    let mut resource_changes = resources
        .as_ref()
        .and_then(|r| r.list_changes_for(&scope))
        .filter(|_| accepted.resources_list_changed == Some(true))
        .map(ListChanges::starting_now);
    let subscriber = watcher.subscriber(scope.user().id());
    if let Some(source) = &resources {
        for uri in uris.iter().take(MAX_SUBSCRIPTIONS) {
            // Room counted when the filter was accepted may have been taken
            // since by another request of the user's: then this request ends
            // with the bound's error rather than watch less than it said.
            subscriber.add(source, &scope, uri).await?;
        }
    }
    let outbox = subscriber.outbox();
    let sink = context.sink();
    loop {
        tokio::select! {
            () = context.cancelled() => return Ok(()),
            more = next_change(&mut prompt_changes) => {
                if !more {
                    prompt_changes = None;
                } else if sink.notify_prompt_list_changed().await.is_err() {
                    return Ok(());
                }
            }
            more = next_change(&mut resource_changes) => {
                if !more {
                    resource_changes = None;
                } else if sink.notify_resource_list_changed().await.is_err() {
                    return Ok(());
                }
            }
            uris = outbox.next() => {
                for uri in uris {
                    if sink.notify_resource_updated(uri).await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}
