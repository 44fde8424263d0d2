//! What a context reads of what the host built once: providers by kind
//! and services by type ([`PublishedProvider`], and the store behind
//! `providers::<dyn K>()` and `service::<T>()`).
//!
//! Rules: the contract owns the store and how a provider of kind `K` is put
//! in it (monomorphised for `K` when the builder records the factory, so
//! the host stores every kind the same way); the host owns building them
//! (`host/provision.rs`). Providers of one kind keep their creation
//! order; there is at most one service per type.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::BoxFuture;
use super::kind::ProviderKind;
use crate::plugin::AnyProvider;

/// A built service, type-erased: an `Arc<T>`.
pub(crate) type AnyService = Arc<dyn Any + Send + Sync>;

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
    fn(&mut Provisions, &'static str, &'static str, AnyProvider) -> Option<ShutdownFn>;

/// Publishes one built provider of kind `K` and returns its shutdown.
pub(crate) fn publish_provider<K: ProviderKind + ?Sized>(
    provisions: &mut Provisions,
    plugin_id: &'static str,
    type_name: &'static str,
    built: AnyProvider,
) -> Option<ShutdownFn> {
    let provider = *built.downcast::<Arc<K>>().ok()?;
    let stop = provider.clone();
    provisions
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

/// The host's provisions: providers by kind and services by type, built
/// once at start-up and read by the host, every user scope and every
/// context.
#[derive(Default)]
pub(crate) struct Provisions {
    /// `TypeId::of::<K>()` → `Vec<PublishedProvider<K>>`.
    providers: FxHashMap<TypeId, Box<dyn Any + Send + Sync>>,
    /// `TypeId::of::<T>()` → `Arc<T>`.
    services: FxHashMap<TypeId, AnyService>,
}

impl Provisions {
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

    /// Whether a service of this type is already there.
    pub(crate) fn has_service(&self, type_id: TypeId) -> bool {
        self.services.contains_key(&type_id)
    }

    /// Adds a built service (the caller checked there was none of its type).
    pub(crate) fn insert_service(&mut self, type_id: TypeId, service: AnyService) {
        self.services.insert(type_id, service);
    }
}

impl fmt::Debug for Provisions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Provisions")
            .field("provider_kinds", &self.providers.len())
            .field("services", &self.services.len())
            .finish()
    }
}
