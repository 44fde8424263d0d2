//! Run with: `cargo run -p oscova-cli -- tools list`
//!
//! The `oscova` binary: the command line of [`oscova_cli`] over the plugins
//! this binary links.

use std::process::ExitCode;

/// The first-party plugins and the seed example, with the default
/// `first-party` feature; none without it.
#[cfg(feature = "first-party")]
fn first_party() -> impl IntoIterator<Item = oscova_core::plugin::PluginRegistration> {
    oscova_core::linked_plugins![
        example_hello_plugin::ExampleAgentPlugin,
        oscova_plugin_time::TimePlugin,
        oscova_plugin_files::FilesPlugin,
        oscova_plugin_web::WebPlugin,
        oscova_plugin_speech::SpeechPlugin,
        oscova_plugin_openai::OpenAiPlugin,
        oscova_plugin_ollama::OllamaPlugin,
        oscova_plugin_a2a::A2aPlugin,
    ]
}

#[cfg(not(feature = "first-party"))]
fn first_party() -> impl IntoIterator<Item = oscova_core::plugin::PluginRegistration> {
    []
}

/// The embedded model provider, with the default `llamacpp` feature.
#[cfg(feature = "llamacpp")]
fn embedded_model() -> impl IntoIterator<Item = oscova_core::plugin::PluginRegistration> {
    oscova_core::linked_plugins![oscova_plugin_llamacpp::LlamaCppPlugin]
}

#[cfg(not(feature = "llamacpp"))]
fn embedded_model() -> impl IntoIterator<Item = oscova_core::plugin::PluginRegistration> {
    []
}

/// The first-party plugins and the seed example, with the default
/// `first-party` feature, and the embedded model with `llamacpp`.
fn plugins() -> impl IntoIterator<Item = oscova_core::plugin::PluginRegistration> {
    first_party().into_iter().chain(embedded_model())
}

/// The seed's session extension (`/hello` in `chat --session`), with the
/// default `first-party` feature.
#[cfg(feature = "first-party")]
fn launcher() -> oscova_cli::Launcher {
    oscova_cli::Launcher::new().extension::<example_hello_extension::HelloExtension>()
}

#[cfg(not(feature = "first-party"))]
fn launcher() -> oscova_cli::Launcher {
    oscova_cli::Launcher::new()
}

fn main() -> ExitCode {
    launcher().plugins(plugins()).run()
}
