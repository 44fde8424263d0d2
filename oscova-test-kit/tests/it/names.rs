//! A wrong short name fails at the test's own line, not inside the kit.

use std::panic::{self, AssertUnwindSafe, Location};
use std::sync::{Arc, Mutex};

use oscova_core::prelude::*;
use oscova_test_kit::TestHost;

/// Echo tools.
pub struct EchoToolset;

#[toolset]
impl EchoToolset {
    /// Returns the text.
    pub fn echo(text: String) -> String {
        text
    }
}

/// Where `f` panicked, and with what, as the panic hook saw it. Only this
/// thread's panic is taken; other tests' panics go to the usual hook.
fn panic_site(f: impl FnOnce()) -> (String, String) {
    let this = std::thread::current().id();
    let seen: Arc<Mutex<Option<(String, String)>>> = Arc::default();
    let previous = Arc::new(panic::take_hook());
    {
        let (seen, previous) = (seen.clone(), previous.clone());
        panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() != this {
                return previous(info);
            }
            let at = info
                .location()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .unwrap_or_default();
            let message = info
                .payload()
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default();
            *seen.lock().unwrap() = Some((at, message));
        }));
    }
    let outcome = panic::catch_unwind(AssertUnwindSafe(f));
    drop(panic::take_hook());
    if let Ok(previous) = Arc::try_unwrap(previous) {
        panic::set_hook(previous);
    }
    assert!(outcome.is_err(), "it did not panic");
    seen.lock().unwrap().take().expect("the hook saw the panic")
}

#[tokio::test]
async fn an_unknown_short_name_panics_at_the_calling_line() {
    let kit = TestHost::for_toolset(|_: &AgentPluginContext| EchoToolset);
    let mut line = 0;
    let (at, message) = panic_site(|| {
        line = Location::caller().line() + 1;
        drop(kit.call("ecko", json!({"text": "hi"})));
    });
    assert_eq!(at, format!("{}:{line}", file!()));
    assert!(message.contains("no tool is named `ecko`"), "{message}");
    assert!(message.contains("test__echo__echo"), "{message}");

    let (at, _) = panic_site(|| {
        line = Location::caller().line() + 1;
        drop(kit.start("ecko", json!({})));
    });
    assert_eq!(at, format!("{}:{line}", file!()));

    // A right name still calls the tool.
    let call = kit.call("echo", json!({"text": "hi"})).await.assert_ok();
    assert_eq!(call.text(), "hi");
}
