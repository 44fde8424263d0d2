//! The loop: every event in order, what handlers change, steering,
//! follow-ups, extension tools, tool gating and the session's settings.

use std::sync::{Arc, Mutex};

use oscova_agent::session::agent::*;
use oscova_agent::session::{AgentMessage, EntryKind};
use oscova_core::UserInfo;
use oscova_core::prelude::*;
use oscova_core::provider::model::{ChatMessage, ChatRole};
use serde_json::json;

use super::*;

macro_rules! record {
    ($api:expr, $log:expr, $($event:ty => $name:expr),* $(,)?) => {$(
        let l = $log.clone();
        $api.on(move |e: $event, _| {
            let l = l.clone();
            async move {
                l.lock().unwrap().push($name(&e));
                Ok(e)
            }
        });
    )*};
}

fn role(m: &ChatMessage) -> &'static str {
    match m.role {
        ChatRole::User => "user",
        ChatRole::Assistant => "assistant",
        ChatRole::Tool => "tool",
        _ => "other",
    }
}

#[tokio::test]
async fn a_run_dispatches_every_event_in_order() {
    let script = Script::new([
        ChatMessage::assistant("", vec![call("c1", PROGRESS, json!({}))]),
        ChatMessage::assistant("All done.", vec![]),
    ]);
    let log = log();
    let l = log.clone();
    let (builder, _) = agents(&script);
    let agents = builder
        .add_extension_with(probe("rec", move |api| {
            record!(api, l,
                InputEvent => |_: &InputEvent| "input".to_owned(),
                BeforeAgentStartEvent => |_: &BeforeAgentStartEvent| "before_agent_start".to_owned(),
                AgentStartEvent => |_: &AgentStartEvent| "agent_start".to_owned(),
                TurnStartEvent => |e: &TurnStartEvent| format!("turn_start {}", e.turn),
                ContextEvent => |e: &ContextEvent| format!("context {}", e.messages.len()),
                BeforeProviderRequestEvent => |_: &BeforeProviderRequestEvent| "before_provider_request".to_owned(),
                MessageStartEvent => |e: &MessageStartEvent| format!("message_start {}", role(&e.message)),
                MessageUpdateEvent => |e: &MessageUpdateEvent| format!("message_update {}", e.delta),
                MessageEndEvent => |e: &MessageEndEvent| format!("message_end {}", role(&e.message)),
                ToolCallEvent => |e: &ToolCallEvent| format!("tool_call {}", e.call_id),
                ToolExecutionStartEvent => |_: &ToolExecutionStartEvent| "tool_execution_start".to_owned(),
                ToolExecutionUpdateEvent => |e: &ToolExecutionUpdateEvent| format!("tool_execution_update {}", e.progress.message),
                ToolResultEvent => |e: &ToolResultEvent| format!("tool_result {}", e.result.content),
                ToolExecutionEndEvent => |_: &ToolExecutionEndEvent| "tool_execution_end".to_owned(),
                TurnEndEvent => |e: &TurnEndEvent| format!("turn_end {} {}", e.turn, e.tool_results.len()),
                AgentEndEvent => |e: &AgentEndEvent| format!("agent_end {}", e.messages.len()),
                AgentSettledEvent => |_: &AgentSettledEvent| "agent_settled".to_owned(),
            );
            Ok(())
        }))
        .build().unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "events", AgentSessionOptions::new())
        .await
        .unwrap();
    let outcome = session.prompt("Go").await.unwrap();
    assert_eq!(
        (outcome.turns, outcome.tool_calls, outcome.text.as_str()),
        (2, 1, "All done.")
    );
    assert_eq!(
        entries(&log),
        [
            "input",
            "before_agent_start",
            "message_start user",
            "message_end user",
            "agent_start",
            "turn_start 1",
            "context 1",
            "before_provider_request",
            "message_start assistant",
            "message_end assistant",
            "tool_call c1",
            "tool_execution_start",
            "tool_execution_update half way",
            "tool_result done",
            "tool_execution_end",
            "message_start tool",
            "message_end tool",
            "turn_end 1 1",
            "turn_start 2",
            "context 3",
            "before_provider_request",
            "message_start assistant",
            "message_update All ",
            "message_update done.",
            "message_end assistant",
            "turn_end 2 0",
            "agent_end 4",
            "agent_settled",
        ]
    );
    // Every message was stored as it was final.
    let context = session.context().await;
    let roles: Vec<_> = context.chat_messages().iter().map(role).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
}

