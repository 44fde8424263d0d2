//! The web tests' site: a route table on the shared loopback server
//! (`oscova_test_kit::http`), which binds an ephemeral port on
//! 127.0.0.1, stops by itself (a bounded number of connections and a
//! bounded lifetime) and stops accepting when the handle is dropped. Each
//! answer closes its connection; every slow route is bounded in time.

use std::time::Duration;

use oscova_test_kit::http::{Framing, Reply, TestServer};

/// A running server; stops accepting when dropped.
pub(crate) struct Server(TestServer);

impl Server {
    pub(crate) async fn start() -> Self {
        Self(TestServer::start(|request| respond(&request.path).closing()).await)
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.0.url())
    }

    /// `127.0.0.1:port`, as a host allows it.
    pub(crate) fn authority(&self) -> String {
        format!("127.0.0.1:{}", self.0.port())
    }

    /// Connections accepted so far.
    pub(crate) fn connections(&self) -> usize {
        self.0.connections()
    }
}

pub(crate) const PAGE: &str = "<!doctype html><html><head><title>Test page</title>\
<style>body { color: red }</style><script>var secret = 42;</script></head>\
<body><h1>Welcome</h1><p>Hello from the <b>loopback</b> server.</p>\
<p><a href=\"/next\">Next page</a></p></body></html>";

fn respond(path: &str) -> Reply {
    let html = "text/html; charset=utf-8";
    match path {
        "/page" => Reply::bytes(200, html, PAGE),
        "/redirect" => Reply::redirect(302, "/page"),
        "/redirect-twice" => Reply::redirect(302, "/redirect"),
        "/loop" => Reply::redirect(302, "/loop"),
        // 200,000 bytes in 8 KiB writes, a millisecond apart, so the
        // client reads them in several chunks.
        "/big" => Reply::stream("text/plain", Framing::Length, pieces(200_000, 8192)),
        "/exact" => Reply::bytes(200, "text/plain", "0123456789"),
        // Headers at once, then a line every 100 ms for at most 5 s.
        "/slow-body" => Reply::stream("text/plain", Framing::Length, vec![b"tick\n".to_vec(); 50])
            .paused(Duration::from_millis(100)),
        "/slow-head" => Reply::bytes(200, "text/plain", "late").delayed(Duration::from_secs(5)),
        "/latin1" => Reply::bytes(
            200,
            "text/html; charset=ISO-8859-1",
            b"<html><body><p>Caf\xe9 cr\xe8me br\xfbl\xe9e</p></body></html>",
        ),
        "/meta-charset" => Reply::bytes(
            200,
            "text/html",
            b"<html><head><meta charset=\"windows-1252\"></head>\
<body><p>\x93quoted\x94 \x80 5</p></body></html>",
        ),
        // "日本語" in Shift_JIS.
        "/shift-jis" => Reply::bytes(
            200,
            "text/plain; charset=Shift_JIS",
            b"\x93\xfa\x96\x7b\x8c\xea\n",
        ),
        "/bad-utf8" => Reply::bytes(200, "text/plain", b"ok \xff\xfe bytes\n"),
        "/plain" => Reply::bytes(
            200,
            "text/plain; charset=utf-8",
            "line one\n<b>not markup</b>\n",
        ),
        "/json" => Reply::bytes(200, "application/json", "{\"a\": [1, 2]}"),
        "/png" => Reply::bytes(200, "image/png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        "/octet" => Reply::bytes(200, "application/octet-stream", b"\x7fELF\0\0\x01"),
        "/untyped" => Reply::new(200).body("  <!DOCTYPE html><p>sniffed html</p>"),
        "/missing" => Reply::bytes(404, html, "<html><body><h1>Nothing here</h1></body></html>"),
        _ => Reply::bytes(400, "text/plain", "unknown route"),
    }
}

/// `total` bytes of `a` in pieces of at most `size`.
fn pieces(total: usize, size: usize) -> Vec<Vec<u8>> {
    (0..total)
        .step_by(size)
        .map(|start| vec![b'a'; size.min(total - start)])
        .collect()
}
