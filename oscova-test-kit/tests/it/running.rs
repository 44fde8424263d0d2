//! `TestScope::start`: a call the test cancels while its body runs, with
//! the body's own cleanup observed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use oscova_core::prelude::*;
use oscova_core::tool::LogLevel;
use oscova_test_kit::TestHost;

/// Downloads into a partial file, removed again on cancellation.
pub struct DownloadToolset {
    partial: Arc<AtomicBool>,
}

#[toolset]
impl DownloadToolset {
    /// Downloads until done or cancelled.
    pub async fn download(&self, invocation: &ToolInvocation<'_>) -> Result<String, String> {
        self.partial.store(true, Ordering::SeqCst);
        invocation.report(ToolProgress::message("downloading"));
        // The download itself never ends here: only cancellation stops it.
        invocation.cancellation_token().cancelled().await;
        self.partial.store(false, Ordering::SeqCst);
        invocation.log(LogLevel::Info, "removed the partial file");
        Err("cancelled; the partial file was removed".into())
    }

    /// Downloads and never looks at its cancellation token.
    pub async fn stubborn(&self, invocation: &ToolInvocation<'_>) -> String {
        invocation.report(ToolProgress::message("downloading"));
        std::future::pending::<()>().await;
        "never".into()
    }

    /// Finishes at once.
    pub async fn quick(&self) -> String {
        "done".into()
    }
}

fn kit(partial: &Arc<AtomicBool>) -> oscova_test_kit::TestHostBuilder {
    let partial = partial.clone();
    TestHost::builder().toolset(move |_: &AgentPluginContext| DownloadToolset {
        partial: partial.clone(),
    })
}

#[tokio::test]
async fn a_cancelled_body_sees_its_token_and_its_cleanup_is_observed() {
    let partial = Arc::new(AtomicBool::new(false));
    let kit = kit(&partial).build();

    let mut running = kit.start("download", json!({}));
    assert_eq!(running.wire_name(), "test__download__download");
    let started = running.next_progress().await.expect("the tool reports");
    assert_eq!(started.message, "downloading");
    assert!(partial.load(Ordering::SeqCst), "the body is running");
    assert!(!running.is_finished());

    running.cancel();
    let call = running
        .finish()
        .await
        .assert_error("the partial file was removed");
    assert!(!partial.load(Ordering::SeqCst), "the cleanup ran");
    assert_eq!(call.logs[0].message, "removed the partial file");
    assert_eq!(call.progress_messages(), ["downloading"]);
}

#[tokio::test]
async fn a_body_that_ignores_its_token_is_dropped_after_the_grace_period() {
    let partial = Arc::new(AtomicBool::new(false));
    let kit = kit(&partial)
        .cancellation_grace(Duration::from_millis(50))
        .build();

    let mut running = kit.start("stubborn", json!({}));
    running.next_progress().await.expect("the tool reports");
    running.cancel();
    let call = running.finish().await.assert_error("was cancelled");
    assert_eq!(call.details()["error"], "cancelled");
}

#[tokio::test]
async fn an_uncancelled_call_finishes_as_call_would() {
    let kit = kit(&Arc::default()).build();
    let running = kit.start("quick", json!({}));
    let call = running.finish().await.assert_ok();
    assert_eq!(call.text(), "done");
}

#[tokio::test]
async fn call_cancellable_still_stops_at_once_without_the_cleanup() {
    let partial = Arc::new(AtomicBool::new(false));
    let kit = kit(&partial).build();
    let token = CancellationToken::new();
    let cancel = token.clone();
    let (call, ()) = tokio::join!(kit.call_cancellable("download", json!({}), token), async {
        tokio::task::yield_now().await;
        cancel.cancel();
    });
    call.assert_error("was cancelled");
    assert!(
        partial.load(Ordering::SeqCst),
        "the body was dropped mid-way"
    );
}
