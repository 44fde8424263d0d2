//! A plugin's own speech provider, routed by `oscova speech say` and by the
//! speech plugin's `speak` tool: the speech plugin registers the host's
//! routers as a service, which the command reuses, so a provider registered
//! by any loaded plugin is routable from both. In-process through `Launcher`,
//! over a plugin defined here, on paths that never prompt.

use crate::support;

use oscova_cli::{ExitStatus, Launcher};
use oscova_core::linked_plugins;
use oscova_core::prelude::*;
use oscova_plugin_speech::SpeechPlugin;
use oscova_speech::{
    BoxFuture, ProviderTypeKey, SpeechError, SpeechSynthesisProvider, SynthesisRequest,
    SynthesizedAudio, wav::Pcm16kMono, wav::encode_wav,
};

/// A quarter second of silence per character, on this machine.
struct Hush;

impl SpeechSynthesisProvider for Hush {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static("test.hush")
    }
    fn display_name(&self) -> &str {
        "Test hush"
    }
    fn default_is_local_endpoint(&self) -> bool {
        true
    }
    fn synthesize<'a>(
        &'a self,
        request: SynthesisRequest<'a>,
    ) -> BoxFuture<'a, Result<SynthesizedAudio, SpeechError>> {
        let samples = vec![0; 4_000 * request.text.chars().count()];
        Box::pin(async move {
            Ok(SynthesizedAudio {
                wav: encode_wav(&Pcm16kMono { samples }),
            })
        })
    }
}

/// Registers [`Hush`].
#[plugin(id = "test.hush")]
pub struct HushPlugin;

impl AgentPlugin for HushPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_speech_synthesis_provider(|_: &ProviderContext| Hush);
    }
}

fn launcher() -> Launcher {
    Launcher::new().plugins(linked_plugins![SpeechPlugin, HushPlugin])
}

#[test]
fn a_plugin_provider_is_routable_from_the_command_and_the_tool() {
    let dir = support::temp_dir("speech-plugins");
    let root = dir.join("files");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!("files_root = {:?}\n", root.to_str().unwrap()),
    )
    .unwrap();
    let config = config.to_str().unwrap();

    let out = dir.join("hush.wav");
    let status = launcher().run_from([
        "oscova",
        "--json",
        "--config",
        config,
        "speech",
        "say",
        "abcd",
        "-o",
        out.to_str().unwrap(),
        "--provider",
        "test.hush",
        "--offline",
    ]);
    assert_eq!(status, ExitStatus::Success);
    assert_eq!(std::fs::read(&out).unwrap().len(), 44 + 2 * 16_000);

    let status = launcher().run_from([
        "oscova",
        "--json",
        "--config",
        config,
        "tools",
        "call",
        "oscova_speech__speech__speak",
        "--yes",
        "--user",
        "bob",
        "--args",
        r#"{"text": "ab", "path": "hush.wav", "provider": "test.hush"}"#,
    ]);
    assert_eq!(status, ExitStatus::Success);
    let spoken = std::fs::read(root.join("bob/hush.wav")).unwrap();
    assert_eq!(spoken.len(), 44 + 2 * 8_000);
}
