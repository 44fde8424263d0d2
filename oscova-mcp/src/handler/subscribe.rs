//! Resource subscriptions: `resources/subscribe` and `unsubscribe` before
//! protocol 2026-07-28, `subscriptions/listen` from it, and the updates
//! both send when a subscribed resource changes.
//!
//! Rules: only a source that says it is subscribable takes
//! subscriptions (otherwise the capability is not advertised and
//! subscribing is invalid params). A subscription remembers the
//! resource's version ([`ResourceSource::version`]) when it is made; the
//! session's watcher asks again every [`SUBSCRIPTION_POLL`] and sends
//! `notifications/resources/updated` once per change, for subscribed
//! URIs only, while the session (or the `subscriptions/listen` request)
//! lasts: the watcher holds the session's subscriptions weakly and stops
//! when they are dropped, when the client is gone, or when the listen
//! request is cancelled. Polling rather than file-system events: it
//! needs no watcher library, works the same on every platform and for
//! every source, and bounds its cost by the number of subscriptions,
//! which is itself bounded ([`MAX_SUBSCRIPTIONS`] per session). A
//! `resources/subscribe` takes the first version before it answers; a
//! `subscriptions/listen` can only take it once `rmcp` has sent the
//! acknowledgment, so a change made in that moment may count as the
//! first version rather than as an update.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use oscova_core::UserScope;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::SubscriptionContext;
use rmcp::{ErrorData, Peer, RoleServer};

use tokio_util::sync::CancellationToken;

use crate::offer::ListChanges;
use crate::resource::ResourceSource;

/// How often a subscribed resource's version is asked for.
pub const SUBSCRIPTION_POLL: Duration = Duration::from_millis(500);

/// The most resources one session (or one listen request) subscribes to.
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// URI to the version last seen.
type Seen = HashMap<String, Option<String>>;

/// One session's subscriptions (shared by its handler's clones).
#[derive(Debug, Clone, Default)]
pub(crate) struct Subscriptions {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    seen: Seen,
    watching: bool,
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
    /// Subscribes to `uri`, starting the session's watcher on the first.
    pub(crate) async fn add(
        &self,
        source: Arc<dyn ResourceSource>,
        scope: UserScope,
        uri: String,
        peer: Peer<RoleServer>,
    ) -> Result<(), ErrorData> {
        let version = source.version(&scope, &uri).await;
        let start = {
            let mut inner = lock(&self.inner);
            if inner.seen.len() >= MAX_SUBSCRIPTIONS && !inner.seen.contains_key(&uri) {
                return Err(ErrorData::invalid_params(
                    format!(
                        "this session already has {MAX_SUBSCRIPTIONS} subscriptions, its bound; \
                         unsubscribe from one first"
                    ),
                    None,
                ));
            }
            inner.seen.insert(uri, version);
            !std::mem::replace(&mut inner.watching, true)
        };
        if start {
            let weak = Arc::downgrade(&self.inner);
            tokio::spawn(watch(weak, source, scope, peer));
        }
        Ok(())
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
        lock(&self.inner).seen.remove(uri);
    }
}

/// The URIs whose version changed since last seen, noted as seen.
async fn changed(
    source: &dyn ResourceSource,
    scope: &UserScope,
    seen: &Mutex<Inner>,
) -> Vec<String> {
    let before: Vec<(String, Option<String>)> = lock(seen)
        .seen
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut out = Vec::new();
    for (uri, was) in before {
        let now = source.version(scope, &uri).await;
        if now == was {
            continue;
        }
        // Only if still subscribed: an unsubscribe meanwhile wins.
        if let Some(slot) = lock(seen).seen.get_mut(&uri) {
            *slot = now;
            out.push(uri);
        }
    }
    out
}

/// The legacy session's watcher.
async fn watch(
    inner: Weak<Mutex<Inner>>,
    source: Arc<dyn ResourceSource>,
    scope: UserScope,
    peer: Peer<RoleServer>,
) {
    loop {
        tokio::time::sleep(SUBSCRIPTION_POLL).await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        for uri in changed(source.as_ref(), &scope, &inner).await {
            let update = ResourceUpdatedNotificationParam::new(uri);
            if peer.notify_resource_updated(update).await.is_err() {
                return;
            }
        }
        if peer.is_transport_closed() {
            return;
        }
    }
}

/// The next change of `changes`, or never without any.
async fn next_change(changes: &mut Option<ListChanges>) -> bool {
    match changes {
        Some(changes) => changes.next().await,
        None => std::future::pending().await,
    }
}

/// Runs one `subscriptions/listen` request until it is cancelled: updates
/// of the accepted resources, and the list changes it accepted.
pub(crate) async fn listen(
    resources: Option<Arc<dyn ResourceSource>>,
    prompt_changes: Option<ListChanges>,
    scope: UserScope,
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
    let mut inner = Inner::default();
    if let Some(source) = &resources {
        for uri in uris.into_iter().take(MAX_SUBSCRIPTIONS) {
            let version = source.version(&scope, &uri).await;
            inner.seen.insert(uri, version);
        }
    }
    let inner = Mutex::new(inner);
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
            () = tokio::time::sleep(SUBSCRIPTION_POLL) => {
                let Some(source) = &resources else { continue };
                for uri in changed(source.as_ref(), &scope, &inner).await {
                    if sink.notify_resource_updated(uri).await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}
