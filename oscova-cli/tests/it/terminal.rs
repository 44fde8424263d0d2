//! Text from an MCP server reaches the terminal inert (issue 24): `tools
//! list`, `tools show`, `tools call` and `plugins` printed ESC sequences,
//! NUL and bidi overrides from a server's titles, descriptions, results
//! and stderr unchanged. Now every control character but newline and tab,
//! and every bidi control, is shown as U+FFFD in text, and escaped in
//! JSON (the same value to a parser).

use crate::support;

use std::path::{Path, PathBuf};

use support::{oscova, run, temp_dir};

/// What a hostile server puts in its texts: a window-title OSC, a
/// clear-screen CSI, NUL, a carriage return, an 8-bit CSI and a
/// right-to-left override.
const EVIL_PY: &str = r"\x1b]0;pwned\x07\x1b[2J\x00\r\u009b31m\u202e";

/// The characters of [`EVIL_PY`] that must never be printed raw.
const RAW: [char; 6] = ['\u{1b}', '\u{7}', '\0', '\r', '\u{9b}', '\u{202e}'];

fn assert_inert(what: &str, text: &str) {
    for c in RAW {
        assert!(!text.contains(c), "{what}: {c:?} printed raw in {text:?}");
    }
}

/// A config with one stdio server written with the MCP Python SDK whose
/// tool's title, description and result carry [`EVIL_PY`], and one that
/// writes it to stderr and exits.
fn config(dir: &Path) -> PathBuf {
    let script = dir.join("evil_server.py");
    std::fs::write(
        &script,
        format!(
            r#"
import sys
from mcp.server.mcpserver import MCPServer

EVIL = "{EVIL_PY}"
server = MCPServer("evil")


@server.tool(name="echo", title="Echo" + EVIL, description="Echoes" + EVIL + "back.")
def echo(text: str) -> str:
    return "said" + EVIL + text


if __name__ == "__main__":
    server.run("stdio")
"#
        ),
    )
    .unwrap();
    let python = oscova_test_support::python::mcp_python();
    let text = format!(
        r#"
[mcp.servers.evil]
command = {python:?}
args = [{script:?}]

[mcp.servers.crashy]
command = "sh"
args = ["-c", "printf 'boom{EVIL_SH}\n' >&2; exit 3"]
"#,
        python = python.display().to_string(),
        script = script.display().to_string(),
        EVIL_SH = r"\\033]0;pwned\\007\\033[2J\\342\\200\\256",
    );
    let path = dir.join("oscova.toml");
    std::fs::write(&path, text).unwrap();
    path
}

const TOOL: &str = "oscova_mcp__evil__echo";

#[test]
fn server_text_reaches_the_terminal_inert() {
    let dir = temp_dir("terminal");
    let config = config(&dir);
    let config = config.to_str().unwrap();

    let (code, out, err) = run(&mut oscova(&["--config", config, "tools", "list"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(TOOL) && out.contains("Echoes\u{fffd}]0;pwned"),
        "{out}"
    );
    assert_inert("tools list", &out);
    assert_inert("tools list (stderr)", &err);

    let (code, out, err) = run(&mut oscova(&["--config", config, "tools", "show", TOOL]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("title:") && out.contains("Echo\u{fffd}"),
        "{out}"
    );
    assert_inert("tools show", &out);

    let (code, out, err) = run(&mut oscova(&[
        "--config",
        config,
        "tools",
        "call",
        TOOL,
        "--args",
        r#"{"text": "hi"}"#,
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("said\u{fffd}]0;pwned") && out.contains("hi"),
        "{out}"
    );
    assert_inert("tools call", &out);

    // JSON keeps the exact value, escaped.
    let (code, out, err) = run(&mut oscova(&[
        "--json",
        "--config",
        config,
        "tools",
        "call",
        TOOL,
        "--args",
        r#"{"text": "hi"}"#,
    ]));
    assert_eq!(code, 0, "{err}");
    assert_inert("tools call --json", &out);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let content = doc["content"].as_str().unwrap();
    assert!(
        content.contains("\u{1b}]0;pwned\u{7}") && content.contains('\u{202e}'),
        "{doc}"
    );

    // A server's stderr in the diagnostics `plugins` shows.
    let (code, out, err) = run(&mut oscova(&["--config", config, "plugins"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("crashy") && out.contains("boom\u{fffd}]0;pwned"),
        "{out}"
    );
    assert_inert("plugins", &out);
    let (_, out, _) = run(&mut oscova(&["--json", "--config", config, "plugins"]));
    assert_inert("plugins --json", &out);
}
