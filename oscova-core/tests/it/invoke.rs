//! The one way to invoke: `scope.invoke(name, args)` and the options on
//! its builder — a per-call approval handler, a start hook, JSON text,
//! `checked`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_core::InvokeError;
use oscova_core::host::invoke::Arguments;
use oscova_core::host::{ApprovalHandler, DefaultApproval};
use oscova_core::prelude::*;
use oscova_core::provider::BoxFuture;

static WIPES: AtomicUsize = AtomicUsize::new(0);

/// One tool that needs approval, one that does not.
pub struct GuardedToolset;

#[toolset]
impl GuardedToolset {
    /// Wipes nothing, but counts.
    #[tool(approval = Required)]
    pub fn wipe(target: String) -> String {
        WIPES.fetch_add(1, Ordering::SeqCst);
        format!("wiped {target}")
    }

    /// Stamps nothing, but counts (the start hook's test).
    #[tool(approval = Required)]
    pub fn stamp() -> String {
        STAMPS.fetch_add(1, Ordering::SeqCst);
        "stamped".to_owned()
    }

    /// Reads nothing.
    #[tool(approval = NotRequired)]
    pub fn peek() -> String {
        "peeked".to_owned()
    }

    /// Yields once, then counts and answers `word`.
    #[tool(approval = NotRequired)]
    pub async fn pause(word: String) -> String {
        tokio::task::yield_now().await;
        PAUSES.fetch_add(1, Ordering::SeqCst);
        word
    }
}

static PAUSES: AtomicUsize = AtomicUsize::new(0);
static STAMPS: AtomicUsize = AtomicUsize::new(0);

/// Contributes the guarded toolset.
#[plugin(id = "inv.guarded")]
pub struct GuardedPlugin;

impl AgentPlugin for GuardedPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| GuardedToolset);
    }
}

const WIPE: &str = "inv_guarded__guarded__wipe";
const PEEK: &str = "inv_guarded__guarded__peek";
const STAMP: &str = "inv_guarded__guarded__stamp";

/// Answers every request the same way and counts the questions.
struct Counting {
    approve: bool,
    asked: Arc<AtomicUsize>,
}

impl ApprovalHandler for Counting {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, ApprovalDecision> {
        assert_eq!(request.wire_name, WIPE);
        self.asked.fetch_add(1, Ordering::SeqCst);
        let decision = ApprovalDecision::from(self.approve);
        Box::pin(async move { decision })
    }
}

fn host(handler: Option<Counting>) -> PluginHost {
    let builder = PluginHost::builder()
        .plugins(linked_plugins![GuardedPlugin])
        .default_approval(DefaultApproval::Required);
    match handler {
        Some(h) => builder.approval_handler(h),
        None => builder,
    }
    .build()
    .unwrap()
}

#[tokio::test]
async fn a_per_call_handler_is_asked_instead_of_the_hosts() {
    let host_asked = Arc::new(AtomicUsize::new(0));
    let host = host(Some(Counting {
        approve: false,
        asked: host_asked.clone(),
    }));
    let scope = host.user_scope(UserInfo::new("u"));
    let call_asked = Arc::new(AtomicUsize::new(0));
    let before = WIPES.load(Ordering::SeqCst);

    let r = scope
        .invoke(WIPE, json!({"target": "tmp"}))
        .approval_handler(Counting {
            approve: true,
            asked: call_asked.clone(),
        })
        .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(r.content, "wiped tmp");
    assert_eq!(call_asked.load(Ordering::SeqCst), 1);
    assert_eq!(host_asked.load(Ordering::SeqCst), 0);
    assert_eq!(WIPES.load(Ordering::SeqCst) - before, 1);

    // Without one, the host's handler decides (here: no), and the method
    // does not run.
    let err = scope
        .invoke(WIPE, json!({"target": "tmp"}))
        .checked()
        .await
        .unwrap_err();
    assert!(matches!(err, InvokeError::Denied { .. }), "{err:?}");
    assert_eq!(host_asked.load(Ordering::SeqCst), 1);
    assert_eq!(WIPES.load(Ordering::SeqCst) - before, 1);
}

