//! Run with: `cargo run -p example-custom-speech-provider -- "hello there" beep.wav`
//!
//! A plugin, `acme.beep`, registers its own speech synthesis provider under
//! the type key `acme.beep`: it "speaks" a text as a sine tone, 60 ms per
//! character, with no external program. The host routes to it through a
//! `SpeechSynthesisRouter` built from the `PluginHost`, with offline
//! operation required; no framework constant or extra wiring is involved.

use std::f64::consts::PI;

use oscova_core::prelude::*;
use oscova_speech::{
    BoxFuture, ProviderTypeKey, SpeechError, SpeechProviderConfig, SpeechSynthesisProvider,
    SpeechSynthesisRouter, SynthesisRequest, SynthesizedAudio, wav::Pcm16kMono, wav::encode_wav,
};

/// The provider's type key: stable, unique, and namespaced by the plugin id.
pub const BEEP_KEY: &str = "acme.beep";

/// The voices, and the pitch each beeps at.
const VOICES: [(&str, f64); 2] = [("low", 440.0), ("high", 880.0)];

/// How long each character of the text beeps, in samples (60 ms).
const SAMPLES_PER_CHAR: usize = Pcm16kMono::SAMPLE_RATE as usize * 60 / 1_000;

/// The longest text spoken, in characters (a minute of beeping).
const MAX_CHARS: usize = 1_000;

/// Speaks every text as a sine tone; local by design.
pub struct BeepSynthesizer;

impl BeepSynthesizer {
    /// The tone for `text` at `hz`, with 5 ms fades so it does not click.
    fn tone(text: &str, hz: f64) -> Result<Pcm16kMono, SpeechError> {
        let chars = text.trim().chars().count();
        if chars == 0 {
            return Err(SpeechError::InvalidText(
                "there is nothing to beep; pass a non-empty text".to_owned(),
            ));
        }
        if chars > MAX_CHARS {
            return Err(SpeechError::InvalidText(format!(
                "the text has {chars} characters; acme.beep speaks at most {MAX_CHARS}"
            )));
        }
        let len = chars * SAMPLES_PER_CHAR;
        let fade = (Pcm16kMono::SAMPLE_RATE as usize / 200).min(len / 2).max(1);
        let samples = (0..len)
            .map(|i| {
                let t = i as f64 / f64::from(Pcm16kMono::SAMPLE_RATE);
                let edge = i.min(len - 1 - i).min(fade) as f64 / fade as f64;
                (0.3 * edge * (2.0 * PI * hz * t).sin() * 32_767.0).round() as i16
            })
            .collect();
        Ok(Pcm16kMono { samples })
    }
}

impl SpeechSynthesisProvider for BeepSynthesizer {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(BEEP_KEY)
    }

    fn display_name(&self) -> &str {
        "Acme beeper"
    }

    fn default_is_local_endpoint(&self) -> bool {
        true // nothing leaves the machine
    }

    fn voices(&self) -> Vec<String> {
        VOICES.iter().map(|(name, _)| (*name).to_owned()).collect()
    }

    fn synthesize<'a>(
        &'a self,
        request: SynthesisRequest<'a>,
    ) -> BoxFuture<'a, Result<SynthesizedAudio, SpeechError>> {
        Box::pin(async move {
            let voice = request
                .voice
                .or(request.config.voice.as_deref())
                .unwrap_or("low");
            let Some((_, hz)) = VOICES.iter().find(|(name, _)| *name == voice) else {
                return Err(SpeechError::UnknownVoice {
                    voice: voice.to_owned(),
                    known: self.voices(),
                });
            };
            let pcm = Self::tone(request.text, *hz)?;
            Ok(SynthesizedAudio {
                wav: encode_wav(&pcm),
            })
        })
    }
}

/// The plugin: one synthesis provider, registered through the builder.
#[plugin(id = "acme.beep", name = "Acme beep", framework = ">=0.1")]
pub struct BeepPlugin;

impl AgentPlugin for BeepPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_speech_synthesis_provider(|_: &ProviderContext| BeepSynthesizer);
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let text = args.next().unwrap_or_else(|| "hello there".to_owned());
    let out = args.next().unwrap_or_else(|| "beep.wav".to_owned());

    // Every linked plugin, this one included.
    let host = PluginHost::builder().build()?;
    let router = SpeechSynthesisRouter::from_host(&host);
    for warning in router.diagnostics() {
        eprintln!("{warning}");
    }
    println!("synthesis providers: {}", router.keys().join(", "));

    let config = SpeechProviderConfig::new(BEEP_KEY).voice("high");
    let audio = router
        .synthesize(SynthesisRequest::new(&config, &text).offline(true))
        .await?;
    let seconds = oscova_speech::wav::decode_wav(&audio.wav)?
        .duration()
        .as_secs_f64();
    std::fs::write(&out, &audio.wav)?;
    println!(
        "{BEEP_KEY} beeped {text:?} for {seconds:.2} s into {out} ({} bytes)",
        audio.wav.len()
    );
    host.shutdown().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_plugin_provider_is_routed_from_the_host() {
        let host = PluginHost::builder().build().unwrap();
        let router = SpeechSynthesisRouter::from_host(&host);
        assert!(router.diagnostics().is_empty());
        // `piper` and `kokoro` are built in too when the build enables
        // oscova-speech's `piper` feature (the workspace's `oscova` binary
        // does).
        let keys: Vec<&str> = router
            .keys()
            .iter()
            .map(String::as_str)
            .filter(|k| !matches!(*k, "piper" | "kokoro"))
            .collect();
        assert_eq!(keys, ["acme.beep", "flite", "openai"]);
        assert_eq!(
            router.origin(BEEP_KEY).and_then(|o| o.plugin_id()),
            Some("acme.beep")
        );

        let config = SpeechProviderConfig::new(BEEP_KEY);
        let audio = router
            .synthesize(SynthesisRequest::new(&config, "hi!").offline(true))
            .await
            .unwrap();
        let pcm = oscova_speech::wav::decode_wav(&audio.wav).unwrap();
        assert_eq!(pcm.samples.len(), 3 * SAMPLES_PER_CHAR);
        assert!(pcm.samples.iter().any(|&s| s > 9_000));

        let err = router
            .synthesize(SynthesisRequest::new(&config, "hi").voice(Some("kal16")))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown voice `kal16`; available voices: low, high"
        );
        let err = router
            .synthesize(SynthesisRequest::new(&config, "  "))
            .await
            .unwrap_err();
        assert!(matches!(err, SpeechError::InvalidText(_)), "{err:?}");
        host.shutdown().await;
    }
}
