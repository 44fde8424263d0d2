//! A line-framed JSON-RPC transport that answers every line it cannot use.
//!
//! Rules: one message per line (`\n`, an optional `\r` before it, an
//! optional UTF-8 byte order mark at the start); blank lines are skipped,
//! and a last line without its newline still counts. Each line is parsed
//! here, before `rmcp` sees it:
//!
//! - a line that is not JSON (bad syntax, invalid UTF-8, a lone surrogate
//!   escape, a number out of range such as `1e400`, nesting past
//!   serde_json's limit of 128) is answered with JSON-RPC -32700
//!   `{"id": null}`;
//! - a line longer than the limit ([`DEFAULT_MAX_LINE_BYTES`] unless set)
//!   is answered -32700 as soon as the limit is passed, and the rest of it
//!   is skipped without being buffered;
//! - a request (`jsonrpc`, `method`, a usable `id`) whose `params` no
//!   request type takes (an array, say) is -32602 Invalid params;
//! - other JSON that is not a JSON-RPC message is -32600 Invalid Request,
//!   with the line's `id` when it has a usable one and `null` otherwise;
//!   an unreadable notification (no `id`) gets no answer, as JSON-RPC asks.
//!
//! After any of these the next line is read as usual. Answers are written
//! through the same buffer as `rmcp`'s messages, whole frames only, and
//! before the next line is read; a frame a cancelled write left behind is
//! written first by whichever write comes next.
//!
//! This works around `rmcp`'s own `AsyncRwTransport` (3.11), which logs and
//! drops unparsable lines with no answer (rmcp issue #938), drops lines
//! past its 16 MiB limit the same way, and writes its Invalid Request
//! answer without an `id` member at all. A client waiting on any of those
//! requests waited forever.

use std::io;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

/// The longest line [`LineTransport`] accepts by default, in bytes: 16 MiB,
/// `rmcp`'s own default.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// A server transport over a byte stream, one JSON-RPC message per line,
/// that answers malformed lines instead of dropping them: -32700 with
/// `"id": null` for a line that is not JSON or is too long, -32602 for a
/// request whose `params` no request type takes, -32600 for other JSON
/// that is no JSON-RPC message; a bad notification gets no answer.
///
/// [`McpServer::serve_io`](super::McpServer::serve_io) uses it; with
/// `rmcp` directly, pass it where a transport goes:
///
/// ```no_run
/// use oscova_mcp::{LineTransport, McpServer};
/// use rmcp::ServiceExt;
///
/// # async fn demo(server: McpServer) -> Result<(), Box<dyn std::error::Error>> {
/// let (stdin, stdout) = rmcp::transport::stdio();
/// let running = server.handler().serve(LineTransport::new(stdin, stdout)).await?;
/// running.waiting().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line being read; survives a cancelled `receive`.
    line: Vec<u8>,
    /// Skipping the rest of a line that passed the limit.
    discarding: bool,
    max_line: usize,
    /// Answers to malformed lines, not yet handed to the writer.
    replies: Vec<u8>,
    /// The writer holds bytes a cancelled write left behind.
    owes_flush: bool,
    write: Arc<Mutex<Writer<W>>>,
}

#[derive(Debug)]
struct Writer<W> {
    /// `None` once closed.
    out: Option<W>,
    /// Whole frames not yet written.
    pending: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    /// Writes every pending byte, then flushes. Cancel-safe: a byte leaves
    /// `pending` only once written.
    async fn write_pending(&mut self) -> io::Result<()> {
        let Writer { out, pending } = self;
        let Some(out) = out.as_mut() else {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the transport is closed",
            ));
        };
        while !pending.is_empty() {
            let written = out.write(pending).await?;
            if written == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            pending.drain(..written);
        }
        out.flush().await
    }
}

/// What one read of a line gave.
enum LineRead {
    /// A whole line (without its `\n`) is in `line`.
    Line,
    /// The line passed the limit; what came of it was dropped.
    Oversized,
    /// The peer closed the stream.
    Eof,
    /// Reading failed.
    Failed(io::Error),
}

