//! The extension contract: a type the host registers, one instance per
//! session.
//!
//! Rules: the plugin contract gives plugins no middleware, so extensions
//! are the host's: [`AgentHostBuilder::add_extension`](super::AgentHostBuilder::add_extension)
//! for every session, [`AgentSessionOptions::extension`](super::AgentSessionOptions::extension)
//! for one. Each session makes its own instance from the factory, so
//! instance fields are per conversation. [`Extension::activate`] only
//! registers (handlers, tools, commands); an action member called there is
//! [`AgentError::NotBound`](super::AgentError::NotBound). An activation
//! that fails is recorded as an `extension_error` (event `activate`),
//! what it registered is removed, and the other extensions still load.

use std::sync::Arc;

use super::api::SessionApi;
use super::error::AgentError;

/// A session extension (the peer runtime's `IExtension`).
///
/// ```
/// use oscova_agent::session::agent::{AgentError, Extension, SessionApi, SessionStartEvent};
///
/// #[derive(Default)]
/// struct Greeter;
///
/// impl Extension for Greeter {
///     fn name(&self) -> &str {
///         "greeter"
///     }
///
///     fn activate(&mut self, api: &mut SessionApi) -> Result<(), AgentError> {
///         api.on(|event: SessionStartEvent, ctx| async move {
///             println!("session {} started ({:?})", ctx.session_id()?, event.reason);
///             Ok(event)
///         });
///         Ok(())
///     }
/// }
/// ```
pub trait Extension: Send + 'static {
    /// The extension's name (in errors, command listings, process origins).
    fn name(&self) -> &str;

    /// Registers handlers, tools and commands on `api`.
    fn activate(&mut self, api: &mut SessionApi) -> Result<(), AgentError>;
}

/// Makes one extension instance per session (what
/// [`AgentHostBuilder::add_extension_factory`](super::AgentHostBuilder::add_extension_factory) takes;
/// [`extension_factory`] makes one for a type).
pub type ExtensionFactory = Arc<dyn Fn() -> Box<dyn Extension> + Send + Sync>;

/// The factory of `T::default()` instances.
pub fn extension_factory<T: Extension + Default>() -> ExtensionFactory {
    factory_of::<T>()
}

pub(crate) fn factory_of<T: Extension + Default>() -> ExtensionFactory {
    Arc::new(|| Box::new(T::default()))
}

pub(crate) fn factory_with<T: Extension>(
    make: impl Fn() -> T + Send + Sync + 'static,
) -> ExtensionFactory {
    Arc::new(move || Box::new(make()))
}
