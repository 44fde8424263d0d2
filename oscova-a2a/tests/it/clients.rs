//! The official A2A client SDKs as peers of the server: each runs one
//! operation in a process of its own and prints one JSON line.
//!
//! Rules: a scenario names a [`Client`] and never a script, so it runs
//! unchanged against either SDK; what the SDKs tell apart (today only the
//! error class the JS SDK reports, by binding) is a method here, not a
//! branch in a scenario. Both scripts take the same arguments
//! (`--url BASE [--token TOKEN] --binding BINDING OP [ARG...]`), support the
//! same operations `card`, `send`, `send-nowait`, `stream`, `answer`, `get`,
//! `cancel` and `list` (`client.py` also `push` and `extended`), and print
//! `{"ok": ...}` or `{"error": "<the specification's error name>",
//! "message": ...}`. A missing SDK fails the test, naming the script that
//! installs it, rather than skips it (`oscova_test_support::python::a2a_python`).

use std::path::PathBuf;

use oscova_test_support::a2a_js;
use serde_json::Value;

/// An official A2A client SDK.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Client {
    /// a2a-sdk 1.3.0 (`scripts/a2a/client.py`, in the virtual environment
    /// `scripts/ensure-python-a2a.sh` makes).
    Python,
    /// @a2a-js/sdk 1.3.0 (`scripts/a2a/client.mjs`, installed by
    /// `scripts/ensure-a2a-js.sh`, on the Node 22 of `scripts/ensure-pi.sh`).
    Js,
}

impl Client {
    /// Runs `op` against the server at `base` over `binding` (`JSONRPC` or
    /// `HTTP+JSON`), as `token`'s user when given, and returns the line
    /// the client printed.
    pub(crate) async fn run(
        self,
        base: &str,
        token: Option<&str>,
        binding: &str,
        op: &[&str],
    ) -> Value {
        let mut command = self.command();
        command.args(["--url", base, "--binding", binding]);
        if let Some(token) = token {
            command.args(["--token", token]);
        }
        let output = command.args(op).kill_on_drop(true).output().await.unwrap();
        let script = self.script();
        assert!(
            output.status.success(),
            "{script} {op:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!(
                "{script} printed no JSON ({e}): {}\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )
        })
    }

    /// The class the SDK reports, beside the specification's name, for the
    /// error `name` that came over `binding`: the JS SDK reads each
    /// binding's error shape into a class of its own
    /// (`JsonRpcTaskNotFoundError`, `RestTaskNotFoundError`); the Python
    /// SDK's exception class is the name itself, so it reports no other.
    pub(crate) fn error_class(self, binding: &str, name: &str) -> Option<String> {
        match (self, binding) {
            (Self::Python, _) => None,
            (Self::Js, "JSONRPC") => Some(format!("JsonRpc{name}")),
            (Self::Js, _) => Some(format!("Rest{name}")),
        }
    }

    fn script(self) -> &'static str {
        match self {
            Self::Python => "client.py",
            Self::Js => "client.mjs",
        }
    }

    /// The command up to the script's own arguments.
    fn command(self) -> tokio::process::Command {
        match self {
            Self::Python => {
                let mut command =
                    tokio::process::Command::new(oscova_test_support::python::a2a_python());
                command.arg(
                    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/a2a/client.py"),
                );
                command
            }
            Self::Js => {
                let mut command = tokio::process::Command::new(a2a_js::node());
                command
                    .arg(a2a_js::client_script())
                    .arg(a2a_js::a2a_js_dir());
                command
            }
        }
    }
}