/// What a line is.
enum Decoded {
    Message(Box<ClientJsonRpcMessage>),
    /// Nothing to do (a blank line, an unreadable notification).
    Skip,
    /// An answer to write.
    Reply(Vec<u8>),
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport reading messages from `read` and writing to `write`.
    pub fn new(read: R, write: W) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            max_line: DEFAULT_MAX_LINE_BYTES,
            replies: Vec::new(),
            owes_flush: false,
            write: Arc::new(Mutex::new(Writer {
                out: Some(write),
                pending: Vec::new(),
            })),
        }
    }

    /// Sets the longest line accepted, in bytes ([`DEFAULT_MAX_LINE_BYTES`]
    /// by default).
    pub fn max_line_bytes(mut self, max: usize) -> Self {
        self.max_line = max;
        self
    }

    /// Reads one line into `self.line` without letting it grow past the
    /// limit. Cancel-safe: bytes are taken from the reader only as they are
    /// copied into `self.line` (or skipped), with no await in between, so a
    /// cancelled read resumes where it stopped.
    async fn read_line(&mut self) -> LineRead {
        loop {
            let (consumed, done) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(error) => return LineRead::Failed(error),
                };
                if available.is_empty() {
                    return LineRead::Eof;
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.unwrap_or(available.len());
                let consumed = newline.map_or(take, |at| at + 1);
                if self.discarding {
                    self.discarding = newline.is_none();
                    (consumed, None)
                } else if self.line.len().saturating_add(take) > self.max_line {
                    self.line.clear();
                    self.discarding = newline.is_none();
                    (consumed, Some(LineRead::Oversized))
                } else {
                    self.line
                        .extend_from_slice(available.get(..take).unwrap_or_default());
                    (consumed, newline.map(|_| LineRead::Line))
                }
            };
            self.read.consume(consumed);
            if let Some(done) = done {
                return done;
            }
        }
    }

    /// Hands queued answers to the writer and writes them out.
    async fn flush_replies(&mut self) -> io::Result<()> {
        let mut writer = self.write.lock().await;
        // Moved under the lock with no await in between: a cancel from here
        // on leaves the bytes in the writer's buffer, never loses them.
        writer.pending.append(&mut self.replies);
        self.owes_flush = true;
        writer.write_pending().await?;
        self.owes_flush = false;
        Ok(())
    }

    fn decode_line(&self) -> Decoded {
        let line = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
        let line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return Decoded::Skip;
        }
        decode(line)
    }
}

fn decode(line: &[u8]) -> Decoded {
    let error = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => return Decoded::Message(Box::new(message)),
        Err(error) => error,
    };
    if !error.is_data() {
        return Decoded::Reply(error_frame(
            None,
            ErrorCode::PARSE_ERROR,
            &format!("Parse error: {error}"),
        ));
    }
    // The line is JSON, so this parse succeeds; it is only read to find an
    // id to answer to, on this rare path.
    let value: Value = serde_json::from_slice(line).unwrap_or_default();
    let id = value.get("id");
    if id.is_none() && value.get("method").is_some_and(Value::is_string) {
        // A notification: JSON-RPC forbids answering one, even a bad one.
        return Decoded::Skip;
    }
    let id = id.and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    // A request in every other respect: only its `params` can be what no
    // request type would take (rmcp reads any method with object params).
    let method = value.get("method").and_then(Value::as_str);
    if let (Some(id), Some(method)) = (&id, method)
        && value.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && value.get("result").is_none()
        && value.get("error").is_none()
    {
        return Decoded::Reply(error_frame(
            Some(id.clone()),
            ErrorCode::INVALID_PARAMS,
            &format!("invalid params for `{method}`: `params` must be an object"),
        ));
    }
    Decoded::Reply(error_frame(
        id,
        ErrorCode::INVALID_REQUEST,
        &format!("Invalid Request: {error}"),
    ))
}

