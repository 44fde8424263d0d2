//! The `voice_*` events the session's extensions get.
//!
//! Rules: events are dispatched one after another, in the order the loop
//! queued them, on a task of their own, so a slow handler never holds the
//! audio, the turn-taking or a barge-in up. A handler that fails (an error
//! or a panic) is the session's `extension_error`, as for every event,
//! and the conversation goes on. A prompt is handed to the session only
//! after the events queued before it were dispatched, so a turn's
//! `voice_transcript` comes before the `input` event of its prompt.

use std::sync::Arc;
use std::time::Duration;

use oscova_core::provider::BoxFuture;
use tokio::sync::mpsc;

use super::conversation::Ask;
use crate::session::agent::{Event, SharedState, dispatch};

/// One dispatch, waiting for its turn.
type Job = Box<dyn FnOnce(Arc<SharedState>) -> BoxFuture<'static, ()> + Send>;

enum Notice {
    Dispatch(Job),
    Forward(Ask),
}

/// The events' task: queue events and prompts; `close` waits for the
/// queue to drain.
pub(super) struct Notifier {
    queue: mpsc::UnboundedSender<Notice>,
    task: tokio::task::JoinHandle<()>,
}

impl Notifier {
    /// Starts dispatching to `shared`'s handlers; prompts go on to `asks`.
    pub(super) fn start(shared: Arc<SharedState>, asks: mpsc::UnboundedSender<Ask>) -> Self {
        let (queue, mut queued) = mpsc::unbounded_channel::<Notice>();
        let task = tokio::spawn(async move {
            while let Some(notice) = queued.recv().await {
                match notice {
                    Notice::Dispatch(job) => job(shared.clone()).await,
                    Notice::Forward(ask) => {
                        let _ = asks.send(ask);
                    }
                }
            }
        });
        Self { queue, task }
    }

    /// Queues `event` for the extensions.
    pub(super) fn event<E: Event>(&self, event: E) {
        let job: Job = Box::new(move |shared| {
            Box::pin(async move {
                // Voice events only notify: dispatch reports a failed
                // handler as an `extension_error` and goes on.
                if let Err(error) = dispatch(&shared, event).await {
                    tracing::warn!(%error, event = E::NAME, "a voice event's dispatch failed");
                }
            })
        });
        let _ = self.queue.send(Notice::Dispatch(job));
    }

    /// Hands `ask` to the session once the events queued before it are
    /// dispatched.
    pub(super) fn then(&self, ask: Ask) {
        let _ = self.queue.send(Notice::Forward(ask));
    }

    /// Waits until every queued event was dispatched.
    pub(super) async fn close(self) {
        drop(self.queue);
        let _ = self.task.await;
    }
}

/// `at` in whole milliseconds.
pub(super) fn ms(at: Duration) -> u64 {
    u64::try_from(at.as_millis()).unwrap_or(u64::MAX)
}
