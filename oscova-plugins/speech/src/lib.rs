//! The `oscova.speech` plugin: text to speech into the user's files, and
//! speech in the user's files to text, through the speech routers.
//!
//! | wire name | does | approval |
//! |---|---|---|
//! | `oscova_speech__speech__speak` | speaks `text` into a WAV file at `path` (`voice`, `provider`, `overwrite`, `create_dirs` optional) | **required** |
//! | `oscova_speech__speech__transcribe` | returns the words in the WAV file at `path` (`provider` optional) | not required |
//!
//! Paths follow the rules of [`oscova_core::fs`], as for `oscova.files`,
//! in the same per-user root by default: relative to the root, no `..`, no
//! absolute paths, no symbolic links that lead out, parent directories
//! checked. Each user's
//! [`SpeechSettings`] choose the providers and whether speech must stay on
//! this machine; the default is flite (`kal16`) and pocketsphinx with
//! offline operation required.
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
//!     .plugins([])
//!     .plugin_instance(speech)
//!     .approval_handler(|_: &oscova_core::ApprovalRequest<'_>| true)
//!     .build()?;
//! let scope = host.user_scope(UserInfo::new("alice"))?;
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
//! Without more wiring the tools route to the built-in providers (`flite`,
//! `pocketsphinx`, `openai`). To route the speech providers of the host's
//! plugins too, keep a clone of the plugin (clones share their routers) and
//! give it the host's routers once the host is built:
//!
//! ```no_run
//! use oscova_core::prelude::*;
//! use oscova_plugin_speech::SpeechPlugin;
//!
//! let speech = SpeechPlugin::default();
//! let host = PluginHost::builder().plugin_instance(speech.clone()).build()?;
//! speech.set_routers_from_host(&host); // SpeechRouters::from_host, shared by every scope
//! # Ok::<(), oscova_core::HostError>(())
//! ```
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
mod routers;
mod settings;
mod toolset;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use oscova_core::PluginHost;
use oscova_core::fs::{self, UserRoot};
use oscova_core::prelude::*;
use oscova_speech::SpeechRouters;

pub use error::SpeechToolError;
pub use settings::{SpeechLimits, SpeechSettings};
pub use toolset::SpeechToolset;

use routers::RouterSlot;

/// The per-user root rules and defaults this plugin shares with
/// `oscova.files` (the same variable, base and directory names, so both
/// plugins share each user's root), from [`oscova_core::fs`].
pub use oscova_core::fs::{DEFAULT_BASE, ROOT_ENV, RootResolver, user_dir_name};

/// Picks a user's [`SpeechSettings`]; asked at every call.
pub type SettingsResolver = Arc<dyn Fn(&UserInfo) -> SpeechSettings + Send + Sync>;

/// The `oscova.speech` plugin: contributes [`SpeechToolset`] to every user
/// its root resolver gives a root. Clones share their routers (see
/// [`set_routers`](Self::set_routers)).
#[plugin(
    id = "oscova.speech",
    name = "Speech",
    framework = ">=0.1",
    description = "Speak text into WAV files and transcribe WAV files, inside one root directory per user."
)]
#[derive(Clone)]
pub struct SpeechPlugin {
    roots: RootResolver,
    settings: SettingsResolver,
    routers: RouterSlot,
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
            roots: Arc::new(resolver),
            settings: Arc::new(|_| SpeechSettings::default()),
            routers: RouterSlot::default(),
            limits: SpeechLimits::default(),
            hard_links: false,
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

    /// Routes through `routers` (builder form of [`set_routers`](Self::set_routers)).
    #[must_use]
    pub fn routers(self, routers: Arc<SpeechRouters>) -> Self {
        self.set_routers(routers);
        self
    }

    /// Routes every later call, in every scope and through every clone of
    /// this plugin, through `routers` instead of the built-in-only routers.
    /// Call it after building the host, with routers built from it, to
    /// route the host's plugin speech providers too.
    pub fn set_routers(&self, routers: Arc<SpeechRouters>) {
        self.routers.set(routers);
    }

    /// [`set_routers`](Self::set_routers) with
    /// [`SpeechRouters::from_host`]: the built-in providers (on the host's
    /// HTTP client and spawn policy) and every speech provider the host's
    /// plugins registered. Returns the routers, whose `diagnostics()` list
    /// providers dropped in type-key collisions.
    pub fn set_routers_from_host(&self, host: &PluginHost) -> Arc<SpeechRouters> {
        let routers = routers::host_routers(host);
        self.set_routers(Arc::clone(&routers));
        routers
    }
}

impl Default for SpeechPlugin {
    /// `$OSCOVA_FILES_ROOT/<user>`, else `./oscova-files/<user>`; default
    /// settings (local providers, offline required) for everyone.
    fn default() -> Self {
        Self::per_user(fs::default_base())
    }
}

impl fmt::Debug for SpeechPlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpeechPlugin")
            .field("routers", &self.routers)
            .field("limits", &self.limits)
            .field("hard_links", &self.hard_links)
            .finish_non_exhaustive()
    }
}

impl AgentPlugin for SpeechPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        let plugin = self.clone();
        builder.add_toolset(
            move |ctx: &AgentPluginContext| match (plugin.roots)(ctx.user()) {
                Some(root) => Ok(SpeechToolset {
                    root: UserRoot::new(root).allow_hard_links(plugin.hard_links),
                    user: ctx.user().clone(),
                    settings: Arc::clone(&plugin.settings),
                    credentials: ctx.credentials().clone(),
                    fallback: plugin.routers.fallback(ctx),
                    routers: plugin.routers.clone(),
                    limits: plugin.limits.clone(),
                }),
                None => Err(SpeechToolError::NoRoot {
                    user: ctx.user_id().to_owned(),
                }),
            },
        );
    }
}
