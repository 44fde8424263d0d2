//! A slow synchronous tool and the calls around it: with
//! `blocking_sync_tools`, its body runs off the runtime's worker, so other
//! calls on the same runtime carry on; without it, the body holds its
//! worker until it returns.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use oscova_core::prelude::*;

/// What one test's slow tool and the test tell each other.
#[derive(Debug)]
pub struct Flags {
    started: AtomicBool,
    stop: AtomicBool,
    finished: AtomicBool,
}

impl Flags {
    const fn new() -> Self {
        Self {
            started: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            finished: AtomicBool::new(false),
        }
    }
}

/// One slow synchronous tool and one quick async one.
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

/// Starts `slow`, waits until its body runs, then runs `quick` as another
/// task; says whether `quick` came back while `slow`'s body still ran.
async fn quick_returns_first(flags: &'static Flags, off_worker: bool) -> bool {
    let builder = PluginHost::builder()
        .plugins([])
        .plugin_instance(PacePlugin { flags: Some(flags) });
    let builder = if off_worker {
        builder.blocking_sync_tools(2)
    } else {
        builder
    };
    let host = builder.build().unwrap();
    let scope = host.user_scope(UserInfo::new("u"));
    let slow = tokio::spawn({
        let scope = scope.clone();
        async move { scope.invoke("pace__pace__slow", json!({})).await.content }
    });
    while !flags.started.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let quick = tokio::spawn(async move { scope.invoke("pace__pace__quick", json!({})).await });
    assert_eq!(quick.await.unwrap().content, "quick");
    let first = !flags.finished.load(Ordering::SeqCst);
    flags.stop.store(true, Ordering::SeqCst);
    assert_eq!(slow.await.unwrap(), "done");
    first
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn off_the_worker_a_slow_synchronous_tool_stalls_no_other_call() {
    static FLAGS: Flags = Flags::new();
    assert!(
        quick_returns_first(&FLAGS, true).await,
        "the quick call waited for the slow body"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn in_place_a_slow_synchronous_tool_holds_its_worker() {
    static FLAGS: Flags = Flags::new();
    // The one worker is busy in the slow body until it gives up.
    assert!(!quick_returns_first(&FLAGS, false).await);
}
