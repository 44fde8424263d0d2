//! What the server answers, and the writing of it.
//!
//! The head always says how the body ends: a `content-length`,
//! `transfer-encoding: chunked`, or `connection: close` with the end of
//! the connection as the end of the body. The body goes out piece by piece,
//! each flushed and followed by a pause, so a client reads the pieces apart
//! and its parser meets every split the test chose. The status line carries
//! the standard reason phrase.

use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// The pause after each piece unless a reply sets its own.
const PAUSE: Duration = Duration::from_millis(1);

/// How a reply's body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Content-Length`, written in the given pieces.
    Length,
    /// `Transfer-Encoding: chunked`, one HTTP chunk per piece.
    Chunked,
    /// No length; the end of the body is the end of the connection.
    Close,
}

/// An answer, built from one of the constructors and adjusted with the
/// methods that take and return `self`.
///
/// ```
/// use std::time::Duration;
/// use oscova_test_kit::http::{Framing, Reply};
///
/// let _ = Reply::redirect(302, "/page");
/// let _ = Reply::bytes(404, "text/html", "<h1>Nothing here</h1>").closing();
/// let _ = Reply::stream("text/plain", Framing::Length, vec![b"tick\n".to_vec(); 50])
///     .paused(Duration::from_millis(100));
/// let _ = Reply::new(200).delayed(Duration::from_secs(5));
/// // No `content-type`, for a client that has to sniff:
/// let _ = Reply::new(200).body("<!DOCTYPE html><p>sniffed</p>");
/// ```
#[derive(Debug, Clone)]
pub struct Reply {
    status: u16,
    content_type: Option<String>,
    headers: Vec<(String, String)>,
    framing: Framing,
    pieces: Vec<Vec<u8>>,
    delay: Duration,
    pause: Duration,
    hang: bool,
    close: bool,
    silent: bool,
}

impl Reply {
    /// `status` with an empty body and no `content-type`.
    pub fn new(status: u16) -> Self {
        Self {
            status,
            content_type: None,
            headers: Vec::new(),
            framing: Framing::Length,
            pieces: Vec::new(),
            delay: Duration::ZERO,
            pause: PAUSE,
            hang: false,
            close: false,
            silent: false,
        }
    }

    /// `status` with `body` of `content_type`, in one piece.
    pub fn bytes(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            content_type: Some(content_type.to_owned()),
            pieces: vec![body.into()],
            ..Self::new(status)
        }
    }

    /// `status` with `value` as an `application/json` body.
    pub fn json(status: u16, value: Value) -> Self {
        Self::bytes(status, "application/json", value.to_string())
    }

    /// `200` with a body of `content_type` written in `pieces`, framed as
    /// `framing`.
    pub fn stream(content_type: &str, framing: Framing, pieces: Vec<Vec<u8>>) -> Self {
        Self {
            content_type: Some(content_type.to_owned()),
            framing,
            pieces,
            ..Self::new(200)
        }
    }

    /// `status` (a 3xx) sending the client to `location`.
    pub fn redirect(status: u16, location: &str) -> Self {
        Self::new(status).header("location", location)
    }

    /// No answer at all: the request is read and recorded, then the server
    /// waits for the client to give up and drop the connection.
    pub fn silent() -> Self {
        Self {
            silent: true,
            ..Self::new(200)
        }
    }

    /// Replaces the body with `body`, in one piece.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.pieces = vec![body.into()];
        self
    }

    /// Adds a header line besides `content-type` and the framing.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Says `connection: close` and closes the connection after the body,
    /// so the next request needs a new connection.
    pub fn closing(mut self) -> Self {
        self.close = true;
        self
    }

    /// After the pieces, keeps the connection open without ending the body
    /// until the client drops it. A `Length` body is sent chunked for this,
    /// as its length would say where it ends.
    pub fn hanging(mut self) -> Self {
        self.hang = true;
        self
    }

    /// Waits `delay` before writing anything (the client may give up first).
    pub fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Pauses `pause` after each piece instead of a millisecond (none for
    /// zero).
    pub fn paused(mut self, pause: Duration) -> Self {
        self.pause = pause;
        self
    }

    pub(super) fn delay(&self) -> Duration {
        self.delay
    }

    pub(super) fn is_silent(&self) -> bool {
        self.silent
    }

    pub(super) fn is_hanging(&self) -> bool {
        self.hang
    }

    /// Whether the connection ends after this reply.
    pub(super) fn closes(&self) -> bool {
        self.close || self.framing == Framing::Close
    }

    /// Chunked on the wire: asked for, or a hanging `Length` body.
    fn chunked(&self) -> bool {
        self.framing == Framing::Chunked || (self.framing == Framing::Length && self.hang)
    }
}

/// Writes the head, then the pieces, then the end of a chunked body unless
/// the reply hangs.
pub(super) async fn write(stream: &mut TcpStream, reply: &Reply) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    if let Some(content_type) = &reply.content_type {
        head.push_str(&format!("content-type: {content_type}\r\n"));
    }
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if reply.chunked() {
        head.push_str("transfer-encoding: chunked\r\n");
    } else if reply.framing == Framing::Length {
        let length: usize = reply.pieces.iter().map(Vec::len).sum();
        head.push_str(&format!("content-length: {length}\r\n"));
    }
    if reply.closes() {
        head.push_str("connection: close\r\n");
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await?;
    let chunked = reply.chunked();
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
        if !reply.pause.is_zero() {
            tokio::time::sleep(reply.pause).await;
        }
    }
    if chunked && !reply.hang {
        stream.write_all(b"0\r\n\r\n").await?;
    }
    stream.flush().await
}

/// The standard reason phrase; clients go by the code alone.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}
