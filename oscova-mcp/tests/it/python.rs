//! The fixture host served by `McpServer` over a line-delimited byte
//! stream, driven by the official MCP Python SDK client (pip package
//! `mcp`, installed by `scripts/ensure-python-mcp.sh`): content blocks,
//! output schemas (the SDK validates structured results itself),
//! annotations, progress, logging, elicitation and ping survive the round
//! trip, over the `initialize` handshake (2025-11-25) and over
//! `server/discover` (2026-07-28). Fails, naming the script, when the SDK
//! is missing.
//!
//! The SDK's stdio client starts a server process; the one it starts here
//! is a byte relay (in the script) between its stdio and a loopback socket,
//! where this test serves each connection with [`McpServer::serve_io`],
//! the transport `serve_stdio` uses on stdin and stdout. The server's end
//! is in this process, so nothing but protocol messages can reach the
//! relay's stdout, and the test runs under the ordinary harness.

use std::process::Command;

use oscova_core::UserInfo;
use oscova_mcp::McpServer;
use serde_json::{Value, json};
use tokio::net::TcpListener;

use super::studio::{self, tool};

#[test]
fn the_python_sdk_sees_blocks_schemas_progress_logs_and_questions() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let listener = runtime
        .block_on(TcpListener::bind("127.0.0.1:0"))
        .expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    // One host per session, as one server process per session was before.
    let server = runtime.spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let host = studio::host();
                let scope = host.user_scope(UserInfo::new("py"));
                let (read, write) = stream.into_split();
                if let Err(e) = McpServer::new(scope).serve_io(read, write).await {
                    eprintln!("serving failed: {e}");
                }
                host.shutdown().await;
            });
        }
    });
    let python = oscova_test_support::python::mcp_python();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/mcp_client.py");
    let output = Command::new(&python)
        .arg(script)
        .args(["--connect", "127.0.0.1", &port.to_string()])
        .output()
        .expect("the MCP Python SDK client could not be started");
    server.abort();
    runtime.shutdown_background();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python client failed:\n{stderr}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let report: Value = serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("no report from the client ({e}):\n{stdout}\n{stderr}"));
    check_legacy(&report["legacy"]);
    check_modern(&report["modern"]);
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// The messages the person was asked, in order.
fn asked(r: &Value) -> Vec<&str> {
    r["asked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect()
}

/// What every session sees, whatever its protocol.
fn check_common(r: &Value) {
    assert!(r.get("error").is_none(), "{r}");
    assert_eq!(r["pinged"], true);
    assert!(r["capabilities"]["tools"].is_object(), "{r}");
    let media = &r["tools"][tool("media")];
    assert_eq!(media["title"], "Make media");
    assert_eq!(media["annotations"]["readOnlyHint"], true);
    assert_eq!(media["annotations"]["openWorldHint"], true);
    assert_eq!(
        r["tools"][tool("rows")]["outputSchema"]["required"],
        json!(["result"])
    );
    assert_eq!(
        r["tools"][tool("clear")]["annotations"]["destructiveHint"],
        true
    );

    let blocks = r["media"].as_array().unwrap();
    let kinds: Vec<_> = blocks.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "image", "audio", "resource"]);
    assert_eq!(blocks[0]["text"], "made with [REDACTED]");
    assert_eq!(blocks[1]["mimeType"], "image/png");
    assert_eq!(blocks[1]["decoded"], json!([0x89, b'P', b'N', b'G']));
    assert_eq!(blocks[2]["decoded"], json!(b"RIFF".to_vec()));
    assert_eq!(blocks[3]["resource"]["text"], "a note");

    assert_eq!(
        r["rows"],
        json!({"result": [{"id": 0}, {"id": 1}, {"id": 2}]})
    );
    assert_eq!(r["summary"], json!({"count": 2}));

    assert_eq!(text_of(&r["count"]), "3");
    assert_eq!(
        r["progress"],
        json!([
            [1.0, 3.0, "step 1"],
            [2.0, 3.0, "step 2"],
            [3.0, 3.0, "step 3"]
        ])
    );
}

fn check_legacy(r: &Value) {
    check_common(r);
    assert!(r["capabilities"]["logging"].is_object(), "{r}");
    // Elicitation: three questions, then approval of the `Required` tool.
    let asked = asked(r);
    assert_eq!(&asked[..3], ["Go on?", "Colour?", "Details"]);
    assert!(asked[3].contains(&tool("clear")), "{asked:?}");
    assert_eq!(text_of(&r["survey"]), r#"1 "Grace" false"#);
    assert_eq!(text_of(&r["clear"]), "cleared lab");
    // `logging/setLevel warning`: the debug message is not sent.
    assert_eq!(
        r["logs"],
        json!([{"level": "warning", "data": "careful with [REDACTED]", "logger": tool("survey")}])
    );
}

fn check_modern(r: &Value) {
    check_common(r);
    assert_eq!(r["protocol"], "2026-07-28", "{r}");
    // 2026-07-28 has no server-to-client requests: each question, and the
    // approval of the `Required` tool, is an `input_required` round the
    // SDK answers and retries.
    let asked = asked(r);
    assert_eq!(&asked[..3], ["Go on?", "Colour?", "Details"], "{r}");
    assert!(asked[3].contains(&tool("clear")), "{asked:?}");
    assert_eq!(text_of(&r["survey"]), r#"1 "Grace" false"#, "{r}");
    assert_eq!(text_of(&r["clear"]), "cleared lab", "{r}");
}
