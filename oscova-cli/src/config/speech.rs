//! The `[speech]` section: which speech provider `oscova speech say` and
//! `oscova speech hear` use when `--provider` is not given, how it is
//! configured, and whether speech must stay on this machine.
//!
//! Rules: the section is optional and so is every key in it; without it
//! `say` uses flite (voice `kal16`) and `hear` whisper when its model is
//! installed (and the binary has the `whisper` feature), else
//! pocketsphinx, all local, so nothing is configured to leave the machine. `[speech.say]` and
//! `[speech.hear]` each describe one provider (the local one when
//! `provider` is left out); a `--provider` naming another key gets a bare
//! configuration, never the table of a different provider. Like the model
//! provider tables they hold no secret: an API key is the credential
//! `<provider>.api_key`. `offline = true` makes every speech command act
//! as if `--offline` were given; no flag turns it off for one command.

use oscova_speech::SpeechProviderConfig;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::Config;

/// `[speech]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SpeechSection {
    /// Require local providers for every speech command.
    #[serde(default)]
    offline: bool,
    /// `[speech.say]`: the synthesis provider.
    say: Option<SpeechTable>,
    /// `[speech.hear]`: the recognition provider.
    hear: Option<SpeechTable>,
}

/// `[speech.say]` or `[speech.hear]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SpeechTable {
    /// The provider's type key (default: the local provider).
    provider: Option<String>,
    /// The provider's server, instead of its default.
    endpoint: Option<String>,
    /// The model, where the provider has several.
    model: Option<String>,
    /// The voice (`say` only).
    voice: Option<String>,
    /// A language tag such as `en-US`.
    language: Option<String>,
    /// CPU threads for a local recognizer (`hear` only); becomes
    /// `options.threads`.
    threads: Option<u32>,
    /// Provider-specific settings, passed on as they are.
    #[serde(default)]
    options: Map<String, Value>,
}

impl SpeechSection {
    /// What is wrong with the section, if anything.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.hear.as_ref().is_some_and(|t| t.voice.is_some()) {
            return Err("[speech.hear] has a voice; voices belong in [speech.say]".to_owned());
        }
        if self.say.as_ref().is_some_and(|t| t.threads.is_some()) {
            return Err("[speech.say] has threads; threads belong in [speech.hear]".to_owned());
        }
        super::ranges::SPEECH_HEAR_THREADS.check(self.hear.as_ref().and_then(|t| t.threads))
    }
}

impl SpeechTable {
    /// The configuration this table describes, `default_key` when it names
    /// no provider.
    fn to_config(&self, default_key: &str) -> SpeechProviderConfig {
        let key = non_empty(self.provider.as_deref()).unwrap_or_else(|| default_key.to_owned());
        let mut config = SpeechProviderConfig::new(key);
        config.endpoint = non_empty(self.endpoint.as_deref());
        config.model = non_empty(self.model.as_deref());
        config.voice = non_empty(self.voice.as_deref());
        config.language = non_empty(self.language.as_deref());
        config.options = self.options.clone();
        if let Some(threads) = self.threads {
            config
                .options
                .insert("threads".into(), Value::from(threads));
        }
        config
    }
}

fn non_empty(text: Option<&str>) -> Option<String> {
    text.map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
}

/// The configured provider when `asked` is absent or names it; else a bare
/// configuration for `asked`.
fn pick(configured: SpeechProviderConfig, asked: Option<&str>) -> SpeechProviderConfig {
    match asked.map(str::trim).filter(|k| !k.is_empty()) {
        Some(key) if key != configured.provider => SpeechProviderConfig::new(key),
        _ => configured,
    }
}

impl Config {
    /// Whether the config's `[speech] offline` is `true`: every speech
    /// command then requires providers on this machine, as `--offline`
    /// does.
    pub fn speech_offline(&self) -> bool {
        self.speech.offline
    }

