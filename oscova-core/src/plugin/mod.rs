//! Plugins: a manifest, a `configure` method, and a link-time registration.
//!
//! `#[plugin(id = "...")]` implements [`RegisteredPlugin`] for a type that
//! implements [`AgentPlugin`] and submits its [`PluginRegistration`] to
//! `inventory`, so every linked plugin crate is found without a list.
//! A linker drops a crate that nothing references, registration and all;
//! [`linked_plugins!`](crate::linked_plugins) references each crate so the
//! host can register it explicitly whatever the linker did. Nor does the
//! order the linker lays crates out in mean anything:
//! [`PluginRegistration::linked`] sorts what it collected, so load order
//! (and which of two colliding plugins is kept) is the same in every build.

use std::fmt;

mod builder;

use crate::provider::BoxError;
pub use builder::{
    AgentPluginBuilder, IntoToolset, ProviderRegistration, ToolsetFactory, ToolsetRegistration,
};
pub(crate) use builder::{AnyProvider, RegisteredInfo};

/// What a plugin says about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginManifest {
    /// A stable, unique id such as `acme.search`. Normalised like every
    /// wire-name segment, it is the prefix of the plugin's wire names
    /// (`Oscova.LocalSpeech` publishes `oscova_local_speech__…`); any text
    /// that normalises to something is an id. Two plugins whose ids
    /// normalise alike cannot both load: the first in load order is kept
    /// and the other reported.
    pub id: &'static str,
    /// A display name.
    pub name: &'static str,
    /// The plugin's version (semver).
    pub version: &'static str,
    /// What the plugin does.
    pub description: &'static str,
    /// The framework versions it works with, as a semver requirement
    /// (`>=0.1`); empty means any.
    pub framework: &'static str,
}

impl PluginManifest {
    /// A manifest with only an id; the rest empty.
    pub const fn new(id: &'static str) -> Self {
        Self {
            id,
            name: id,
            version: "0.0.0",
            description: "",
            framework: "",
        }
    }
}

/// A plugin: declares the toolsets and providers it contributes.
///
/// `configure` only records factories; nothing is created, started or
/// called while it runs. A plugin whose configuration can fail implements
/// [`try_configure`](Self::try_configure) instead. An error or a panic
/// skips the plugin with a diagnostic; other plugins still load.
///
/// # The contract's "null" rows
///
/// The Oscova contract has two failure rows about null. Neither can happen
/// in Rust, and what can happen instead is handled like its neighbours.
///
/// *"A null contribution factory throws during Configure."* A factory is a
/// closure or function taken by value; there is no null one, and `None` is
/// not a factory, so the mistake does not compile:
///
/// ```compile_fail,E0277
/// # use oscova_core::prelude::*;
/// # pub struct EchoToolset;
/// # #[toolset] impl EchoToolset { /** Echoes. */ pub fn echo(text: String) -> String { text } }
/// # let mut builder = AgentPluginBuilder::new();
/// let factory: Option<fn(&AgentPluginContext) -> EchoToolset> = None;
/// builder.add_toolset(factory);
/// ```
///
/// *"A factory that returns null cannot produce a valid toolset and fails
/// when Oscova publishes the tools."* A factory returns its toolset or
/// provider, or a `Result` of one; an `Option` is not accepted, so there is
/// no null to return:
///
/// ```compile_fail,E0277
/// # use oscova_core::prelude::*;
/// # pub struct EchoToolset;
/// # #[toolset] impl EchoToolset { /** Echoes. */ pub fn echo(text: String) -> String { text } }
/// # let mut builder = AgentPluginBuilder::new();
/// builder.add_toolset(|_: &AgentPluginContext| -> Option<EchoToolset> { None });
/// ```
///
/// A factory that cannot build what it registered returns `Err` (or
/// panics), with a reason the operator can act on. Publication does not
/// depend on it: a toolset's tools are known from its type at compile time
/// and are published before any toolset factory runs. The `Err` is
/// reported when a user scope is assembled, the factory's first chance to
/// fail: that toolset is skipped for that user only, with a
/// `ToolsetFailed` diagnostic on the scope, and its tools answer that user
/// with an error result. A provider factory's `Err` is the contract's
/// "provider factory throws or returns null" row: that provider is skipped
/// with a `ProviderFailed` warning, and later providers are still built.
///
/// ```
/// # use oscova_core::prelude::*;
/// # pub struct EchoToolset;
/// # #[toolset] impl EchoToolset { /** Echoes. */ pub fn echo(text: String) -> String { text } }
/// # let mut builder = AgentPluginBuilder::new();
/// builder.add_toolset(|ctx: &AgentPluginContext| -> Result<EchoToolset, String> {
///     Err(format!("{} has no licence for the echo service", ctx.user_id()))
/// });
/// assert_eq!(builder.toolsets().len(), 1); // recorded; nothing ran
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `AgentPlugin`",
    label = "a plugin type must implement `AgentPlugin`",
    note = "add `impl AgentPlugin for {Self} {{ fn configure(&self, builder: &mut AgentPluginBuilder) {{ ... }} }}`"
)]
pub trait AgentPlugin: Send + Sync + 'static {
    /// Records this plugin's contributions.
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        let _ = builder;
    }

    /// Records this plugin's contributions, or says why it cannot. The host
    /// calls this; the default calls [`configure`](Self::configure).
    fn try_configure(&self, builder: &mut AgentPluginBuilder) -> Result<(), BoxError> {
        self.configure(builder);
        Ok(())
    }
}

