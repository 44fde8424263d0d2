//! The OpenAI-compatible speech service the `openai` tests talk to: the
//! shared loopback server (`oscova_test_support::http`) answering each test
//! with one canned reply on a connection it then closes, and a byte-exact
//! reader of the multipart bodies it receives.

use oscova_test_support::http::{Reply, TestServer};

pub const KEY: &str = "sk-test-0123456789abcdef";

/// `status` with `body` as `application/json`; the body need not be valid
/// JSON, as the tests of malformed answers need.
pub fn json_reply(status: u16, body: &str) -> Reply {
    Reply::bytes(status, "application/json", body)
}

/// A server answering with `reply` and closing the connection; a test
/// reads the one request it expects with [`TestServer::only_request`],
/// which fails if there was any other.
pub async fn serve_once(reply: Reply) -> (String, TestServer) {
    let reply = reply.closing();
    let server = TestServer::start(move |_| reply.clone()).await;
    (server.url(), server)
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
