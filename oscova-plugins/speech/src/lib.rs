//! The `oscova.speech` plugin: text to speech into the user's files, and
//! speech in the user's files to text, through the speech routers.
//!
//! | wire name | does | approval |
//! |---|---|---|
//! | `oscova_speech__speech__speak` | speaks `text` into a WAV file at `path` (`voice`, `provider`, `overwrite`, `create_dirs` optional) | **required** |
//! | `oscova_speech__speech__transcribe` | returns the words in the WAV file at `path` (`provider` optional); timed `segments` in the details, progress on long audio | not required |
//!
//! Paths follow the rules of [`oscova_core::fs`], as for `oscova.files`,
//! in the user's files root (the host's
//! `PluginHostBuilder::files_roots`, or `UserInfo::with_files_root`) unless
//! the plugin was given roots of its own: relative to the root, no `..`, no
//! absolute paths, no symbolic links that lead out, parent directories
//! checked. Each user's
//! [`SpeechSettings`] choose the providers and whether speech must stay on
//! this machine; the default is kokoro (`af_heart`, when the build has it
//! and it is installed, else flite `kal16`) and whisper (when the
//! build has it and its model is installed, else pocketsphinx) with
//! offline operation required.
//!
//! Caps: `speak` takes at most 5,000 characters
//! ([`oscova_speech::SpeechSynthesisRouter::MAX_CHARS`]; [`SpeechLimits`] may lower it)
//! and returns at most 600 seconds of audio
//! ([`oscova_speech::SpeechSynthesisRouter::MAX_SECONDS`]: text that expands, such as a
//! long number read digit by digit, is refused after synthesis and no file
//! is written; audio that is not WAV, over
//! `oscova_speech::SpeechSynthesisRouter::MAX_ENCODED_BYTES`); both are the synthesis
//! router's (`SpeechSynthesisRouter::synthesize`, which `speak` calls), so
//! they hold for every provider. `transcribe` takes at most 300 seconds of audio
//! ([`oscova_speech::wav::MAX_AUDIO_SECONDS`]) in a file of at most 64 MiB.
//!
//! `transcribe`'s text is the result's content; its details hold `text`,
//! the provider, the audio's length and format, and `segments`: the timed
//! parts of the text (`start_seconds`, `end_seconds`, `text`) where the
//! provider gives them (whisper does; pocketsphinx and openai give none,
//! an empty list). While a provider that can tell how far it is works
//! (whisper, window by window on audio over 30 seconds), the call reports
//! progress: `transcribed 24.9 of 40.1 seconds of audio`, with the seconds
//! as progress and total (an MCP client sees `notifications/progress`).
//! A host keeps its recognizers, and so a loaded Whisper model, between
//! calls and users (its one [`SpeechRouters`] service, or the plugin's one
//! pair per host).
//!
//! # Tutorial
//!
//! Give the plugin a root per user, hand it to the host builder, and call
//! the tools by wire name. `speak` writes a file, so it needs approval:
//!
//! ```no_run
//! use oscova_core::prelude::*;
//! use oscova_plugin_speech::SpeechPlugin;
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let base = tempfile::tempdir()?;
//! let speech = SpeechPlugin::per_user(base.path()); // <base>/<user id>/
//! let host = PluginHost::builder()
//!     .no_linked_plugins()
//!     .plugin_instance(speech)
//!     .approval_handler(|_: &oscova_core::ApprovalRequest<'_>| true)
//!     .build()?;
//! let scope = host.user_scope(UserInfo::new("alice"));
//!
//! let spoken = scope
//!     .invoke("oscova_speech__speech__speak", json!({"text": "please call stella", "path": "stella.wav"}))
//!     .await;
//! assert!(!spoken.is_error, "{}", spoken.content);
//! println!("{} seconds", spoken.details["duration_seconds"]);
//!
//! let heard = scope
//!     .invoke("oscova_speech__speech__transcribe", json!({"path": "stella.wav"}))
//!     .await;
//! println!("heard: {}", heard.content); // "please call stella", give or take a word
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! ## Per-user settings
//!
//! A settings resolver is asked at every call, so a change (a user going
//! offline) applies to the next call. API keys are named, not stored: the
//! named credential is resolved through the host's credential resolver.
//!
//! ```
//! use oscova_plugin_speech::{SpeechPlugin, SpeechSettings};
//! use oscova_speech::SpeechProviderConfig;
//!
//! let speech = SpeechPlugin::per_user("/srv/oscova-files").settings(|user| {
//!     if user.id() == "bob" {
//!         // Bob allows a hosted service for transcription.
//!         SpeechSettings::default()
//!             .offline(false)
//!             .recognition(SpeechProviderConfig::new("openai").model("whisper-1"))
//!             .recognition_credential("openai.api_key")
//!     } else {
//!         SpeechSettings::default() // local providers, offline required
//!     }
//! });
//! # drop(speech);
//! ```
//!
//! ## Routing plugin speech providers
//!
//! The tools route through the host's [`SpeechRouters`] service when the
//! host registered one (`PluginHost::builder().service_with(SpeechRouters::from_context)`,
//! as the `oscova` command does): the built-in providers and every speech
//! provider the host's plugins registered, built once at start-up. A
//! plugin registers no host service (the Oscova contract has no such
//! registration), so on a host without one the plugin builds the same
//! pair from the first user scope's context
//! ([`SpeechRouters::from_toolset_context`]) and every later scope of that
//! host shares it.
//!
//! # Network scope
//!
//! Both tools declare `NetworkScope::Internet`: a host may configure a
//! remote provider for a user who allows it, and static metadata must
//! cover that. What keeps speech on the machine is the user's offline
//! setting (on by default), which the router checks before any provider
//! is entered.

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod error;
mod settings;
mod toolset;

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use oscova_core::fs::{self, UserRoot};
use oscova_core::prelude::*;
use oscova_speech::SpeechRouters;

