//! Prompt forms of extension commands, listed and rendered without a run.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_agent::session::agent::{
    AgentError, Command, Extension, PromptForm, PromptFormArg, SessionApi, SessionStartEvent,
};

use super::{Script, agents};
use oscova_core::UserInfo;

/// Registers `/greet` with a prompt form twice (the second is `greet:2`),
/// `/plain` without one, counts session starts, and keeps its API.
struct Forms {
    starts: Arc<AtomicUsize>,
    kept: Arc<std::sync::Mutex<Option<SessionApi>>>,
}

impl Extension for Forms {
    fn name(&self) -> &str {
        "forms"
    }

    fn activate(&mut self, api: &mut SessionApi) -> Result<(), AgentError> {
        let noop = || Command::new("", |_, _| async { Ok(()) });
        api.register_command(
            "greet",
            noop().prompt(
                PromptForm::template("Greets", "Greet {who}{{!}} {tone}")
                    .argument(PromptFormArg::required("who"))
                    .argument(PromptFormArg::optional("tone")),
            ),
        );
        api.register_command("plain", noop());
        let user = api.clone();
        api.register_command(
            "greet",
            noop().prompt(PromptForm::render_with("Per user", move |args| {
                Ok(vec![
                    format!("first {}", args.len()),
                    format!("for {}", user.name()),
                ])
            })),
        );
        let starts = self.starts.clone();
        api.on(move |event: SessionStartEvent, _ctx| {
            starts.fetch_add(1, Ordering::SeqCst);
            async move { Ok(event) }
        });
        *self.kept.lock().unwrap() = Some(api.clone());
        Ok(())
    }
}

#[tokio::test]
async fn forms_are_listed_and_rendered_without_starting_a_session() {
    let starts = Arc::new(AtomicUsize::new(0));
    let kept = Arc::new(std::sync::Mutex::new(None));
    let (builder, store) = agents(&Script::new([]));
    let (s, k) = (starts.clone(), kept.clone());
    let host = builder
        .add_extension_with(move || Forms {
            starts: s.clone(),
            kept: k.clone(),
        })
        .build()
        .unwrap();
    let alice = UserInfo::new("alice");
    let scope = host.plugins().user_scope(alice.clone());

    let forms = host.prompt_forms(&scope).await.unwrap();
    let names: Vec<_> = forms.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["greet", "greet:2"]);
    assert_eq!(forms[0].extension, "forms");
    assert_eq!(forms[0].form.description(), "Greets");
    assert!(forms[0].form.arguments()[0].required);
    assert!(!forms[0].form.arguments()[1].required);

    let args: BTreeMap<String, String> = [("who".to_owned(), "Ada".to_owned())].into();
    let text = host.render_prompt(&scope, "greet", &args).await.unwrap();
    assert_eq!(text, ["Greet Ada{!} "]);
    let text = host
        .render_prompt(&scope, "greet:2", &BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(text, ["first 0", "for forms"]);

    let missing = host
        .render_prompt(&scope, "greet", &BTreeMap::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&missing, AgentError::MissingPromptArgument { prompt, argument } if prompt == "greet" && argument == "who"),
        "{missing}"
    );
    let unknown = host
        .render_prompt(&scope, "plain", &BTreeMap::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&unknown, AgentError::UnknownPrompt(n) if n == "plain"),
        "{unknown}"
    );

    // No session start ran, nothing reached the host's store, and the API
    // the extension kept from the throwaway session is stale.
    assert_eq!(starts.load(Ordering::SeqCst), 0);
    assert!(store.list(&alice).await.unwrap().is_empty());
    let api = kept.lock().unwrap().take().unwrap();
    assert!(matches!(api.session_name().await, Err(AgentError::Stale)));
}
