//! A saved `endpoint_scope = "local"` wins (issue 12): `oscova chat
//! --offline` against an Ollama on the LAN that the operator saved as
//! local runs, and warns on stderr, naming the endpoint.
//!
//! The LAN address exists only inside a network namespace the test creates
//! (`oscova_test_support::netns`); the `oscova` binary runs inside it too.

use crate::support;

use oscova_test_support::http::{Reply, TestServer};
use serde_json::json;
use support::{oscova, run_async, temp_dir};

const LAN: &str = "10.0.0.5";

#[test]
fn a_saved_local_scope_for_a_lan_endpoint_passes_offline_with_a_warning() {
    oscova_test_support::netns::run_async(
        "endpoint_scope::a_saved_local_scope_for_a_lan_endpoint_passes_offline_with_a_warning",
        &[LAN],
        in_a_namespace,
    );
}

async fn in_a_namespace() {
    let server = TestServer::start_on(LAN.parse().unwrap(), |_| {
        let line = json!({
            "model": "m1",
            "message": {"role": "assistant", "content": "hello from the LAN"},
            "done": true,
            "done_reason": "stop",
        });
        Reply::bytes(200, "application/x-ndjson", format!("{line}\n"))
    })
    .await;
    let endpoint = format!("http://{LAN}:{}", server.port());
    let write = |extra: &str| {
        let path = temp_dir("endpoint-scope").join("config.toml");
        let text =
            format!("[providers.ollama]\nendpoint = \"{endpoint}\"\nmodel = \"m1\"\n{extra}");
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };

    // Not saved: a LAN endpoint is not local, and offline refuses it.
    let config = write("");
    let cmd = oscova(&[
        "--config",
        &config,
        "chat",
        "--provider",
        "ollama",
        "--offline",
        "-m",
        "hi",
    ]);
    let (code, _, err) = run_async(cmd, None).await;
    assert_eq!(code, 3, "{err}");
    assert_eq!(server.connections(), 0);

    // Saved as local: the operator's choice wins, and is said so.
    let config = write("endpoint_scope = \"local\"\n");
    let cmd = oscova(&[
        "--config",
        &config,
        "chat",
        "--provider",
        "ollama",
        "--offline",
        "-m",
        "hi",
    ]);
    let (code, out, err) = run_async(cmd, None).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert_eq!(out, "hello from the LAN\n");
    assert!(
        err.contains("warning:")
            && err.contains(&format!("endpoint `{endpoint}`"))
            && err.contains("endpoint_scope is `local`"),
        "{err}"
    );
    assert_eq!(server.connections(), 1);
}
