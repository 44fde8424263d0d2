//! The server's one watcher of subscribed resources: who subscribes to
//! what, the bounds on it, and the one task that asks whether a
//! subscribed resource changed.
//!
//! Rules: a server has one watcher ([`McpServer`](crate::McpServer) and
//! every handler it makes; an [`McpHttpServer`](crate::http::McpHttpServer)
//! once bound). A subscriber is one legacy session or one
//! `subscriptions/listen` request; a subscription is one (subscriber,
//! URI) pair, and a subscriber holds at most [`MAX_SUBSCRIPTIONS`], one
//! user at most their server's per-user bound across all their sessions
//! and listen requests ([`DEFAULT_MAX_SUBSCRIPTIONS_PER_USER`] unless
//! set), and the server at most its total
//! ([`DEFAULT_MAX_SUBSCRIPTIONS_TOTAL`] unless set). Past the
//! subscriber's bound a subscribe is -32602 (invalid params), past the
//! user's or the server's [`SERVER_BUSY`](crate::SERVER_BUSY) (-32000),
//! each with the bound in `data` and what to do in the message; a URI
//! longer than [`MAX_SUBSCRIBED_URI_BYTES`] is -32602. The bounds are
//! checked and the subscription recorded under one lock, so subscribes
//! racing from many sessions never pass a bound together.
//!
//! A resource is watched once however many subscribe to it: the watcher
//! keys it by user and URI (a source answers [`ResourceSource::version`]
//! per user) and asks its version from one task for the whole server, at
//! most [`MAX_CHECKS_PER_POLL`] resources every [`SUBSCRIPTION_POLL`],
//! taking them in turn; so the work of watching is bounded by those two
//! constants, whatever the number of subscriptions, and with more
//! resources watched than one round checks, each is checked less often.
//! The task runs only while something is watched. A changed version is
//! put in the outbox of each of the resource's subscribers once (changes
//! made before the subscriber sends it fold into one). Subscribing takes
//! the version anew: a change since the last check is an update for the
//! resource's other subscribers, not for the one subscribing. A
//! subscriber released (its session ended, its handler dropped, its
//! listen request over) takes its subscriptions with it at once, and a
//! resource no one subscribes to any more is no longer watched.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use oscova_core::UserScope;
use rmcp::ErrorData;
use serde_json::json;
use tokio::sync::Notify;

use crate::resource::ResourceSource;

/// How often the watcher checks subscribed resources (at most
/// [`MAX_CHECKS_PER_POLL`] of them each time).
pub const SUBSCRIPTION_POLL: Duration = Duration::from_millis(500);

/// The most resources one session (or one `subscriptions/listen`
/// request) subscribes to.
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// The default bound on one user's subscriptions, across all their
/// sessions and `subscriptions/listen` requests.
pub const DEFAULT_MAX_SUBSCRIPTIONS_PER_USER: usize = 1024;

/// The default bound on a server's subscriptions, all users together.
pub const DEFAULT_MAX_SUBSCRIPTIONS_TOTAL: usize = 8192;

/// The most subscribed resources the watcher checks every
/// [`SUBSCRIPTION_POLL`], for the whole server.
pub const MAX_CHECKS_PER_POLL: usize = 256;

/// The longest URI that can be subscribed to, in bytes.
pub const MAX_SUBSCRIBED_URI_BYTES: usize = 4096;

/// The bounds of a server's watcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    pub(crate) per_user: usize,
    pub(crate) total: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            per_user: DEFAULT_MAX_SUBSCRIPTIONS_PER_USER,
            total: DEFAULT_MAX_SUBSCRIPTIONS_TOTAL,
        }
    }
}

/// A watched resource: its user and URI.
type Key = (Arc<str>, String);

/// One resource watched, for every subscriber to it.
struct Watched {
    scope: UserScope,
    source: Arc<dyn ResourceSource>,
    /// The version last seen.
    version: Option<String>,
    subscribers: HashSet<u64>,
}

/// One subscriber's record.
struct Member {
    user: Arc<str>,
    uris: HashSet<String>,
    outbox: Arc<Outbox>,
}

