//! Messages for a session from outside it ([`AgentHost::deliver`]): a
//! result that arrived after the call that asked for it returned (an A2A
//! task the host followed), for a session that may or may not be open.
//!
//! Rules: a session open on this host (live) gets the message as an
//! extension's `send_message(.., delivery, trigger_turn)` would: while a
//! run is in progress it is queued and the loop delivers it (a follow-up
//! when the agent has nothing left to do); while the session is idle it is
//! stored on the branch at once, as a `custom_message` entry, and a
//! follow-up or steer asks for a turn (the host's next
//! [`AgentSession::run_pending`](super::AgentSession::run_pending), which
//! [`AgentSession::pending`](super::AgentSession::pending) wakes up for).
//! A session not open here gets the same entry appended to its stored
//! branch (a concurrent writer's change is read and the append retried),
//! so opening it shows the message and the next run's model sees it. The
//! text is redacted with the user's and the host's secrets before it is
//! queued or stored. A message queued in a live session that ends before
//! its next run is lost with it: the one window where delivery is not
//! durable.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};

use oscova_core::UserInfo;

use super::error::AgentError;
use super::events::ExtensionMessage;
use super::host::AgentHost;
use super::state::{Delivery, Pending, Shared};
use crate::session::{EntryKind, MessageContent, Session, SessionId};

/// How many times an append to a stored session is retried after a
/// concurrent writer changed it.
const APPEND_ATTEMPTS: usize = 5;

/// Where [`AgentHost::deliver`] put a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Delivered {
    /// Queued in the live session's run in progress.
    Queued,
    /// Stored on the live session's branch (it was idle).
    StoredLive,
    /// Stored on the branch of a session not open on this host.
    Stored,
}

/// The sessions open on a host, weakly held.
#[derive(Default)]
pub(crate) struct LiveSessions(Mutex<Vec<Weak<Shared>>>);

impl LiveSessions {
    pub(crate) fn add(&self, shared: &Arc<Shared>) {
        let mut live = self.0.lock().unwrap_or_else(|p| p.into_inner());
        live.retain(|w| w.strong_count() > 0);
        live.push(Arc::downgrade(shared));
    }

    fn find(&self, user: &str, session: &str) -> Option<Arc<Shared>> {
        let live = self.0.lock().unwrap_or_else(|p| p.into_inner());
        live.iter().filter_map(Weak::upgrade).find(|s| {
            !s.stale.load(Ordering::Acquire)
                && s.bound.load(Ordering::Acquire)
                && s.session_id.as_str() == session
                && s.scope.user().id() == user
        })
    }
}

impl Shared {
    /// Queues `message` for `delivery`; `trigger` asks for a turn when
    /// idle (never for the next turn).
    pub(crate) fn enqueue(&self, message: Pending, delivery: Delivery, trigger: bool) {
        let mut state = self.state();
        let queues = &mut state.queues;
        match delivery {
            Delivery::Steer => queues.steer.push_back(message),
            Delivery::FollowUp => queues.follow_up.push_back(message),
            Delivery::NextTurn => queues.next_turn.push_back(message),
        }
        if trigger && delivery != Delivery::NextTurn {
            queues.trigger = true;
            self.wake.notify_one();
        }
    }
}

fn entry(message: &ExtensionMessage) -> EntryKind {
    EntryKind::CustomMessage {
        custom_type: message.custom_type.clone(),
        content: MessageContent::Text(message.content.clone()),
        details: message.details.clone(),
        display: message.display,
    }
}

impl AgentHost {
    /// Delivers `message` to `user`'s session `session` (its id), live or
    /// stored (see the module rules).
    ///
    /// ```no_run
    /// # async fn demo(agents: oscova_agent::session::agent::AgentHost) -> Result<(), oscova_agent::session::agent::AgentError> {
    /// use oscova_agent::session::agent::{Delivery, ExtensionMessage};
    /// use oscova_core::UserInfo;
    ///
    /// let message = ExtensionMessage::new("oscova.a2a.follow_up", "The report is ready: ...");
    /// agents
    ///     .deliver(&UserInfo::new("alice"), "0193...", message, Delivery::FollowUp)
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn deliver(
        &self,
        user: &UserInfo,
        session: &str,
        mut message: ExtensionMessage,
        delivery: Delivery,
    ) -> Result<Delivered, AgentError> {
        let id = SessionId::parse(session)?;
        let trigger = delivery != Delivery::NextTurn;
        if let Some(shared) = self.inner.live.find(user.id(), session) {
            message.content = shared.scope.redact(&message.content).into_owned();
            // The session's lock first: a run that starts now stores its
            // first message after this one, never in between.
            let mut stored = shared.session.lock().await;
            if shared.idle.load(Ordering::Acquire) {
                stored.append(entry(&message)).await?;
                drop(stored);
                if trigger {
                    shared.state().queues.trigger = true;
                    shared.wake.notify_one();
                }
                return Ok(Delivered::StoredLive);
            }
            drop(stored);
            shared.enqueue(Pending::Custom(message), delivery, trigger);
            return Ok(Delivered::Queued);
        }
        let scope = self.inner.plugins.user_scope(user.clone());
        message.content = scope.redact(&message.content).into_owned();
        let mut stored = Session::open_id(self.inner.store.clone(), user.clone(), &id).await?;
        let mut attempt = 1;
        loop {
            match stored.append(entry(&message)).await {
                Ok(_) => return Ok(Delivered::Stored),
                Err(e) if e.is_conflict() && attempt < APPEND_ATTEMPTS => {
                    attempt += 1;
                    stored.resume().await?;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl super::AgentSession {
    /// Returns when a message asks for a turn (delivered by
    /// [`AgentHost::deliver`] or sent by an extension with
    /// `trigger_turn`): then call
    /// [`run_pending`](super::AgentSession::run_pending). A host's input
    /// loop waits on it beside the person's input.
    pub async fn pending(&self) {
        let shared = self.shared.clone();
        loop {
            let notified = shared.wake.notified();
            if shared.state().queues.trigger {
                return;
            }
            notified.await;
        }
    }
}