/// One error response, as a line. `id` is written as `null` when unknown,
/// as JSON-RPC 2.0 requires.
fn error_frame(id: Option<RequestId>, code: ErrorCode, message: &str) -> Vec<u8> {
    let frame = json!({
        "jsonrpc": "2.0",
        "id": id.map(|id| id.into_json_value()),
        "error": { "code": code.0, "message": message },
    });
    let mut bytes = frame.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let frame = serde_json::to_vec(&item).map(|mut bytes| {
            bytes.push(b'\n');
            bytes
        });
        let write = self.write.clone();
        async move {
            let mut frame = frame?;
            let mut writer = write.lock().await;
            writer.pending.append(&mut frame);
            writer.write_pending().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if (!self.replies.is_empty() || self.owes_flush) && self.flush_replies().await.is_err()
            {
                return None;
            }
            let end = match self.read_line().await {
                LineRead::Line => false,
                LineRead::Oversized => {
                    self.replies.extend(error_frame(
                        None,
                        ErrorCode::PARSE_ERROR,
                        &format!(
                            "Parse error: the message is longer than {} bytes, this server's limit",
                            self.max_line
                        ),
                    ));
                    continue;
                }
                LineRead::Eof if self.line.is_empty() => return None,
                LineRead::Eof => true,
                LineRead::Failed(error) => {
                    tracing::warn!(%error, "reading the MCP stream failed; the session ends");
                    return None;
                }
            };
            let decoded = self.decode_line();
            self.line.clear();
            match decoded {
                Decoded::Message(message) => return Some(*message),
                Decoded::Skip => {}
                Decoded::Reply(mut reply) => self.replies.append(&mut reply),
            }
            if end {
                // The peer stopped sending, but may still read the answer.
                if !self.replies.is_empty() {
                    let _ = self.flush_replies().await;
                }
                return None;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut writer = self.write.lock().await;
        let flushed = writer.write_pending().await;
        writer.out = None;
        flushed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Value {
        match decode(line.as_bytes()) {
            Decoded::Reply(bytes) => serde_json::from_slice(&bytes).unwrap(),
            Decoded::Message(m) => panic!("parsed: {m:?}"),
            Decoded::Skip => panic!("skipped"),
        }
    }

    #[test]
    fn unparsable_lines_are_parse_errors_with_a_null_id() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        for line in [
            "{not json",
            r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"\ud800"}}"#,
            r#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#,
            deep.as_str(),
        ] {
            let answer = reply(line);
            assert_eq!(answer["error"]["code"], -32700, "{line:.60}: {answer}");
            assert_eq!(answer["id"], Value::Null, "{answer}");
            assert!(answer.as_object().unwrap().contains_key("id"), "{answer}");
            assert_eq!(answer["jsonrpc"], "2.0");
        }
        assert_eq!(reply("\u{fffd}")["error"]["code"], -32700);
        let not_utf8 = decode(b"{\"a\":\"\xff\"}");
        assert!(matches!(not_utf8, Decoded::Reply(_)));
    }

    #[test]
    fn json_that_is_no_message_is_an_invalid_request_with_its_id() {
        let answer = reply(r#"{"jsonrpc":"2.0","id":7}"#);
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        assert_eq!(answer["id"], 7);
        let answer = reply(r#"[1, 2]"#);
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        assert_eq!(answer["id"], Value::Null);
        let answer = reply(r#"{"jsonrpc":"2.0","id":{"no":1},"result":{},"error":{}}"#);
        assert_eq!(
            answer["id"],
            Value::Null,
            "an unusable id is null: {answer}"
        );
    }

    #[test]
    fn a_request_whose_params_no_type_takes_is_invalid_params() {
        let answer = reply(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1]}"#);
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert_eq!(answer["id"], 5);
        let answer = reply(r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":"x"}"#);
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
    }

    #[test]
    fn requests_parse_and_notifications_are_never_answered() {
        let ping = decode(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        assert!(matches!(ping, Decoded::Message(_)));
        let note = decode(br#"{"jsonrpc":"1.0","method":"notifications/x"}"#);
        assert!(matches!(note, Decoded::Skip));
    }
}
