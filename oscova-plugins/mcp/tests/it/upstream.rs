//! The host API to servers' prompts, resources and completion
//! (`McpUpstreams`), against a real server written with the official
//! Python SDK (`tests/servers/prompts_server.py`): listing, getting,
//! reading, completing over the connection the tools use; list changes
//! recorded and called back; each user's `per_user` process answering
//! that user only, with its credential redacted; a user without the
//! credential, a scope of another host, a dropped scope (its process goes
//! with it), and a server without prompts.

use crate::support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use oscova_core::prelude::*;
use oscova_plugin_mcp::{ChangedList, McpPlugin, ServerConfig, UpstreamError};
use rmcp::model::ResourceContents;
use serde_json::json;
use support::{Kind, host, plugin, server, spawn_policy, tool};

/// The Python SDK server offering prompts and resources, over stdio.
fn prompts_server() -> ServerConfig {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/prompts_server.py");
    ServerConfig::command(
        oscova_test_support::python::mcp_python()
            .display()
            .to_string(),
    )
    .arg(script.display().to_string())
}

fn texts(contents: &[ResourceContents]) -> Vec<String> {
    contents
        .iter()
        .map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            other => panic!("not text: {other:?}"),
        })
        .collect()
}

fn args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_resources_and_completion_of_a_shared_server() {
    let mcp = plugin(McpPlugin::builder().server("notes", prompts_server())).await;
    assert!(
        mcp.start_diagnostics().is_empty(),
        "{:?}",
        mcp.start_diagnostics()
    );
    let upstreams = mcp.upstreams();
    let host = host(mcp);
    let scope = host.user_scope(UserInfo::new("alice"));
    assert_eq!(upstreams.servers().collect::<Vec<_>>(), ["notes"]);

    let prompts = upstreams.list_prompts(&scope, "notes").await.unwrap();
    let summarize = prompts.iter().find(|p| p.name == "summarize").unwrap();
    let arguments = summarize.arguments.as_ref().unwrap();
    assert_eq!(arguments.len(), 2, "{arguments:?}");

    let got = upstreams
        .get_prompt(
            &scope,
            "notes",
            "summarize",
            &args(&[("topic", "alpha"), ("style", "lively")]),
        )
        .await
        .unwrap();
    let message = serde_json::to_value(&got.messages[0]).unwrap();
    assert_eq!(
        message["content"]["text"], "Summarize alpha in a lively way.",
        "{message}"
    );

    let missing = upstreams
        .get_prompt(&scope, "notes", "summarize", &args(&[]))
        .await
        .unwrap_err();
    assert!(
        matches!(missing, UpstreamError::Refused { .. }),
        "a required argument missing is the server's refusal: {missing:?}"
    );

    let resources = upstreams.list_resources(&scope, "notes").await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert!(uris.contains(&"notes://readme"), "{uris:?}");
    let templates = upstreams
        .list_resource_templates(&scope, "notes")
        .await
        .unwrap();
    assert_eq!(templates[0].uri_template, "notes://note/{id}");
    let readme = upstreams
        .read_resource(&scope, "notes", "notes://readme")
        .await
        .unwrap();
    assert_eq!(texts(&readme), ["The notes server's readme."]);
    let note = upstreams
        .read_resource(&scope, "notes", "notes://note/7")
        .await
        .unwrap();
    assert_eq!(texts(&note), ["Note number 7."]);

    let styles = upstreams
        .complete_prompt_argument(&scope, "notes", "summarize", "style", "l", &args(&[]))
        .await
        .unwrap();
    assert_eq!(styles, ["long", "lively"]);
    let ids = upstreams
        .complete_template_argument(&scope, "notes", "notes://note/{id}", "id", "1", &args(&[]))
        .await
        .unwrap();
    assert_eq!(ids, ["1", "10"]);

    let unknown = upstreams.list_prompts(&scope, "other").await.unwrap_err();
    assert_eq!(unknown, UpstreamError::UnknownServer("other".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn announced_list_changes_are_recorded_and_called_back() {
    let mcp = plugin(McpPlugin::builder().server("notes", prompts_server())).await;
    let upstreams = mcp.upstreams();
    let host = host(mcp);
    let scope = host.user_scope(UserInfo::new("alice"));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    upstreams.on_list_changed(move |change| {
        let _ = tx.send(change.clone());
    });
    let mark = upstreams.change_mark();
    assert!(!upstreams.changed_since("notes", ChangedList::Prompts, mark));

    let added = scope
        .invoke(&tool("add_prompt"), json!({"name": "late"}))
        .await;
    assert!(!added.is_error, "{added:?}");
    let change = tokio::time::timeout(Duration::from_secs(30), rx.recv())
        .await
        .expect("a change within 30 s")
        .expect("the callback is kept");
    assert_eq!(change.server, "notes");
    assert_eq!(change.list, ChangedList::Prompts);
    assert_eq!(change.user, None, "a shared server's connection");
    assert!(upstreams.changed_since("notes", ChangedList::Prompts, mark));
    assert!(!upstreams.changed_since("notes", ChangedList::Resources, mark));
    let names: Vec<String> = upstreams
        .list_prompts(&scope, "notes")
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert!(names.contains(&"late".to_owned()), "{names:?}");

    let added = scope
        .invoke(&tool("add_resource"), json!({"name": "extra"}))
        .await;
    assert!(!added.is_error, "{added:?}");
    let change = tokio::time::timeout(Duration::from_secs(30), rx.recv())
        .await
        .expect("a change within 30 s")
        .expect("the callback is kept");
    assert_eq!(change.list, ChangedList::Resources);
    assert!(upstreams.changed_since("notes", ChangedList::Resources, mark));
}

/// The `pid=` and `token_reversed=` of a `notes://whoami` read.
fn whoami(contents: &[ResourceContents]) -> (String, String) {
    let text = texts(contents).concat();
    let field = |name: &str| {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(name))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        text.contains("token=[REDACTED]"),
        "the user's credential is redacted: {text}"
    );
    (field("pid="), field("token_reversed="))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_user_server_answers_each_user_over_their_own_connection() {
    let config = prompts_server()
        .per_user(true)
        .credential_env("NOTES_TOKEN", "notes.token");
    let mcp = plugin(McpPlugin::builder().server("notes", config)).await;
    let upstreams = mcp.upstreams();
    let host = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(mcp)
        .spawn_policy(spawn_policy())
        .credentials(|user: &UserInfo, key: &str| {
            (key == "notes.token" && user.id() != "dave")
                .then(|| SecretString::from(format!("{}-token-1", user.id())))
        })
        .build()
        .unwrap();
    let alice = host.user_scope(UserInfo::new("alice"));
    let bob = host.user_scope(UserInfo::new("bob"));

    let read = |scope| upstreams.read_resource(scope, "notes", "notes://whoami");
    let (alice_pid, alice_token) = whoami(&read(&alice).await.unwrap());
    let (bob_pid, bob_token) = whoami(&read(&bob).await.unwrap());
    assert_eq!(alice_token, "1-nekot-ecila");
    assert_eq!(bob_token, "1-nekot-bob");
    assert_ne!(alice_pid, bob_pid, "one process per user");
    // Again, interleaved: each user keeps their own process.
    assert_eq!(
        whoami(&read(&bob).await.unwrap()),
        (bob_pid.clone(), bob_token)
    );
    assert_eq!(whoami(&read(&alice).await.unwrap()).0, alice_pid);

    // A change on bob's connection names bob.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    upstreams.on_list_changed(move |change| {
        let _ = tx.send(change.clone());
    });
    let added = bob
        .invoke(&tool("add_prompt"), json!({"name": "bobs"}))
        .await;
    assert!(!added.is_error, "{added:?}");
    let change = tokio::time::timeout(Duration::from_secs(30), rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(change.user.as_deref(), Some("bob"));
    let names = |prompts: Vec<rmcp::model::Prompt>| -> Vec<String> {
        prompts.into_iter().map(|p| p.name).collect()
    };
    let bobs = names(upstreams.list_prompts(&bob, "notes").await.unwrap());
    let alices = names(upstreams.list_prompts(&alice, "notes").await.unwrap());
    assert!(bobs.contains(&"bobs".to_owned()), "{bobs:?}");
    assert!(
        !alices.contains(&"bobs".to_owned()),
        "alice's process never saw bob's prompt: {alices:?}"
    );

    // Without the credential: no connection, the error says what to set.
    let dave = host.user_scope(UserInfo::new("dave"));
    match upstreams.list_prompts(&dave, "notes").await {
        Err(UpstreamError::MissingCredential { keys, message, .. }) => {
            assert_eq!(keys, ["notes.token"]);
            assert!(message.contains("[users.dave.credentials]"), "{message}");
        }
        other => panic!("{other:?}"),
    }

    // A scope of a host without this plugin holds no handler of it.
    let other = PluginHost::builder().no_linked_plugins().build().unwrap();
    let stranger = other.user_scope(UserInfo::new("carol"));
    assert!(matches!(
        upstreams.list_prompts(&stranger, "notes").await,
        Err(UpstreamError::NoScope { .. })
    ));
    // Alice's scope is gone, and her process with it: a new scope of
    // hers gets a process of its own, never bob's.
    drop(alice);
    let alice = host.user_scope(UserInfo::new("alice"));
    let again = upstreams.read_resource(&alice, "notes", "notes://whoami");
    let (pid, token) = whoami(&again.await.unwrap());
    assert_eq!(token, "1-nekot-ecila");
    assert_ne!(pid, alice_pid, "a new scope, a new process");
    assert_ne!(pid, bob_pid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_prompts_or_resources_lists_nothing() {
    let mcp = plugin(McpPlugin::builder().server("notes", server(Kind::Rmcp))).await;
    let upstreams = mcp.upstreams();
    let host = host(mcp);
    let scope = host.user_scope(UserInfo::new("alice"));
    assert!(
        upstreams
            .list_prompts(&scope, "notes")
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        upstreams
            .list_resources(&scope, "notes")
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        upstreams
            .list_resource_templates(&scope, "notes")
            .await
            .unwrap()
            .is_empty()
    );
    let values = upstreams
        .complete_prompt_argument(&scope, "notes", "x", "y", "", &args(&[]))
        .await
        .unwrap();
    assert!(values.is_empty());
    assert!(matches!(
        upstreams.read_resource(&scope, "notes", "notes://x").await,
        Err(UpstreamError::NotOffered {
            what: "resources",
            ..
        })
    ));
}
