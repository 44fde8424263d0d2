//! Loading: which plugins, in which order, and what each one's
//! `configure` recorded.
//!
//! Rules: the registrations come from the builder's explicit list (or every
//! linked plugin), plus the ones it expects linked; each manifest is
//! checked (normalised id not empty and not taken, semver version,
//! framework range), then `configure` runs with panics caught. A plugin
//! that fails any of this is skipped with a diagnostic; nothing else
//! stops. `configure` only records factories: nothing is built here.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::FRAMEWORK_VERSION;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity, panic_message};
use crate::plugin::{
    AgentPlugin, AgentPluginBuilder, PluginManifest, PluginRegistration, ProviderRegistration,
    ToolsetRegistration,
};

/// The provider factories one plugin recorded, for provisioning.
pub(crate) struct PluginProviders {
    pub(crate) plugin_id: &'static str,
    pub(crate) providers: Vec<ProviderRegistration>,
}

/// A plugin that loaded.
pub(crate) struct LoadedPlugin {
    pub(crate) manifest: &'static PluginManifest,
    pub(crate) type_name: &'static str,
    pub(crate) segment: String,
    /// Index of this plugin's first toolset slot.
    pub(crate) first_slot: usize,
    pub(crate) slots: usize,
}

/// A toolset factory with the plugin it belongs to.
pub(crate) struct ToolsetSlot {
    pub(crate) plugin: usize,
    pub(crate) registration: ToolsetRegistration,
}

/// What loading produced.
pub(crate) struct Loaded {
    pub(crate) plugins: Vec<LoadedPlugin>,
    pub(crate) slots: Vec<ToolsetSlot>,
    pub(crate) providers: Vec<PluginProviders>,
}

/// Loads `registrations` in order; `instances` are host-configured plugin
/// values used instead of creating one from the registration.
pub(crate) fn load(
    registrations: Vec<PluginRegistration>,
    mut instances: Vec<(PluginRegistration, Box<dyn AgentPlugin>)>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Loaded {
    let mut plugins = Vec::new();
    let mut slots = Vec::new();
    let mut providers = Vec::new();
    for reg in registrations {
        let manifest = reg.manifest();
        let Some(segment) = check_manifest(manifest, &plugins, diagnostics) else {
            continue;
        };
        let instance = instances
            .iter()
            .position(|(r, _)| r.manifest().id == manifest.id && r.type_name() == reg.type_name())
            .map(|i| instances.swap_remove(i).1);
        let configured = catch_unwind(AssertUnwindSafe(|| {
            let plugin = instance.unwrap_or_else(|| reg.create());
            let mut builder = AgentPluginBuilder::new();
            plugin.try_configure(&mut builder).map(|()| builder)
        }));
        let builder = match configured {
            Ok(Ok(builder)) => builder,
            Ok(Err(e)) => {
                diagnostics.push(configure_failed(
                    manifest,
                    &format!("configure failed: {e}"),
                ));
                continue;
            }
            Err(payload) => {
                let reason = format!("configure panicked: {}", panic_message(&*payload));
                diagnostics.push(configure_failed(manifest, &reason));
                continue;
            }
        };
        let parts = builder.into_parts();
        // A plugin speaks for itself only.
        diagnostics.extend(parts.reports.into_iter().map(|mut d| {
            d.plugin = Some(manifest.id.to_owned());
            d
        }));
        let index = plugins.len();
        let first_slot = slots.len();
        let count = parts.toolsets.len();
        slots.extend(parts.toolsets.into_iter().map(|registration| ToolsetSlot {
            plugin: index,
            registration,
        }));
        plugins.push(LoadedPlugin {
            manifest,
            type_name: reg.type_name(),
            segment,
            first_slot,
            slots: count,
        });
        providers.push(PluginProviders {
            plugin_id: manifest.id,
            providers: parts.providers,
        });
    }
    Loaded {
        plugins,
        slots,
        providers,
    }
}

fn configure_failed(manifest: &PluginManifest, reason: &str) -> Diagnostic {
    Diagnostic::new(
        Severity::Error,
        DiagnosticKind::ConfigureFailed,
        Some(manifest.id),
        format!("plugin `{}` skipped: {reason}", manifest.id),
    )
}

/// The load order `PluginHostBuilder::build` documents: `explicit` in its
/// order, then `extra`, then (without `explicit`) every other linked
/// plugin, sorted. A plugin listed twice in `explicit` stays twice, so the
/// second is reported as a duplicate id; a named or linked plugin already
/// in the order is not added again.
pub(crate) fn registrations(
    explicit: Option<&[PluginRegistration]>,
    extra: &[PluginRegistration],
) -> Vec<PluginRegistration> {
    let same = |a: &PluginRegistration, b: &PluginRegistration| {
        a.manifest().id == b.manifest().id && a.type_name() == b.type_name()
    };
    let (mut regs, linked) = match explicit {
        Some(list) => (list.to_vec(), Vec::new()),
        None => (Vec::new(), PluginRegistration::linked().copied().collect()),
    };
    for reg in extra.iter().chain(&linked) {
        if !regs.iter().any(|r| same(r, reg)) {
            regs.push(*reg);
        }
    }
    regs
}

/// Checks a manifest against the framework and earlier plugins; returns the
/// normalised plugin segment, or `None` (with a diagnostic) to skip it.
fn check_manifest(
    manifest: &PluginManifest,
    loaded: &[LoadedPlugin],
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<String> {
    let id = manifest.id;
    let mut skip = |kind, message: String| {
        diagnostics.push(Diagnostic::new(Severity::Error, kind, Some(id), message));
        None
    };
    let segment = crate::wire::normalize_segment(id);
    if segment.is_empty() {
        return skip(
            DiagnosticKind::InvalidManifest,
            format!("plugin id {id:?} is empty once normalised; plugin skipped"),
        );
    }
    if let Some(first) = loaded.iter().find(|p| p.manifest.id == id) {
        return skip(
            DiagnosticKind::DuplicatePluginId,
            format!(
                "plugin id `{id}` is already used by `{}`; a second plugin with that id was skipped",
                first.type_name
            ),
        );
    }
    if let Some(first) = loaded.iter().find(|p| p.segment == segment) {
        return skip(
            DiagnosticKind::DuplicatePluginId,
            format!(
                "plugin id `{id}` has the same wire prefix `{segment}` as `{}`; plugin skipped",
                first.manifest.id
            ),
        );
    }
    if let Err(e) = semver::Version::parse(manifest.version) {
        return skip(
            DiagnosticKind::InvalidManifest,
            format!(
                "plugin `{id}` has version {:?}, which is not semver ({e}); plugin skipped",
                manifest.version
            ),
        );
    }
    if !manifest.framework.trim().is_empty() {
        let req = match semver::VersionReq::parse(manifest.framework) {
            Ok(req) => req,
            Err(e) => {
                return skip(
                    DiagnosticKind::InvalidManifest,
                    format!(
                        "plugin `{id}` has framework range {:?}, which is not a semver requirement ({e}); plugin skipped",
                        manifest.framework
                    ),
                );
            }
        };
        let ours =
            semver::Version::parse(FRAMEWORK_VERSION).unwrap_or(semver::Version::new(0, 0, 0));
        if !req.matches(&ours) {
            return skip(
                DiagnosticKind::IncompatibleFramework,
                format!(
                    "plugin `{id}` needs framework `{}`, but this is {FRAMEWORK_VERSION}; plugin skipped",
                    manifest.framework
                ),
            );
        }
    }
    Some(segment)
}
