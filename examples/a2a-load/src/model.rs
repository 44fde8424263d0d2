//! The scripted model both agents ask: an OpenAI-compatible chat endpoint
//! on 127.0.0.1 that answers every request at once with [`ANSWER`], as a
//! streamed chat completion.
//!
//! Rules: HTTP/1.1 with keep-alive on tokio's `TcpListener`, no framework,
//! so it costs both servers the same and as little as possible; a request
//! must say its `content-length` (both clients do); anything it cannot read
//! closes that connection. It serves until the harness exits.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The model's answer to every message, which both agents put in the
/// task's artifact.
pub(crate) const ANSWER: &str = "Done: the scripted model answered at once.";

/// Starts the model server and returns its base URL (`http://ADDR/v1`).
pub(crate) async fn start() -> Result<String, String> {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("the model server cannot bind: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let reply = reply();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let reply = reply.clone();
            tokio::spawn(async move { serve(stream, &reply).await });
        }
    });
    Ok(format!("http://{addr}/v1"))
}

/// The whole HTTP response, written once and sent for every request.
fn reply() -> Vec<u8> {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        let chunk = serde_json::json!({
            "id": "chatcmpl-load", "object": "chat.completion.chunk", "created": 1,
            "model": "load",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        format!("data: {chunk}\n\n")
    };
    let body = chunk(
        serde_json::json!({"role": "assistant", "content": ANSWER}),
        None,
    ) + &chunk(serde_json::json!({}), Some("stop"))
        + "data: [DONE]\n\n";
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

async fn serve(mut stream: TcpStream, reply: &[u8]) {
    let mut buf = Vec::with_capacity(8192);
    let mut chunk = [0u8; 8192];
    loop {
        // One request: headers, then content-length bytes of body.
        let wanted = loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                match content_length(&buf[..end]) {
                    Some(length) => break end + 4 + length,
                    None => return,
                }
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        while buf.len() < wanted {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        buf.drain(..wanted);
        if stream.write_all(reply).await.is_err() {
            return;
        }
    }
}

/// The `content-length` of a request head (0 when absent, as for a GET);
/// `None` when it is not a number or the body is chunked.
fn content_length(head: &[u8]) -> Option<usize> {
    let head = std::str::from_utf8(head).ok()?;
    let mut length = 0;
    for line in head.split("\r\n").skip(1) {
        let (name, value) = line.split_once(':')?;
        if name.eq_ignore_ascii_case("transfer-encoding") {
            return None;
        }
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse().ok()?;
        }
    }
    Some(length)
}
