//! Where a tool call comes from, as the host knows it: the session that
//! made it ([`CallOrigin`]) and, when the host is handling an inbound
//! A2A message, the hops that message has made ([`inbound_hops`]).
//!
//! Rules: both are tokio task-locals that only a host sets, around the
//! work it does for a session or an inbound message
//! ([`with_call_origin`], [`with_inbound_hops`]). A tool reads them
//! ([`call_origin`], [`inbound_hops`]); no argument of a call can set or
//! change them, so neither can the model. They follow a call through the
//! invoke pipeline because it polls a tool on the caller's task; work a
//! tool spawns onto another task does not see them. Outside a host's
//! scope there is no origin and the hop count is 0.

use std::future::Future;

/// The metadata key of the hop count in an A2A message (a number).
pub const HOPS_KEY: &str = "oscova.hops";

/// The session a tool call was made from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CallOrigin {
    /// The session's id in the host's session store.
    pub session: String,
}

impl CallOrigin {
    /// The origin of calls made by the session `session`.
    pub fn session(session: impl Into<String>) -> Self {
        Self {
            session: session.into(),
        }
    }
}

tokio::task_local! {
    static ORIGIN: CallOrigin;
    static INBOUND: u32;
}

/// Runs `work` (a session's tool calls) with `origin` as their origin.
/// For hosts.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use oscova_core::tool::origin::{CallOrigin, call_origin, with_call_origin};
///
/// assert_eq!(call_origin(), None);
/// let seen = with_call_origin(CallOrigin::session("s-1"), async { call_origin() }).await;
/// assert_eq!(seen, Some(CallOrigin::session("s-1")));
/// # });
/// ```
pub async fn with_call_origin<F: Future>(origin: CallOrigin, work: F) -> F::Output {
    ORIGIN.scope(origin, work).await
}

/// The origin of the call running now, `None` outside
/// [`with_call_origin`].
pub fn call_origin() -> Option<CallOrigin> {
    ORIGIN.try_with(Clone::clone).ok()
}

/// Runs `work` as the handling of an inbound message that has made
/// `hops` hops (its metadata's [`HOPS_KEY`]). For hosts.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use oscova_core::tool::origin::{inbound_hops, with_inbound_hops};
///
/// assert_eq!(inbound_hops(), 0);
/// assert_eq!(with_inbound_hops(3, async { inbound_hops() }).await, 3);
/// # });
/// ```
pub async fn with_inbound_hops<F: Future>(hops: u32, work: F) -> F::Output {
    INBOUND.scope(hops, work).await
}

/// The hops of the inbound message being handled, 0 outside
/// [`with_inbound_hops`].
pub fn inbound_hops() -> u32 {
    INBOUND.try_with(|hops| *hops).unwrap_or(0)
}

/// The hop count of an inbound message's `metadata` (absent, negative
/// or not a number: 0; a fraction is cut; past `u32::MAX`: `u32::MAX`).
///
/// ```
/// use oscova_core::tool::origin::hops_in;
/// // protobuf's Struct turns integers into doubles: `2.0`.
/// assert_eq!(hops_in(Some(&serde_json::json!({"oscova.hops": 2.0}))), 2);
/// assert_eq!(hops_in(None), 0);
/// ```
pub fn hops_in(metadata: Option<&serde_json::Value>) -> u32 {
    let value = metadata.and_then(|m| m.get(HOPS_KEY));
    match value.and_then(serde_json::Value::as_f64) {
        Some(n) if n.is_finite() && n > 0.0 => {
            if n >= f64::from(u32::MAX) {
                u32::MAX
            } else {
                // In range and positive: the cast only drops the fraction.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let hops = n as u32;
                hops
            }
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_count_is_read_as_the_python_sdk_writes_it() {
        assert_eq!(hops_in(Some(&json!({"oscova.hops": 2.0}))), 2);
        assert_eq!(hops_in(Some(&json!({"oscova.hops": 2}))), 2);
        assert_eq!(hops_in(Some(&json!({"oscova.hops": -1}))), 0);
        assert_eq!(hops_in(Some(&json!({"oscova.hops": "9"}))), 0);
        assert_eq!(hops_in(Some(&json!({"oscova.hops": 1e30}))), u32::MAX);
        assert_eq!(hops_in(None), 0);
    }

    #[tokio::test]
    async fn a_spawned_task_does_not_inherit_the_origin() {
        let inner = with_call_origin(CallOrigin::session("s"), async {
            tokio::spawn(async { call_origin() }).await.ok().flatten()
        })
        .await;
        assert_eq!(inner, None);
    }
}
