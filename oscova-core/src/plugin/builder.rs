//! The builder a plugin's `configure` fills: read-only lists of
//! factories, in call order, never deduplicated.
//!
//! Factories may return the value or a `Result`; nothing runs while
//! `configure` does. Provider factories run once when the host starts, in
//! load order; toolset factories run once per user scope.
//!
//! Rules: these are the complete registrations, as the Oscova contract has
//! them: toolsets (`add_toolset`, and `add_runtime_toolset` for tools known
//! only at run time) and providers (`add_model_provider`, the two speech
//! forms, and `add_provider` for any other [`ProviderKind`]). There is no
//! registration for host services, middleware, routes or background work
//! ([`report`](AgentPluginBuilder::report) records a load diagnostic, not a
//! registration):
//! services are the host's ([`PluginHostBuilder::service_with`](crate::PluginHostBuilder::service_with)).

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use crate::context::{AgentPluginContext, ProviderContext};
use crate::diagnostic::Diagnostic;
use crate::provider::model::ModelProvider;
use crate::provider::provisions::{PublishFn, publish_provider};
use crate::provider::speech::{SpeechRecognitionProvider, SpeechSynthesisProvider};
use crate::provider::{BoxError, IntoProvider, ProviderKind};
use crate::runtime::{IntoToolHandler, RuntimeToolset};
use crate::tool::{ToolInfo, ToolList, Toolset, ToolsetInfo};

/// What a toolset factory may return: a toolset or a `Result` of one.
#[diagnostic::on_unimplemented(
    message = "a toolset factory returned `{Self}`, which is not a toolset",
    label = "return a `#[toolset]` type, or a `Result` of one",
    note = "a factory that gives some users no toolset returns `Result<T, E>`, not `Option<T>`: an `Err` (`.ok_or(\"why\")`) skips the toolset for that user and the host reports why"
)]
pub trait IntoToolset {
    /// What the factory produces.
    type Output: Toolset;
    /// The toolset, or the factory's error.
    fn into_toolset(self) -> Result<Self::Output, BoxError>;
}

#[diagnostic::do_not_recommend]
impl<T: Toolset> IntoToolset for T {
    type Output = T;
    fn into_toolset(self) -> Result<T, BoxError> {
        Ok(self)
    }
}

impl<T: Toolset, E: Into<BoxError>> IntoToolset for Result<T, E> {
    type Output = T;
    fn into_toolset(self) -> Result<T, BoxError> {
        self.map_err(Into::into)
    }
}

/// A toolset factory: `|ctx: &AgentPluginContext| MyToolset`, or one that
/// returns `Result<MyToolset, E>`. Every such closure or function is one;
/// the trait exists so that a mistake is reported on the factory itself.
#[diagnostic::on_unimplemented(
    message = "this is not a toolset factory",
    label = "a toolset factory is `|ctx: &AgentPluginContext| MyToolset`, or returns `Result<MyToolset, E>`"
)]
pub trait ToolsetFactory<R>: Send + Sync + 'static {
    /// The toolset it builds.
    type Toolset: Toolset;
    /// Builds the toolset for one user, or says why not.
    fn build(&self, ctx: &AgentPluginContext) -> Result<Self::Toolset, BoxError>;
}

impl<F, R> ToolsetFactory<R> for F
where
    F: Fn(&AgentPluginContext) -> R + Send + Sync + 'static,
    R: IntoToolset,
{
    type Toolset = R::Output;

    #[inline]
    fn build(&self, ctx: &AgentPluginContext) -> Result<R::Output, BoxError> {
        self(ctx).into_toolset()
    }
}

pub(crate) type BoxedToolsetFactory =
    Box<dyn Fn(&AgentPluginContext) -> Result<Arc<dyn Toolset>, BoxError> + Send + Sync>;

/// A recorded toolset factory.
pub struct ToolsetRegistration {
    pub(crate) info: RegisteredInfo,
    type_name: &'static str,
    pub(crate) factory: BoxedToolsetFactory,
}

/// A registration's metadata: a `#[toolset]` type's static one, or a
/// runtime toolset's.
pub(crate) enum RegisteredInfo {
    Static(&'static ToolsetInfo),
    Runtime(ToolsetInfo),
}

impl ToolsetRegistration {
    /// The toolset's metadata.
    pub fn info(&self) -> &ToolsetInfo {
        match &self.info {
            RegisteredInfo::Static(info) => info,
            RegisteredInfo::Runtime(info) => info,
        }
    }

