//! Connections: a body must arrive within its timeout, and only so many
//! connections are open at once (issue 24, finding 6). Raw TCP, since no
//! client trickles a body on purpose.

use super::*;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads what the server sends until it closes the connection.
async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    timeout(PATIENCE, stream.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes the connection")
        .unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

/// A POST of `body` to `/mcp` as Alice, the whole request but for the
/// body's last `missing` bytes.
fn request(addr: SocketAddr, body: &str, missing: usize) -> Vec<u8> {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {ALICE}\r\n\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         content-length: {}\r\n\r\n",
        body.len()
    );
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&body.as_bytes()[..body.len() - missing]);
    bytes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickled_body_gets_408_and_its_connection_closes() {
    let server = Running::start(
        with_tokens(McpHttpServer::new(host().0)).body_timeout(Duration::from_millis(300)),
    )
    .await;
    let mut slow = TcpStream::connect(server.addr).await.unwrap();
    slow.write_all(&request(server.addr, INITIALIZE, 10))
        .await
        .unwrap();
    // The rest never comes; a byte now and then does not help.
    slow.write_all(b" ").await.unwrap();
    let answer = read_to_close(&mut slow).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive in full"), "{answer}");

    // A body that arrives in time is served as ever.
    let mut prompt = TcpStream::connect(server.addr).await.unwrap();
    prompt
        .write_all(&request(server.addr, INITIALIZE, 0))
        .await
        .unwrap();
    let mut head = [0u8; 12];
    timeout(PATIENCE, prompt.read_exact(&mut head))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_the_bound_wait_until_one_closes() {
    let server = Running::start(with_tokens(McpHttpServer::new(host().0)).max_connections(2)).await;
    // Two connections that say nothing hold both places.
    let first = TcpStream::connect(server.addr).await.unwrap();
    let _second = TcpStream::connect(server.addr).await.unwrap();
    let mut third = TcpStream::connect(server.addr).await.unwrap();
    third
        .write_all(&request(server.addr, INITIALIZE, 0))
        .await
        .unwrap();
    let mut head = [0u8; 12];
    let early = timeout(Duration::from_millis(500), third.read_exact(&mut head)).await;
    assert!(early.is_err(), "served past the bound: {head:?}");
    // One closes: the waiting connection is accepted and served.
    drop(first);
    timeout(PATIENCE, third.read_exact(&mut head))
        .await
        .expect("served once a place is free")
        .unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    server.shutdown().await;
}
