//! Running one test inside a network namespace of its own, where private,
//! link-local and metadata addresses exist only on its loopback device.
//!
//! Rules it keeps:
//! - Nothing of a test run here can reach this machine's real networks: the
//!   test binary is started again under `unshare -rn` (a new user and
//!   network namespace) with only that test selected, and before the body
//!   runs it checks that `lo` is the only interface it can see.
//! - The addresses a test asks for are added to `lo` inside the namespace,
//!   so a server can listen on `10.0.0.5` or `169.254.169.254` and count
//!   what reaches it, and a client that connects there reaches that server
//!   and nothing else.
//! - Where namespaces cannot be made (no `unshare`, user namespaces
//!   disabled), the test fails, saying why and what it needs: a boundary
//!   test that did not run its check must never pass (CI can make them;
//!   `unshare` is util-linux, `ip` is iproute2, and the kernel must allow
//!   unprivileged user namespaces).
//!
//! ```no_run
//! // In `tests/it/lan.rs` (the name is the test's own, as the test
//! // harness knows it: module, then function):
//! #[test]
//! fn reaches_a_private_address_only_in_a_namespace() {
//!     oscova_test_support::netns::run(
//!         "lan::reaches_a_private_address_only_in_a_namespace",
//!         &["10.0.0.5"],
//!         || {
//!             let listener = std::net::TcpListener::bind("10.0.0.5:0").unwrap();
//!             assert!(listener.local_addr().unwrap().ip().is_ipv4());
//!         },
//!     );
//! }
//! ```

use std::future::Future;
use std::process::Command;

/// Set to the test's name in the copy of the test binary that runs inside
/// the namespace.
const INSIDE: &str = "OSCOVA_TEST_NETNS";

/// [`run`] for an async body: inside the namespace, the future `body`
/// returns runs to completion on a multi-threaded tokio runtime with two
/// workers.
pub fn run_async<F: Future<Output = ()>>(test: &str, addresses: &[&str], body: impl FnOnce() -> F) {
    run(test, addresses, || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime")
            .block_on(body());
    });
}

/// Runs `body` inside a fresh network namespace whose `lo` also carries
/// `addresses` (IPv4 or IPv6, without prefix length).
///
/// `test` must be the test's name as the harness reports it (for a test in
/// `tests/it/foo.rs` of a crate's one test binary, `foo::` and the
/// function's name): the binary is run again with `test --exact`, and only
/// that run executes `body`.
pub fn run(test: &str, addresses: &[&str], body: impl FnOnce()) {
    if std::env::var(INSIDE).as_deref() == Ok(test) {
        set_up(addresses);
        body();
        return;
    }
    if let Some(why) = unavailable() {
        panic!(
            "`{test}` needs a network namespace of its own and cannot make one here ({why}): \
             it needs `unshare` (util-linux) and `ip` (iproute2) on the PATH and a kernel that \
             allows unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, \
             user.max_user_namespaces > 0); it does not pass without running its check"
        );
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new("unshare")
        .arg("-rn")
        .arg(exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(INSIDE, test)
        .output()
        .expect("run the test inside a network namespace");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "`{test}` failed inside its network namespace\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    // A filter that matched nothing also exits 0: make sure the body ran.
    assert!(
        stdout.contains("1 passed"),
        "`{test}` did not run inside its network namespace (is the name right?)\n{stdout}"
    );
}

/// Why no namespace can be made here, if it cannot.
fn unavailable() -> Option<String> {
    match Command::new("unshare").args(["-rn", "true"]).output() {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(String::from_utf8_lossy(&out.stderr).trim().to_owned()),
        Err(e) => Some(format!("cannot run `unshare`: {e}")),
    }
}

fn set_up(addresses: &[&str]) {
    // `/proc/self/net` shows the namespace of this process (`/sys/class/net`
    // would show the one sysfs was mounted in).
    let devices = std::fs::read_to_string("/proc/self/net/dev").expect("list network devices");
    let interfaces: Vec<&str> = devices
        .lines()
        .skip(2)
        .filter_map(|line| line.split(':').next())
        .map(str::trim)
        .collect();
    assert_eq!(
        interfaces,
        ["lo"],
        "refusing to run: this is not an isolated network namespace"
    );
    ip(&["link", "set", "lo", "up"]);
    for address in addresses {
        if address.contains(':') {
            ip(&[
                "-6",
                "addr",
                "add",
                &format!("{address}/128"),
                "dev",
                "lo",
                "nodad",
            ]);
        } else {
            ip(&["addr", "add", &format!("{address}/32"), "dev", "lo"]);
        }
    }
}

fn ip(args: &[&str]) {
    let status = ["ip", "/usr/sbin/ip", "/sbin/ip"]
        .iter()
        .find_map(|program| Command::new(program).args(args).status().ok())
        .expect("run `ip` (iproute2)");
    assert!(status.success(), "`ip {}` failed", args.join(" "));
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    /// Set in the copy of the test binary that runs without `unshare`.
    const PROBE: &str = "OSCOVA_TEST_NETNS_PROBE";

    #[test]
    fn a_test_that_cannot_make_its_namespace_fails_saying_what_it_needs() {
        let name = "netns::tests::a_test_that_cannot_make_its_namespace_fails_saying_what_it_needs";
        if std::env::var_os(PROBE).is_some() {
            super::run(name, &[], || unreachable!("the body never runs here"));
            return;
        }
        // The same test again with no `unshare` to find: it must fail.
        let output = Command::new(std::env::current_exe().expect("the test binary's path"))
            .args([name, "--exact", "--nocapture", "--test-threads=1"])
            .env(PROBE, "1")
            .env("PATH", "/nonexistent")
            .output()
            .expect("run the test binary again");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success(),
            "a namespace test passed without a namespace\n{stdout}\n{stderr}"
        );
        assert!(
            stderr.contains("needs a network namespace") && stderr.contains("util-linux"),
            "the failure does not say what it needs\n{stdout}\n{stderr}"
        );
        assert!(!stdout.contains("skipped"), "{stdout}");
    }
}