/// Implemented by `#[plugin]`: the manifest and registration of a type.
pub trait RegisteredPlugin: AgentPlugin + Sized {
    /// The manifest.
    fn manifest() -> &'static PluginManifest;
    /// The registration the host uses to create the plugin.
    fn registration() -> PluginRegistration;
}

/// How the host finds and creates one plugin.
#[derive(Clone, Copy)]
pub struct PluginRegistration {
    manifest: &'static PluginManifest,
    type_name: &'static str,
    create: fn() -> Box<dyn AgentPlugin>,
}

impl PluginRegistration {
    /// A registration; `#[plugin]` writes these.
    pub const fn new(
        manifest: &'static PluginManifest,
        type_name: &'static str,
        create: fn() -> Box<dyn AgentPlugin>,
    ) -> Self {
        Self {
            manifest,
            type_name,
            create,
        }
    }

    /// The registration of a plugin type.
    pub fn of<P: RegisteredPlugin>() -> Self {
        P::registration()
    }

    /// The manifest.
    pub fn manifest(&self) -> &'static PluginManifest {
        self.manifest
    }

    /// The Rust type behind the plugin.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// Creates the plugin value.
    pub fn create(&self) -> Box<dyn AgentPlugin> {
        (self.create)()
    }

    /// Every registration linked into this binary, sorted by normalised
    /// id, then type name, then id as written.
    ///
    /// `inventory` yields registrations in whatever order the linker laid
    /// the crates out, which changes with the build; the sort makes the
    /// order, and with it which of two plugins with one id or wire-name
    /// prefix is "first", the same in every build that links the same
    /// plugins.
    ///
    /// ```
    /// use oscova_core::prelude::*;
    /// use oscova_core::plugin::PluginRegistration;
    ///
    /// #[plugin(id = "sorted.zeta")]
    /// pub struct Zeta;
    /// impl AgentPlugin for Zeta {}
    ///
    /// #[plugin(id = "Sorted.Alpha")]
    /// pub struct Alpha;
    /// impl AgentPlugin for Alpha {}
    ///
    /// let ids: Vec<_> = PluginRegistration::linked()
    ///     .map(|r| r.manifest().id)
    ///     .filter(|id| id.to_lowercase().starts_with("sorted."))
    ///     .collect();
    /// // `sorted_alpha` before `sorted_zeta`, whatever the linker did.
    /// assert_eq!(ids, ["Sorted.Alpha", "sorted.zeta"]);
    /// ```
    pub fn linked() -> impl Iterator<Item = &'static PluginRegistration> {
        let mut linked: Vec<&'static PluginRegistration> =
            inventory::iter::<PluginRegistration>.into_iter().collect();
        linked.sort_by_cached_key(|r| {
            (
                oscova_wire::normalize_segment(r.manifest.id),
                r.type_name,
                r.manifest.id,
            )
        });
        linked.into_iter()
    }
}

impl fmt::Debug for PluginRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginRegistration")
            .field("id", &self.manifest.id)
            .field("type_name", &self.type_name)
            .finish_non_exhaustive()
    }
}

inventory::collect!(PluginRegistration);

/// Registrations of plugin types, referenced by path so the linker keeps
/// their crates. Hand the list to
/// [`PluginHostBuilder::plugins`](crate::PluginHostBuilder::plugins) or
/// [`PluginHostBuilder::also_load`](crate::PluginHostBuilder::also_load).
///
/// ```
/// use oscova_core::prelude::*;
///
/// #[plugin(id = "demo.one")]
/// pub struct One;
/// impl AgentPlugin for One {
///     fn configure(&self, _: &mut AgentPluginBuilder) {}
/// }
///
/// let list = oscova_core::linked_plugins![One];
/// assert_eq!(list[0].manifest().id, "demo.one");
/// ```
#[macro_export]
macro_rules! linked_plugins {
    ($($plugin:path),* $(,)?) => {
        [$(<$plugin as $crate::plugin::RegisteredPlugin>::registration()),*]
    };
}
