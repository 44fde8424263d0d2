//! `network = "none"` for a stdio server: it starts in an empty network
//! namespace, so it cannot reach even a loopback listener of the host, and
//! under a seccomp filter, so it cannot reach a unix socket of the host
//! wherever the socket lives (a temp dir, `/tmp`, `/run`, the target
//! directory, or an abstract name), nor make an io_uring or an x32 system
//! call (from a child it starts); agent-socket variables never reach it.
//! A server declared `internet` reaches the same listeners and makes the
//! same calls.

use crate::support;

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram, UnixListener};

use oscova_core::prelude::*;
use oscova_core::process::ProcessSpawnPolicy;
use oscova_plugin_mcp::{McpPlugin, network_isolation_available};
use serde_json::json;
use support::{Kind, host, plugin, server, tool};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_none_server_cannot_reach_a_loopback_listener() {
    assert!(
        network_isolation_available(),
        "this test needs `unshare -rn` (Linux user namespaces)"
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mcp = plugin(
        McpPlugin::builder()
            .server("notes", server(Kind::Rmcp).network(NetworkScope::None))
            .server("open", server(Kind::Rmcp).network(NetworkScope::Internet)),
    )
    .await;
    let summaries: Vec<String> = mcp
        .status()
        .servers()
        .map(|s| s.summary().to_owned())
        .collect();
    assert!(
        summaries[0].contains("network none: enforced"),
        "{summaries:?}"
    );
    assert!(
        summaries[1].contains("network internet: declared"),
        "{summaries:?}"
    );
    let host = host(mcp);
    assert_eq!(
        host.tool(&tool("connect")).unwrap().network_scope(),
        NetworkScope::None
    );
    let scope = host.user_scope(UserInfo::new("alice"));

    let isolated = scope.invoke(&tool("connect"), json!({"port": port})).await;
    assert!(isolated.is_error, "{isolated:?}");
    assert!(
        isolated.content.contains("cannot connect"),
        "{}",
        isolated.content
    );

    let open = scope
        .invoke("oscova_mcp__open__connect", json!({"port": port}))
        .await;
    assert_eq!(open.content, "connected", "{open:?}");
    drop(listener);
}

/// A stream listener and a datagram socket the host listens on in `dir`.
struct Sockets {
    stream: UnixListener,
    stream_path: String,
    datagram: UnixDatagram,
    datagram_path: String,
}

fn sockets_in(dir: &std::path::Path) -> Sockets {
    let stream_path = dir.join("agent.sock");
    let datagram_path = dir.join("log.sock");
    let stream = UnixListener::bind(&stream_path).unwrap();
    stream.set_nonblocking(true).unwrap();
    let datagram = UnixDatagram::bind(&datagram_path).unwrap();
    datagram.set_nonblocking(true).unwrap();
    Sockets {
        stream,
        stream_path: stream_path.display().to_string(),
        datagram,
        datagram_path: datagram_path.display().to_string(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_none_server_reaches_no_host_unix_socket_and_no_agent_variable() {
    assert!(
        network_isolation_available(),
        "this test needs `unshare -rn` and seccomp filters (Linux)"
    );
    // Where host sockets live: a temp dir under /tmp, /run, and a directory
    // outside both (the target directory).
    let elsewhere = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // /run is writable by root only (as CI runs); elsewhere it is left out.
    let run = tempfile::Builder::new()
        .prefix("oscova-test-")
        .tempdir_in("/run")
        .inspect_err(|e| println!("no socket under /run: {e}"))
        .ok();
    let places: Vec<Sockets> = [Some(elsewhere.path()), Some(tmp.path())]
        .into_iter()
        .chain([run.as_ref().map(|d| d.path())])
        .flatten()
        .map(sockets_in)
        .collect();
    let name = format!("oscova-test-{}", std::process::id());
    let abstract_listener =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
    abstract_listener.set_nonblocking(true).unwrap();

    // The host's environment names an ssh agent, a gpg agent and a session
    // bus, all at a listener of the host.
    let agent = &places[0].stream_path;
    let path = std::env::var("PATH").unwrap_or_default();
    let policy = ProcessSpawnPolicy::with_base_env([
        ("PATH", path),
        ("SSH_AUTH_SOCK", agent.clone()),
        ("GPG_AGENT_INFO", format!("{agent}:0:1")),
        ("DBUS_SESSION_BUS_ADDRESS", format!("unix:path={agent}")),
    ]);
    let mcp = McpPlugin::builder()
        .server("notes", server(Kind::Rmcp).network(NetworkScope::None))
        .server("open", server(Kind::Rmcp).network(NetworkScope::Internet))
        .spawn_policy(policy)
        .start()
        .await;
    assert!(
        mcp.start_diagnostics().is_empty(),
        "{:?}",
        mcp.start_diagnostics()
    );
    let host = host(mcp);
    let scope = host.user_scope(UserInfo::new("alice"));
    let reach = |server: &'static str, path: String| {
        let scope = &scope;
        async move {
            let result = scope
                .invoke(
                    &format!("oscova_mcp__{server}__connect_unix"),
                    json!({"path": path}),
                )
                .await;
            assert!(!result.is_error, "{result:?}");
            result.content
        }
    };

    for place in &places {
        for path in [&place.stream_path, &place.datagram_path] {
            let seen = reach("notes", path.clone()).await;
            assert_eq!(
                seen.matches("refused (Permission denied").count(),
                3,
                "{path}: every way is refused: {seen}"
            );
        }
        assert!(place.stream.accept().is_err(), "nothing connected");
        assert!(place.datagram.recv(&mut [0; 8]).is_err(), "nothing arrived");
    }
    let seen = reach("notes", format!("@{name}")).await;
    assert!(!seen.contains("connected"), "{seen}");
    assert!(abstract_listener.accept().is_err(), "nothing connected");

    for place in &places {
        let seen = reach("open", place.stream_path.clone()).await;
        assert!(seen.starts_with("stream: connected"), "{seen}");
        let seen = reach("open", place.datagram_path.clone()).await;
        assert!(seen.contains("datagram: sent; pair: sent"), "{seen}");
    }
    let seen = reach("open", format!("@{name}")).await;
    assert!(seen.starts_with("stream: connected"), "{seen}");

    for server in ["notes", "open"] {
        let names = scope
            .invoke(&format!("oscova_mcp__{server}__environment"), json!({}))
            .await
            .content;
        assert!(names.contains("PATH"), "{names}");
        for agent in [
            "SSH_AUTH_SOCK",
            "GPG_AGENT_INFO",
            "DBUS_SESSION_BUS_ADDRESS",
        ] {
            assert!(
                !names.contains(agent),
                "{server}: {agent} reached it: {names}"
            );
        }
    }

    // The filter's other two refusals, end to end, in a process the server
    // starts: io_uring (which makes sockets without `socket(2)`) and x32
    // numbers (which a filter of x86-64 numbers would let through) get
    // EACCES; unconfined, io_uring works (or is refused otherwise, as a
    // container may) and x32 is ENOSYS or works.
    let probe = |server: &'static str| {
        let scope = &scope;
        async move {
            scope
                .invoke(&format!("oscova_mcp__{server}__syscalls"), json!({}))
                .await
        }
    };
    let x32 = if cfg!(target_arch = "x86_64") {
        libc::EACCES.to_string()
    } else {
        "n/a".to_owned()
    };
    assert_eq!(
        probe("notes").await.content,
        format!("io_uring_setup: {}; x32: {x32}", libc::EACCES)
    );
    let open = probe("open").await.content;
    assert!(open.starts_with("io_uring_setup: "), "{open}");
    assert!(
        !open.contains(&format!(": {};", libc::EACCES))
            && !open.ends_with(&format!(": {}", libc::EACCES)),
        "unconfined, nothing is refused with EACCES: {open}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_none_python_server_still_serves() {
    // asyncio makes a socket pair for itself: the filter leaves stream pairs.
    let mcp = plugin(
        McpPlugin::builder().server("notes", server(Kind::Python).network(NetworkScope::None)),
    )
    .await;
    assert!(
        mcp.start_diagnostics().is_empty(),
        "{:?}",
        mcp.start_diagnostics()
    );
    let host = host(mcp);
    let scope = host.user_scope(UserInfo::new("alice"));
    let result = scope
        .invoke(&tool("shout_text"), json!({"text": "hi"}))
        .await;
    assert_eq!(result.content, "HI", "{result:?}");
    host.shutdown().await;
}