struct Table {
    limits: Limits,
    members: HashMap<u64, Member>,
    watched: BTreeMap<Key, Watched>,
    /// Subscriptions per user, for users with any.
    per_user: HashMap<Arc<str>, usize>,
    /// Subscriptions in all.
    total: usize,
    next_id: u64,
    /// The last resource checked; the next round starts after it.
    cursor: Option<Key>,
    /// Whether the task that checks is running (or, for tests that check
    /// by hand, never to be started).
    polling: bool,
}

fn lock(table: &Mutex<Table>) -> MutexGuard<'_, Table> {
    // Every change under the lock leaves the counts and maps agreeing.
    table.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The URIs changed for one subscriber, not yet sent.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    pending: Mutex<BTreeSet<String>>,
    ready: Notify,
}

impl Outbox {
    fn put(&self, uri: &str) {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(uri.to_owned());
        self.ready.notify_one();
    }

    fn take(&self) -> Vec<String> {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        std::mem::take(&mut *pending).into_iter().collect()
    }

    /// The URIs changed since the last call, once there is one. Nothing is
    /// lost when the future is dropped.
    pub(crate) async fn next(&self) -> Vec<String> {
        loop {
            let uris = self.take();
            if !uris.is_empty() {
                return uris;
            }
            // A `put` since `take` left a permit: no change is missed.
            self.ready.notified().await;
        }
    }
}

/// A server's watcher; clones share it.
#[derive(Clone)]
pub(crate) struct Watcher {
    table: Arc<Mutex<Table>>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let table = lock(&self.table);
        f.debug_struct("Watcher")
            .field("limits", &table.limits)
            .field("subscriptions", &table.total)
            .field("watched", &table.watched.len())
            .finish_non_exhaustive()
    }
}

impl Default for Watcher {
    fn default() -> Self {
        Self::new(Limits::default())
    }
}

/// Counts of a server's resource subscriptions, for a metric or a test:
/// [`McpServer::subscription_stats`](crate::McpServer::subscription_stats),
/// [`BoundMcpServer::subscription_stats`](crate::http::BoundMcpServer::subscription_stats).
/// Clones read the same server.
#[derive(Debug, Clone)]
pub struct SubscriptionStats(Watcher);

impl SubscriptionStats {
    pub(crate) fn new(watcher: Watcher) -> Self {
        Self(watcher)
    }

    /// The subscriptions held: (session or listen request, URI) pairs.
    pub fn subscriptions(&self) -> usize {
        lock(&self.0.table).total
    }

    /// The distinct resources watched for them (by user and URI): what
    /// the watcher checks, however many subscribe to each.
    pub fn watched(&self) -> usize {
        lock(&self.0.table).watched.len()
    }
}

/// The -32602 answer past a subscriber's own bound.
fn session_full() -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "this session already has {MAX_SUBSCRIPTIONS} subscriptions, its bound; \
             unsubscribe from one first"
        ),
        Some(json!({ "max_subscriptions": MAX_SUBSCRIPTIONS })),
    )
}

fn user_full(max: usize) -> ErrorData {
    ErrorData::new(
        crate::SERVER_BUSY,
        format!(
            "server busy: this user already holds {max} resource subscriptions, the bound \
             for one user across sessions and requests; unsubscribe from one (or end a \
             session) first"
        ),
        Some(json!({ "max_subscriptions_per_user": max })),
    )
}

fn server_full(max: usize) -> ErrorData {
    ErrorData::new(
        crate::SERVER_BUSY,
        format!(
            "server busy: the server already holds {max} resource subscriptions, its bound \
             for all sessions together; retry later"
        ),
        Some(json!({ "max_subscriptions_total": max })),
    )
}

fn uri_too_long() -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "the URI is longer than {MAX_SUBSCRIBED_URI_BYTES} bytes; it cannot be subscribed to"
        ),
        Some(json!({ "max_uri_bytes": MAX_SUBSCRIBED_URI_BYTES })),
    )
}

impl Table {
    /// Why `id` cannot subscribe to one more URI, if it cannot.
    fn refusal(&self, member: &Member) -> Option<ErrorData> {
        if member.uris.len() >= MAX_SUBSCRIPTIONS {
            return Some(session_full());
        }
        let users = self.per_user.get(&member.user).copied().unwrap_or(0);
        if users >= self.limits.per_user {
            return Some(user_full(self.limits.per_user));
        }
        if self.total >= self.limits.total {
            return Some(server_full(self.limits.total));
        }
        None
    }

