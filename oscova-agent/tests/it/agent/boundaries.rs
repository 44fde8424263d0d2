//! The boundaries extensions reach: processes through the spawn policy and
//! the process-spawn event, nested model calls under the offline rule and
//! redaction, asking the person, and aborting a run.

use std::sync::{Arc, Mutex};

use oscova_agent::chat::ChatError;
use oscova_agent::session::agent::*;
use oscova_core::interaction::{Answer, AskError, InteractionRequest};
use oscova_core::prelude::*;
use oscova_core::process::ProcessSpawnPolicy;
use oscova_core::provider::model::{ChatMessage, ChatRole, ModelError};
use oscova_core::{PluginHost, UserInfo};
use serde_json::json;

use super::*;

type Slot<T> = Arc<Mutex<Option<T>>>;

#[tokio::test]
async fn exec_runs_in_the_session_directory_through_the_policy_and_the_spawn_event() {
    let dir = tempfile::tempdir().unwrap();
    let script = Script::new([]);
    let path = std::env::var("PATH").unwrap_or_default();
    let plugins = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(AgentTestPlugin::with(&script))
        .spawn_policy(ProcessSpawnPolicy::with_base_env([
            ("PATH", path.as_str()),
            ("OPENAI_API_KEY", "sk-host-secret"),
        ]))
        .build()
        .unwrap();
    let store: Arc<dyn oscova_agent::session::SessionStore> =
        Arc::new(oscova_agent::session::MemoryStore::new());
    let output: Slot<Result<ExecOutput, String>> = Arc::default();
    let refused: Slot<String> = Arc::default();
    let (o, r) = (output.clone(), refused.clone());
    let agents = AgentHost::builder(plugins, store)
        .model(model())
        .add_extension_with(probe("runner", move |api| {
            api.on(|mut e: ProcessSpawnEvent, _| async move {
                if e.context.args.iter().any(|a| a.to_string_lossy().contains("refuse-me")) {
                    return Err(AgentError::handler("not this one"));
                }
                e.context.env.insert("ADDED_BY_EVENT".into(), "yes".into());
                Ok(e)
            });
            let me = api.clone();
            let (o, r) = (o.clone(), r.clone());
            api.register_command(
                "run",
                Command::new("", move |_, _| {
                    let (me, o, r) = (me.clone(), o.clone(), r.clone());
                    async move {
                        let shown = me
                            .exec(
                                "sh",
                                &["-c", "echo \"$GREETING $ADDED_BY_EVENT key=${OPENAI_API_KEY:-none}\"; pwd"],
                                ExecOptions::new().env("GREETING", "hello"),
                            )
                            .await
                            .map_err(|e| e.to_string());
                        *o.lock().unwrap() = Some(shown);
                        let refused = me
                            .exec("sh", &["-c", "touch made-anyway # refuse-me"], ExecOptions::new())
                            .await
                            .unwrap_err();
                        *r.lock().unwrap() = Some(refused.to_string());
                        Ok(())
                    }
                }),
            );
            Ok(())
        }))
        .build().unwrap();
    let mut session = agents
        .session(
            UserInfo::new("alice"),
            "exec",
            AgentSessionOptions::new().cwd(dir.path()),
        )
        .await
        .unwrap();
    session.run_command("/run").await.unwrap();
    let output = output.lock().unwrap().take().unwrap().unwrap();
    assert_eq!(output.code, Some(0));
    let mut lines = output.stdout.lines();
    assert_eq!(
        lines.next(),
        Some("hello yes key=none"),
        "explicit and event variables, no secret"
    );
    let pwd = std::path::Path::new(lines.next().unwrap())
        .canonicalize()
        .unwrap();
    assert_eq!(pwd, dir.path().canonicalize().unwrap());
    assert_eq!(refused.lock().unwrap().take().unwrap(), "not this one");
    assert!(
        !dir.path().join("made-anyway").exists(),
        "a failed spawn event starts nothing"
    );
    let error = &session.extension_errors()[0];
    assert_eq!(
        (error.event.as_str(), error.message.as_str()),
        ("process_spawn", "not this one")
    );
}

