//! The `oscova` binary against hostile inputs: environments, special
//! files, argument files, numbers that do not fit (issue 13).

mod support;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use support::{oscova, run};

/// `env $'BADVAR=\xff' oscova plugins` exited 101 with the raw value in a
/// backtrace: `std::env::vars` panics on a value that is not UTF-8.
#[test]
fn a_variable_that_is_not_utf8_is_skipped_by_name() {
    let value = OsString::from_vec(b"hunter2-\xff-value".to_vec());
    for name in ["BADVAR", "OSCOVA_USER"] {
        let mut cmd = oscova(&["plugins"]);
        cmd.env(name, &value);
        let (code, out, err) = run(&mut cmd);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains("acme.search"), "{out}");
        assert!(err.contains(name) && err.contains("not UTF-8"), "{err}");
        assert!(!err.contains("hunter2") && !err.contains("panicked"), "{err}");
    }
}
