//! The provisioning stage: builds the providers and services every user
//! shares, once, at start-up.
//!
//! Rules: providers are built first, plugin by plugin in load order and
//! within a plugin in call order, each plugin's factories sharing one
//! [`ProviderContext`]; a factory that fails or panics is skipped with a
//! diagnostic and the rest are still built. The host's services come next,
//! in the order it added them (plugins register none: the Oscova contract
//! has no builder registration for host services). A service factory sees
//! every provider and the services built before it. There is one service
//! per type; a later one of a type already present is dropped with a
//! diagnostic. Shutdown runs each built provider's `shutdown` once, in
//! reverse order of creation.

use std::any::TypeId;
use std::cell::RefCell;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use super::load::PluginProviders;
use crate::context::{ProviderContext, ServiceContext};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity, panic_message};
use crate::http::HttpClient;
use crate::plugin::ProviderRegistration;
use crate::process::ProcessSpawnPolicy;
use crate::provider::BoxError;
use crate::provider::provisions::{AnyService, Provisions, ShutdownFn};

/// A service factory the host recorded
/// ([`PluginHostBuilder::service_with`](crate::PluginHostBuilder::service_with)).
pub(crate) struct ServiceRegistration {
    type_id: TypeId,
    type_name: &'static str,
    factory: ServiceFactory,
}

type ServiceFactory =
    Box<dyn Fn(&ServiceContext<'_>) -> Result<AnyService, BoxError> + Send + Sync>;

impl ServiceRegistration {
    pub(crate) fn new<T, F, E>(factory: F) -> Self
    where
        T: Send + Sync + 'static,
        F: Fn(&ServiceContext<'_>) -> Result<T, E> + Send + Sync + 'static,
        E: Into<BoxError>,
    {
        Self {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            factory: Box::new(move |ctx| {
                factory(ctx)
                    .map(|s| Arc::new(s) as AnyService)
                    .map_err(Into::into)
            }),
        }
    }

    /// A service that is already built.
    pub(crate) fn value<T: Send + Sync + 'static>(service: T) -> Self {
        let service: AnyService = Arc::new(service);
        Self {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
            factory: Box::new(move |_| Ok(service.clone())),
        }
    }
}

impl fmt::Debug for ServiceRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceRegistration")
            .field("type_name", &self.type_name)
            .finish_non_exhaustive()
    }
}

/// The provisions, built, with the providers' shutdowns in creation order.
pub(crate) struct Provisioned {
    pub(crate) provisions: Arc<Provisions>,
    pub(crate) shutdown: Vec<ShutdownFn>,
}

/// Builds every provider, then every host service, recording a diagnostic
/// for each one left out.
pub(crate) fn build(
    plugins: Vec<PluginProviders>,
    services: Vec<ServiceRegistration>,
    http: &HttpClient,
    spawn: &ProcessSpawnPolicy,
    diagnostics: &mut Vec<Diagnostic>,
) -> Provisioned {
    let mut provisions = Provisions::default();
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
                        &mut provisions,
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

    for registration in &services {
        if provisions.has_service(registration.type_id) {
            diagnostics.push(Diagnostic::new(
                Severity::Warning,
                DiagnosticKind::DuplicateService,
                None,
                format!(
                    "service `{}` dropped: one of that type is already registered",
                    registration.type_name
                ),
            ));
            continue;
        }
        let reports = RefCell::new(Vec::new());
        let ctx = ServiceContext::new(&provisions, http, spawn, Some(&reports));
        let outcome = catch_unwind(AssertUnwindSafe(|| (registration.factory)(&ctx)));
        diagnostics.append(&mut reports.into_inner());
        let reason = match outcome {
            Ok(Ok(service)) => {
                provisions.insert_service(registration.type_id, service);
                continue;
            }
            Ok(Err(e)) => format!("failed: {e}"),
            Err(payload) => format!("panicked: {}", panic_message(&*payload)),
        };
        diagnostics.push(Diagnostic::new(
            Severity::Warning,
            DiagnosticKind::ServiceFailed,
            None,
            format!(
                "service `{}` left out: its factory {reason}",
                registration.type_name
            ),
        ));
    }
    Provisioned {
        provisions: Arc::new(provisions),
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
