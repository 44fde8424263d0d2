//! The dispatch rules, binding and staleness, commands, state entries and
//! the bus.

use std::sync::{Arc, Mutex};

use oscova_agent::session::EntryKind;
use oscova_agent::session::agent::{
    AgentError, AgentSessionOptions, Command, Delivery, InputEvent, SessionApi,
    SessionShutdownEvent, SessionStartEvent, SessionStartReason, ToolCallEvent,
};
use oscova_core::UserInfo;
use oscova_core::provider::model::{ChatMessage, ChatRole};
use serde_json::json;

use super::*;

#[tokio::test]
async fn handlers_run_in_load_then_registration_order_and_mark_handled_stops_them() {
    let script = Script::new([]);
    let log = log();
    let (a_log, s_log) = (log.clone(), log.clone());
    let (builder, _) = agents(&script);
    let agents = builder
        .add_extension_with(probe("a", move |api| {
            let l = a_log.clone();
            api.on(move |mut e: InputEvent, _| {
                let l = l.clone();
                async move {
                    l.lock().unwrap().push(format!("a1 {}", e.text));
                    e.text.push_str(" +a1");
                    Ok(e)
                }
            });
            let l = a_log.clone();
            api.on(move |mut e: InputEvent, _| {
                let l = l.clone();
                async move {
                    l.lock().unwrap().push(format!("a2 {}", e.text));
                    e.text.push_str(" +a2");
                    Err(AgentError::handler("a2 broke"))
                }
            });
            Ok(())
        }))
        .build()
        .unwrap();
    let options = AgentSessionOptions::new().extension_with(probe("s", move |api| {
        let l = s_log.clone();
        api.on(move |mut e: InputEvent, _| {
            let l = l.clone();
            async move {
                l.lock().unwrap().push(format!("s1 {}", e.text));
                e.mark_handled();
                Ok(e)
            }
        });
        let l = s_log.clone();
        api.on(move |e: InputEvent, _| {
            let l = l.clone();
            async move {
                l.lock().unwrap().push("s2".into());
                Ok(e)
            }
        });
        Ok(())
    }));
    let mut session = agents
        .session(UserInfo::new("alice"), "order", options)
        .await
        .unwrap();
    let outcome = session.prompt("hi").await.unwrap();
    assert!(outcome.handled);
    assert_eq!(script.calls(), 0, "a handled input makes no run");
    // a2's change was dropped with its error; s1 saw a1's; s2 never ran.
    assert_eq!(entries(&log), ["a1 hi", "a2 hi +a1", "s1 hi +a1"]);
    let errors = session.extension_errors();
    assert_eq!(errors.len(), 1);
    assert_eq!(
        (
            errors[0].extension.as_str(),
            errors[0].event.as_str(),
            errors[0].message.as_str()
        ),
        ("a", "input", "a2 broke")
    );
    let (_, stored) = session.session_snapshot().await;
    assert!(stored.is_empty(), "nothing was stored: {stored:?}");
}

