//! What the host builds once at start-up and shares with every user:
//! providers by kind and services by type.
//!
//! Rules: providers are built first, plugin by plugin in load order and
//! within a plugin in call order, each plugin's factories sharing one
//! [`ProviderContext`]; a factory that fails or panics is skipped with a
//! diagnostic and the rest are still built. Services come next: the host's
//! own in the order it added them, then plugins' in load order. A service
//! factory sees every provider and the services built before it. There is
//! one service per type; a later one of a type already present is dropped
//! with a diagnostic. Shutdown runs each built provider's `shutdown` once,
//! in reverse order of creation.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::builder::{AnyProvider, AnyService, ProviderRegistration, ServiceRegistration};
use crate::context::{ProviderContext, ServiceContext};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity, panic_message};
use crate::http::HttpClient;
use crate::process::ProcessSpawnPolicy;
use crate::provider::BoxFuture;
use crate::provider::kind::ProviderKind;

/// A provider the host built, with where it came from.
pub struct PublishedProvider<K: ?Sized> {
    plugin_id: &'static str,
    type_name: &'static str,
    provider: Arc<K>,
}

impl<K: ?Sized> PublishedProvider<K> {
    /// The id of the plugin that registered it.
    pub fn plugin_id(&self) -> &'static str {
        self.plugin_id
    }

    /// The Rust type of the provider.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The provider.
    pub fn provider(&self) -> &Arc<K> {
        &self.provider
    }
}

impl<K: ?Sized> Clone for PublishedProvider<K> {
    fn clone(&self) -> Self {
        Self {
            plugin_id: self.plugin_id,
            type_name: self.type_name,
            provider: self.provider.clone(),
        }
    }
}

impl<K: ?Sized> fmt::Debug for PublishedProvider<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublishedProvider")
            .field("plugin_id", &self.plugin_id)
            .field("type_name", &self.type_name)
            .finish_non_exhaustive()
    }
}

/// A provider's shutdown, recorded when it is built.
pub(crate) type ShutdownFn = Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// How a kind's providers are published: monomorphised for the kind when
/// its factory is recorded, so the host stores every kind the same way.
pub(crate) type PublishFn =
    fn(&mut Shared, &'static str, &'static str, AnyProvider) -> Option<ShutdownFn>;

/// Publishes one built provider of kind `K` and returns its shutdown.
pub(crate) fn publish_provider<K: ProviderKind + ?Sized>(
    shared: &mut Shared,
    plugin_id: &'static str,
    type_name: &'static str,
    built: AnyProvider,
) -> Option<ShutdownFn> {
    let provider = *built.downcast::<Arc<K>>().ok()?;
    let stop = provider.clone();
    shared
        .providers
        .entry(TypeId::of::<K>())
        .or_insert_with(|| Box::new(Vec::<PublishedProvider<K>>::new()))
        .downcast_mut::<Vec<PublishedProvider<K>>>()?
        .push(PublishedProvider {
            plugin_id,
            type_name,
            provider,
        });
    Some(Box::new(move || {
        let provider = stop.clone();
        Box::pin(async move { K::shutdown(&provider).await })
    }))
}

/// Providers by kind and services by type, shared by the host, every user
/// scope and every context.
#[derive(Default)]
pub(crate) struct Shared {
    /// `TypeId::of::<K>()` → `Vec<PublishedProvider<K>>`.
    providers: FxHashMap<TypeId, Box<dyn Any + Send + Sync>>,
    /// `TypeId::of::<T>()` → `Arc<T>`.
    services: FxHashMap<TypeId, AnyService>,
}

impl Shared {
    /// The providers of kind `K`, in creation order.
    pub(crate) fn providers<K: ProviderKind + ?Sized>(&self) -> &[PublishedProvider<K>] {
        self.providers
            .get(&TypeId::of::<K>())
            .and_then(|v| v.downcast_ref::<Vec<PublishedProvider<K>>>())
            .map_or(&[], Vec::as_slice)
    }

    /// The service of type `T`, if one was built.
    pub(crate) fn service<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.services
            .get(&TypeId::of::<T>())
            .and_then(|s| s.clone().downcast::<T>().ok())
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared")
            .field("provider_kinds", &self.providers.len())
            .field("services", &self.services.len())
            .finish()
    }
}