    /// The configuration `oscova speech say` uses with `--provider key`
    /// (`None`: no flag): the `[speech.say]` table when `key` is absent or
    /// names its provider, else a bare configuration for `key`. Without a
    /// table (or a `provider` in it) the default is [`default_synthesis`]:
    /// kokoro with voice `af_heart` when it is installed, else flite with
    /// voice `kal16`.
    ///
    /// ```
    /// let none: [(&str, &str); 0] = [];
    /// let config = oscova_cli::Config::from_toml_str(
    ///     r#"
    ///     [speech.say]
    ///     provider = "openai"
    ///     endpoint = "http://127.0.0.1:8000"
    ///     voice = "nova"
    ///     "#,
    ///     none,
    /// )?;
    /// let say = config.speech_synthesis(None);
    /// assert_eq!((say.provider.as_str(), say.voice.as_deref()), ("openai", Some("nova")));
    /// assert_eq!(config.speech_synthesis(Some("flite")).endpoint, None);
    /// # Ok::<(), oscova_cli::CliError>(())
    /// ```
    pub fn speech_synthesis(&self, key: Option<&str>) -> SpeechProviderConfig {
        let configured = match &self.speech.say {
            Some(table) => table.to_config(&default_synthesis().provider),
            None => default_synthesis(),
        };
        pick(configured, key)
    }

    /// The configuration `oscova speech hear` uses with `--provider key`:
    /// the `[speech.hear]` table when `key` is absent or names its
    /// provider, else a bare configuration for `key`. Without a table (or
    /// a `provider` in it) the default is [`default_recognizer`].
    pub fn speech_recognition(&self, key: Option<&str>) -> SpeechProviderConfig {
        let configured = match &self.speech.hear {
            Some(table) => table.to_config(default_recognizer()),
            None => SpeechProviderConfig::new(default_recognizer()),
        };
        pick(configured, key)
    }

    /// The recognition configuration of a spoken conversation with `--hear
    /// key` and `--language language`: [`speech_recognition`](Self::speech_recognition)'s,
    /// heard in `language`, else in the `[speech.hear]` table's language,
    /// else in English (`VoiceOptions::LANGUAGE`): a set language spares
    /// whisper its detection at each turn, about half of a sentence's
    /// recognition time on 2 cores; `auto` detects it.
    #[cfg(feature = "voice")]
    pub fn voice_recognition(
        &self,
        key: Option<&str>,
        language: Option<&str>,
    ) -> SpeechProviderConfig {
        let mut config = self.speech_recognition(key);
        if let Some(language) = non_empty(language) {
            config.language = Some(language);
        } else if config.language.is_none() {
            config.language = Some(oscova_agent::session::voice::VoiceOptions::LANGUAGE.to_owned());
        }
        config
    }

    /// The line `hear` without `--provider` prints when it falls back to
    /// pocketsphinx because no provider is configured and the Whisper
    /// model is not installed: how to install it.
    pub(crate) fn speech_recognition_hint(&self) -> Option<String> {
        let unconfigured = self
            .speech
            .hear
            .as_ref()
            .is_none_or(|t| non_empty(t.provider.as_deref()).is_none());
        #[cfg(feature = "whisper")]
        if unconfigured && default_recognizer() == oscova_speech::SpeechProviderKeys::POCKETSPHINX {
            return Some(format!(
                "using pocketsphinx: the Whisper model is not installed; install it with `{}` \
                 for far fewer errors",
                oscova_speech::providers::WhisperRecognizer::INSTALL_COMMAND
            ));
        }
        let _ = unconfigured;
        None
    }
}

/// The synthesis configuration `say` uses when nothing names a provider:
/// `kokoro` (voice `af_heart`) when the build has it (feature `piper`) and
/// `scripts/ensure-kokoro.sh` has installed it, else `flite` (voice
/// `kal16`).
///
/// ```
/// let say = oscova_cli::default_synthesis();
/// assert!(say.provider == "kokoro" || say.provider == "flite");
/// ```
pub fn default_synthesis() -> SpeechProviderConfig {
    oscova_speech::providers::default_offline_synthesis()
}