#[tokio::test]
async fn a_panicking_tool_call_handler_blocks_the_call_and_is_reported() {
    let script = Script::new([
        ChatMessage::assistant("", vec![call("c1", ECHO, json!({"text": "x"}))]),
        ChatMessage::assistant("done", vec![]),
    ]);
    let (builder, _) = agents(&script);
    let agents = builder
        .add_extension_with(probe("p", |api| {
            api.on(|e: ToolCallEvent, _| async move {
                if e.tool_name.ends_with("echo") {
                    panic!("guard fell over");
                }
                Ok(e)
            });
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "panic", AgentSessionOptions::new())
        .await
        .unwrap();
    session.prompt("echo x").await.unwrap();
    let (messages, _) = script.seen(1);
    let tool = messages.iter().find(|m| m.role == ChatRole::Tool).unwrap();
    assert!(
        tool.content.contains(
            "blocked: an extension handler failed: the handler panicked: guard fell over"
        ),
        "{}",
        tool.content
    );
    assert_eq!(session.extension_errors()[0].event, "tool_call");
}

#[tokio::test]
async fn actions_during_activation_are_not_bound_and_kept_handles_go_stale() {
    let script = Script::new([]);
    let during: Arc<Mutex<Vec<String>>> = Arc::default();
    let kept: Arc<Mutex<Option<SessionApi>>> = Arc::default();
    let (d, k) = (during.clone(), kept.clone());
    let (builder, _) = agents(&script);
    let agents = builder
        .add_extension_with(probe("eager", move |api| {
            let error = api
                .send_user_message("too soon", vec![], Delivery::FollowUp)
                .unwrap_err();
            d.lock().unwrap().push(error.to_string());
            d.lock()
                .unwrap()
                .push(api.all_tools().unwrap_err().kind().to_owned());
            // Registration and the boundaries work during activation.
            api.register_command("x", Command::new("", |_, _| async { Ok(()) }));
            assert_eq!(api.redact("plain"), "plain");
            *k.lock().unwrap() = Some(api.clone());
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "one", AgentSessionOptions::new())
        .await
        .unwrap();
    let during = entries(&during);
    assert!(
        during[0].contains("`send_user_message` is not bound yet"),
        "{}",
        during[0]
    );
    assert_eq!(during[1], "not_bound");

    let api = kept.lock().unwrap().clone().unwrap();
    assert!(
        api.all_tools().unwrap().contains(&ECHO.to_owned()),
        "bound after activation"
    );
    let ctx = api.context().unwrap();
    assert!(session.switch("two").await.unwrap());
    assert!(matches!(api.all_tools(), Err(AgentError::Stale)));
    assert!(matches!(ctx.session_id(), Err(AgentError::Stale)));
    assert!(matches!(ctx.branch().await, Err(AgentError::Stale)));
    // The new activation has its own, bound API.
    let fresh = kept.lock().unwrap().clone().unwrap();
    assert!(fresh.all_tools().is_ok());
}

#[tokio::test]
async fn a_failed_activation_is_reported_and_its_registrations_removed() {
    let script = Script::new([]);
    let (builder, _) = agents(&script);
    let agents = builder
        .add_extension_with(probe("broken", |api| {
            api.register_command("broken", Command::new("", |_, _| async { Ok(()) }));
            Err(AgentError::handler("missing config"))
        }))
        .add_extension_with(probe("fine", |api| {
            api.register_command("fine", Command::new("", |_, _| async { Ok(()) }));
            Ok(())
        }))
        .build()
        .unwrap();
    let session = agents
        .session(UserInfo::new("alice"), "s", AgentSessionOptions::new())
        .await
        .unwrap();
    let names: Vec<_> = session.commands().into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["fine"]);
    let error = &session.extension_errors()[0];
    assert_eq!(
        (error.extension.as_str(), error.event.as_str()),
        ("broken", "activate")
    );
    assert_eq!(error.message, "missing config");
}

#[tokio::test]
async fn duplicate_commands_get_numbered_names_and_a_command_can_start_a_run() {
    let script = Script::new([ChatMessage::assistant("Hello, world!", vec![])]);
    let log = log();
    let (builder, _) = agents(&script);
    let l = log.clone();
    let agents = builder
        .add_extension_with(probe("first", move |api| {
            let l = l.clone();
            api.register_command(
                "hello",
                Command::new("first hello", move |args, _| {
                    let l = l.clone();
                    async move {
                        l.lock().unwrap().push(format!("first {args}"));
                        Ok(())
                    }
                }),
            );
            Ok(())
        }))
        .add_extension_with(probe("second", |api| {
            let me = api.clone();
            let given = api.register_command(
                "hello",
                Command::new("second hello", move |args, _| {
                    let me = me.clone();
                    async move {
                        me.send_user_message(
                            format!("Please greet {args} using the hello tool."),
                            vec![],
                            Delivery::FollowUp,
                        )
                    }
                })
                .with_completion(|prefix| {
                    ["world", "team"]
                        .iter()
                        .filter(|w| w.starts_with(prefix))
                        .map(|w| w.to_string())
                        .collect()
                }),
            );
            assert_eq!(given, "hello:2");
            assert_eq!(
                api.register_command("hello", Command::new("third", |_, _| async { Ok(()) })),
                "hello:3"
            );
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "cmd", AgentSessionOptions::new())
        .await
        .unwrap();
    let listed: Vec<_> = session
        .commands()
        .into_iter()
        .map(|c| format!("{} {} {}", c.name, c.extension, c.description))
        .collect();
    assert_eq!(
        listed,
        [
            "hello first first hello",
            "hello:2 second second hello",
            "hello:3 second third"
        ]
    );
    assert_eq!(
        session.complete_command("/hello:"),
        ["/hello:2", "/hello:3"]
    );
    assert_eq!(session.complete_command("/hello:2 w"), ["/hello:2 world"]);

    assert!(
        session
            .run_command("/hello big world")
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(entries(&log), ["first big world"]);
    assert_eq!(script.calls(), 0);

    let outcome = session
        .run_command("/hello:2 world")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(outcome.text, "Hello, world!");
    let (sent, _) = script.seen(0);
    assert_eq!(
        sent.last().unwrap().content,
        "Please greet world using the hello tool."
    );
    assert!(matches!(
        session.run_command("/bye").await,
        Err(AgentError::UnknownCommand(name)) if name == "bye"
    ));
}

#[tokio::test]
async fn state_kept_with_append_entry_is_rebuilt_at_the_next_session_start() {
    let script = Script::new([]);
    let seen: Arc<Mutex<Vec<(SessionStartReason, usize)>>> = Arc::default();
    let s = seen.clone();
    let setup = move |api: &mut SessionApi| {
        let s = s.clone();
        api.on(move |e: SessionStartEvent, ctx| {
            let s = s.clone();
            async move {
                let count = ctx
                    .branch()
                    .await?
                    .iter()
                    .filter(|entry| matches!(&entry.kind, EntryKind::Custom { custom_type, .. } if custom_type == "counter"))
                    .count();
                s.lock().unwrap().push((e.reason, count));
                Ok(e)
            }
        });
        let me = api.clone();
        api.register_command(
            "count",
            Command::new("counts", move |_, _| {
                let me = me.clone();
                async move { me.append_entry("counter", json!({"n": 1})).await }
            }),
        );
        Ok(())
    };
    let (builder, store) = agents(&script);
    let agents = builder
        .add_extension_with(probe("counter", setup))
        .build()
        .unwrap();
    let alice = UserInfo::new("alice");
    let mut first = agents
        .session(alice.clone(), "kept", AgentSessionOptions::new())
        .await
        .unwrap();
    first.run_command("/count").await.unwrap();
    first.run_command("/count").await.unwrap();
    first.shutdown().await;
    let _second = agents
        .session(alice.clone(), "kept", AgentSessionOptions::new())
        .await
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            (SessionStartReason::New, 0),
            (SessionStartReason::Resume, 2)
        ]
    );
    // The state never reaches the model's context.
    let session = oscova_agent::session::Session::open(store, alice, "kept")
        .await
        .unwrap();
    assert!(session.context().messages.is_empty());
}

#[tokio::test]
async fn the_bus_reaches_other_extensions_and_a_switch_can_be_cancelled() {
    let script = Script::new([]);
    let log = log();
    let (l1, l2) = (log.clone(), log.clone());
    let (builder, _) = agents(&script);
    let agents = builder
        .add_extension_with(probe("listener", move |api| {
            let l = l1.clone();
            api.events().on("greetings", move |data| {
                l.lock().unwrap().push(format!("heard {data}"));
            });
            api.on(
                |mut e: oscova_agent::session::agent::SessionBeforeSwitchEvent, _| async move {
                    if e.target == "forbidden" {
                        e.cancel("not there");
                    }
                    Ok(e)
                },
            );
            let l = l1.clone();
            api.on(move |e: SessionShutdownEvent, _| {
                let l = l.clone();
                async move {
                    l.lock().unwrap().push("shutdown".into());
                    Ok(e)
                }
            });
            Ok(())
        }))
        .add_extension_with(probe("speaker", move |api| {
            let bus = api.events();
            let l = l2.clone();
            api.on(move |e: SessionStartEvent, _| {
                let bus = bus.clone();
                let l = l.clone();
                async move {
                    let n = bus.emit("greetings", &json!("hi"));
                    l.lock().unwrap().push(format!("{n} heard"));
                    Ok(e)
                }
            });
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "bus", AgentSessionOptions::new())
        .await
        .unwrap();
    assert_eq!(entries(&log), [r#"heard "hi""#, "1 heard"]);
    assert!(!session.switch("forbidden").await.unwrap());
    assert_eq!(
        entries(&log).len(),
        2,
        "a cancelled switch shuts nothing down"
    );
    assert!(session.switch("elsewhere").await.unwrap());
    assert_eq!(entries(&log)[2..], ["shutdown", r#"heard "hi""#, "1 heard"]);
}

#[tokio::test]
async fn a_command_switches_the_session_when_it_is_done() {
    let script = Script::new([]);
    let starts = log();
    let s = starts.clone();
    let (builder, _) = agents(&script);
    let agents = builder
        .add_extension_with(probe("switcher", move |api| {
            let s = s.clone();
            api.on(move |e: SessionStartEvent, _| {
                let s = s.clone();
                async move {
                    s.lock().unwrap().push(format!("{:?}", e.reason));
                    Ok(e)
                }
            });
            api.register_command(
                "new",
                Command::new("start a new session", |name, ctx| async move {
                    ctx.switch_session(name)
                }),
            );
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "old", AgentSessionOptions::new())
        .await
        .unwrap();
    let old_id = session.session_snapshot().await.0.id;
    session.run_command("/new fresh").await.unwrap();
    let (info, _) = session.session_snapshot().await;
    assert_eq!(info.name, "fresh");
    assert_ne!(info.id, old_id);
    assert_eq!(entries(&starts), ["New", "Switch"]);
}
