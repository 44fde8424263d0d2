//! A real HTTP/1.1 server on 127.0.0.1 with an ephemeral port, written on
//! tokio's `TcpListener`, for driving the `oscova` binary's model
//! commands over the wire. Copied from
//! `oscova-plugins/ollama/tests/support/mod.rs` (the openai crate has the
//! same file); it binds only to 127.0.0.1.
//!
//! It parses each request (request line, headers, a `Content-Length`
//! body), records it, and answers with what the test's handler returns:
//! a whole body, a chunked body, or a close-delimited body, written piece
//! by piece with a pause between pieces so the client sees them split.
//! It counts accepted connections and notices when a client drops one.

#![allow(dead_code, unreachable_pub)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Header names in lowercase.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

/// How the body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Length`, written in the given pieces.
    Length,
    /// `Transfer-Encoding: chunked`, one HTTP chunk per piece.
    Chunked,
    /// No length; the end of the body is the end of the connection.
    Close,
}

/// An answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub framing: Framing,
    pub pieces: Vec<Vec<u8>>,
    /// After the pieces, keep the connection open without ending the body
    /// until the client drops it.
    pub hang: bool,
}

impl Reply {
    pub fn json(status: u16, value: serde_json::Value) -> Self {
        Self {
            status,
            content_type: "application/json".into(),
            framing: Framing::Length,
            pieces: vec![value.to_string().into_bytes()],
            hang: false,
        }
    }

    pub fn stream(content_type: &str, framing: Framing, pieces: Vec<Vec<u8>>) -> Self {
        Self {
            status: 200,
            content_type: content_type.into(),
            framing,
            pieces,
            hang: false,
        }
    }

    pub fn hanging(mut self) -> Self {
        self.hang = true;
        self
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

struct State {
    handler: Box<Handler>,
    connections: AtomicUsize,
    requests: Mutex<Vec<Request>>,
    dropped: AtomicUsize,
    dropped_notify: Notify,
}

/// The running server; it stops when the test's runtime ends.
#[derive(Clone)]
pub struct TestServer {
    pub addr: std::net::SocketAddr,
    state: Arc<State>,
}

impl TestServer {
    pub async fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State {
            handler: Box::new(handler),
            connections: AtomicUsize::new(0),
            requests: Mutex::new(Vec::new()),
            dropped: AtomicUsize::new(0),
            dropped_notify: Notify::new(),
        });
        let accept_state = state.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                accept_state.connections.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(stream, accept_state.clone()));
            }
        });
        Self { addr, state }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.requests.lock().unwrap().clone()
    }

    /// Waits until a client dropped a connection in the middle of a
    /// hanging body; false after `timeout`.
    pub async fn wait_dropped(&self, timeout: Duration) -> bool {
        let wait = async {
            loop {
                let notified = self.state.dropped_notify.notified();
                if self.state.dropped.load(Ordering::SeqCst) > 0 {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok()
    }
}

/// A port on 127.0.0.1 where nothing listens.
pub async fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

async fn serve(mut stream: TcpStream, state: Arc<State>) {
    stream.set_nodelay(true).ok();
    let mut buf = Vec::new();
    loop {
        let Some(request) = read_request(&mut stream, &mut buf).await else {
            return;
        };
        state.requests.lock().unwrap().push(request.clone());
        let reply = (state.handler)(&request);
        let written = write_reply(&mut stream, &reply).await;
        if reply.hang {
            // The body never ends; wait for the client to give up on it. A
            // write that failed means it already did.
            if written.is_ok() {
                let mut scratch = [0u8; 1024];
                loop {
                    match stream.read(&mut scratch).await {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
            }
            state.dropped.fetch_add(1, Ordering::SeqCst);
            state.dropped_notify.notify_waiters();
            return;
        }
        if written.is_err() {
            return;
        }
        if reply.framing == Framing::Close {
            stream.shutdown().await.ok();
            return;
        }
    }
}

async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Request> {
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let mut scratch = [0u8; 4096];
        let n = stream.read(&mut scratch).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&scratch[..n]);
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let body_start = head_end + 4;
    while buf.len() < body_start + length {
        let mut scratch = [0u8; 4096];
        let n = stream.read(&mut scratch).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&scratch[..n]);
    }
    let body = buf[body_start..body_start + length].to_vec();
    buf.drain(..body_start + length);
    Some(Request {
        method,
        path,
        headers,
        body,
    })
}

async fn write_reply(stream: &mut TcpStream, reply: &Reply) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} X\r\ncontent-type: {}\r\n",
        reply.status, reply.content_type
    );
    match reply.framing {
        Framing::Length if !reply.hang => {
            let length: usize = reply.pieces.iter().map(Vec::len).sum();
            head.push_str(&format!("content-length: {length}\r\n"));
        }
        Framing::Length | Framing::Chunked => head.push_str("transfer-encoding: chunked\r\n"),
        Framing::Close => head.push_str("connection: close\r\n"),
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    let chunked =
        reply.framing == Framing::Chunked || (reply.framing == Framing::Length && reply.hang);
    for piece in &reply.pieces {
        if piece.is_empty() {
            continue;
        }
        if chunked {
            stream
                .write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                .await?;
            stream.write_all(piece).await?;
            stream.write_all(b"\r\n").await?;
        } else {
            stream.write_all(piece).await?;
        }
        stream.flush().await?;
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    if chunked && !reply.hang {
        stream.write_all(b"0\r\n\r\n").await?;
    }
    stream.flush().await
}

/// Cuts `data` into pieces at awkward places: inside every multi-byte
/// UTF-8 character, inside every `data:` and `"arguments"`, right before
/// every `\n` (so `\r` and `\n` part), and every 7 bytes besides.
pub fn awkward(data: &[u8]) -> Vec<Vec<u8>> {
    let mut cuts = std::collections::BTreeSet::new();
    for (i, b) in data.iter().enumerate() {
        if *b >= 0xC0 {
            cuts.insert(i + 1);
        }
        if *b == b'\n' {
            cuts.insert(i);
        }
        if i % 7 == 0 {
            cuts.insert(i);
        }
    }
    for needle in [&b"data:"[..], b"\"arguments\"", b"\"status\""] {
        for i in 0..data.len().saturating_sub(needle.len()) {
            if &data[i..i + needle.len()] == needle {
                cuts.insert(i + 2);
            }
        }
    }
    let mut pieces = Vec::new();
    let mut start = 0;
    for cut in cuts {
        if cut > start && cut < data.len() {
            pieces.push(data[start..cut].to_vec());
            start = cut;
        }
    }
    pieces.push(data[start..].to_vec());
    pieces
}
