//! Running one test again in a process of its own under a given umask.
//!
//! The umask is the process's, and a test binary runs its tests on
//! threads side by side: setting it in a test would change the files every
//! other test makes meanwhile. [`run`] starts the test binary again, with
//! only that test selected, through `sh -c 'umask ...; exec ...'`, and
//! runs the body there; before the body runs it checks (on Linux, from
//! `/proc/self/status`) that the umask is the one asked for, so a test of
//! the modes files are created with cannot pass under a stricter umask
//! than it meant to try.
//!
//! ```no_run
//! // In `tests/it/store.rs` (the name is the test's own, as the test
//! // harness knows it: module, then function):
//! #[test]
//! fn files_are_private_whatever_the_umask() {
//!     oscova_test_support::umask::run("store::files_are_private_whatever_the_umask", 0o000, || {
//!         // make the files and check their modes
//!     });
//! }
//! ```

use std::process::Command;

/// Set to the test's name in the copy of the test binary that runs under
/// the umask.
const INSIDE: &str = "OSCOVA_TEST_UMASK";

/// Runs `body` in a copy of this test binary whose umask is `umask`;
/// `test` must be the test's name as the harness reports it.
///
/// # Panics
///
/// When the copy fails, does not run the test, or runs under another
/// umask.
pub fn run(test: &str, umask: u32, body: impl FnOnce()) {
    if std::env::var(INSIDE).as_deref() == Ok(test) {
        if let Ok(status) = std::fs::read_to_string("/proc/self/status")
            && let Some(line) = status.lines().find(|l| l.starts_with("Umask:"))
        {
            let now = u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap_or(u32::MAX);
            assert_eq!(now, umask, "the umask is {now:03o}, not {umask:03o}");
        }
        body();
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new("sh")
        .arg("-c")
        .arg("umask \"$0\" && exec \"$@\"")
        .arg(format!("{umask:03o}"))
        .arg(exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(INSIDE, test)
        .output()
        .expect("run the test under its umask");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "`{test}` failed under umask {umask:03o}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    // A filter that matched nothing also exits 0: make sure the body ran.
    assert!(
        stdout.contains("1 passed"),
        "`{test}` did not run under umask {umask:03o} (is the name right?)\n{stdout}"
    );
}
