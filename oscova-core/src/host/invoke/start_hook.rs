//! The call's start hook: the caller's last word before a tool's body runs.
//!
//! Rules: the hook is awaited once per call, after the layers and
//! the approval (so a call that is refused, denied or cancelled before
//! then never reaches it) and before the body is entered; nothing of the
//! tool has run yet when it is called, and nothing runs when it fails.
//! Its failure ends the call as [`InvokeError::Blocked`](super::InvokeError::Blocked)
//! with the hook's reason. A call with a start hook never runs in place
//! (`future.rs`): the hook may wait, so the call takes the slow path.
//! What it is for: a durable "started" mark, committed before the tool
//! can have any effect, so that a process killed mid-call is known to
//! have started it (the session agent's rule that each call runs at most
//! once).

use std::future::Future;

use crate::provider::BoxFuture;

/// Told that a call is about to enter its tool's body (see the module
/// rules). Closures `Fn(&str) -> impl Future<Output = Result<(), String>>`
/// implement it; the `&str` is the tool's wire name.
pub trait StartHook: Send + Sync + 'static {
    /// The call of `wire_name` passed every check and is about to run;
    /// `Err(reason)` stops it (nothing of it runs).
    fn starting<'a>(&'a self, wire_name: &'a str) -> BoxFuture<'a, Result<(), String>>;
}

impl<F, Fut> StartHook for F
where
    F: Fn(&str) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    fn starting<'a>(&'a self, wire_name: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(self(wire_name))
    }
}