#[tokio::test]
async fn a_per_call_handler_does_not_change_which_tools_need_approval() {
    let host = host(None);
    let scope = host.user_scope(UserInfo::new("u"));
    let asked = Arc::new(AtomicUsize::new(0));
    let r = scope
        .invoke(PEEK, json!({}))
        .approval_handler(Counting {
            approve: false,
            asked: asked.clone(),
        })
        .await;
    assert_eq!(r.content, "peeked");
    assert_eq!(asked.load(Ordering::SeqCst), 0);

    // With no handler at all, a tool that needs approval is refused.
    let err = scope
        .invoke(WIPE, Arguments::json(r#"{"target": "x"}"#))
        .checked()
        .await
        .unwrap_err();
    assert!(matches!(err, InvokeError::Denied { .. }), "{err:?}");
}

#[tokio::test]
async fn json_text_is_parsed_strictly_and_unknown_names_are_refused_first() {
    let host = host(None);
    let scope = host.user_scope(UserInfo::new("u"));
    let dup = scope
        .invoke(PEEK, Arguments::json(r#"{"a": 1, "a": 2}"#))
        .checked()
        .await
        .unwrap_err();
    assert_eq!(dup.kind(), "invalid_arguments", "{dup}");
    // The name is looked up before the text is parsed.
    let unknown = scope
        .invoke("inv_guarded__guarded__nope", Arguments::json("not json"))
        .checked()
        .await
        .unwrap_err();
    assert_eq!(unknown.kind(), "unknown_tool", "{unknown}");
    // As a plain result, the same refusal is an error result.
    let r = scope
        .invoke("inv_guarded__guarded__nope", Arguments::json("{}"))
        .await;
    assert!(r.is_error);
    assert_eq!(r.details, json!({"error": "unknown_tool"}));
}

#[tokio::test]
async fn options_set_after_the_first_poll_do_not_restart_the_call() {
    use std::future::Future;
    use std::task::{Context, Waker};

    let host = host(None);
    let scope = host.user_scope(UserInfo::new("u"));
    let mut call = scope.invoke("inv_guarded__guarded__pause", json!({"word": "paused"}));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(std::pin::Pin::new(&mut call).poll(&mut cx).is_pending());
    // Converting the started call keeps its stage: the tool runs once,
    // with the arguments it was started with.
    let result = call.checked().progress(|_: ToolProgress| {}).await.unwrap();
    assert_eq!(result.content, "paused");
    assert_eq!(PAUSES.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_start_hook_runs_after_approval_and_before_the_body_and_can_stop_it() {
    let host = host(None);
    let scope = host.user_scope(UserInfo::new("u"));
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let approving = {
        let order = order.clone();
        move |_: &ApprovalRequest<'_>| {
            order.lock().unwrap().push("approved".to_owned());
            true
        }
    };
    let hook = {
        let order = order.clone();
        move |tool: &str| {
            // The body has not run yet: the count is what it was.
            order
                .lock()
                .unwrap()
                .push(format!("start {tool} {}", STAMPS.load(Ordering::SeqCst)));
            async { Ok(()) }
        }
    };
    let before = STAMPS.load(Ordering::SeqCst);
    let r = scope
        .invoke(STAMP, json!({}))
        .approval_handler(approving)
        .start_hook(hook)
        .await;
    assert_eq!(r.content, "stamped");
    assert_eq!(
        *order.lock().unwrap(),
        ["approved".to_owned(), format!("start {STAMP} {before}")]
    );

    // A denied call never reaches the hook.
    let reached = Arc::new(AtomicUsize::new(0));
    let counted = reached.clone();
    let denied = scope
        .invoke(STAMP, json!({}))
        .approval_handler(|_: &ApprovalRequest<'_>| false)
        .start_hook(move |_: &str| {
            counted.fetch_add(1, Ordering::SeqCst);
            async { Ok(()) }
        })
        .checked()
        .await
        .unwrap_err();
    assert_eq!(denied.kind(), "denied");
    assert_eq!(reached.load(Ordering::SeqCst), 0);

    // A hook's error stops the call before the body, even a synchronous
    // one that would otherwise run in place.
    let stopped = scope
        .invoke(PEEK, json!({}))
        .start_hook(|_: &str| async { Err("not recorded".to_owned()) })
        .checked()
        .await
        .unwrap_err();
    assert_eq!(
        stopped,
        InvokeError::Blocked {
            tool: PEEK.to_owned(),
            reason: "not recorded".to_owned()
        }
    );
    assert_eq!(STAMPS.load(Ordering::SeqCst) - before, 1);
}
