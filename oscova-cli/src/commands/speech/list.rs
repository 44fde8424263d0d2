//! `oscova speech providers`: what the routers can route to.
//!
//! Rules: one entry per routable type key, per direction, in the routers'
//! (sorted) key order, with the display name, whether the provider runs on
//! this machine when no endpoint is configured, where it came from
//! (built in, or which plugin), the voices a synthesis provider lists, and
//! whether it is the one `say` or `hear` uses without `--provider` (per
//! the config), and for a recognizer the model `hear` would use with it:
//! the config's `[speech.hear] model` when that table is the provider's,
//! else, for whisper, the installed default. Nothing is called: listing makes no connection and loads
//! no model.

use oscova_speech::{SpeechRouters, router::ProviderOrigin};
use serde_json::{Value, json};

use super::super::Env;
use crate::error::{CliError, ExitStatus};
use crate::output::{print_json, print_text};

/// One routable provider.
struct Entry {
    key: String,
    name: String,
    local: bool,
    origin: ProviderOrigin,
    voices: Option<Vec<String>>,
    /// The model a recognizer would use (`None`: the provider's own
    /// default, which it does not name).
    model: Option<String>,
    default: bool,
}

impl Entry {
    fn to_json(&self) -> Value {
        let mut doc = json!({
            "key": self.key,
            "name": self.name,
            "local": self.local,
            "origin": match self.origin {
                ProviderOrigin::BuiltIn { .. } => "built-in",
                _ => "plugin",
            },
            "plugin": self.origin.plugin_id(),
            "type": self.origin.type_name(),
            "default": self.default,
        });
        if let (Some(voices), Some(map)) = (&self.voices, doc.as_object_mut()) {
            map.insert("voices".into(), json!(voices));
        }
        if let (Some(model), Some(map)) = (&self.model, doc.as_object_mut()) {
            map.insert("model".into(), json!(model));
        }
        doc
    }

    fn to_line(&self, width: usize) -> String {
        let origin = match self.origin.plugin_id() {
            Some(id) => format!("plugin {id}"),
            None => "built-in".to_owned(),
        };
        let mut line = format!(
            "  {:width$}  {:6}  {:16}  {:7}  {}",
            self.key,
            if self.local { "local" } else { "remote" },
            origin,
            if self.default { "default" } else { "" },
            self.name,
        );
        if let Some(voices) = self.voices.as_ref().filter(|v| !v.is_empty()) {
            line.push_str(&format!("; voices: {}", voices.join(", ")));
        }
        if let Some(model) = &self.model {
            line.push_str(&format!("; hears with model {model}"));
        }
        line
    }
}

/// The model `hear --provider KEY` would use: the config's, else
/// whisper's installed default.
fn hear_model(env: &Env, key: &str) -> Option<String> {
    let configured = env.config.speech_recognition(Some(key)).model;
    #[cfg(feature = "whisper")]
    if configured.is_none() && key == oscova_speech::SpeechProviderKeys::WHISPER {
        return oscova_speech::providers::WhisperRecognizer::installed_model();
    }
    configured
}

pub(super) fn providers(env: &Env, routers: &SpeechRouters) -> Result<ExitStatus, CliError> {
    let say_default = env.config.speech_synthesis(None).provider;
    let hear_default = env.config.speech_recognition(None).provider;
    let synthesis = routers.synthesis();
    let speakers: Vec<Entry> = synthesis
        .keys()
        .iter()
        .filter_map(|key| {
            let provider = synthesis.get(key)?;
            Some(Entry {
                key: key.clone(),
                name: provider.display_name().to_owned(),
                local: provider.default_is_local_endpoint(),
                origin: synthesis.origin(key)?.clone(),
                voices: Some(provider.voices()),
                model: None,
                default: *key == say_default,
            })
        })
        .collect();
    let recognition = routers.recognition();
    let listeners: Vec<Entry> = recognition
        .keys()
        .iter()
        .filter_map(|key| {
            let provider = recognition.get(key)?;
            Some(Entry {
                key: key.clone(),
                name: provider.display_name().to_owned(),
                local: provider.default_is_local_endpoint(),
                origin: recognition.origin(key)?.clone(),
                voices: None,
                model: hear_model(env, key),
                default: *key == hear_default,
            })
        })
        .collect();
    if env.json {
        print_json(&json!({
            "synthesis": speakers.iter().map(Entry::to_json).collect::<Vec<_>>(),
            "recognition": listeners.iter().map(Entry::to_json).collect::<Vec<_>>(),
        }))?;
        return Ok(ExitStatus::Success);
    }
    let width = speakers
        .iter()
        .chain(&listeners)
        .map(|e| e.key.len())
        .max()
        .unwrap_or(0);
    let mut text = String::from("synthesis (oscova speech say)\n");
    for entry in &speakers {
        text.push_str(&entry.to_line(width));
        text.push('\n');
    }
    text.push_str("recognition (oscova speech hear)\n");
    for entry in &listeners {
        text.push_str(&entry.to_line(width));
        text.push('\n');
    }
    print_text(text.trim_end())?;
    Ok(ExitStatus::Success)
}
