//! The `oscova.time` plugin: what time it is for the user, and time
//! arithmetic the model should not do in its head.
//!
//! Tools (wire names), all `NetworkScope::None` and runnable unasked:
//!
//! | wire name | does |
//! |---|---|
//! | `oscova_time__time__now` | the current time in the user's zone (UTC, with a note, when unset) or a given zone |
//! | `oscova_time__time__convert` | a time in another zone |
//! | `oscova_time__time__add_duration` | a time plus (or minus) a duration, DST-aware |
//! | `oscova_time__time__difference` | the time between two times, in calendar units and seconds |
//!
//! Zones are IANA names looked up in the time-zone database bundled into
//! this crate, so answers do not depend on the machine's
//! `/usr/share/zoneinfo`. An unknown name is an error listing close
//! matches.
//!
//! # Tutorial
//!
//! Link the plugin into a host, open a scope for a user with a time zone,
//! and call a tool by its wire name:
//!
//! ```
//! use oscova_core::prelude::*;
//! use oscova_plugin_time::TimePlugin;
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let host = PluginHost::builder()
//!     .plugins(oscova_core::linked_plugins![TimePlugin])
//!     .build()?;
//! let scope = host.user_scope(UserInfo::new("alice").with_time_zone("Europe/Berlin"));
//!
//! let now = scope.invoke("oscova_time__time__now", json!({})).await;
//! assert_eq!(now.details["time"]["zone"], "Europe/Berlin");
//!
//! let r = scope
//!     .invoke(
//!         "oscova_time__time__convert",
//!         json!({"time": "2024-07-01T09:00", "to_zone": "America/New_York"}),
//!     )
//!     .await;
//! assert_eq!(r.details["to"]["time"], "2024-07-01T03:00:00-04:00[America/New_York]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! Times are written `2024-07-01T09:00` (read in the user's zone, or the
//! `zone`/`from_zone` argument), `2024-07-01T09:00:00+02:00`,
//! `2024-07-01T09:00[Europe/Berlin]`, `2024-07-01` (midnight) or `now`.
//! Durations are ISO 8601 (`PT1H30M`) or words (`1 hour 30 minutes`).
//!
//! For deterministic tests, give the toolset a fixed [`Clock`]: build the
//! toolset with [`TimeToolset::new`] in your own plugin, or the plugin with
//! [`TimePlugin::with_clock`] when the host can take a configured plugin.

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod error;
mod parse;
mod toolset;
mod zone;

use std::fmt;

use oscova_core::prelude::*;

pub use error::TimeError;
pub use toolset::{Clock, LargestUnit, TimeToolset, system_clock};

/// The `oscova.time` plugin: contributes [`TimeToolset`] to every user.
///
/// `Default` (what the host uses when it creates the plugin from its
/// registration) reads the system clock.
#[plugin(
    id = "oscova.time",
    name = "Time",
    framework = ">=0.1",
    description = "The current time in the user's zone, zone conversion and duration arithmetic."
)]
#[derive(Clone, Default)]
pub struct TimePlugin {
    clock: Option<Clock>,
}

impl TimePlugin {
    /// A plugin whose toolsets read `clock` instead of the system clock.
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// let fixed = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    /// let plugin = oscova_plugin_time::TimePlugin::with_clock(std::sync::Arc::new(move || fixed));
    /// # let _ = plugin;
    /// ```
    pub fn with_clock(clock: Clock) -> Self {
        Self { clock: Some(clock) }
    }
}

impl fmt::Debug for TimePlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimePlugin")
            .field("fixed_clock", &self.clock.is_some())
            .finish()
    }
}

impl AgentPlugin for TimePlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        let clock = self.clock.clone();
        builder.add_toolset(move |ctx: &AgentPluginContext| {
            let zone = ctx.time_zone().map(str::to_owned);
            TimeToolset::new(zone, clock.clone().unwrap_or_else(system_clock))
        });
    }
}
