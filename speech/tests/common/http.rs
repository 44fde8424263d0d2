//! A real HTTP server on 127.0.0.1 with an ephemeral port: a tiny HTTP/1.1
//! responder on tokio's `TcpListener` that serves one request, records it
//! (request line, headers, `Content-Length` body) and answers like an
//! OpenAI-compatible speech service would.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub const KEY: &str = "sk-test-0123456789abcdef";

/// One request as the server saw it.
#[derive(Debug)]
pub struct Recorded {
    pub method: String,
    pub target: String,
    pub version: String,
    /// Names lowercased, values as sent, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        let mut values = self.headers.iter().filter(|(n, _)| n == name);
        let value = values.next().map(|(_, v)| v.as_str());
        assert!(values.next().is_none(), "header {name} sent twice");
        value
    }
}

/// What the server does after reading the request.
pub enum Reply {
    Answer {
        status: &'static str,
        content_type: &'static str,
        body: Vec<u8>,
    },
    Never,
}

pub fn json_reply(status: &'static str, body: &str) -> Reply {
    Reply::Answer {
        status,
        content_type: "application/json",
        body: body.as_bytes().to_vec(),
    }
}

/// Serves exactly one request; the handle yields what was received.
pub async fn serve_once(reply: Reply) -> (String, JoinHandle<Recorded>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let request = read_request(&mut stream).await;
        match reply {
            Reply::Answer {
                status,
                content_type,
                body,
            } => {
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                stream.write_all(head.as_bytes()).await.unwrap();
                stream.write_all(&body).await.unwrap();
                stream.shutdown().await.unwrap();
            }
            Reply::Never => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
        }
        request
    });
    (base, handle)
}

async fn read_request(stream: &mut tokio::net::TcpStream) -> Recorded {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(pos) = find(&buf, b"\r\n\r\n") {
            break pos;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "connection closed inside the request head");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = std::str::from_utf8(&buf[..head_end]).unwrap().to_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap().split(' ');
    let (method, target, version) = (
        request_line.next().unwrap().to_owned(),
        request_line.next().unwrap().to_owned(),
        request_line.next().unwrap().to_owned(),
    );
    let headers: Vec<(String, String)> = lines
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap();
            (name.trim().to_ascii_lowercase(), value.trim().to_owned())
        })
        .collect();
    assert!(
        !headers.iter().any(|(n, _)| n == "transfer-encoding"),
        "expected a Content-Length body, got {headers:?}"
    );
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 65536];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "connection closed inside the body");
        body.extend_from_slice(&chunk[..n]);
    }
    assert_eq!(body.len(), length, "more body bytes than Content-Length");
    Recorded {
        method,
        target,
        version,
        headers,
        body,
    }
}

pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Splits a multipart body into (header lines, content) per part, checking
/// the framing byte for byte.
pub fn multipart_parts(body: &[u8], boundary: &str) -> Vec<(Vec<String>, Vec<u8>)> {
    let opening = format!("--{boundary}\r\n");
    let separator = format!("\r\n--{boundary}");
    assert!(
        body.starts_with(opening.as_bytes()),
        "body does not open with the boundary"
    );
    let closing = format!("\r\n--{boundary}--\r\n");
    assert!(
        body.ends_with(closing.as_bytes()),
        "body does not close with the boundary"
    );
    let inner = &body[opening.len()..body.len() - closing.len()];
    let mut parts = Vec::new();
    let mut rest = inner;
    loop {
        let end = find(rest, separator.as_bytes()).unwrap_or(rest.len());
        let part = &rest[..end];
        let head_end = find(part, b"\r\n\r\n").unwrap();
        let headers = std::str::from_utf8(&part[..head_end])
            .unwrap()
            .split("\r\n")
            .map(str::to_owned)
            .collect();
        parts.push((headers, part[head_end + 4..].to_vec()));
        if end == rest.len() {
            break;
        }
        rest = &rest[end + separator.len()..];
        assert!(rest.starts_with(b"\r\n"), "boundary line not ended by CRLF");
        rest = &rest[2..];
    }
    parts
}
