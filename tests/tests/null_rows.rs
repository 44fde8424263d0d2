//! The contract's two "null" rows, as they map to Rust (documented on
//! `AgentPlugin`, under "The contract's null rows").
//!
//! - *A null contribution factory throws during Configure*: there is no
//!   null factory; `None` is not a factory and does not compile (the
//!   `compile_fail` doctests on `AgentPlugin`).
//! - *A factory that returns null fails when Oscova publishes the tools*:
//!   a factory cannot return null either (`Option` does not compile); it
//!   returns `Err`. Tool metadata comes from the toolset's type, so
//!   publication never calls a factory and cannot fail on one; the `Err`
//!   is reported when a user scope is assembled, for that user only. This
//!   file tests that part. A provider factory's `Err` (the "provider
//!   factory throws or returns null" row) is in `host_failures.rs`.

#![allow(missing_docs)] // test fixtures, not API

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_core::prelude::*;
use oscova_core::{diagnostic::DiagnosticKind, diagnostic::Severity};
use serde_json::json;

pub struct LicensedToolset;

#[toolset]
impl LicensedToolset {
    /// Needs a licence nobody has.
    pub fn licensed() -> &'static str {
        "never"
    }
}

pub struct FreeToolset;

#[toolset]
impl FreeToolset {
    /// Works for everyone.
    pub fn free() -> &'static str {
        "free"
    }
}

/// A plugin whose first toolset can never be built: Rust's "returns null".
#[plugin(id = "null.rows")]
#[derive(Default)]
pub struct NoLicencePlugin {
    calls: Arc<AtomicUsize>,
}

impl AgentPlugin for NoLicencePlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        let calls = self.calls.clone();
        b.add_toolset(
            move |ctx: &AgentPluginContext| -> Result<LicensedToolset, String> {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(format!("no licence for {}", ctx.user_id()))
            },
        )
        .add_toolset(|_: &AgentPluginContext| FreeToolset);
    }
}

#[tokio::test]
async fn a_factory_that_cannot_build_fails_its_users_scope_not_publication() {
    let calls = Arc::new(AtomicUsize::new(0));
    let host = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(NoLicencePlugin {
            calls: calls.clone(),
        })
        .strict(true) // any publication error would fail the build
        .build()
        .unwrap();

    // Published from the type alone: no factory ran, nothing failed.
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert!(host.publication_errors().is_empty());
    assert!(host.diagnostics().is_empty(), "{:?}", host.diagnostics());
    let published: Vec<_> = host.tools().iter().map(|t| t.wire_name()).collect();
    assert_eq!(
        published,
        ["null_rows__licensed__licensed", "null_rows__free__free"]
    );

    // Each scope reports the failure for its own user; the rest works.
    for user in ["alice", "bob"] {
        let scope = host.user_scope(UserInfo::new(user));
        let diagnostics = scope.diagnostics();
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        assert_eq!(diagnostics[0].kind, DiagnosticKind::ToolsetFailed);
        assert_eq!(diagnostics[0].severity, Severity::Warning);
        assert_eq!(diagnostics[0].plugin.as_deref(), Some("null.rows"));
        assert!(
            diagnostics[0]
                .message
                .contains(&format!("no licence for {user}")),
            "{}",
            diagnostics[0].message
        );
        let refused = scope
            .invoke("null_rows__licensed__licensed", json!({}))
            .await;
        assert!(refused.is_error);
        assert!(
            refused.content.contains("not available for this user"),
            "{}",
            refused.content
        );
        let free = scope.invoke("null_rows__free__free", json!({})).await;
        assert_eq!(free.content, "free");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // The host's own diagnostics stay clean: the failure is per user.
    assert!(host.diagnostics().is_empty());
}
