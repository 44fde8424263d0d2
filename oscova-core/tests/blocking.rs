//! A slow synchronous tool and the calls around it: with
//! `blocking_sync_tools`, its body runs off the runtime's worker, so other
//! calls on the same runtime carry on; without it, the body holds its
//! worker until it returns. With it, a tool whose bodies have been quick
//! runs in place, so the first of its bodies to block holds the worker
//! once, and sends the tool's next bodies off it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use oscova_core::UserScope;
use oscova_core::prelude::*;

/// What one test's slow tool and the test tell each other.
#[derive(Debug)]
pub struct Flags {
    /// Whether `sometimes` blocks like `slow`.
    block: AtomicBool,
    started: AtomicBool,
    stop: AtomicBool,
    finished: AtomicBool,
}

impl Flags {
    const fn new() -> Self {
        Self {
            block: AtomicBool::new(false),
            started: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            finished: AtomicBool::new(false),
        }
    }
}

impl Flags {
    /// Ready for another slow body.
    fn reset(&self) {
        for flag in [&self.started, &self.stop, &self.finished] {
            flag.store(false, Ordering::SeqCst);
        }
    }
}

/// A slow synchronous tool, one slow when told, and a quick async one.
pub struct PaceToolset {
    flags: &'static Flags,
}

#[toolset]
impl PaceToolset {
    /// Blocks its thread until told to stop (at most two seconds).
    pub fn slow(&self) -> String {
        let flags = self.flags;
        flags.started.store(true, Ordering::SeqCst);
        let began = Instant::now();
        while !flags.stop.load(Ordering::SeqCst) && began.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(5));
        }
        flags.finished.store(true, Ordering::SeqCst);
        "done".to_owned()
    }

    /// Quick, unless told to block: then as `slow`.
    pub fn sometimes(&self) -> String {
        if self.flags.block.load(Ordering::SeqCst) {
            self.slow()
        } else {
            "quick".to_owned()
        }
    }

    /// Answers at once.
    pub async fn quick(&self) -> String {
        "quick".to_owned()
    }
}

/// Contributes the pace toolset over one test's flags.
#[plugin(id = "pace")]
#[derive(Default)]
pub struct PacePlugin {
    flags: Option<&'static Flags>,
}

impl AgentPlugin for PacePlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        static UNUSED: Flags = Flags::new();
        let flags = self.flags.unwrap_or(&UNUSED);
        b.add_toolset(move |_: &AgentPluginContext| PaceToolset { flags });
    }
}

fn host(flags: &'static Flags, off_worker: bool) -> PluginHost {
    let builder = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(PacePlugin { flags: Some(flags) });
    let builder = if off_worker {
        builder.blocking_sync_tools(2)
    } else {
        builder
    };
    builder.build().unwrap()
}

/// Starts `tool`, waits until its body runs, then runs `quick` as another
/// task; says whether `quick` came back while `tool`'s body still ran.
async fn quick_returns_first(flags: &'static Flags, scope: &UserScope, tool: &'static str) -> bool {
    let slow = tokio::spawn({
        let scope = scope.clone();
        async move { scope.invoke(tool, json!({})).await.content }
    });
    while !flags.started.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let quick = tokio::spawn({
        let scope = scope.clone();
        async move { scope.invoke("pace__pace__quick", json!({})).await }
    });
    assert_eq!(quick.await.unwrap().content, "quick");
    let first = !flags.finished.load(Ordering::SeqCst);
    flags.stop.store(true, Ordering::SeqCst);
    assert_eq!(slow.await.unwrap(), "done");
    first
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn off_the_worker_a_slow_synchronous_tool_stalls_no_other_call() {
    static FLAGS: Flags = Flags::new();
    let scope = host(&FLAGS, true).user_scope(UserInfo::new("u"));
    assert!(
        quick_returns_first(&FLAGS, &scope, "pace__pace__slow").await,
        "the quick call waited for the slow body"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn in_place_a_slow_synchronous_tool_holds_its_worker() {
    static FLAGS: Flags = Flags::new();
    let scope = host(&FLAGS, false).user_scope(UserInfo::new("u"));
    // The one worker is busy in the slow body until it gives up.
    assert!(!quick_returns_first(&FLAGS, &scope, "pace__pace__slow").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn quick_bodies_run_in_place_until_one_turns_slow_which_sends_the_next_off_the_worker() {
    static FLAGS: Flags = Flags::new();
    let scope = host(&FLAGS, true).user_scope(UserInfo::new("u"));
    for _ in 0..3 {
        let result = scope.invoke("pace__pace__sometimes", json!({})).await;
        assert_eq!(result.content, "quick");
    }
    // Its bodies were quick, so this one runs in place: when it blocks,
    // it holds the one worker.
    FLAGS.block.store(true, Ordering::SeqCst);
    assert!(
        !quick_returns_first(&FLAGS, &scope, "pace__pace__sometimes").await,
        "a body of a tool known to be quick ran off the worker"
    );
    // That body was slow, so the next one runs off the worker.
    FLAGS.reset();
    assert!(
        quick_returns_first(&FLAGS, &scope, "pace__pace__sometimes").await,
        "the tool's body blocked its worker again"
    );
}
