//! Bounded loops: how many A2A hops the message being handled has made.
//!
//! Rules: every message this client sends carries its hop count in the
//! message metadata under [`HOPS_KEY`]: one more than the hops of the
//! inbound message the host is handling when the tool runs (0 when the
//! call did not start from an A2A message). A host that serves A2A reads
//! the count from the inbound message's metadata and runs the agent's
//! work inside [`with_inbound_hops`]; a `send` made there whose inbound
//! count is already at the configured `max_hops` or past it is refused
//! before any connection. The count lives in a tokio task-local, so it
//! follows the call through the host's invoke pipeline (which polls a tool
//! on the caller's task) and cannot be set by a tool's arguments, that is
//! by the model.

use std::future::Future;

/// The metadata key of the hop count in an A2A message.
pub const HOPS_KEY: &str = "oscova.hops";

tokio::task_local! {
    static INBOUND: u32;
}

/// Runs `work` as the handling of an inbound message that has made `hops`
/// hops (its metadata's [`HOPS_KEY`]).
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use oscova_plugin_a2a::hops::{inbound_hops, with_inbound_hops};
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

/// The hop count of an inbound A2A message's `metadata` (absent, negative
/// or not a number: 0; a fraction is cut; past `u32::MAX`: `u32::MAX`).
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
        // protobuf's Struct turns integers into doubles: `2.0`.
        assert_eq!(hops_in(Some(&json!({"oscova.hops": 2.0}))), 2);
        assert_eq!(hops_in(Some(&json!({"oscova.hops": 2}))), 2);
        assert_eq!(hops_in(Some(&json!({"oscova.hops": -1}))), 0);
        assert_eq!(hops_in(Some(&json!({"oscova.hops": "9"}))), 0);
        assert_eq!(hops_in(Some(&json!({"oscova.hops": 1e30}))), u32::MAX);
        assert_eq!(hops_in(None), 0);
    }
}
