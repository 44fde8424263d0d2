//! A tiny HTTP/1.1 server on 127.0.0.1 for the web tests.
//!
//! It binds an ephemeral loopback port, answers one request per
//! connection by path, and stops by itself: at most `MAX_CONNECTIONS`
//! connections, none accepted after `LIFETIME`, and every slow route is
//! bounded in time. Dropping the handle stops accepting at once.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, timeout_at};

const MAX_CONNECTIONS: usize = 64;
const LIFETIME: Duration = Duration::from_secs(30);

/// A running server; stops accepting when dropped.
pub(crate) struct Server {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Server {
    pub(crate) async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let deadline = Instant::now() + LIFETIME;
            for _ in 0..MAX_CONNECTIONS {
                let Ok(Ok((stream, _))) = timeout_at(deadline, listener.accept()).await else {
                    break;
                };
                tokio::spawn(handle(stream));
            }
        });
        Self { addr, task }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn handle(mut stream: TcpStream) {
    let Some(path) = read_request_path(&mut stream).await else {
        return;
    };
    let _ = respond(&mut stream, &path).await;
}

async fn read_request_path(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf);
    let line = head.lines().next()?;
    line.split_whitespace().nth(1).map(str::to_owned)
}

fn head(status: &str, content_type: Option<&str>, length: Option<usize>, extra: &str) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status}\r\nConnection: close\r\n{extra}");
    if let Some(ct) = content_type {
        out.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    if let Some(n) = length {
        out.push_str(&format!("Content-Length: {n}\r\n"));
    }
    out.push_str("\r\n");
    out.into_bytes()
}

async fn send(
    stream: &mut TcpStream,
    status: &str,
    ct: Option<&str>,
    body: &[u8],
) -> std::io::Result<()> {
    stream
        .write_all(&head(status, ct, Some(body.len()), ""))
        .await?;
    stream.write_all(body).await?;
    stream.shutdown().await
}

async fn redirect(stream: &mut TcpStream, to: &str) -> std::io::Result<()> {
    let extra = format!("Location: {to}\r\n");
    stream
        .write_all(&head("302 Found", Some("text/plain"), Some(0), &extra))
        .await?;
    stream.shutdown().await
}

pub(crate) const PAGE: &str = "<!doctype html><html><head><title>Test page</title>\
<style>body { color: red }</style><script>var secret = 42;</script></head>\
<body><h1>Welcome</h1><p>Hello from the <b>loopback</b> server.</p>\
<p><a href=\"/next\">Next page</a></p></body></html>";

async fn respond(stream: &mut TcpStream, path: &str) -> std::io::Result<()> {
    let html = Some("text/html; charset=utf-8");
    match path {
        "/page" => send(stream, "200 OK", html, PAGE.as_bytes()).await,
        "/redirect" => redirect(stream, "/page").await,
        "/redirect-twice" => redirect(stream, "/redirect").await,
        "/loop" => redirect(stream, "/loop").await,
        "/big" => {
            // 200,000 bytes in 8 KiB writes.
            let total = 200_000usize;
            stream
                .write_all(&head("200 OK", Some("text/plain"), Some(total), ""))
                .await?;
            let block = vec![b'a'; 8192];
            let mut left = total;
            while left > 0 {
                let n = left.min(block.len());
                stream.write_all(&block[..n]).await?;
                left -= n;
            }
            stream.shutdown().await
        }
        "/exact" => send(stream, "200 OK", Some("text/plain"), b"0123456789").await,
        "/slow-body" => {
            // Headers at once, then a line every 100 ms for at most 5 s.
            stream
                .write_all(&head("200 OK", Some("text/plain"), Some(50 * 5), ""))
                .await?;
            for _ in 0..50 {
                stream.write_all(b"tick\n").await?;
                sleep(Duration::from_millis(100)).await;
            }
            stream.shutdown().await
        }
        "/slow-head" => {
            sleep(Duration::from_secs(5)).await;
            send(stream, "200 OK", Some("text/plain"), b"late").await
        }
        "/latin1" => {
            let body = b"<html><body><p>Caf\xe9 cr\xe8me br\xfbl\xe9e</p></body></html>";
            send(
                stream,
                "200 OK",
                Some("text/html; charset=ISO-8859-1"),
                body,
            )
            .await
        }
        "/meta-charset" => {
            let body = b"<html><head><meta charset=\"windows-1252\"></head>\
<body><p>\x93quoted\x94 \x80 5</p></body></html>";
            send(stream, "200 OK", Some("text/html"), body).await
        }
        "/shift-jis" => {
            // "日本語" in Shift_JIS.
            let body = b"\x93\xfa\x96\x7b\x8c\xea\n";
            send(
                stream,
                "200 OK",
                Some("text/plain; charset=Shift_JIS"),
                body,
            )
            .await
        }
        "/bad-utf8" => send(stream, "200 OK", Some("text/plain"), b"ok \xff\xfe bytes\n").await,
        "/plain" => {
            let body = b"line one\n<b>not markup</b>\n";
            send(stream, "200 OK", Some("text/plain; charset=utf-8"), body).await
        }
        "/json" => {
            send(
                stream,
                "200 OK",
                Some("application/json"),
                b"{\"a\": [1, 2]}",
            )
            .await
        }
        "/png" => {
            let body = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
            send(stream, "200 OK", Some("image/png"), body).await
        }
        "/octet" => {
            send(
                stream,
                "200 OK",
                Some("application/octet-stream"),
                b"\x7fELF\0\0\x01",
            )
            .await
        }
        "/untyped" => {
            send(
                stream,
                "200 OK",
                None,
                b"  <!DOCTYPE html><p>sniffed html</p>",
            )
            .await
        }
        "/missing" => {
            send(
                stream,
                "404 Not Found",
                html,
                b"<html><body><h1>Nothing here</h1></body></html>",
            )
            .await
        }
        _ => {
            send(
                stream,
                "400 Bad Request",
                Some("text/plain"),
                b"unknown route",
            )
            .await
        }
    }
}