    /// Forgets `id`'s subscription to `uri`, and the resource when no one
    /// else subscribes to it.
    fn forget(&mut self, id: u64, user: &Arc<str>, uri: String) {
        if let Some(count) = self.per_user.get_mut(user) {
            *count -= 1;
            if *count == 0 {
                self.per_user.remove(user);
            }
        }
        self.total -= 1;
        let key = (user.clone(), uri);
        if let Some(watched) = self.watched.get_mut(&key) {
            watched.subscribers.remove(&id);
            if watched.subscribers.is_empty() {
                self.watched.remove(&key);
            }
        }
    }

    /// Notes `now` as `key`'s version; when it changed, tells every
    /// subscriber to it but `except`.
    fn seen(&mut self, key: &Key, now: Option<String>, except: Option<u64>) {
        let Some(watched) = self.watched.get_mut(key) else {
            return;
        };
        if watched.version == now {
            return;
        }
        watched.version = now;
        for id in &watched.subscribers {
            if Some(*id) != except
                && let Some(member) = self.members.get(id)
            {
                member.outbox.put(&key.1);
            }
        }
    }

    /// The next round's resources, in turn after the last one checked.
    fn next_round(&mut self) -> Vec<Check> {
        let check = |(key, watched): (&Key, &Watched)| Check {
            key: key.clone(),
            scope: watched.scope.clone(),
            source: watched.source.clone(),
            was: watched.version.clone(),
        };
        let round: Vec<Check> = match self.cursor.take() {
            Some(last) => {
                let after = (Bound::Excluded(last.clone()), Bound::Unbounded);
                let after = self.watched.range::<Key, _>(after);
                let before = self.watched.range::<Key, _>(..=last);
                after
                    .chain(before)
                    .take(MAX_CHECKS_PER_POLL)
                    .map(check)
                    .collect()
            }
            None => self
                .watched
                .iter()
                .take(MAX_CHECKS_PER_POLL)
                .map(check)
                .collect(),
        };
        self.cursor = round.last().map(|check| check.key.clone());
        round
    }
}

/// One resource to check, taken out of the table so no lock is held
/// while its source answers.
struct Check {
    key: Key,
    scope: UserScope,
    source: Arc<dyn ResourceSource>,
    was: Option<String>,
}

impl Watcher {
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            table: Arc::new(Mutex::new(Table {
                limits,
                members: HashMap::new(),
                watched: BTreeMap::new(),
                per_user: HashMap::new(),
                total: 0,
                next_id: 0,
                cursor: None,
                polling: false,
            })),
        }
    }

    /// A new subscriber of `user`'s, with nothing subscribed yet.
    pub(crate) fn subscriber(&self, user: &str) -> Subscriber {
        let outbox = Arc::new(Outbox::default());
        let user: Arc<str> = Arc::from(user);
        let mut table = lock(&self.table);
        let id = table.next_id;
        table.next_id += 1;
        table.members.insert(
            id,
            Member {
                user: user.clone(),
                uris: HashSet::new(),
                outbox: outbox.clone(),
            },
        );
        Subscriber {
            id,
            watcher: self.clone(),
            outbox,
        }
    }

    /// How many more subscriptions `user` may make now, within their
    /// bound, the server's and one subscriber's.
    pub(crate) fn room(&self, user: &str) -> usize {
        let table = lock(&self.table);
        let users = table.per_user.get(user).copied().unwrap_or(0);
        let user_room = table.limits.per_user.saturating_sub(users);
        let total_room = table.limits.total.saturating_sub(table.total);
        user_room.min(total_room).min(MAX_SUBSCRIPTIONS)
    }

    /// One round of checks, then whether to go on (no when nothing is
    /// watched any more, and then the task is marked stopped).
    async fn check_round(table: &Mutex<Table>) -> bool {
        let round = {
            let mut table = lock(table);
            if table.watched.is_empty() {
                table.polling = false;
                table.cursor = None;
                return false;
            }
            table.next_round()
        };
        for check in round {
            let now = check.source.version(&check.scope, &check.key.1).await;
            if now == check.was {
                continue;
            }
            let mut table = lock(table);
            // A subscribe meanwhile took the version anew: it wins.
            if table.watched.get(&check.key).map(|w| &w.version) == Some(&check.was) {
                table.seen(&check.key, now, None);
            }
        }
        true
    }

    /// A watcher whose rounds the test runs itself ([`check_now`]):
    /// no task is started.
    ///
    /// [`check_now`]: Self::check_now
    #[cfg(test)]
    fn by_hand(limits: Limits) -> Self {
        let watcher = Self::new(limits);
        lock(&watcher.table).polling = true;
        watcher
    }

    /// Checks one round now, for tests that do not wait for the task.
    #[cfg(test)]
    async fn check_now(&self) {
        Self::check_round(&self.table).await;
        lock(&self.table).polling = true;
    }
}