#[tokio::test]
async fn nested_model_calls_are_redacted_and_obey_the_offline_rule() {
    let script = Script::new([ChatMessage::assistant("a summary", vec![])]);
    let answers: Slot<Result<String, String>> = Arc::default();
    let a = answers.clone();
    let plugins = plugin_host(&script);
    plugins.redactor().add("sk-live-123");
    let store: Arc<dyn oscova_agent::session::SessionStore> =
        Arc::new(oscova_agent::session::MemoryStore::new());
    let setup = move |api: &mut SessionApi| {
        let a = a.clone();
        api.register_command(
            "ask",
            Command::new("", move |_, ctx| {
                let a = a.clone();
                async move {
                    let answer = ctx
                        .complete(vec![ChatMessage::user("Summarise: the key is sk-live-123")])
                        .await
                        .map(|m| m.content)
                        .map_err(|e| e.to_string());
                    *a.lock().unwrap() = Some(answer);
                    Ok(())
                }
            }),
        );
        Ok(())
    };
    let agents = AgentHost::builder(plugins.clone(), store.clone())
        .model(model())
        .add_extension_with(probe("asker", setup.clone()))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "nested", AgentSessionOptions::new())
        .await
        .unwrap();
    session.run_command("/ask").await.unwrap();
    assert_eq!(
        answers.lock().unwrap().take().unwrap().unwrap(),
        "a summary"
    );
    let (sent, tools) = script.seen(0);
    assert_eq!(sent[0].content, "Summarise: the key is [REDACTED]");
    assert!(tools.is_empty(), "a nested call offers no tools");

    // Offline required, and the endpoint is not on this machine.
    let mut remote = model();
    remote.endpoint = Some("https://models.example.com/v1".into());
    let agents = AgentHost::builder(plugins, store)
        .model(remote)
        .offline(true)
        .add_extension_with(probe("asker", setup))
        .build()
        .unwrap();
    let mut session = agents
        .session(
            UserInfo::new("alice"),
            "offline",
            AgentSessionOptions::new(),
        )
        .await
        .unwrap();
    session.run_command("/ask").await.unwrap();
    let refused = answers.lock().unwrap().take().unwrap().unwrap_err();
    assert!(refused.contains("models.example.com"), "{refused}");
    assert!(matches!(
        session.prompt("hi").await,
        Err(AgentError::Chat(ChatError::Model(
            ModelError::NotLocal { .. }
        )))
    ));
    assert_eq!(script.calls(), 1, "nothing was sent offline");
}

/// The seed's guard: `rm -rf` runs only when the person says so.
fn guard(api: &mut SessionApi) -> Result<(), AgentError> {
    api.on(|mut e: ToolCallEvent, ctx| async move {
        let command = e.input["command"].as_str().unwrap_or_default().to_owned();
        if !command.contains("rm -rf") {
            return Ok(e);
        }
        if !ctx.has_ui()? {
            e.block("Dangerous command blocked (no UI to confirm)");
        } else if ctx
            .choose(format!("Run `{command}`?"), &["Allow", "Block"])
            .await?
            != "Allow"
        {
            e.block("Blocked by user");
        }
        Ok(e)
    });
    Ok(())
}

#[tokio::test]
async fn a_guard_asks_the_person_through_the_sessions_ui() {
    for (choice, expected) in [
        (0, "ran rm -rf build"),
        (1, "error: blocked: Blocked by user. The call did not run."),
    ] {
        let script = Script::new([
            ChatMessage::assistant(
                "",
                vec![call("c1", BASH, json!({"command": "rm -rf build"}))],
            ),
            ChatMessage::assistant("ok", vec![]),
        ]);
        let asked: Arc<Mutex<Vec<String>>> = Arc::default();
        let q = asked.clone();
        let ui = move |request: InteractionRequest| {
            q.lock().unwrap().push(format!("{:?}", request.question));
            async move {
                let mut answer = serde_json::Map::new();
                answer.insert("choice".into(), json!(["Allow", "Block"][choice]));
                Ok::<_, AskError>(Answer::Accept(answer))
            }
        };
        let (builder, _) = agents(&script);
        let agents = builder
            .add_extension_with(probe("guard", guard))
            .build()
            .unwrap();
        let mut session = agents
            .session(
                UserInfo::new("alice"),
                "ui",
                AgentSessionOptions::new().interaction_handler(ui),
            )
            .await
            .unwrap();
        session.prompt("clean").await.unwrap();
        let (sent, _) = script.seen(1);
        let tool = sent.iter().find(|m| m.role == ChatRole::Tool).unwrap();
        assert_eq!(tool.content, expected);
        assert!(asked.lock().unwrap()[0].contains("Run `rm -rf build`?"));
    }
}

