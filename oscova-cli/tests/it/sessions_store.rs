//! `[sessions]` end to end: a password in the URL refused, the Postgres
//! store behind its feature, and `chat --session` on a throwaway Postgres
//! cluster on 127.0.0.1; and a fork of a missing session, which creates
//! nothing (the helpers are in `sessions`).

use oscova_test_support::http::TestServer;
use serde_json::{Value, json};

use crate::sessions::{FIRST, chat, cmd, config_with, json_of, model, pairs, sent, sqlite_config};
use crate::support::run;

#[test]
fn a_password_in_the_url_is_refused_naming_pgpassword() {
    let config =
        config_with("store = \"postgres\"\nurl = \"postgres://me:hunter2-pw@127.0.0.1:5432/db\"");
    let (code, out, err) = run(&mut cmd(&config, &["sessions", "list"]));
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(err.contains("PGPASSWORD"), "{err}");
    assert!(
        !err.contains("hunter2") && !out.contains("hunter2"),
        "{err}"
    );
}

/// A build without `sessions-postgres` refuses `store = "postgres"` when
/// the file is loaded; a build with it tries the server (here a closed
/// port: a failure of the store, exit 1, not a usage error).
#[test]
fn a_postgres_store_needs_the_feature() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = config_with(&format!(
        "store = \"postgres\"\nurl = \"postgres://me@127.0.0.1:{port}/db\""
    ));
    let (code, doc) = json_of(&config, &["sessions", "list"]);
    if cfg!(feature = "sessions-postgres") {
        assert_eq!(
            (code, doc["error"]["kind"].as_str()),
            (1, Some("session_store")),
            "{doc}"
        );
    } else {
        assert_eq!(
            (code, doc["error"]["kind"].as_str()),
            (2, Some("config")),
            "{doc}"
        );
        assert!(
            doc["error"]["message"]
                .as_str()
                .unwrap()
                .contains("sessions-postgres")
        );
    }
}

/// The same commands on Postgres: a chat resumed by a second process, and
/// the password from `PGPASSWORD`, not the file.
#[cfg(feature = "sessions-postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_sessions_on_postgres() {
    let cluster = oscova_test_support::postgres::Cluster::start();
    cluster.create_database("cli_sessions");
    let config = config_with(&format!(
        "store = \"postgres\"\nurl = \"postgres://postgres@127.0.0.1:{}/cli_sessions\"",
        cluster.port()
    ));
    let server = TestServer::start(model).await;
    for message in ["first", "second"] {
        let (code, out, err) = chat(&config, &server, &["--session", "pg", "-m", message]).await;
        assert_eq!(code, 0, "{out}\n{err}");
    }
    let mut expected = pairs(&FIRST);
    expected.extend(pairs(&[("user", "second")]));
    assert_eq!(sent(&server.requests()[2]), expected);
    let mut list = cmd(&config, &["--json", "sessions", "list"]);
    list.env("PGPASSWORD", "unused-by-trust");
    let (code, out, err) = run(&mut list);
    assert_eq!(code, 0, "{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    // Six messages and the echo call's started mark.
    assert_eq!(listed["sessions"][0]["entries"], 7);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_of_a_missing_session_creates_nothing() {
    let config = sqlite_config();
    let server = TestServer::start(model).await;
    let (code, out, _) = chat(
        &config,
        &server,
        &["--session", "ghost", "--fork", "e1", "-m", "x"],
    )
    .await;
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("session_not_found"), "{out}");
    let (_, listed) = json_of(&config, &["sessions", "list"]);
    assert_eq!(listed["sessions"], json!([]));
    assert!(server.requests().is_empty());
}