    /// The Rust type the factory produces.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl fmt::Debug for ToolsetRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolsetRegistration")
            .field("type_name", &self.type_name)
            .finish_non_exhaustive()
    }
}

/// A built provider, type-erased: an `Arc<K>` for the registration's kind.
pub(crate) type AnyProvider = Box<dyn Any + Send + Sync>;

pub(crate) type ProviderFactory =
    Box<dyn Fn(&ProviderContext) -> Result<AnyProvider, BoxError> + Send + Sync>;

/// A recorded provider factory, of any [`ProviderKind`].
pub struct ProviderRegistration {
    kind: TypeId,
    kind_name: &'static str,
    type_name: &'static str,
    publish: PublishFn,
    pub(crate) factory: ProviderFactory,
}

impl ProviderRegistration {
    /// The Rust type the factory produces.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    /// The kind's name, as [`ProviderKind::NAME`] gives it.
    pub fn kind_name(&self) -> &'static str {
        self.kind_name
    }

    /// Whether this factory builds a provider of kind `K`.
    pub fn is<K: ProviderKind + ?Sized>(&self) -> bool {
        self.kind == TypeId::of::<K>()
    }

    pub(crate) fn publish_fn(&self) -> PublishFn {
        self.publish
    }
}

impl fmt::Debug for ProviderRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderRegistration")
            .field("kind", &self.kind_name)
            .field("type_name", &self.type_name)
            .finish_non_exhaustive()
    }
}

/// Records what a plugin contributes.
///
/// ```
/// use oscova_core::prelude::*;
///
/// pub struct EchoToolset;
/// #[toolset]
/// impl EchoToolset {
///     /// Returns the text.
///     pub fn echo(text: String) -> String { text }
/// }
///
/// let mut builder = AgentPluginBuilder::new();
/// builder
///     .add_toolset(|_ctx: &AgentPluginContext| EchoToolset)
///     .add_toolset(|_ctx: &AgentPluginContext| -> Result<EchoToolset, String> { Ok(EchoToolset) });
/// assert_eq!(builder.toolsets().len(), 2); // never deduplicated
/// ```
#[derive(Debug, Default)]
pub struct AgentPluginBuilder {
    toolsets: Vec<ToolsetRegistration>,
    providers: Vec<ProviderRegistration>,
    reports: Vec<Diagnostic>,
}

