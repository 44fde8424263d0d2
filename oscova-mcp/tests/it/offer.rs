//! Prompts, resources and completion over a duplex, with rmcp's client:
//! declared prompts checked and rendered, the files root as `file:///`
//! resources through the files boundary (with the escapes it refuses),
//! path completion, and subscriptions updated when a file changes
//! (`resources/subscribe` before 2026-07-28, `subscriptions/listen` from
//! it).

use std::path::{Path, PathBuf};
use std::time::Duration;

use oscova_core::UserScope;
use oscova_core::prelude::*;
use oscova_mcp::prompt::{PromptArg, PromptArguments, PromptRole, PromptTemplate, PromptTemplates};
use oscova_mcp::resource::FilesResources;
use oscova_mcp::rmcp::model::{GetPromptResult, Prompt};
use oscova_mcp::{BoxFuture, ListChanges, McpServer, PromptSource, SourceError};
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, ProtocolVersion,
    ReadResourceRequestParams, Reference, ResourceUpdatedNotificationParam, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::io::DuplexStream;
use tokio::sync::mpsc;
use tokio::time::timeout;

const PATIENCE: Duration = Duration::from_secs(20);

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let name = format!("oscova-mcp-{tag}-{}-{nanos:x}", std::process::id());
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Receives resource updates.
#[derive(Clone)]
pub(crate) struct Updates(pub(crate) mpsc::UnboundedSender<String>);

impl ClientHandler for Updates {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.0.send(params.uri);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send("prompts/list_changed".to_owned());
    }
}

/// Declared prompts that say when they change.
pub(crate) struct Changing {
    pub(crate) prompts: PromptTemplates,
    pub(crate) changes: ListChanges,
}

impl PromptSource for Changing {
    fn list<'a>(&'a self, scope: &'a UserScope) -> BoxFuture<'a, Result<Vec<Prompt>, SourceError>> {
        self.prompts.list(scope)
    }

    fn get<'a>(
        &'a self,
        scope: &'a UserScope,
        name: &'a str,
        arguments: &'a PromptArguments,
    ) -> BoxFuture<'a, Result<GetPromptResult, SourceError>> {
        self.prompts.get(scope, name, arguments)
    }

    fn complete<'a>(
        &'a self,
        scope: &'a UserScope,
        name: &'a str,
        argument: &'a str,
        value: &'a str,
        context: &'a PromptArguments,
    ) -> BoxFuture<'a, Result<Vec<String>, SourceError>> {
        self.prompts.complete(scope, name, argument, value, context)
    }

    fn list_changes(&self) -> Option<ListChanges> {
        Some(self.changes.clone())
    }
}

pub(crate) fn scope(root: Option<&Path>) -> (PluginHost, oscova_core::UserScope) {
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![])
        .build()
        .unwrap();
    let mut user = UserInfo::new("alice");
    if let Some(root) = root {
        user = user.with_files_root(root);
    }
    let scope = host.user_scope(user);
    (host, scope)
}

pub(crate) fn serve(server: McpServer) -> DuplexStream {
    let (client, served) = tokio::io::duplex(256 * 1024);
    let (read, write) = tokio::io::split(served);
    tokio::spawn(server.serve_io(read, write));
    client
}

pub(crate) fn prompts() -> PromptTemplates {
    PromptTemplates::new([PromptTemplate::new("review", "Reviews a file")
        .argument(
            PromptArg::new("path")
                .with_description("The file")
                .with_required(true),
        )
        .argument(PromptArg::new("tone").with_choices(["kind", "blunt", "brief"]))
        .text(PromptRole::User, "Review {path} {{as JSON}}; be {tone}.")
        .text(PromptRole::Assistant, "I will review {path}.")])
    .unwrap()
}

/// The JSON-RPC code of a refused request.
pub(crate) fn code(error: ServiceError) -> (i32, String) {
    match error {
        ServiceError::McpError(e) => (e.code.0, e.message.to_string()),
        other => panic!("not a protocol error: {other:?}"),
    }
}

pub(crate) fn args(value: Value) -> rmcp::model::JsonObject {
    value.as_object().unwrap().clone()
}