pub use error::SpeechToolError;
pub use settings::{SpeechLimits, SpeechSettings};
pub use toolset::SpeechToolset;

/// The per-user root rules and defaults this plugin shares with
/// `oscova.files` (the same variable, base and directory names, so both
/// plugins share each user's root), from [`oscova_core::fs`].
pub use oscova_core::fs::{DEFAULT_BASE, ROOT_ENV, RootResolver, user_dir_name};

/// Picks a user's [`SpeechSettings`]; asked at every call.
pub type SettingsResolver = Arc<dyn Fn(&UserInfo) -> SpeechSettings + Send + Sync>;

/// The `oscova.speech` plugin: contributes [`SpeechToolset`] to every user
/// with a files root, routed through the host's [`SpeechRouters`].
#[plugin(
    id = "oscova.speech",
    name = "Speech",
    framework = ">=0.1",
    description = "Speak text into WAV files and transcribe WAV files, inside one root directory per user."
)]
#[derive(Clone)]
pub struct SpeechPlugin {
    /// The plugin's own roots; `None` uses the user's files root from the
    /// context, else [`fs::default_base`].
    roots: Option<RootResolver>,
    settings: SettingsResolver,
    limits: SpeechLimits,
    hard_links: bool,
}

impl SpeechPlugin {
    /// Roots chosen by `resolver`; default settings for everyone.
    ///
    /// ```
    /// use std::path::PathBuf;
    /// let speech = oscova_plugin_speech::SpeechPlugin::with_resolver(|user| {
    ///     (user.id() != "guest").then(|| PathBuf::from("/srv/speech").join(user.id()))
    /// });
    /// # drop(speech);
    /// ```
    pub fn with_resolver(
        resolver: impl Fn(&UserInfo) -> Option<PathBuf> + Send + Sync + 'static,
    ) -> Self {
        Self {
            roots: Some(Arc::new(resolver)),
            ..Self::default()
        }
    }

    /// One subdirectory of `base` per user, named by [`user_dir_name`]
    /// (the names `oscova.files` uses, so both plugins can share `base`).
    pub fn per_user(base: impl Into<PathBuf>) -> Self {
        Self::with_resolver(fs::per_user_roots(base))
    }

    /// Each user's settings, from `resolver` (asked at every call).
    #[must_use]
    pub fn settings(
        mut self,
        resolver: impl Fn(&UserInfo) -> SpeechSettings + Send + Sync + 'static,
    ) -> Self {
        self.settings = Arc::new(resolver);
        self
    }

    /// Uses these caps instead of the defaults.
    #[must_use]
    pub fn limits(mut self, limits: SpeechLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Lets the tools read and write files with more than one hard link
    /// (default: refused, since another name of such a file may be outside
    /// the root and no check can tell).
    #[must_use]
    pub fn allow_hard_links(mut self, allow: bool) -> Self {
        self.hard_links = allow;
        self
    }
}

impl Default for SpeechPlugin {
    /// The user's files root from the context (the host's choice); for a
    /// user without one, `$OSCOVA_FILES_ROOT/<user>`, else
    /// `./oscova-files/<user>`. Default settings (local providers, offline
    /// required) for everyone.
    fn default() -> Self {
        Self {
            roots: None,
            settings: Arc::new(|_| SpeechSettings::default()),
            limits: SpeechLimits::default(),
            hard_links: false,
        }
    }
}

impl fmt::Debug for SpeechPlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpeechPlugin")
            .field("own_roots", &self.roots.is_some())
            .field("limits", &self.limits)
            .field("hard_links", &self.hard_links)
            .finish_non_exhaustive()
    }
}

impl AgentPlugin for SpeechPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        let plugin = self.clone();
        // One pair per host: `configure` runs once per host, and every
        // context of one host sees the same providers.
        let fallback: Arc<OnceLock<Arc<SpeechRouters>>> = Arc::default();
        builder.add_toolset(move |ctx: &AgentPluginContext| {
            let Some(root) = fs::root_for(plugin.roots.as_ref(), ctx) else {
                return Err(SpeechToolError::NoRoot {
                    user: ctx.user_id().to_owned(),
                });
            };
            // The host's routers, else this host's pair built from the
            // first context that needs it.
            let routers = ctx.service::<SpeechRouters>().unwrap_or_else(|| {
                fallback
                    .get_or_init(|| Arc::new(SpeechRouters::from_toolset_context(ctx)))
                    .clone()
            });
            Ok(SpeechToolset {
                root: UserRoot::new(root).allow_hard_links(plugin.hard_links),
                user: ctx.user().clone(),
                settings: Arc::clone(&plugin.settings),
                credentials: ctx.credentials().clone(),
                routers,
                limits: plugin.limits.clone(),
            })
        });
    }
}
