//! Compaction in the session agent: the before-compact event cancels or
//! supplies the summary, the compact event follows, and a host's settings
//! compact after a run.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use oscova_agent::session::agent::*;
use oscova_agent::session::compaction::CompactionSettings;
use oscova_agent::session::{AgentMessage, COMPACTION_SUMMARY_PREFIX};
use oscova_agent::session::{MemoryStore, SessionStore};
use oscova_core::provider::model::ChatMessage;
use oscova_core::{SecretString, UserInfo};

use super::*;

fn long(i: usize) -> ChatMessage {
    ChatMessage::assistant(format!("answer {i}: {}", "words ".repeat(60)), vec![])
}

#[tokio::test]
async fn handlers_cancel_or_supply_the_summary_and_hear_the_compaction() {
    let script = Script::new((0..3).map(long));
    let cancel = Arc::new(AtomicBool::new(true));
    let log = log();
    let (c, l) = (cancel.clone(), log.clone());
    let (builder, _) = agents(&script);
    let agents = builder
        .add_extension_with(probe("summariser", move |api| {
            let c = c.clone();
            api.on(move |mut e: SessionBeforeCompactEvent, _| {
                let c = c.clone();
                async move {
                    if c.load(Ordering::SeqCst) {
                        e.cancel();
                    } else {
                        e.summary = Some(format!("SUPPLIED ({} tokens)", e.tokens_before > 0));
                    }
                    Ok(e)
                }
            });
            let l = l.clone();
            api.on(move |e: SessionCompactEvent, _| {
                let l = l.clone();
                async move {
                    l.lock()
                        .unwrap()
                        .push(format!("{} {}", e.summary, e.from_extension));
                    Ok(e)
                }
            });
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "long", AgentSessionOptions::new())
        .await
        .unwrap();
    for i in 0..3 {
        session.prompt(format!("question {i}")).await.unwrap();
    }
    let settings = CompactionSettings::new(1_000)
        .with_reserve_tokens(100)
        .with_keep_recent_tokens(60);
    assert!(
        session.compact(&settings, None).await.unwrap().is_none(),
        "cancelled"
    );
    assert!(entries(&log).is_empty());

    cancel.store(false, Ordering::SeqCst);
    let done = session.compact(&settings, None).await.unwrap().unwrap();
    assert_eq!(done.summary, "SUPPLIED (true tokens)");
    assert!(done.entries_summarized > 0);
    assert_eq!(script.calls(), 3, "a supplied summary calls no model");
    assert_eq!(entries(&log), ["SUPPLIED (true tokens) true"]);
    let context = session.context().await;
    assert!(matches!(
        &context.messages[0],
        AgentMessage::CompactionSummary(s) if s.summary == "SUPPLIED (true tokens)"
    ));
    let first = &context.chat_messages()[0].content;
    assert!(first.starts_with(COMPACTION_SUMMARY_PREFIX), "{first}");
}

#[tokio::test]
async fn a_host_with_compaction_settings_compacts_after_a_long_run() {
    let summary = || ChatMessage::assistant("the summary", vec![]);
    let script = Script::new([long(0), long(1), summary(), summary()]);
    let (builder, _) = agents(&script);
    let agents = builder
        .compaction(
            CompactionSettings::new(200)
                .with_reserve_tokens(100)
                .with_keep_recent_tokens(60),
        )
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "auto", AgentSessionOptions::new())
        .await
        .unwrap();
    let first = session.prompt("short").await.unwrap();
    let second = session.prompt("again").await.unwrap();
    let errors = (
        first.compaction_error.clone(),
        second.compaction_error.clone(),
    );
    let done = first
        .compaction
        .or(second.compaction)
        .unwrap_or_else(|| panic!("not compacted after a run: {errors:?}"));
    assert!(done.summary.contains("the summary"), "{}", done.summary);
    assert!(script.calls() > 2, "the session's model summarised");
    let (info, _) = session.session_snapshot().await;
    assert_eq!(info.leaf.as_ref(), Some(&done.entry));
}

#[tokio::test]
async fn a_command_asks_for_a_compaction_and_reads_the_context_usage() {
    let script = Script::new((0..2).map(long));
    let usage: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let u = usage.clone();
    let (builder, _) = agents(&script);
    let agents = builder
        .system_prompt("Be brief.")
        .compaction(CompactionSettings::new(1_000_000).with_keep_recent_tokens(60))
        .add_extension_with(probe("squasher", move |api| {
            api.on(|mut e: SessionBeforeCompactEvent, _| async move {
                e.summary = Some("squashed".into());
                Ok(e)
            });
            let u = u.clone();
            api.register_command(
                "squash",
                Command::new("compact now", move |_, ctx| {
                    let u = u.clone();
                    async move {
                        let usage = ctx.context_usage().await?;
                        u.lock().unwrap().push(format!(
                            "{} {:?} {}",
                            usage.tokens > 100,
                            usage.window,
                            ctx.system_prompt()?
                        ));
                        ctx.compact()
                    }
                }),
            );
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "squash", AgentSessionOptions::new())
        .await
        .unwrap();
    session.prompt("one").await.unwrap();
    session.prompt("two").await.unwrap();
    assert!(session.run_command("/squash").await.unwrap().is_none());
    assert_eq!(*usage.lock().unwrap(), ["true Some(1000000) Be brief."]);
    let context = session.context().await;
    assert!(matches!(
        &context.messages[0],
        AgentMessage::CompactionSummary(s) if s.summary == "squashed"
    ));
}

/// The tokens the provider reported are stored on the answer as pi's
/// `usage`, and the context is counted from them (pi's rule: the last
/// answer's usage, nothing after it) instead of estimated.
#[tokio::test]
async fn the_providers_usage_is_stored_and_counts_the_context() {
    let script = Script::new([ChatMessage::assistant("a short answer", vec![])]);
    *script.usage.lock().unwrap() = Some(oscova_core::provider::model::TokenUsage {
        input_tokens: Some(1234),
        output_tokens: Some(56),
        cached_input_tokens: None,
    });
    let (builder, _) = agents(&script);
    let mut session = builder
        .build()
        .unwrap()
        .session(
            UserInfo::new("alice"),
            "counted",
            AgentSessionOptions::new(),
        )
        .await
        .unwrap();
    session.prompt("hello").await.unwrap();
    let (_, entries) = session.session_snapshot().await;
    let Some(AgentMessage::Assistant(answer)) = entries.iter().rev().find_map(|e| match &e.kind {
        oscova_agent::session::EntryKind::Message { message } => Some(message),
        _ => None,
    }) else {
        panic!("no answer stored: {entries:?}")
    };
    let usage = answer.extra.get("usage").unwrap_or_default();
    assert_eq!(
        (&usage["input"], &usage["output"], &usage["totalTokens"]),
        (&1234.into(), &56.into(), &1290.into()),
        "{usage}"
    );
    let branch: Vec<_> = entries.iter().collect();
    assert_eq!(
        oscova_agent::session::compaction::context_tokens(&branch),
        1290
    );

    // Without a reported usage, the answer's count stays zero and the
    // context is estimated (far below the reported figure here).
    let quiet = Script::new([ChatMessage::assistant("a short answer", vec![])]);
    let (builder, _) = agents(&quiet);
    let mut session = builder
        .build()
        .unwrap()
        .session(
            UserInfo::new("bob"),
            "estimated",
            AgentSessionOptions::new(),
        )
        .await
        .unwrap();
    session.prompt("hello").await.unwrap();
    let (_, entries) = session.session_snapshot().await;
    let branch: Vec<_> = entries.iter().collect();
    let estimated = oscova_agent::session::compaction::context_tokens(&branch);
    assert!(estimated > 0 && estimated < 100, "{estimated}");
}

const KEY: &str = "sk-host-key-9876";

/// Writes session `name` of alice, whose first answer carries [`KEY`],
/// through a host that does not know the key yet.
async fn leaky_session(store: &Arc<dyn SessionStore>, name: &str) {
    let leaky =
        ChatMessage::assistant(format!("the key is {KEY}; {}", "words ".repeat(60)), vec![]);
    let script = Script::new([leaky, long(1), long(2)]);
    let mut session = AgentHost::builder(plugin_host(&script), store.clone())
        .model(model())
        .build()
        .unwrap()
        .session(UserInfo::new("alice"), name, AgentSessionOptions::new())
        .await
        .unwrap();
    for i in 0..3 {
        session.prompt(format!("question {i}")).await.unwrap();
    }
}

/// Everything stored of alice's session `name`, as text.
async fn stored(store: &Arc<dyn SessionStore>, name: &str) -> String {
    let alice = UserInfo::new("alice");
    let info = store.find(&alice, name).await.unwrap().unwrap();
    format!("{:?}", store.load(&alice, &info.id).await.unwrap())
}

/// A credential the host knows (a model key) that an older entry carries:
/// neither the summarising request nor the stored summary may hold it,
/// whoever made the summary.
#[tokio::test]
async fn a_host_secret_reaches_neither_the_summarising_model_nor_the_stored_summary() {
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    leaky_session(&store, "model").await;
    leaky_session(&store, "extension").await;
    let settings = CompactionSettings::new(1_000)
        .with_reserve_tokens(100)
        .with_keep_recent_tokens(60);

    // The session's model summarises, and repeats the key.
    let summary = || ChatMessage::assistant(format!("summary: the key is {KEY}"), vec![]);
    let script = Script::new([summary(), summary()]);
    let agents = AgentHost::builder(plugin_host(&script), store.clone())
        .model_with_key(model(), Some(SecretString::from(KEY)))
        .build()
        .unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "model", AgentSessionOptions::new())
        .await
        .unwrap();
    let done = session.compact(&settings, None).await.unwrap().unwrap();
    assert!(script.calls() > 0, "the model summarised");
    for i in 0..script.calls() {
        for message in script.seen(i).0 {
            assert!(!message.content.contains(KEY), "sent: {}", message.content);
        }
    }
    assert!(
        done.summary.contains("summary: the key is [REDACTED]") && !done.summary.contains(KEY),
        "{}",
        done.summary
    );
    let kept = stored(&store, "model").await;
    assert!(kept.contains("summary: the key is [REDACTED]"), "{kept}");
    assert!(
        !kept.contains(&format!("summary: the key is {KEY}")),
        "{kept}"
    );

    // An extension supplies the summary, with the key in it.
    let script = Script::new([]);
    let agents = AgentHost::builder(plugin_host(&script), store.clone())
        .model_with_key(model(), Some(SecretString::from(KEY)))
        .add_extension_with(probe("supplier", |api| {
            api.on(|mut e: SessionBeforeCompactEvent, _| async move {
                e.summary = Some(format!("supplied: {KEY}"));
                Ok(e)
            });
            Ok(())
        }))
        .build()
        .unwrap();
    let mut session = agents
        .session(
            UserInfo::new("alice"),
            "extension",
            AgentSessionOptions::new(),
        )
        .await
        .unwrap();
    let done = session.compact(&settings, None).await.unwrap().unwrap();
    assert_eq!(done.summary, "supplied: [REDACTED]");
    assert_eq!(script.calls(), 0);
    let kept = stored(&store, "extension").await;
    assert!(kept.contains("supplied: [REDACTED]"), "{kept}");
    assert!(!kept.contains(&format!("supplied: {KEY}")), "{kept}");
}
