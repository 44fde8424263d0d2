//! Secrets that got past the redactor (issue 13, item 7), end to end
//! through the real binary: a chat answer that echoes the configured key,
//! a config parse error on a credential's line, a passphrase that comes
//! back percent-encoded from the web fetch, and `tools show` with a secret
//! for a name. Servers are on 127.0.0.1 only.

use crate::support;

use oscova_test_support::http::{Framing, Reply, TestServer, awkward};
use serde_json::{Value, json};
use support::{oscova, run_async, temp_dir};

const KEY: &str = "sk-cli-Echo-0123456789abcdef";

fn config_file(text: &str) -> String {
    let path = temp_dir("secrets-config").join("config.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// No form of `secret` the host could make of it: as is, lower-cased,
/// percent-encoded, or a telling fragment.
fn assert_hidden(what: &str, text: &str, secret: &str) {
    let lower = text.to_ascii_lowercase();
    let fragment = &secret[secret.len() / 3..secret.len() * 2 / 3];
    assert!(
        !lower.contains(&fragment.to_ascii_lowercase())
            && !lower.contains(&fragment.replace(' ', "%20").to_ascii_lowercase())
            && !lower.contains(&fragment.replace(' ', "+").to_ascii_lowercase()),
        "{what} shows the secret: {text}"
    );
}

/// An Ollama that streams `pieces` as its answer, cut at awkward places.
async fn echoing_ollama(pieces: &'static [&'static str]) -> TestServer {
    TestServer::start(move |_| {
        let mut body = String::new();
        for piece in pieces {
            let line = json!({"model": "m1", "message": {"role": "assistant", "content": piece}, "done": false});
            body += &format!("{line}\n");
        }
        let done = json!({"model": "m1", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop"});
        body += &format!("{done}\n");
        Reply::stream("application/x-ndjson", Framing::Chunked, awkward(body.as_bytes()))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_answer_that_echoes_the_key_is_redacted_in_text_and_json() {
    // The key arrives split across streamed pieces, once as it is and once
    // lower-cased in a URL.
    static PIECES: &[&str] = &[
        "Your key is sk-cli-Ec",
        "ho-0123456789abcdef; see https://sk-cli-echo-0123456789",
        "abcdef.example/ for more.",
    ];
    let server = echoing_ollama(PIECES).await;
    for json in [false, true] {
        let mut args = vec!["chat", "--provider", "ollama", "--endpoint"];
        let url = server.url();
        args.push(&url);
        args.extend(["--model", "m1", "--message", "what is my key?"]);
        if json {
            args.insert(0, "--json");
        }
        let mut cmd = oscova(&args);
        cmd.env("OSCOVA_CREDENTIAL_OLLAMA_API_KEY", KEY);
        let (code, out, err) = run_async(cmd, None).await;
        assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
        assert_hidden("stdout", &out, KEY);
        assert_hidden("stderr", &err, KEY);
        let answer = if json {
            let doc: Value = serde_json::from_str(&out).unwrap();
            doc["answer"].as_str().unwrap().to_owned()
        } else {
            out
        };
        assert!(
            answer.starts_with("Your key is [REDACTED]; see https://[REDACTED].example/"),
            "{answer}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_parse_error_does_not_quote_the_credential() {
    for text in [
        format!("[credentials]\n\"acme.api_key\" = \"{KEY}\n"),
        format!("[users.alice]\ncredentials = \"{KEY}\"\n"),
    ] {
        let config = config_file(&text);
        for json in [false, true] {
            let mut args = vec!["--config", config.as_str(), "plugins"];
            if json {
                args.insert(0, "--json");
            }
            let (code, out, err) = run_async(oscova(&args), None).await;
            assert_eq!(code, 2, "{out}{err}");
            assert!(format!("{out}{err}").contains("line 2"), "{out}{err}");
            assert_hidden("config error", &format!("{out}{err}"), KEY);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_fetch_echo_redacts_a_passphrase_in_every_field() {
    let passphrase = "correct horse/battery staple";
    // The server echoes the request target as it arrived: percent-encoded.
    let server = TestServer::start(|request| {
        Reply::new(200)
            .body(format!("you asked for {}", request.path))
            .closing()
    })
    .await;
    let config = config_file(&format!(
        "[credentials]\n\"web.passphrase\" = \"{passphrase}\"\n[network]\nallow = [\"127.0.0.1:{}\"]\n",
        server.port()
    ));
    let url = format!("{}/echo?p={passphrase}", server.url());
    let args = json!({ "url": url }).to_string();
    let cmd = oscova(&[
        "--json",
        "--config",
        &config,
        "tools",
        "call",
        "oscova_web__web__fetch",
        "--args",
        &args,
    ]);
    let (code, out, err) = run_async(cmd, None).await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert!(
        doc["content"].as_str().unwrap().contains("[REDACTED]"),
        "{doc}"
    );
    assert!(
        doc["details"]["final_url"]
            .as_str()
            .unwrap()
            .ends_with("?p=[REDACTED]"),
        "{doc}"
    );
    assert_hidden("the result", &out, passphrase);
    // The server did get the real request.
    assert!(
        server.only_request().path.contains("correct%20horse"),
        "the request was sent as asked"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_show_with_a_secret_for_a_name_does_not_echo_it() {
    let config = config_file(&format!("[credentials]\n\"acme.api_key\" = \"{KEY}\"\n"));
    for json in [false, true] {
        let mut args = vec!["--config", config.as_str(), "tools", "show", KEY];
        if json {
            args.insert(0, "--json");
        }
        let (code, out, err) = run_async(oscova(&args), None).await;
        assert_eq!(code, 2, "{out}{err}");
        assert!(format!("{out}{err}").contains("[REDACTED]"), "{out}{err}");
        assert_hidden("tools show", &format!("{out}{err}"), KEY);
    }
}
