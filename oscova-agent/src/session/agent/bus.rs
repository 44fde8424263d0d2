//! The bus the extensions of one session share: named channels of JSON
//! values.
//!
//! Rules: [`EventBus::emit`] calls every handler of the channel, in the
//! order they subscribed, before it returns, and says how many ran; a
//! handler that panics is reported as an `extension_error` (event
//! `bus:<channel>`) and the next runs. The bus belongs to the session: a
//! switch starts a new, empty one.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;

use super::dispatch::panic_text;
use super::state::Shared;

type BusHandler = Arc<dyn Fn(&Value) + Send + Sync>;

#[derive(Default)]
pub(crate) struct Bus {
    handlers: Mutex<Vec<(String, usize, BusHandler)>>,
}

/// A handle on the session's bus, from
/// [`SessionApi::events`](super::SessionApi::events).
#[derive(Clone)]
pub struct EventBus {
    pub(crate) shared: Weak<Shared>,
    pub(crate) extension: usize,
}

impl std::fmt::Debug for EventBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBus")
            .field("extension", &self.extension)
            .finish()
    }
}

impl EventBus {
    /// Subscribes `handler` to `channel`.
    pub fn on(&self, channel: impl Into<String>, handler: impl Fn(&Value) + Send + Sync + 'static) {
        if let Some(shared) = self.shared.upgrade() {
            shared
                .bus
                .handlers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((channel.into(), self.extension, Arc::new(handler)));
        }
    }

    /// Sends `data` to every handler of `channel`; returns how many ran.
    pub fn emit(&self, channel: &str, data: &Value) -> usize {
        let Some(shared) = self.shared.upgrade() else {
            return 0;
        };
        let handlers: Vec<(usize, BusHandler)> = shared
            .bus
            .handlers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(c, _, _)| c == channel)
            .map(|(_, x, h)| (*x, h.clone()))
            .collect();
        let count = handlers.len();
        for (extension, handler) in handlers {
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| handler(data))) {
                let message = format!("the handler panicked: {}", panic_text(&*payload));
                shared.report_error(extension, &format!("bus:{channel}"), &message);
            }
        }
        count
    }
}
