//! The official MCP Python SDK, for tests that drive Oscova with a real
//! third-party client or server.
//!
//! `scripts/ensure-python-mcp.sh` installs the SDK (every dependency pinned
//! by hash) into a virtual environment of its own and prints that
//! environment's interpreter; `scripts/test.sh` exports it as
//! `OSCOVA_MCP_PYTHON`. [`mcp_python`] finds it there or at the script's
//! default place.

use std::path::PathBuf;

/// The environment variable that names the interpreter with the SDK.
pub const MCP_PYTHON_ENV: &str = "OSCOVA_MCP_PYTHON";

/// The Python interpreter that has the pip package `mcp` installed.
///
/// Looks at `$OSCOVA_MCP_PYTHON`, then at the install script's default
/// place (`$OSCOVA_MCP_VENV`, else `${XDG_CACHE_HOME:-$HOME/.cache}/oscova/python-mcp`).
///
/// # Panics
///
/// When neither has an interpreter, naming the script that installs it: a
/// test that needs the real client fails rather than skips.
pub fn mcp_python() -> PathBuf {
    if let Some(path) = std::env::var_os(MCP_PYTHON_ENV) {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "{MCP_PYTHON_ENV}={} is not a file; run scripts/ensure-python-mcp.sh",
            path.display()
        );
        return path;
    }
    let venv = std::env::var_os("OSCOVA_MCP_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache"))
                })?;
            Some(cache.join("oscova").join("python-mcp"))
        });
    let python = venv.map(|venv| venv.join("bin").join("python"));
    match python {
        Some(python) if python.is_file() => python,
        _ => panic!(
            "the MCP Python SDK is not installed: run scripts/ensure-python-mcp.sh \
             (or set {MCP_PYTHON_ENV} to a python that has the `mcp` package)"
        ),
    }
}
