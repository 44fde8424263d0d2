//! The loopback server against a hand-written client, byte for byte: what
//! the tests of the other crates rely on it for.

use std::time::Duration;

use oscova_test_support::http::{Framing, Reply, TestServer, closed_port_url};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn connect(server: &TestServer) -> TcpStream {
    TcpStream::connect(server.addr).await.unwrap()
}

/// Reads until `end` has been seen at the end of what came, or EOF.
async fn read_until(stream: &mut TcpStream, end: &[u8]) -> Vec<u8> {
    let mut got = Vec::new();
    let mut scratch = [0u8; 1024];
    while !got.ends_with(end) {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut scratch))
            .await
            .expect("the server answers in time")
            .unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&scratch[..n]);
    }
    got
}

/// Sends `request` on a new connection and returns what came back until
/// `end` (or the connection's end: `b"\0"` never comes).
async fn exchange(server: &TestServer, request: &[u8], end: &[u8]) -> String {
    let mut client = connect(server).await;
    client.write_all(request).await.unwrap();
    String::from_utf8(read_until(&mut client, end).await).unwrap()
}

const GET: &[u8] = b"GET / HTTP/1.1\r\n\r\n";

#[tokio::test]
async fn requests_are_recorded_and_connections_kept_alive() {
    let server = TestServer::start(|r| Reply::json(200, json!({"path": r.path}))).await;
    let mut client = connect(&server).await;
    client
        .write_all(
            b"POST /a?q=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\nX-Key: k\r\n\r\n{\"n\":1}",
        )
        .await
        .unwrap();
    let first = read_until(&mut client, b"{\"path\":\"/a?q=1\"}").await;
    assert_eq!(
        String::from_utf8(first).unwrap(),
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 17\r\n\r\n{\"path\":\"/a?q=1\"}"
    );
    client
        .write_all(b"GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    read_until(&mut client, b"{\"path\":\"/b\"}").await;

    assert_eq!(server.connections(), 1);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].version, "HTTP/1.1");
    assert_eq!(requests[0].header("x-key"), Some("k"));
    assert_eq!(requests[0].json(), json!({"n": 1}));
    assert_eq!(requests[1].path, "/b");
    assert!(requests[1].body.is_empty());
}

#[tokio::test]
async fn pieces_go_out_as_chunks_and_a_closing_reply_ends_the_connection() {
    let pieces = vec![b"ab".to_vec(), Vec::new(), b"cde".to_vec()];
    let server = TestServer::start(move |_| {
        Reply::stream("text/plain", Framing::Chunked, pieces.clone()).closing()
    })
    .await;
    assert_eq!(
        exchange(&server, GET, b"\0").await,
        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n2\r\nab\r\n3\r\ncde\r\n0\r\n\r\n"
    );
}

#[tokio::test]
async fn a_close_delimited_body_has_no_length() {
    let server = TestServer::start(|_| {
        Reply::stream(
            "text/plain",
            Framing::Close,
            vec![b"x".to_vec(), b"y".to_vec()],
        )
        .header("x-extra", "1")
    })
    .await;
    assert_eq!(
        exchange(&server, GET, b"\0").await,
        "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nx-extra: 1\r\nconnection: close\r\n\r\nxy"
    );
}

#[tokio::test]
async fn a_redirect_has_an_empty_body_and_no_content_type() {
    let server = TestServer::start(|_| Reply::redirect(302, "/page")).await;
    assert_eq!(
        exchange(&server, GET, b"\r\n\r\n").await,
        "HTTP/1.1 302 Found\r\nlocation: /page\r\ncontent-length: 0\r\n\r\n"
    );
}

#[tokio::test]
async fn a_hanging_body_is_chunked_and_its_drop_is_noticed() {
    let server =
        TestServer::start(|_| Reply::bytes(200, "application/x-ndjson", "{}\n").hanging()).await;
    let mut client = connect(&server).await;
    client.write_all(GET).await.unwrap();
    let got = read_until(&mut client, b"{}\n\r\n").await;
    assert!(
        got.ends_with(b"transfer-encoding: chunked\r\n\r\n3\r\n{}\n\r\n"),
        "{}",
        String::from_utf8_lossy(&got)
    );
    assert!(!server.wait_dropped(Duration::from_millis(50)).await);
    drop(client);
    assert!(server.wait_dropped(Duration::from_secs(5)).await);
}

#[tokio::test]
async fn a_silent_reply_sends_nothing_until_the_client_gives_up() {
    let server = TestServer::start(|_| Reply::silent()).await;
    let mut client = connect(&server).await;
    client.write_all(GET).await.unwrap();
    let mut scratch = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_millis(100), client.read(&mut scratch)).await;
    assert!(read.is_err(), "the server said something: {read:?}");
    drop(client);
    assert!(server.wait_dropped(Duration::from_secs(5)).await);
    assert_eq!(server.only_request().path, "/");
}

#[tokio::test]
async fn a_delayed_reply_waits_before_its_head() {
    let server = TestServer::start(|_| {
        Reply::bytes(200, "text/plain", "late").delayed(Duration::from_millis(200))
    })
    .await;
    let mut client = connect(&server).await;
    let started = std::time::Instant::now();
    client.write_all(GET).await.unwrap();
    let got = read_until(&mut client, b"late").await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(got.starts_with(b"HTTP/1.1 200 OK\r\n"));
}

#[tokio::test]
#[should_panic(expected = "expected a Content-Length body")]
async fn a_chunked_request_body_is_reported() {
    let server = TestServer::start(|_| Reply::new(204)).await;
    // The server gives the connection up.
    exchange(
        &server,
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
        b"\0",
    )
    .await;
    server.requests();
}

#[tokio::test]
#[should_panic(expected = "more body bytes than Content-Length")]
async fn bytes_past_the_body_are_reported() {
    let server = TestServer::start(|_| Reply::new(204)).await;
    exchange(
        &server,
        b"POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\nab",
        b"\0",
    )
    .await;
    server.requests();
}

#[tokio::test]
#[should_panic(expected = "header x-twice sent twice")]
async fn a_repeated_header_is_refused_when_asked_for() {
    let server = TestServer::start(|_| Reply::new(204)).await;
    exchange(
        &server,
        b"GET / HTTP/1.1\r\nX-Twice: 1\r\nX-Twice: 2\r\n\r\n",
        b"\r\n\r\n",
    )
    .await;
    server.only_request().header("x-twice");
}

#[tokio::test]
async fn a_dropped_server_and_a_closed_port_refuse_connections() {
    let server = TestServer::start(|_| Reply::new(204)).await;
    let addr = server.addr;
    let clone = server.clone();
    drop(server);
    tokio::task::yield_now().await;
    // A clone keeps it going.
    TcpStream::connect(addr).await.unwrap();
    drop(clone);
    // The accept loop ends when the runtime next gets to it.
    let mut refused = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(10)).await;
        if TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
    }
    assert!(refused, "still accepting after the last handle went");

    let url = closed_port_url().await;
    let addr = url.strip_prefix("http://").unwrap();
    assert!(TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn a_bare_body_goes_out_without_a_content_type() {
    let server = TestServer::start(|_| Reply::new(200).body("hello").closing()).await;
    assert_eq!(
        exchange(&server, GET, b"\0").await,
        "HTTP/1.1 200 OK\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello"
    );
}