/// The task that checks, one per server while anything is watched.
async fn poll(table: Weak<Mutex<Table>>) {
    loop {
        tokio::time::sleep(SUBSCRIPTION_POLL).await;
        let Some(table) = table.upgrade() else {
            return;
        };
        if !Watcher::check_round(&table).await {
            return;
        }
    }
}

/// One session's or one listen request's subscriptions; dropping it
/// releases them.
#[derive(Debug)]
pub(crate) struct Subscriber {
    id: u64,
    watcher: Watcher,
    outbox: Arc<Outbox>,
}

impl Subscriber {
    /// Where this subscriber's updates wait to be sent.
    pub(crate) fn outbox(&self) -> Arc<Outbox> {
        self.outbox.clone()
    }

    /// Subscribes to `uri` of `source`, as `scope` sees it, within the
    /// bounds (see the module's rules).
    pub(crate) async fn add(
        &self,
        source: &Arc<dyn ResourceSource>,
        scope: &UserScope,
        uri: &str,
    ) -> Result<(), ErrorData> {
        if uri.len() > MAX_SUBSCRIBED_URI_BYTES {
            return Err(uri_too_long());
        }
        // Refused before the source is asked anything, so a client past
        // its bound costs no file-system work.
        {
            let table = lock(&self.watcher.table);
            if let Some(member) = table.members.get(&self.id)
                && !member.uris.contains(uri)
                && let Some(refusal) = table.refusal(member)
            {
                return Err(refusal);
            }
        }
        let now = source.version(scope, uri).await;
        let start = {
            let mut guard = lock(&self.watcher.table);
            let table = &mut *guard;
            let Some(member) = table.members.get(&self.id) else {
                return Ok(());
            };
            let user = member.user.clone();
            let key = (user.clone(), uri.to_owned());
            if !member.uris.contains(uri) {
                if let Some(refusal) = table.refusal(member) {
                    return Err(refusal);
                }
                if let Some(member) = table.members.get_mut(&self.id) {
                    member.uris.insert(uri.to_owned());
                }
                *table.per_user.entry(user).or_insert(0) += 1;
                table.total += 1;
                table
                    .watched
                    .entry(key.clone())
                    .or_insert_with(|| Watched {
                        scope: scope.clone(),
                        source: source.clone(),
                        version: now.clone(),
                        subscribers: HashSet::new(),
                    })
                    .subscribers
                    .insert(self.id);
            }
            table.seen(&key, now, Some(self.id));
            !std::mem::replace(&mut table.polling, true)
        };
        if start {
            tokio::spawn(poll(Arc::downgrade(&self.watcher.table)));
        }
        Ok(())
    }

    /// Forgets `uri`; no update is sent for it afterwards.
    pub(crate) fn remove(&self, uri: &str) {
        let mut table = lock(&self.watcher.table);
        let Some(member) = table.members.get_mut(&self.id) else {
            return;
        };
        if member.uris.remove(uri) {
            let user = member.user.clone();
            table.forget(self.id, &user, uri.to_owned());
        }
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        let mut table = lock(&self.watcher.table);
        if let Some(member) = table.members.remove(&self.id) {
            for uri in member.uris {
                table.forget(self.id, &member.user, uri);
            }
        }
    }
}

#[cfg(test)]
mod tests;
