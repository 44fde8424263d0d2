//! The official MCP and A2A Python SDKs, for tests that drive Oscova with
//! a real third-party client or server.
//!
//! `scripts/ensure-python-mcp.sh` and `scripts/ensure-python-a2a.sh`
//! install each SDK (every dependency pinned by hash) into a virtual
//! environment of its own and print that environment's interpreter;
//! `scripts/test.sh` exports them as `OSCOVA_MCP_PYTHON` and
//! `OSCOVA_A2A_PYTHON`. [`mcp_python`] and [`a2a_python`] find them there
//! or at the scripts' default places.

use std::path::PathBuf;

/// The environment variable that names the interpreter with the MCP SDK.
pub const MCP_PYTHON_ENV: &str = "OSCOVA_MCP_PYTHON";

/// The environment variable that names the interpreter with the A2A SDK.
pub const A2A_PYTHON_ENV: &str = "OSCOVA_A2A_PYTHON";

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
    sdk_python(&Sdk {
        env: MCP_PYTHON_ENV,
        venv_env: "OSCOVA_MCP_VENV",
        dir: "python-mcp",
        script: "scripts/ensure-python-mcp.sh",
        what: "the MCP Python SDK",
        package: "the `mcp` package",
    })
}

/// The Python interpreter that has the pip package `a2a-sdk` installed
/// (`scripts/ensure-python-a2a.sh`).
///
/// Looks at `$OSCOVA_A2A_PYTHON`, then at the install script's default
/// place (`$OSCOVA_A2A_VENV`, else `${XDG_CACHE_HOME:-$HOME/.cache}/oscova/python-a2a`).
///
/// # Panics
///
/// As [`mcp_python`], naming the A2A SDK's install script.
pub fn a2a_python() -> PathBuf {
    sdk_python(&Sdk {
        env: A2A_PYTHON_ENV,
        venv_env: "OSCOVA_A2A_VENV",
        dir: "python-a2a",
        script: "scripts/ensure-python-a2a.sh",
        what: "the A2A Python SDK",
        package: "`a2a-sdk`",
    })
}

/// Where one SDK's install script puts its interpreter, and how to say so.
struct Sdk {
    env: &'static str,
    venv_env: &'static str,
    dir: &'static str,
    script: &'static str,
    what: &'static str,
    package: &'static str,
}

fn sdk_python(sdk: &Sdk) -> PathBuf {
    if let Some(path) = std::env::var_os(sdk.env) {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "{}={} is not a file; run {}",
            sdk.env,
            path.display(),
            sdk.script
        );
        return path;
    }
    let venv = std::env::var_os(sdk.venv_env)
        .map(PathBuf::from)
        .or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache"))
                })?;
            Some(cache.join("oscova").join(sdk.dir))
        });
    let python = venv.map(|venv| venv.join("bin").join("python"));
    match python {
        Some(python) if python.is_file() => python,
        _ => panic!(
            "{} is not installed: run {} (or set {} to a python that has {})",
            sdk.what, sdk.script, sdk.env, sdk.package
        ),
    }
}