#[tokio::test]
async fn declared_prompts_are_listed_rendered_checked_and_completed() {
    let (_host, scope) = scope(None);
    let client = ().serve(serve(McpServer::new(scope).prompts(prompts()))).await.unwrap();
    let caps = &client.peer_info().unwrap().capabilities;
    assert!(caps.prompts.is_some() && caps.completions.is_some());
    assert!(
        caps.resources.is_none(),
        "no resource source, no capability"
    );

    let listed = serde_json::to_value(client.list_all_prompts().await.unwrap()).unwrap();
    assert_eq!(
        listed,
        json!([{
            "name": "review",
            "description": "Reviews a file",
            "arguments": [
                {"name": "path", "description": "The file", "required": true},
                {"name": "tone", "required": false}
            ]
        }])
    );

    let got = client
        .get_prompt(
            GetPromptRequestParams::new("review")
                .with_arguments(args(json!({"path": "a{tone}.txt", "tone": "kind"}))),
        )
        .await
        .unwrap();
    let got = serde_json::to_value(&got.messages).unwrap();
    // The value is inserted as it is, never read as a template.
    assert_eq!(
        got[0]["content"]["text"],
        "Review a{tone}.txt {as JSON}; be kind."
    );
    assert_eq!(got[1]["role"], "assistant");
    assert_eq!(got[1]["content"]["text"], "I will review a{tone}.txt.");

    for (arguments, says) in [
        (json!({"tone": "kind"}), "needs the argument `path`"),
        (
            json!({"path": "x", "tone": "rude"}),
            "not a choice of `tone`",
        ),
        (
            json!({"path": "x", "colour": "red"}),
            "has no argument `colour`",
        ),
    ] {
        let refused = client
            .get_prompt(GetPromptRequestParams::new("review").with_arguments(args(arguments)))
            .await
            .unwrap_err();
        let (code, message) = code(refused);
        assert_eq!(code, -32602, "{message}");
        assert!(message.contains(says), "{message}");
    }
    let unknown = client
        .get_prompt(GetPromptRequestParams::new("nope"))
        .await
        .unwrap_err();
    assert_eq!(code(unknown).0, -32602);

    let complete = |argument: &str, value: &str| {
        CompleteRequestParams::new(
            Reference::for_prompt("review"),
            ArgumentInfo::new(argument, value),
        )
    };
    let done = client.complete(complete("tone", "B")).await.unwrap();
    assert_eq!(done.completion.values, ["blunt", "brief"]);
    let done = client.complete(complete("path", "x")).await.unwrap();
    assert!(done.completion.values.is_empty(), "no declared choices");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn without_sources_nothing_is_advertised_or_served() {
    let (_host, scope) = scope(None);
    let client = ().serve(serve(McpServer::new(scope))).await.unwrap();
    let caps = &client.peer_info().unwrap().capabilities;
    assert!(caps.prompts.is_none() && caps.resources.is_none() && caps.completions.is_none());
    let refused = client.list_all_prompts().await.unwrap_err();
    assert_eq!(code(refused).0, -32601);
    let refused = client
        .read_resource(ReadResourceRequestParams::new("file:///x"))
        .await
        .unwrap_err();
    assert_eq!(code(refused).0, -32601);
    client.cancel().await.unwrap();
}

async fn read(
    client: &RunningService<RoleClient, impl rmcp::Service<RoleClient>>,
    uri: &str,
) -> Result<Value, (i32, String)> {
    client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .map(|r| serde_json::to_value(r.contents).unwrap())
        .map_err(code)
}

#[tokio::test]
async fn the_files_root_is_listed_read_templated_and_completed() {
    let dir = TempDir::new("files");
    let root = dir.0.join("alice");
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::write(root.join("notes/todo.txt"), "milk\n").unwrap();
    std::fs::write(root.join("notes/two words.md"), "# hi").unwrap();
    std::fs::write(root.join("pixel.png"), [0x89, b'P', b'N', b'G', 0, 1]).unwrap();
    let (_host, scope) = scope(Some(&root));
    let server = McpServer::new(scope).resources(FilesResources::new());
    let client = ().serve(serve(server)).await.unwrap();
    let caps = &client.peer_info().unwrap().capabilities;
    let resources = caps.resources.as_ref().unwrap();
    assert_eq!(resources.subscribe, Some(true));

    let listed = client.list_all_resources().await.unwrap();
    let mut uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    uris.sort_unstable();
    assert_eq!(
        uris,
        [
            "file:///notes/todo.txt",
            "file:///notes/two%20words.md",
            "file:///pixel.png"
        ]
    );
    let png = listed.iter().find(|r| r.name == "pixel.png").unwrap();
    assert_eq!(
        (png.mime_type.as_deref(), png.size),
        (Some("image/png"), Some(6))
    );

    let text = read(&client, "file:///notes/todo.txt").await.unwrap();
    assert_eq!(
        text,
        json!([{"uri": "file:///notes/todo.txt", "mimeType": "text/plain", "text": "milk\n"}])
    );
    let spaced = read(&client, "file:///notes/two%20words.md").await.unwrap();
    assert_eq!(spaced[0]["text"], "# hi");
    let blob = read(&client, "file:///pixel.png").await.unwrap();
    assert_eq!(blob[0]["mimeType"], "image/png");
    assert_eq!(blob[0]["blob"], "iVBORwAB");

    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(
        templates[0].uri_template,
        oscova_mcp::resource::FILES_TEMPLATE
    );

    let complete = |value: &str| {
        CompleteRequestParams::new(
            Reference::for_resource(oscova_mcp::resource::FILES_TEMPLATE),
            ArgumentInfo::new("path", value),
        )
    };
    let done = client.complete(complete("notes/t")).await.unwrap();
    assert_eq!(
        done.completion.values,
        ["notes/todo.txt", "notes/two words.md"]
    );
    let done = client.complete(complete("")).await.unwrap();
    assert_eq!(done.completion.values, ["notes/", "pixel.png"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn reads_never_leave_the_root_or_pass_the_size_cap() {
    let dir = TempDir::new("escape");
    let root = dir.0.join("alice");
    let outside = dir.0.join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "the secret").unwrap();
    std::fs::write(root.join("big.txt"), "x".repeat(64)).unwrap();
    std::fs::write(root.join("ok.txt"), "small").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("out")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("link.txt")).unwrap();
    std::os::unix::fs::symlink("../outside/secret.txt", root.join("rel.txt")).unwrap();
    std::fs::hard_link(outside.join("secret.txt"), root.join("hard.txt")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(root.join("pipe"))
        .status()
        .unwrap();
    assert!(fifo.success());
    let (_host, scope) = scope(Some(&root));
    let server = McpServer::new(scope).resources(FilesResources::new().max_read_bytes(16));
    let client = ().serve(serve(server)).await.unwrap();

    assert_eq!(
        read(&client, "file:///ok.txt").await.unwrap()[0]["text"],
        "small"
    );
    for (uri, says) in [
        ("file:///../outside/secret.txt", "contains `..`"),
        ("file:///%2E%2E/outside/secret.txt", "contains `..`"),
        ("file:///out/secret.txt", "leads outside"),
        ("file:///link.txt", "leads outside"),
        ("file:///rel.txt", "leads outside"),
        ("file:///hard.txt", "hard links"),
        ("file:///pipe", "not a regular file"),
        ("file:///big.txt", "larger than 16 bytes"),
        ("file:////etc/passwd", "absolute path"),
        ("file:///a%00b", "NUL"),
    ] {
        let (code, message) = read(&client, uri).await.unwrap_err();
        assert_eq!(code, -32602, "{uri}: {message}");
        assert!(message.contains(says), "{uri}: {message}");
        assert!(!message.contains("the secret"), "{message}");
        assert!(
            !message.contains(&*dir.0.to_string_lossy()),
            "no real path: {message}"
        );
    }
    let (code, _) = read(&client, "file:///missing.txt").await.unwrap_err();
    assert_eq!(code, -32002, "a missing file is an unknown resource");
    let (code, _) = read(&client, "https://example.invalid/x")
        .await
        .unwrap_err();
    assert_eq!(code, -32002);

    // Listing follows no link, and lists regular files only.
    let listed = client.list_all_resources().await.unwrap();
    let mut names: Vec<&str> = listed.iter().map(|r| r.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["big.txt", "hard.txt", "ok.txt"]);
    // Completion does not look through a link out either.
    let done = client
        .complete(CompleteRequestParams::new(
            Reference::for_resource(oscova_mcp::resource::FILES_TEMPLATE),
            ArgumentInfo::new("path", "out/"),
        ))
        .await
        .unwrap();
    assert!(
        done.completion.values.is_empty(),
        "{:?}",
        done.completion.values
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_source_that_says_its_prompts_changed_is_a_list_changed_notification() {
    let (notifier, changes) = oscova_mcp::list_changes();
    // A change before the session is not one for it.
    notifier.changed();
    let (_host, scope) = scope(None);
    let source = Changing {
        prompts: prompts(),
        changes,
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let client = Updates(tx)
        .serve(serve(McpServer::new(scope).prompts(source)))
        .await
        .unwrap();
    let caps = &client.peer_info().unwrap().capabilities;
    assert_eq!(caps.prompts.as_ref().unwrap().list_changed, Some(true));
    // The session listens once the client says it is initialized, which
    // the server sees a moment after `initialize` answered: change until
    // a notification comes.
    let mut tries = 0;
    let said = loop {
        notifier.changed();
        match timeout(Duration::from_millis(500), rx.recv()).await {
            Ok(said) => break said.unwrap(),
            Err(_) if tries < 20 => tries += 1,
            Err(_) => panic!("no notifications/prompts/list_changed"),
        }
    };
    assert_eq!(said, "prompts/list_changed");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_secret_the_host_knows_never_leaves_through_a_prompt_or_a_file() {
    const SECRET: &str = "sk-offer-secret-42";
    let dir = TempDir::new("redact");
    let root = dir.0.join("alice");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("env.txt"), format!("KEY={SECRET}\n")).unwrap();
    let (host, _) = scope(None);
    host.redactor().add(SECRET);
    let scope = host.user_scope(UserInfo::new("alice").with_files_root(&root));
    let server = McpServer::new(scope)
        .prompts(prompts())
        .resources(FilesResources::new());
    let client = ().serve(serve(server)).await.unwrap();

    let text = read(&client, "file:///env.txt").await.unwrap();
    assert_eq!(text[0]["text"], "KEY=[REDACTED]\n");
    let got = client
        .get_prompt(
            GetPromptRequestParams::new("review")
                .with_arguments(args(json!({"path": SECRET, "tone": "kind"}))),
        )
        .await
        .unwrap();
    let got = serde_json::to_string(&got.messages).unwrap();
    assert!(!got.contains(SECRET), "{got}");
    assert!(got.contains("Review [REDACTED]"), "{got}");
    client.cancel().await.unwrap();
}

mod subscriptions;
