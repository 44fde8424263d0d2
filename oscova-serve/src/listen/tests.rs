//! The listener: the origin policy before every handler.

use super::*;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// Serves "served" on every path of `listener` until the returned
/// sender is used or dropped.
fn serve(
    listener: Listener,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), ServeError>>,
) {
    let handle = |_request: Request<RequestBody>| async {
        Response::new(http_body_util::Full::new(Bytes::from_static(b"served")))
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let shutdown = Shutdown::new(
        CancellationToken::new(),
        Duration::from_millis(10),
        Arc::default(),
    );
    let until = async {
        stopped.await.ok();
    };
    (
        stop,
        tokio::spawn(listener.serve_until(handle, until, shutdown)),
    )
}

/// The status and body of `head` (request line and headers, without
/// the blank line) sent to `port` on 127.0.0.1.
async fn ask(port: u16, head: &str) -> (u16, String) {
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    socket
        .write_all(format!("{head}\r\nconnection: close\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).await.unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer.split_once("\r\n\r\n").unwrap().1.to_owned();
    (status, body)
}

/// Issue 36, finding 1: every path of a port meets one Host and Origin
/// policy before its handler, whatever the handler is.
#[tokio::test]
async fn every_path_meets_the_origin_policy_before_the_handler() {
    let listener = Listener::bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
        .allow_origins(["https://app.example.com"])
        .allow_hosts(["agents.example.com"]);
    let port = listener.local_addr().port();
    let (stop, served) = serve(listener);
    for path in ["/", "/mcp", "/tasks", "/a2a/followups/x", "/added-later"] {
        let here = format!("host: 127.0.0.1:{port}");
        for (headers, status) in [
            (here.clone(), 200),
            (format!("{here}\r\norigin: http://127.0.0.1:{port}"), 200),
            (format!("{here}\r\norigin: https://app.example.com"), 200),
            ("host: localhost".to_owned(), 200),
            ("host: agents.example.com".to_owned(), 200),
            (format!("{here}\r\norigin: http://evil.example"), 403),
            ("host: evil.example".to_owned(), 403),
            (
                format!("host: evil.example:{port}\r\norigin: http://evil.example:{port}"),
                403,
            ),
            (String::new(), 403),
        ] {
            let head = format!("GET {path} HTTP/1.1\r\n{headers}");
            let head = head.trim_end();
            let (got, body) = ask(port, head).await;
            assert_eq!(got, status, "{head:?}: {body}");
            if status == 403 {
                assert!(body.starts_with("Forbidden: the "), "{body}");
            } else {
                assert_eq!(body, "served");
            }
        }
    }
    stop.send(()).unwrap();
    served.await.unwrap().unwrap();
}

/// Bound to every address, the port is reached by names only its
/// operator knows: the `Host` is not checked, the `Origin` still is.
#[tokio::test]
async fn elsewhere_only_the_origin_is_checked() {
    let listener = Listener::bind("0.0.0.0:0".parse().unwrap()).await.unwrap();
    assert!(!listener.origin_policy().checks_host());
    let port = listener.local_addr().port();
    let (stop, served) = serve(listener);
    let public = "GET /tasks HTTP/1.1\r\nhost: agents.example.com";
    assert_eq!(ask(port, public).await, (200, "served".to_owned()));
    let foreign = format!("{public}\r\norigin: http://evil.example");
    assert_eq!(ask(port, &foreign).await.0, 403);
    stop.send(()).unwrap();
    served.await.unwrap().unwrap();
}

#[test]
fn a_peer_gets_its_share_of_connections_and_its_slots_back() {
    let peers = Arc::new(Peers::default());
    let (a, b): (IpAddr, IpAddr) = ([127, 0, 0, 1].into(), [127, 0, 0, 2].into());
    let first = peers.admit(a, 2);
    let second = peers.admit(a, 2);
    assert!(first.is_some() && second.is_some());
    assert!(peers.admit(a, 2).is_none(), "past the address's share");
    assert!(peers.admit(b, 2).is_some(), "another address has its own");
    drop(first);
    let third = peers.admit(a, 2);
    assert!(third.is_some(), "a closed connection gives its slot back");
    drop((second, third));
    assert!(
        peers.lock().is_empty(),
        "no address is remembered with none open"
    );
}

/// A listener refuses limits a semaphore cannot hold, before serving.
#[tokio::test]
async fn a_listener_takes_only_checked_limits() {
    let listener = Listener::bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let limits = Limits {
        max_connections: usize::MAX,
        ..Limits::default()
    };
    let refused = listener.limits(limits).unwrap_err();
    assert_eq!(refused.setting(), "max_connections");
}
