//! `[network] allow`: the only way an `Internet` tool (the web fetch)
//! reaches an internal destination. The server is on 127.0.0.1 and counts
//! its connections.

use crate::support;

use oscova_test_support::http::{Reply, TestServer};
use support::{oscova, run_async, temp_dir};

const FETCH: &str = "oscova_web__web__fetch";

fn config_file(text: &str) -> String {
    let path = temp_dir("network-config").join("config.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_fetch_reaches_loopback_only_when_the_config_allows_it() {
    let server =
        TestServer::start(|_| Reply::new(200).body("internal secret page").closing()).await;
    let args = format!(r#"{{"url":"{}/admin"}}"#, server.url());

    let cmd = oscova(&["tools", "call", FETCH, "--args", &args]);
    let (code, out, err) = run_async(cmd, None).await;
    assert_eq!(code, 1, "stdout: {out}\nstderr: {err}");
    assert!(!out.contains("internal secret page"), "{out}");
    assert!(
        err.contains("is not allowed here")
            && err.contains("network scope `internet`")
            && err.contains("a loopback address"),
        "{err}"
    );
    assert_eq!(server.connections(), 0);

    let other_port = config_file("[network]\nallow = [\"127.0.0.1:1\"]\n");
    let cmd = oscova(&[
        "--config",
        &other_port,
        "tools",
        "call",
        FETCH,
        "--args",
        &args,
    ]);
    let (code, _, err) = run_async(cmd, None).await;
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("only on port 1"), "{err}");
    assert_eq!(server.connections(), 0);

    let allowed = config_file(&format!(
        "[network]\nallow = [\"127.0.0.1:{}\"]\n",
        server.port()
    ));
    let cmd = oscova(&[
        "--config", &allowed, "tools", "call", FETCH, "--args", &args,
    ]);
    let (code, out, err) = run_async(cmd, None).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    assert_eq!(out, "internal secret page\n");
    assert_eq!(server.connections(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_allow_entry_is_a_config_error_naming_it() {
    let config = config_file("[network]\nallow = [\"http://intranet/\"]\n");
    let (code, _, err) = run_async(oscova(&["--config", &config, "plugins"]), None).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("[network] allow: `http://intranet/` cannot be allowed"),
        "{err}"
    );
}