/// The recognizer `hear` uses when nothing names one: `whisper` when the
/// build has it and its model is installed, else `pocketsphinx`.
///
/// ```
/// let key = oscova_cli::default_recognizer();
/// assert!(key == "whisper" || key == "pocketsphinx");
/// ```
pub fn default_recognizer() -> &'static str {
    oscova_speech::providers::default_offline_recognizer()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Result<Config, crate::CliError> {
        let none: [(&str, &str); 0] = [];
        Config::from_toml_str(text, none)
    }

    #[cfg(feature = "voice")]
    #[test]
    fn a_conversation_is_heard_in_english_unless_told_otherwise() {
        let bare = config("").unwrap();
        let hear = bare.voice_recognition(None, None);
        assert_eq!(hear.provider, default_recognizer());
        assert_eq!(hear.language.as_deref(), Some("en"));
        assert_eq!(
            bare.voice_recognition(Some("whisper"), Some(" auto "))
                .language
                .as_deref(),
            Some("auto")
        );
        let written = config(
            r#"
            [speech.hear]
            language = "de-DE"
            "#,
        )
        .unwrap();
        assert_eq!(
            written.voice_recognition(None, None).language.as_deref(),
            Some("de-DE")
        );
        assert_eq!(
            written
                .voice_recognition(None, Some("fr"))
                .language
                .as_deref(),
            Some("fr")
        );
    }

    #[test]
    fn without_a_section_speech_is_local() {
        let config = config("").unwrap();
        assert!(!config.speech_offline());
        assert_eq!(config.speech_synthesis(None), default_synthesis());
        assert_eq!(
            config.speech_recognition(None).provider,
            default_recognizer()
        );
        assert_eq!(
            config.speech_recognition(Some(" ")).provider,
            default_recognizer()
        );
        assert_eq!(
            config.speech_synthesis(Some("openai")),
            SpeechProviderConfig::new("openai")
        );
    }

    #[test]
    fn tables_apply_to_their_own_provider_only() {
        let config = config(
            r#"
            [speech]
            offline = true
            [speech.say]
            provider = "flite"
            voice = "slt"
            [speech.hear]
            provider = "openai"
            endpoint = "http://127.0.0.1:8000"
            model = "whisper-large-v3"
            language = "en-US"
            options = { temperature = 0 }
            "#,
        )
        .unwrap();
        assert!(config.speech_offline());
        assert_eq!(config.speech_synthesis(None).voice.as_deref(), Some("slt"));
        assert_eq!(
            config.speech_synthesis(Some("flite")).voice.as_deref(),
            Some("slt")
        );
        let hear = config.speech_recognition(Some("openai"));
        assert_eq!(hear.endpoint.as_deref(), Some("http://127.0.0.1:8000"));
        assert_eq!(hear.model.as_deref(), Some("whisper-large-v3"));
        assert_eq!(hear.language.as_deref(), Some("en-US"));
        assert_eq!(hear.options["temperature"], 0);
        assert_eq!(
            config.speech_recognition(Some("pocketsphinx")),
            SpeechProviderConfig::new("pocketsphinx")
        );
    }

    #[test]
    fn hear_takes_whisper_settings() {
        let config = config(
            r#"
            [speech.hear]
            provider = "whisper"
            model = "base"
            threads = 2
            language = "de"
            "#,
        )
        .unwrap();
        let hear = config.speech_recognition(None);
        assert_eq!(hear.provider, "whisper");
        assert_eq!(hear.model.as_deref(), Some("base"));
        assert_eq!(hear.language.as_deref(), Some("de"));
        assert_eq!(hear.options["threads"], 2);
        assert_eq!(config.speech_recognition_hint(), None);
    }

    #[test]
    fn mistakes_are_errors() {
        for (text, named) in [
            ("[speech]\nofline = true", "ofline"),
            ("[speech.say]\napi_key = \"x\"", "api_key"),
            ("[speech.hear]\nvoice = \"slt\"", "voice"),
            ("[speech]\noffline = \"yes\"", "offline"),
            ("[speech.say]\nthreads = 2", "threads"),
            ("[speech.hear]\nthreads = 0", "threads"),
        ] {
            let err = config(text).unwrap_err();
            assert!(err.to_string().contains(named), "{text}: {err}");
            assert_eq!(err.exit_status().code(), 2);
        }
    }
}
