//! What `AgentHostBuilder::build` refuses: a model configuration whose
//! provider the plugin host did not build, named with the ones it has,
//! so the mistake shows where it is made and not at the first prompt.

use std::sync::Arc;

use oscova_agent::session::agent::{AgentHost, AgentHostError, AgentSessionOptions};
use oscova_agent::session::{MemoryStore, SessionStore};
use oscova_core::provider::model::{ChatMessage, ModelProviderConfig};
use oscova_core::{SecretString, UserInfo};

use super::{Script, agents, model, plugin_host};

fn store() -> Arc<dyn SessionStore> {
    Arc::new(MemoryStore::new())
}

#[test]
fn a_model_whose_provider_the_plugin_host_did_not_build_is_refused_by_name() {
    let script = Script::new([]);
    let refused = AgentHost::builder(plugin_host(&script), store())
        .model(ModelProviderConfig::new("ollama").model("llama3.2"))
        .build()
        .unwrap_err();
    assert_eq!(
        refused,
        AgentHostError::UnknownModelProvider {
            unknown: vec!["ollama".into()],
            available: vec!["scripted".into()],
        }
    );
    assert_eq!(refused.kind(), "unknown_provider");
    assert_eq!(
        refused.to_string(),
        "model provider `ollama` is configured, but the plugin host built no model provider \
         by that key (it has `scripted`): link the plugin that registers it and name it in \
         `linked_plugins!`, or configure a provider the host has"
    );
}

#[test]
fn every_model_is_checked_and_every_unknown_provider_named_once() {
    let script = Script::new([]);
    let key = Some(SecretString::from("sk-test"));
    // The default model is fine; the later ones, one with a key, are not.
    let refused = AgentHost::builder(plugin_host(&script), store())
        .model(model())
        .model(ModelProviderConfig::new("ollama"))
        .model_with_key(ModelProviderConfig::new("openai"), key)
        .model(ModelProviderConfig::new("ollama").model("other"))
        .build()
        .unwrap_err();
    assert_eq!(
        refused,
        AgentHostError::UnknownModelProvider {
            unknown: vec!["ollama".into(), "openai".into()],
            available: vec!["scripted".into()],
        }
    );
    assert!(
        refused
            .to_string()
            .starts_with("model providers `ollama`, `openai` are configured, but"),
        "{refused}"
    );

    let only_keyed = AgentHost::builder(plugin_host(&script), store())
        .model_with_key(ModelProviderConfig::new("openai"), None)
        .build()
        .unwrap_err();
    assert!(
        matches!(&only_keyed, AgentHostError::UnknownModelProvider { unknown, .. } if unknown == &["openai"]),
        "{only_keyed}"
    );
}

#[tokio::test]
async fn a_host_whose_models_the_plugin_host_built_builds_and_answers() {
    let script = Script::new([ChatMessage::assistant("Hello.", vec![])]);
    let (builder, _) = agents(&script);
    let agents = builder.build().unwrap();
    let mut session = agents
        .session(UserInfo::new("alice"), "built", AgentSessionOptions::new())
        .await
        .unwrap();
    let outcome = session.prompt("Hi").await.unwrap();
    assert_eq!(outcome.text, "Hello.");
    assert_eq!(script.calls(), 1);
}

#[tokio::test]
async fn a_host_without_a_model_builds_and_a_session_chooses_one() {
    let script = Script::new([ChatMessage::assistant("Chosen.", vec![])]);
    let agents = AgentHost::builder(plugin_host(&script), store())
        .build()
        .unwrap();
    let options = AgentSessionOptions::new().model("scripted", Some("m1".into()));
    let mut session = agents
        .session(UserInfo::new("alice"), "later", options)
        .await
        .unwrap();
    assert_eq!(session.prompt("Hi").await.unwrap().text, "Chosen.");
}