impl AgentPluginBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a toolset factory, called once per user scope.
    pub fn add_toolset<F, R>(&mut self, factory: F) -> &mut Self
    where
        // The `Fn` bound lets a closure's parameter go unannotated; the
        // `ToolsetFactory` bound carries the check of what it returns, so
        // that a mistake points at the factory, not at this method.
        F: Fn(&AgentPluginContext) -> R + ToolsetFactory<R>,
    {
        self.toolsets.push(ToolsetRegistration {
            info: RegisteredInfo::Static(<F::Toolset as Toolset>::toolset_info()),
            type_name: std::any::type_name::<F::Toolset>(),
            factory: Box::new(move |ctx| {
                factory.build(ctx).map(|t| Arc::new(t) as Arc<dyn Toolset>)
            }),
        });
        self
    }

    /// Records a toolset defined at run time: its metadata, known now and
    /// published once for all users like a `#[toolset]` type's, and a
    /// factory of its [`ToolHandler`](crate::runtime::ToolHandler), called
    /// once per user scope. See [`runtime`](crate::runtime) for an example.
    pub fn add_runtime_toolset<F, R>(&mut self, info: ToolsetInfo, factory: F) -> &mut Self
    where
        F: Fn(&AgentPluginContext) -> R + Send + Sync + 'static,
        R: IntoToolHandler,
    {
        let tools = match &info.tools {
            ToolList::Runtime(tools) => tools.clone(),
            // A `#[toolset]` type's metadata under a runtime handler: the
            // tools are copied into shared ones, which the handler indexes.
            ToolList::Static(tools) => tools.iter().map(ToolInfo::runtime_copy).collect(),
        };
        let info = ToolsetInfo {
            tools: ToolList::Runtime(tools.clone()),
            ..info
        };
        self.toolsets.push(ToolsetRegistration {
            info: RegisteredInfo::Runtime(info),
            type_name: std::any::type_name::<R::Output>(),
            factory: Box::new(move |ctx| {
                factory(ctx).into_handler().map(|handler| {
                    Arc::new(RuntimeToolset {
                        handler,
                        tools: tools.clone(),
                    }) as Arc<dyn Toolset>
                })
            }),
        });
        self
    }

    /// Records a provider factory of kind `K`, called once at start-up.
    /// The named forms below ([`add_model_provider`](Self::add_model_provider)
    /// and the speech ones) are this method for their kind.
    pub fn add_provider<K, F, R>(&mut self, factory: F) -> &mut Self
    where
        K: ProviderKind + ?Sized,
        F: Fn(&ProviderContext) -> R + Send + Sync + 'static,
        R: IntoProvider<K>,
    {
        self.providers.push(ProviderRegistration {
            kind: TypeId::of::<K>(),
            kind_name: K::NAME,
            type_name: std::any::type_name::<R::Output>(),
            publish: publish_provider::<K>,
            factory: Box::new(move |ctx| {
                factory(ctx)
                    .into_provider()
                    .map(|p| Box::new(p) as AnyProvider)
            }),
        });
        self
    }

    /// Records a model provider factory, called once at start-up.
    pub fn add_model_provider<F, R>(&mut self, factory: F) -> &mut Self
    where
        F: Fn(&ProviderContext) -> R + Send + Sync + 'static,
        R: IntoProvider<dyn ModelProvider>,
    {
        self.add_provider::<dyn ModelProvider, F, R>(factory)
    }

    /// Records a speech recognition provider factory.
    pub fn add_speech_recognition_provider<F, R>(&mut self, factory: F) -> &mut Self
    where
        F: Fn(&ProviderContext) -> R + Send + Sync + 'static,
        R: IntoProvider<dyn SpeechRecognitionProvider>,
    {
        self.add_provider::<dyn SpeechRecognitionProvider, F, R>(factory)
    }

    /// Records a speech synthesis provider factory.
    pub fn add_speech_synthesis_provider<F, R>(&mut self, factory: F) -> &mut Self
    where
        F: Fn(&ProviderContext) -> R + Send + Sync + 'static,
        R: IntoProvider<dyn SpeechSynthesisProvider>,
    {
        self.add_provider::<dyn SpeechSynthesisProvider, F, R>(factory)
    }

    /// Says what this plugin left out while it configured, for an
    /// operator: a source of tools it could not use, say, when the rest of
    /// the plugin still works. This is not a registration (nothing is
    /// built from it): the host records it among its load
    /// [`diagnostics`](crate::PluginHost::diagnostics), with this plugin's
    /// id, as it does a `configure` that failed. Failures a user can
    /// correct (a credential not set) belong in the tool call instead,
    /// with guidance.
    ///
    /// ```
    /// use oscova_core::prelude::*;
    /// use oscova_core::diagnostic::{Diagnostic, DiagnosticKind};
    ///
    /// #[plugin(id = "demo.partial")]
    /// pub struct PartialPlugin;
    /// impl AgentPlugin for PartialPlugin {
    ///     fn configure(&self, b: &mut AgentPluginBuilder) {
    ///         b.report(Diagnostic::warning(
    ///             DiagnosticKind::Other("source_unreachable"),
    ///             None,
    ///             "the `archive` source is unreachable; its tools are left out",
    ///         ));
    ///     }
    /// }
    ///
    /// let host = PluginHost::builder().plugins(oscova_core::linked_plugins![PartialPlugin]).build()?;
    /// assert_eq!(host.diagnostics()[0].plugin.as_deref(), Some("demo.partial"));
    /// # Ok::<(), oscova_core::HostError>(())
    /// ```
    pub fn report(&mut self, diagnostic: Diagnostic) -> &mut Self {
        self.reports.push(diagnostic);
        self
    }

    /// What the plugin [`report`](Self::report)ed, in call order.
    pub fn reports(&self) -> &[Diagnostic] {
        &self.reports
    }

    /// The recorded toolsets, in call order.
    pub fn toolsets(&self) -> &[ToolsetRegistration] {
        &self.toolsets
    }

    /// The recorded providers of every kind, in call order.
    pub fn providers(&self) -> &[ProviderRegistration] {
        &self.providers
    }

    pub(crate) fn into_parts(self) -> BuilderParts {
        BuilderParts {
            toolsets: self.toolsets,
            providers: self.providers,
            reports: self.reports,
        }
    }
}

pub(crate) struct BuilderParts {
    pub(crate) toolsets: Vec<ToolsetRegistration>,
    pub(crate) providers: Vec<ProviderRegistration>,
    pub(crate) reports: Vec<Diagnostic>,
}