/// What one plugin contributes to the shared part.
pub(crate) struct PluginShares {
    pub(crate) plugin_id: &'static str,
    pub(crate) providers: Vec<ProviderRegistration>,
    pub(crate) services: Vec<ServiceRegistration>,
}

/// The shared part, built, with the shutdowns in creation order.
pub(crate) struct Built {
    pub(crate) shared: Arc<Shared>,
    pub(crate) shutdown: Vec<ShutdownFn>,
}

/// Builds every provider, then every service (the host's, then each
/// plugin's), recording a diagnostic for each one left out.
pub(crate) fn build(
    plugins: Vec<PluginShares>,
    host_services: Vec<ServiceRegistration>,
    http: &HttpClient,
    spawn: &ProcessSpawnPolicy,
    diagnostics: &mut Vec<Diagnostic>,
) -> Built {
    let mut shared = Shared::default();
    let mut shutdown = Vec::new();
    for plugin in &plugins {
        // One context per plugin, shared by all its provider factories.
        let ctx = ProviderContext::from_parts(plugin.plugin_id, http.clone(), spawn.clone());
        for registration in &plugin.providers {
            let outcome = catch_unwind(AssertUnwindSafe(|| (registration.factory)(&ctx)));
            let reason = match outcome {
                Ok(Ok(built)) => {
                    let publish = registration.publish_fn();
                    match publish(
                        &mut shared,
                        plugin.plugin_id,
                        registration.type_name(),
                        built,
                    ) {
                        Some(stop) => shutdown.push(stop),
                        None => diagnostics.push(provider_skipped(
                            registration,
                            plugin.plugin_id,
                            "built a provider of another kind",
                        )),
                    }
                    continue;
                }
                Ok(Err(e)) => format!("failed: {e}"),
                Err(payload) => format!("panicked: {}", panic_message(&*payload)),
            };
            diagnostics.push(provider_skipped(
                registration,
                plugin.plugin_id,
                &format!("its factory {reason}"),
            ));
        }
    }

    let host = host_services.iter().map(|r| (None, r));
    let from_plugins = plugins
        .iter()
        .flat_map(|p| p.services.iter().map(|r| (Some(p.plugin_id), r)));
    for (plugin_id, registration) in host.chain(from_plugins) {
        let origin = plugin_id.map_or_else(|| "the host".to_owned(), |p| format!("plugin `{p}`"));
        if shared.services.contains_key(&registration.type_id()) {
            diagnostics.push(Diagnostic::new(
                Severity::Warning,
                DiagnosticKind::DuplicateService,
                plugin_id,
                format!(
                    "service `{}` from {origin} dropped: one of that type is already registered",
                    registration.type_name()
                ),
            ));
            continue;
        }
        let reports = RefCell::new(Vec::new());
        let ctx = ServiceContext::new(plugin_id, &shared, http, spawn, Some(&reports));
        let outcome = catch_unwind(AssertUnwindSafe(|| (registration.factory)(&ctx)));
        diagnostics.append(&mut reports.into_inner());
        let reason = match outcome {
            Ok(Ok(service)) => {
                shared.services.insert(registration.type_id(), service);
                continue;
            }
            Ok(Err(e)) => format!("failed: {e}"),
            Err(payload) => format!("panicked: {}", panic_message(&*payload)),
        };
        diagnostics.push(Diagnostic::new(
            Severity::Warning,
            DiagnosticKind::ServiceFailed,
            plugin_id,
            format!(
                "service `{}` from {origin} left out: its factory {reason}",
                registration.type_name()
            ),
        ));
    }
    Built {
        shared: Arc::new(shared),
        shutdown,
    }
}

fn provider_skipped(
    registration: &ProviderRegistration,
    plugin_id: &'static str,
    reason: &str,
) -> Diagnostic {
    Diagnostic::new(
        Severity::Warning,
        DiagnosticKind::ProviderFailed,
        Some(plugin_id),
        format!(
            "{} provider `{}` of plugin `{plugin_id}` skipped: {reason}",
            registration.kind_name(),
            registration.type_name(),
        ),
    )
}
