//! The panic hook: a panic's report passes the redactor.
//!
//! Rules: Rust's default hook prints a panic's message as it is, and a
//! message can quote anything the panicking code held, a key included
//! (a tool body that panics is caught by the host, but the hook has
//! printed by then). [`install`] replaces it, once per process, with one
//! that prints the same report (thread, location, message, and the
//! backtrace when `RUST_BACKTRACE` asks for one) after the host's
//! redactor has replaced every secret it knows. Installing again only
//! swaps the redactor the hook reads, so hooks never stack.

use std::any::Any;
use std::backtrace::{Backtrace, BacktraceStatus};
use std::io::Write;
use std::panic::PanicHookInfo;
use std::sync::{Once, PoisonError, RwLock};

use oscova_core::redact::Redactor;

/// The redactor the hook reads; swapped by each [`install`].
static REDACTOR: RwLock<Option<Redactor>> = RwLock::new(None);

/// Makes panic reports pass `redactor` (clones share its values, so a
/// secret added later is redacted too).
pub(crate) fn install(redactor: &Redactor) {
    *REDACTOR.write().unwrap_or_else(PoisonError::into_inner) = Some(redactor.clone());
    static HOOK: Once = Once::new();
    HOOK.call_once(|| std::panic::set_hook(Box::new(report)));
}

fn report(info: &PanicHookInfo<'_>) {
    let thread = std::thread::current();
    let location = info
        .location()
        .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
        .unwrap_or_default();
    let mut text = format!(
        "thread '{}' panicked{location}:\n{}\n",
        thread.name().unwrap_or("<unnamed>"),
        message(info.payload())
    );
    let backtrace = Backtrace::capture();
    match backtrace.status() {
        BacktraceStatus::Captured => text.push_str(&format!("stack backtrace:\n{backtrace}\n")),
        _ => text.push_str(
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
        ),
    }
    // A poisoned slot still holds a usable redactor: the write never panics midway.
    let text = match &*REDACTOR.read().unwrap_or_else(PoisonError::into_inner) {
        Some(redactor) => redactor.redact(&text).into_owned(),
        None => text,
    };
    emit(&text);
}

/// The payload as text: `panic!` gives a `&str` or a `String`.
fn message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("Box<dyn Any>")
}

#[cfg(not(test))]
fn emit(text: &str) {
    let text = crate::term::for_terminal(text);
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

#[cfg(test)]
thread_local! {
    /// What the hook printed on this thread, for the tests.
    static PRINTED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[cfg(test)]
fn emit(text: &str) {
    PRINTED.with(|p| p.borrow_mut().write_all(text.as_bytes()).ok());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_report_is_redacted() {
        const SECRET: &str = "sk-panic-secret-9876";
        let redactor = Redactor::new();
        install(&redactor);
        install(&redactor); // a second install swaps, never stacks
        redactor.add(SECRET);
        let caught = std::panic::catch_unwind(|| panic!("bad key {SECRET}"));
        assert!(caught.is_err());
        let printed = PRINTED.with(|p| String::from_utf8_lossy(&p.borrow()).into_owned());
        assert!(printed.contains("panicked at"), "{printed}");
        assert!(printed.contains("bad key [REDACTED]"), "{printed}");
        assert!(!printed.contains(SECRET), "{printed}");
        let owned = std::panic::catch_unwind(|| std::panic::panic_any(format!("{SECRET}!")));
        assert!(owned.is_err());
        let printed = PRINTED.with(|p| String::from_utf8_lossy(&p.borrow()).into_owned());
        assert!(printed.contains("[REDACTED]!") && !printed.contains(SECRET));
    }
}
