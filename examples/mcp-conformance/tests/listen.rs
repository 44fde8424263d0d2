//! The conformance host as `scripts/mcp-conformance.sh` starts it: the
//! binary, `--listen 127.0.0.1:0`, says where it serves on stderr, answers
//! an MCP `initialize` there, and refuses a bad address with exit code 2.
//! (Being an integration test, this also has `cargo test` build the
//! binary the script runs, so the script needs no build of its own.)

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-conformance");

#[test]
fn serves_where_it_says_and_answers_initialize() {
    let mut child = Command::new(BIN)
        .args(["--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (found, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = found.send(line);
        }
    });
    let line = lines
        .recv_timeout(Duration::from_secs(60))
        .expect("the host says where it serves");
    let url = line
        .strip_prefix("mcp-conformance: serving http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("unexpected first line: {line}"));
    assert!(url.starts_with("127.0.0.1:"), "{url}");

    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"listen-test","version":"1"}}}"#;
    let mut stream = TcpStream::connect(url).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {url}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("oscova-mcp-conformance"), "{answer}");
}

#[test]
fn a_bad_address_is_a_usage_error() {
    let out = Command::new(BIN)
        .args(["--listen", "not-an-address"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: mcp-conformance --listen"));
}
