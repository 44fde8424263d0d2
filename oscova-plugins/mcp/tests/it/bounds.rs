//! What one misbehaving server may cost the host and the other users: a
//! server that starts and never answers holds no call past its
//! `timeout_secs` (neither the call that started it nor those that waited
//! for it), silent servers at start-up are waited for at once, not one
//! after another, and a server that floods stderr without a newline costs
//! the host no more than the bounded tail.

use crate::support;

use std::time::Duration;

use oscova_core::prelude::*;
use oscova_plugin_mcp::McpPlugin;
use serde_json::json;
use support::{Kind, host, plugin, rmcp_server, server, tool};

/// A guard against a hang, far above the server's timeout: a call still
/// running then is the bug this module pins.
const HANG: Duration = Duration::from_secs(60);

/// Review of issue 24: start-up connected unpinned servers one at a time,
/// so N silent servers delayed it by N timeouts. Both silent servers'
/// connects are in flight at once: each process saw the other's start
/// while it lived (a server abandoned at its timeout is killed, so one
/// after the other, the first never sees the second).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_servers_at_start_up_are_connected_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let hang = dir.path().join("hang");
    std::fs::write(&hang, "").unwrap();
    let marks = dir.path().join("marks");
    std::fs::create_dir(&marks).unwrap();
    let silent = || {
        server(Kind::Rmcp)
            .env("HANG_IF", hang.display().to_string())
            .env("HANG_MARKS", marks.display().to_string())
            .timeout(Duration::from_millis(2000))
    };
    let mcp = plugin(
        McpPlugin::builder()
            .server("first", silent())
            .server("second", silent())
            .server("notes", server(Kind::Rmcp)),
    )
    .await;
    let diagnostics = mcp.start_diagnostics().to_vec();
    assert_eq!(diagnostics.len(), 2, "{diagnostics:?}");
    // Reported in the configuration's (name) order, whatever finished first.
    for (diagnostic, name) in diagnostics.iter().zip(["first", "second"]) {
        assert!(
            diagnostic.starts_with(&format!("MCP server `{name}` was not loaded"))
                && diagnostic.contains("within 2.0 s"),
            "{diagnostic}"
        );
    }
    let mut seen: Vec<String> = std::fs::read_dir(&marks)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .map(|name| name.split('-').next().unwrap_or_default().to_owned())
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        ["overlapped", "overlapped", "started", "started"],
        "both connects were in flight at once"
    );
    let host = host(mcp);
    let shouted = host
        .user_scope(UserInfo::new("alice"))
        .invoke(&tool("shout_text"), json!({"text": "hi"}))
        .await;
    assert_eq!(shouted.content, "HI", "{shouted:?}");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_fails_its_starter_and_its_waiters_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let hang = dir.path().join("hang");
    let config = server(Kind::Rmcp)
        .env("HANG_IF", hang.display().to_string())
        .timeout(Duration::from_millis(1500));
    let mcp = plugin(McpPlugin::builder().server("notes", config)).await;
    let status = mcp.status().clone();
    let host = host(mcp);
    let alice = host.user_scope(UserInfo::new("alice"));
    let bob = host.user_scope(UserInfo::new("bob"));
    let crashed = alice.invoke(&tool("crash"), json!({})).await;
    assert!(crashed.is_error, "{crashed:?}");

    // The restart now meets a server that never answers `initialize`.
    std::fs::write(&hang, "").unwrap();
    let whoami = tool("whoami");
    let (a, b) = tokio::join!(
        tokio::time::timeout(HANG, alice.invoke(&whoami, json!({})).into_future()),
        tokio::time::timeout(HANG, async {
            // Arrives while alice's call holds the restart.
            tokio::time::sleep(Duration::from_millis(200)).await;
            bob.invoke(&whoami, json!({})).await
        }),
    );
    for (who, result) in [("alice", a), ("bob", b)] {
        let result = result.unwrap_or_else(|_| panic!("{who}'s call hung past the timeout"));
        assert!(result.is_error, "{who}: {result:?}");
        assert!(
            result.content.contains("within 1.5 s"),
            "{who}: {}",
            result.content
        );
    }

    // Bob's call waited for alice's attempt rather than queueing behind a
    // lock for one of its own: one start was tried, not two.
    let failed_starts = status
        .servers()
        .next()
        .unwrap()
        .events()
        .iter()
        .filter(|e| e.contains("could not be started"))
        .count();
    assert_eq!(failed_starts, 1, "one attempt served both calls");

    // The server answers again: the next call starts it.
    std::fs::remove_file(&hang).unwrap();
    let carol = host.user_scope(UserInfo::new("carol"));
    let again = tokio::time::timeout(HANG, carol.invoke(&whoami, json!({})).into_future())
        .await
        .expect("not hung");
    assert!(again.content.starts_with("pid="), "{again:?}");
    let events = status.servers().next().unwrap().events();
    assert!(
        events
            .iter()
            .any(|e| e.contains("could not be started") && e.contains("hanging on purpose")),
        "the abandoned start is an event with its stderr: {events:?}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_user_servers_first_call_ends_at_the_timeout_when_it_never_answers() {
    let dir = tempfile::tempdir().unwrap();
    let hang = dir.path().join("hang");
    // Per-user: the listing at start uses a connection of its own; each
    // user's first call starts that user's process.
    let config = server(Kind::Rmcp)
        .per_user(true)
        .env("HANG_IF", hang.display().to_string())
        .timeout(Duration::from_millis(1000));
    let host = host(plugin(McpPlugin::builder().server("notes", config)).await);
    std::fs::write(&hang, "").unwrap();
    let alice = host.user_scope(UserInfo::new("alice"));
    let whoami = tool("whoami");
    let first = tokio::time::timeout(HANG, alice.invoke(&whoami, json!({})).into_future())
        .await
        .expect("the first call hung past the timeout");
    assert!(first.is_error, "{first:?}");
    assert!(
        first
            .content
            .contains("could not be started for user `alice`")
            && first.content.contains("within 1.0 s"),
        "{}",
        first.content
    );
    host.shutdown().await;
}

/// Peak resident memory of this process since the last reset, in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_flooding_stderr_without_newlines_costs_the_host_only_the_tail() {
    // Resets the peak (VmHWM) to the current resident size (Linux >= 4.0).
    std::fs::write("/proc/self/clear_refs", "5").expect("clear_refs");
    let before = peak_rss().expect("VmHWM");
    // 256 MiB of NULs and no newline on stderr, then the real server. The
    // flood ends only when the host has read all but a pipe buffer of it.
    let flood = 256u64 << 20;
    let config = oscova_plugin_mcp::ServerConfig::command("sh")
        .arg("-c")
        .arg(format!("head -c {flood} /dev/zero >&2; exec \"$0\""))
        .arg(rmcp_server().display().to_string());
    let mcp = plugin(McpPlugin::builder().server("notes", config)).await;
    assert!(
        mcp.start_diagnostics().is_empty(),
        "{:?}",
        mcp.start_diagnostics()
    );
    let grew = peak_rss().expect("VmHWM").saturating_sub(before);
    println!("{flood} bytes of stderr raised the peak RSS by {grew} bytes");
    assert!(
        grew < 64 << 20,
        "reading {flood} bytes of stderr raised the host's peak memory by {grew} bytes"
    );
    let host = host(mcp);
    let scope = host.user_scope(UserInfo::new("alice"));
    let shout = scope
        .invoke(&tool("shout_text"), json!({"text": "hi"}))
        .await;
    assert_eq!(shout.content, "HI", "{shout:?}");
    host.shutdown().await;
}