#[tokio::test]
async fn an_abort_answers_every_call_and_ends_the_run() {
    let script = Script::new([ChatMessage::assistant(
        "",
        vec![
            call("c1", ECHO, json!({"text": "a"})),
            call("c2", ECHO, json!({"text": "b"})),
        ],
    )]);
    let (builder, _) = agents(&script);
    let agents = builder
        .add_extension_with(probe("stopper", |api| {
            api.on(|e: ToolExecutionEndEvent, ctx| async move {
                assert!(!ctx.is_idle()?);
                ctx.abort()?;
                Ok(e)
            });
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "abort", AgentSessionOptions::new())
        .await
        .unwrap();
    let error = session.prompt("two").await.unwrap_err();
    assert!(
        matches!(error, AgentError::Chat(ChatError::Cancelled)),
        "{error}"
    );
    let messages = session.context().await.chat_messages();
    let tools: Vec<_> = messages
        .iter()
        .filter(|m| m.role == ChatRole::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(tools, ["a", "not run: the run was cancelled"]);
    // The next prompt runs again.
    script
        .replies
        .lock()
        .unwrap()
        .push_back(ChatMessage::assistant("fresh", vec![]));
    assert_eq!(session.prompt("again").await.unwrap().text, "fresh");
}

/// An extension's tools that need care.
pub struct VaultToolset;

#[toolset]
impl VaultToolset {
    /// Shows the key (a secret the host knows).
    pub fn show_key() -> oscova_core::ToolResult {
        oscova_core::ToolResult::text("the key is sk-vault-999")
            .with_details(json!({"key": "sk-vault-999"}))
    }

    /// Wipes the vault.
    #[tool(approval = Required)]
    pub fn wipe() -> String {
        "wiped".to_owned()
    }
}

#[tokio::test]
async fn extension_tools_are_redacted_and_a_required_one_needs_a_yes() {
    let script = Script::new([
        ChatMessage::assistant(
            "",
            vec![
                call("c1", "show_key", json!({})),
                call("c2", "wipe", json!({})),
            ],
        ),
        ChatMessage::assistant("ok", vec![]),
    ]);
    let plugins = plugin_host(&script);
    plugins.redactor().add("sk-vault-999");
    let store: Arc<dyn oscova_agent::session::SessionStore> =
        Arc::new(oscova_agent::session::MemoryStore::new());
    let seen: Slot<serde_json::Value> = Arc::default();
    let s = seen.clone();
    let agents = AgentHost::builder(plugins, store)
        .model(model())
        .add_extension_with(probe("vault", move |api| {
            api.register_toolset(VaultToolset);
            let s = s.clone();
            api.on(move |e: ToolResultEvent, _| {
                let s = s.clone();
                async move {
                    if e.tool_name == "show_key" {
                        *s.lock().unwrap() =
                            Some(json!({"content": e.result.content, "details": e.result.details}));
                    }
                    Ok(e)
                }
            });
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "vault", AgentSessionOptions::new())
        .await
        .unwrap();
    session.prompt("show and wipe").await.unwrap();
    let seen = seen.lock().unwrap().take().unwrap();
    assert_eq!(
        seen,
        json!({"content": "the key is [REDACTED]", "details": {"key": "[REDACTED]"}})
    );
    let (sent, _) = script.seen(1);
    let tools: Vec<_> = sent
        .iter()
        .filter(|m| m.role == ChatRole::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(tools[0], "the key is [REDACTED]");
    assert!(
        tools[1].contains("requires approval and was not approved"),
        "{}",
        tools[1]
    );
}
