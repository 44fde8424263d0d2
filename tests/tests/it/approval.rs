//! Approval: `Required` tools go through the host's handler and a denial
//! never runs the method; `Default` follows the host policy; `NotRequired`
//! runs unasked; with no handler, anything needing approval is refused.

#![allow(missing_docs)] // test fixtures, not API

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use oscova_core::prelude::*;
use oscova_core::{
    ApprovalDecision, ApprovalRequest, InvokeError, PluginHostBuilder, host::DefaultApproval,
    linked_plugins,
};
use serde_json::json;

static RUNS: LazyLock<Arc<AtomicUsize>> = LazyLock::new(Default::default);

pub struct GuardedToolset;

#[toolset]
impl GuardedToolset {
    /// Deletes everything (pretend).
    #[tool(approval = Required)]
    pub fn wipe(target: String) -> String {
        RUNS.fetch_add(1, Ordering::SeqCst);
        format!("wiped {target}")
    }

    /// Reads a value.
    pub fn peek() -> u32 {
        RUNS.fetch_add(1, Ordering::SeqCst);
        7
    }

    /// Always safe.
    #[tool(approval = NotRequired)]
    pub fn ping() -> &'static str {
        RUNS.fetch_add(1, Ordering::SeqCst);
        "pong"
    }
}

#[plugin(id = "guarded")]
pub struct GuardedPlugin;
impl AgentPlugin for GuardedPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| GuardedToolset);
    }
}

fn builder() -> PluginHostBuilder {
    PluginHost::builder().plugins(linked_plugins![GuardedPlugin])
}

fn runs() -> usize {
    RUNS.load(Ordering::SeqCst)
}

// The tests share one counter; each checks the change it causes, under a
// lock so parallel tests do not interleave.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test]
async fn a_denied_call_never_runs_the_method() {
    let _serial = SERIAL.lock().await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let host = builder()
        .approval_handler(move |req: &ApprovalRequest<'_>| {
            log.lock()
                .unwrap()
                .push((req.wire_name.to_owned(), req.arguments.clone()));
            ApprovalDecision::Deny(Some("the user said no".into()))
        })
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("u"));
    let before = runs();
    let err = scope
        .invoke("guarded__guarded__wipe", json!({"target": "/"}))
        .checked()
        .await
        .unwrap_err();
    assert!(err.is_refusal());
    assert_eq!(
        err,
        InvokeError::Denied {
            tool: "guarded__guarded__wipe".into(),
            reason: Some("the user said no".into())
        }
    );
    let result = scope
        .invoke("guarded__guarded__wipe", json!({"target": "/"}))
        .await;
    assert!(result.is_error);
    assert!(
        result.content.contains("the user said no"),
        "{}",
        result.content
    );
    assert_eq!(runs(), before, "a denied method must not run");
    assert_eq!(
        asked.lock().unwrap()[0],
        ("guarded__guarded__wipe".to_owned(), json!({"target": "/"}))
    );

    // Default and NotRequired tools run unasked under the default policy.
    assert_eq!(
        scope
            .invoke("guarded__guarded__peek", json!({}))
            .await
            .content,
        "7"
    );
    assert_eq!(
        scope
            .invoke("guarded__guarded__ping", json!({}))
            .await
            .content,
        "pong"
    );
    assert_eq!(asked.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn an_approved_call_runs() {
    let _serial = SERIAL.lock().await;
    let host = builder()
        .approval_handler(|_: &ApprovalRequest<'_>| true)
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("u"));
    let before = runs();
    let r = scope
        .invoke("guarded__guarded__wipe", json!({"target": "tmp"}))
        .await;
    assert_eq!(r.content, "wiped tmp");
    assert_eq!(runs(), before + 1);
}

#[tokio::test]
async fn default_tools_follow_the_host_policy() {
    let _serial = SERIAL.lock().await;
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    let host = builder()
        .default_approval(DefaultApproval::Required)
        .approval_handler(move |req: &ApprovalRequest<'_>| {
            count.fetch_add(1, Ordering::SeqCst);
            req.wire_name != "guarded__guarded__peek"
        })
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("u"));
    let before = runs();
    let r = scope.invoke("guarded__guarded__peek", json!({})).await;
    assert!(r.is_error, "{r:?}");
    assert_eq!(runs(), before);
    // NotRequired still runs unasked.
    assert_eq!(
        scope
            .invoke("guarded__guarded__ping", json!({}))
            .await
            .content,
        "pong"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn without_a_handler_required_tools_are_refused() {
    let _serial = SERIAL.lock().await;
    let host = builder().build().unwrap();
    let scope = host.user_scope(UserInfo::new("u"));
    let before = runs();
    let err = scope
        .invoke("guarded__guarded__wipe", json!({"target": "/"}))
        .checked()
        .await
        .unwrap_err();
    match err {
        InvokeError::Denied {
            reason: Some(r), ..
        } => assert!(r.contains("no approval handler")),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(runs(), before);
}