#[tokio::test]
async fn handlers_shape_the_prompt_the_context_the_payload_and_the_stored_answer() {
    let script = Script::new([ChatMessage::assistant("original", vec![])]);
    let (builder, _) = agents(&script);
    let agents = builder
        .system_prompt("You help.")
        .add_extension_with(probe("shaper", |api| {
            api.register_toolset(GreetToolset);
            api.on(|mut e: BeforeAgentStartEvent, _| async move {
                e.prompt.sections.push(("Project".into(), "Oscova".into()));
                e.prompt.tools.guidelines(["Be brief."]);
                e.injected_messages
                    .push(ExtensionMessage::new("notes", "Today is Friday."));
                Ok(e)
            });
            api.on(|mut e: ContextEvent, _| async move {
                if let Some(last) = e.messages.last_mut() {
                    last.content.push_str(" (edited)");
                }
                Ok(e)
            });
            api.on(|mut e: BeforeProviderRequestEvent, _| async move {
                e.payload
                    .tools
                    .retain(|t| t.name == ECHO || t.name == "greet");
                Ok(e)
            });
            api.on(|mut e: MessageEndEvent, _| async move {
                if e.message.role == ChatRole::Assistant {
                    e.message.content = "replaced".into();
                }
                Ok(e)
            });
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "shape", AgentSessionOptions::new())
        .await
        .unwrap();
    let outcome = session.prompt("Hi").await.unwrap();
    assert_eq!(outcome.text, "replaced");
    let (sent, tools) = script.seen(0);
    assert_eq!(sent[0].role, ChatRole::System);
    let system = &sent[0].content;
    assert_eq!(
        system,
        "You help.\n\n## Project\nOscova\n\nAvailable tools:\n- greet: Greets a person.\n\n\
         Guidelines:\n- Greet warmly.\n- Be brief."
    );
    let rest: Vec<_> = sent[1..].iter().map(|m| m.content.as_str()).collect();
    assert_eq!(rest, ["Hi", "Today is Friday. (edited)"]);
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, [ECHO, "greet"]);
    let (_, stored) = session.session_snapshot().await;
    assert!(stored.iter().any(|e| matches!(&e.kind, EntryKind::CustomMessage { custom_type, .. } if custom_type == "notes")));
    let last = stored.last().unwrap();
    assert!(
        matches!(&last.kind, EntryKind::Message { message: AgentMessage::Assistant(a) } if a.content.len() == 1
            && matches!(&a.content[0], oscova_agent::session::ContentPart::Text { text, .. } if text == "replaced")),
        "{last:?}"
    );
}

#[tokio::test]
async fn tool_call_handlers_patch_and_block_and_result_handlers_edit() {
    let script = Script::new([
        ChatMessage::assistant(
            "",
            vec![
                call("c1", ECHO, json!({"text": "hi"})),
                call("c2", BASH, json!({"command": "rm -rf /"})),
                call("c3", BASH, json!({"command": "ls"})),
            ],
        ),
        ChatMessage::assistant("ok", vec![]),
    ]);
    let (builder, _) = agents(&script);
    let agents = builder
        .add_extension_with(probe("guard", |api| {
            api.on(|mut e: ToolCallEvent, ctx| async move {
                if e.tool_name == ECHO {
                    e.input["text"] = json!("HI");
                }
                let command = e.input["command"].as_str().unwrap_or_default().to_owned();
                if command.contains("rm -rf") && !ctx.has_ui()? {
                    e.block("Dangerous command blocked (no UI to confirm)");
                }
                Ok(e)
            });
            api.on(|mut e: ToolResultEvent, _| async move {
                e.result.content.push_str(" (checked)");
                Ok(e)
            });
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "guard", AgentSessionOptions::new())
        .await
        .unwrap();
    session.prompt("clean up").await.unwrap();
    let (sent, _) = script.seen(1);
    let tools: Vec<_> = sent
        .iter()
        .filter(|m| m.role == ChatRole::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        tools,
        [
            "HI (checked)",
            "error: blocked: Dangerous command blocked (no UI to confirm). The call did not run.",
            "ran ls (checked)"
        ]
    );
}

#[tokio::test]
async fn a_steering_message_skips_the_rest_of_a_sequential_batch_and_comes_next() {
    let script = Script::new([
        ChatMessage::assistant(
            "",
            vec![
                call("c1", ECHO, json!({"text": "one"})),
                call("c2", NOTE, json!({"text": "two"})),
                call("c3", ECHO, json!({"text": "three"})),
            ],
        ),
        ChatMessage::assistant("changing course", vec![]),
    ]);
    let ran = log();
    let r = ran.clone();
    let (builder, _) = agents(&script);
    let agents = builder
        .add_extension_with(probe("steer", move |api| {
            let me = api.clone();
            let r = r.clone();
            api.on(move |e: ToolExecutionEndEvent, _| {
                let me = me.clone();
                let r = r.clone();
                async move {
                    r.lock().unwrap().push(e.call_id.clone());
                    if e.call_id == "c1" {
                        me.send_user_message("Stop, do the other thing.", vec![], Delivery::Steer)?;
                    }
                    Ok(e)
                }
            });
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "steer", AgentSessionOptions::new())
        .await
        .unwrap();
    let outcome = session.prompt("three things").await.unwrap();
    assert_eq!(outcome.text, "changing course");
    assert_eq!(entries(&ran), ["c1"], "the rest of the batch did not run");
    let (sent, _) = script.seen(1);
    let tail: Vec<_> = sent[2..]
        .iter()
        .map(|m| (role(m), m.content.as_str()))
        .collect();
    let skipped = "skipped: the user sent a new message, which comes next; not run";
    assert_eq!(
        tail,
        [
            ("tool", "one"),
            ("tool", skipped),
            ("tool", skipped),
            ("user", "Stop, do the other thing."),
        ]
    );
}

#[tokio::test]
async fn continue_requested_and_follow_ups_make_more_turns() {
    let script = Script::new([
        ChatMessage::assistant("first", vec![]),
        ChatMessage::assistant("second", vec![]),
        ChatMessage::assistant("third", vec![]),
    ]);
    let log = log();
    let l = log.clone();
    let (builder, _) = agents(&script);
    let agents = builder
        .add_extension_with(probe("more", move |api| {
            api.on(|mut e: TurnEndEvent, _| async move {
                e.continue_requested = e.turn == 1;
                Ok(e)
            });
            let me = api.clone();
            api.on(move |e: AgentStartEvent, _| {
                let me = me.clone();
                async move {
                    me.send_message(
                        ExtensionMessage::new("reminder", "And another thing."),
                        Delivery::FollowUp,
                        false,
                    )?;
                    Ok(e)
                }
            });
            record!(api, l, AgentSettledEvent => |_: &AgentSettledEvent| "settled".to_owned());
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "more", AgentSessionOptions::new())
        .await
        .unwrap();
    let outcome = session.prompt("Go").await.unwrap();
    assert_eq!((outcome.turns, outcome.text.as_str()), (3, "third"));
    let (second, _) = script.seen(1);
    assert_eq!(
        second.last().unwrap().content,
        "first",
        "continue: no new message"
    );
    let (third, _) = script.seen(2);
    assert_eq!(third.last().unwrap().content, "And another thing.");
    assert_eq!(entries(&log), ["settled"]);
}

/// An extension's tool that says how the model should use it.
pub struct GreetToolset;

#[toolset]
impl GreetToolset {
    /// Greets someone.
    #[tool(prompt_snippet = "Greets a person.", prompt_guidelines = ["Greet warmly."])]
    pub fn greet(
        /// Who.
        name: String,
    ) -> String {
        format!("Hi {name}")
    }
}

/// An extension's tools.
pub struct HelloToolset;

#[toolset]
impl HelloToolset {
    /// Greets someone.
    pub fn hello(
        /// Name to greet.
        name: String,
    ) -> String {
        format!("Hello, {name}!")
    }
}

#[tokio::test]
async fn extension_tools_run_with_argument_checks_and_tool_gating_holds() {
    let script = Script::new([
        ChatMessage::assistant(
            "",
            vec![
                call("c1", "hello", json!({"name": "Ada"})),
                call("c2", "hello", json!({"nom": 3})),
                call("c3", ECHO, json!({"text": "x"})),
            ],
        ),
        ChatMessage::assistant("done", vec![]),
    ]);
    let all: Arc<Mutex<Vec<String>>> = Arc::default();
    let a = all.clone();
    let (builder, _) = agents(&script);
    let agents = builder
        .add_extension_with(probe("hello", move |api| {
            assert_eq!(api.register_toolset(HelloToolset), ["hello"]);
            let me = api.clone();
            let a = a.clone();
            api.on(move |e: SessionStartEvent, _| {
                let me = me.clone();
                let a = a.clone();
                async move {
                    *a.lock().unwrap() = me.all_tools()?;
                    me.set_active_tools(vec!["hello".into()])?;
                    Ok(e)
                }
            });
            Ok(())
        }))
        .add_extension_with(probe("copycat", |api| {
            assert!(api.register_toolset(HelloToolset).is_empty());
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "tools", AgentSessionOptions::new())
        .await
        .unwrap();
    assert!(all.lock().unwrap().ends_with(&["hello".to_owned()]));
    assert!(all.lock().unwrap().contains(&ECHO.to_owned()));
    let error = &session.extension_errors()[0];
    assert_eq!(
        (error.extension.as_str(), error.event.as_str()),
        ("copycat", "register_tool")
    );
    session.prompt("greet Ada").await.unwrap();
    let (_, offered) = script.seen(0);
    let names: Vec<_> = offered.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["hello"]);
    assert_eq!(offered[0].description, "Greets someone.");
    let (sent, _) = script.seen(1);
    let tools: Vec<_> = sent
        .iter()
        .filter(|m| m.role == ChatRole::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(tools[0], "Hello, Ada!");
    assert!(
        tools[1].starts_with("error: invalid arguments for `hello`"),
        "{}",
        tools[1]
    );
    assert!(tools[1].contains("name"), "{}", tools[1]);
    assert_eq!(
        tools[2],
        format!("error: tool `{ECHO}` is not active in this session; do not call it")
    );
}

#[tokio::test]
async fn model_thinking_level_and_name_are_session_scoped_and_announced() {
    let script = Script::new([ChatMessage::assistant("hi", vec![])]);
    let log = log();
    let l = log.clone();
    let (builder, store) = agents(&script);
    let agents = builder
        .add_extension_with(probe("settings", move |api| {
            record!(api, l,
                ModelSelectEvent => |e: &ModelSelectEvent| format!("model {} {} {:?}", e.provider, e.model, e.previous),
                ThinkingLevelSelectEvent => |e: &ThinkingLevelSelectEvent| format!("thinking {} {}", e.level, e.previous),
                SessionInfoChangedEvent => |e: &SessionInfoChangedEvent| format!("name {:?}", e.name),
            );
            let me = api.clone();
            api.register_command(
                "setup",
                Command::new("", move |_, _| {
                    let me = me.clone();
                    async move {
                        me.set_model("scripted", "m2").await?;
                        me.set_thinking_level("high").await?;
                        me.set_session_name("Trip").await?;
                        assert_eq!(me.session_name().await?.as_deref(), Some("Trip"));
                        assert_eq!(me.thinking_level()?, "high");
                        assert!(matches!(me.set_model("nobody", "x").await, Err(AgentError::UnknownProvider(_))));
                        Ok(())
                    }
                }),
            );
            Ok(())
        }))
        .build().unwrap();
    let alice = UserInfo::new("alice");
    let mut session = agents
        .session(alice.clone(), "settings", AgentSessionOptions::new())
        .await
        .unwrap();
    session.run_command("/setup").await.unwrap();
    assert_eq!(
        entries(&log),
        [
            r#"model scripted m2 Some("m1")"#,
            "thinking high off",
            r#"name Some("Trip")"#
        ]
    );
    session.prompt("hello").await.unwrap();
    let stored = oscova_agent::session::Session::open(store, alice, "settings")
        .await
        .unwrap();
    let context = stored.context();
    assert_eq!(context.thinking_level, "high");
    let model = context.model.unwrap();
    assert_eq!(
        (model.provider.as_str(), model.model_id.as_str()),
        ("scripted", "m2")
    );
    assert_eq!(stored.display_name(), Some("Trip"));
}

#[tokio::test]
async fn a_concurrent_batch_answers_in_order_and_a_terminating_batch_ends_the_run() {
    let script = Script::new([
        ChatMessage::assistant(
            "",
            vec![
                call("c1", ECHO, json!({"text": "a"})),
                call("c2", ECHO, json!({"text": "b"})),
            ],
        ),
        ChatMessage::assistant("", vec![call("c3", BYE, json!({}))]),
        ChatMessage::assistant("never asked", vec![]),
    ]);
    let (builder, _) = agents(&script);
    let agents = builder.build().unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "batch", AgentSessionOptions::new())
        .await
        .unwrap();
    let outcome = session.prompt("go").await.unwrap();
    assert_eq!((outcome.turns, outcome.tool_calls), (2, 3));
    assert_eq!(
        script.calls(),
        2,
        "the terminating batch made no further model call"
    );
    let messages = session.context().await.chat_messages();
    let tools: Vec<_> = messages
        .iter()
        .filter(|m| m.role == ChatRole::Tool)
        .map(|m| (m.tool_call_id.clone().unwrap(), m.content.clone()))
        .collect();
    assert_eq!(
        tools,
        [
            ("c1".into(), "a".into()),
            ("c2".into(), "b".into()),
            ("c3".into(), "bye".into())
        ]
    );
}

/// The specs a host exports once (`session/agent/specs.rs`) are what the
/// chat loop's `tool_specs` exports on each call, in the host's profile,
/// for every call of every session of the host.
#[tokio::test]
async fn every_call_offers_the_catalogs_tools_exported_in_the_hosts_profile() {
    use oscova_agent::profile::SchemaProfile;
    for profile in [SchemaProfile::OpenAi, SchemaProfile::Gemini] {
        let script = Script::new((0..4).map(|n| ChatMessage::assistant(format!("a{n}"), vec![])));
        let plugins = plugin_host(&script);
        let expected =
            oscova_agent::chat::tool_specs(&plugins.user_scope(UserInfo::new("alice")), profile);
        assert!(expected.len() >= 5, "the notes toolset's tools");
        let store: Arc<dyn oscova_agent::session::SessionStore> =
            Arc::new(oscova_agent::session::MemoryStore::new());
        let agents = AgentHost::builder(plugins, store)
            .model(model())
            .profile(profile)
            .build()
            .unwrap();
        for (user, name) in [("alice", "one"), ("bob", "two")] {
            let mut session = agents
                .session(UserInfo::new(user), name, AgentSessionOptions::new())
                .await
                .unwrap();
            session.prompt("Hi").await.unwrap();
            session.prompt("Again").await.unwrap();
        }
        assert_eq!(script.calls(), 4);
        for call in 0..4 {
            assert_eq!(script.seen(call).1, expected, "{profile} call {call}");
        }
    }
}
