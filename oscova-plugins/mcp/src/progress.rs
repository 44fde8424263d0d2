//! Progress notifications of one connection, routed to the call whose
//! request carried their token.
//!
//! Rules: a call registers its route just after rmcp has sent the request
//! (rmcp chooses the token then), so a quick server's first notifications
//! can arrive before the route exists; they are kept, at most
//! [`EARLY_PROGRESS`] of them (oldest dropped first, so a server cannot
//! grow the buffer), and handed to the route when it is added, in the
//! order they came. Nothing is routed after [`Routes::remove`].

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use oscova_core::ToolProgress;
use rmcp::model::ProgressToken;
use tokio::sync::mpsc;

/// How many progress notifications for tokens no call has claimed yet are
/// kept (a server may report progress before the call that sent the
/// request has registered its route; more than this, oldest first, are
/// dropped, so a server cannot grow the buffer without bound).
const EARLY_PROGRESS: usize = 64;

/// Where one connection's progress notifications go, by token.
///
/// A call registers its route just after rmcp has sent the request (rmcp
/// chooses the token then), so a quick server's first notifications can
/// arrive before the route: they are kept ([`EARLY_PROGRESS`] at most) and
/// handed to the route when it is added, in the order they came.
#[derive(Clone, Default)]
pub(crate) struct Routes(Arc<Mutex<RouteTable>>);

#[derive(Default)]
pub(crate) struct RouteTable {
    routes: HashMap<ProgressToken, mpsc::UnboundedSender<ToolProgress>>,
    early: VecDeque<(ProgressToken, ToolProgress)>,
}

impl Routes {
    /// Sends progress for `token` to `route` until [`remove`](Self::remove),
    /// starting with what arrived for it before.
    pub(crate) fn add(&self, token: ProgressToken, route: mpsc::UnboundedSender<ToolProgress>) {
        if let Ok(mut table) = self.0.lock() {
            let early = std::mem::take(&mut table.early);
            for (t, progress) in early {
                if t == token {
                    let _ = route.send(progress);
                } else {
                    table.early.push_back((t, progress));
                }
            }
            table.routes.insert(token, route);
        }
    }

    /// Stops routing `token`.
    pub(crate) fn remove(&self, token: &ProgressToken) {
        if let Ok(mut table) = self.0.lock() {
            table.routes.remove(token);
        }
    }

    /// Routes one notification, or keeps it until its call claims it.
    pub(crate) fn deliver(&self, token: &ProgressToken, progress: ToolProgress) {
        if let Ok(mut table) = self.0.lock() {
            match table.routes.get(token) {
                Some(route) => {
                    let _ = route.send(progress);
                }
                None => {
                    if table.early.len() == EARLY_PROGRESS {
                        table.early.pop_front();
                    }
                    table.early.push_back((token.clone(), progress));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    fn step(n: u32) -> ToolProgress {
        ToolProgress {
            message: format!("step {n}"),
            progress: Some(f64::from(n)),
            total: None,
        }
    }

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    #[test]
    fn progress_before_the_route_reaches_it_in_order_and_others_wait() {
        let routes = Routes::default();
        routes.deliver(&token(1), step(1));
        routes.deliver(&token(2), step(7));
        routes.deliver(&token(1), step(2));
        let (tx, mut rx) = mpsc::unbounded_channel();
        routes.add(token(1), tx);
        routes.deliver(&token(1), step(3));
        let got: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|p| p.message)
            .collect();
        assert_eq!(got, ["step 1", "step 2", "step 3"]);
        let (tx2, mut rx2) = mpsc::unbounded_channel();
        routes.add(token(2), tx2);
        assert_eq!(
            rx2.try_recv().map(|p| p.message).ok().as_deref(),
            Some("step 7")
        );
        routes.remove(&token(1));
        routes.deliver(&token(1), step(4));
        assert!(rx.try_recv().is_err(), "nothing after remove");
    }

    #[test]
    fn unclaimed_progress_is_bounded_oldest_first() {
        let routes = Routes::default();
        for n in 0..(EARLY_PROGRESS as u32 + 10) {
            routes.deliver(&token(9), step(n));
        }
        let (tx, mut rx) = mpsc::unbounded_channel();
        routes.add(token(9), tx);
        let got: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        assert_eq!(got.len(), EARLY_PROGRESS);
        assert_eq!(got[0].message, "step 10");
    }
}
