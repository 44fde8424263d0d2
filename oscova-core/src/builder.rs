//! The builder a plugin's `configure` fills: four read-only lists of
//! factories, in call order, never deduplicated.
//!
//! Factories may return the value or a `Result`; nothing runs until the
//! host publishes (providers) or builds a user scope (toolsets).

use std::fmt;
use std::sync::Arc;

use crate::context::{AgentPluginContext, ProviderContext};
use crate::provider::model::ModelProvider;
use crate::provider::speech::{SpeechRecognitionProvider, SpeechSynthesisProvider};
use crate::tool::{Toolset, ToolsetInfo};

/// A boxed error from a factory.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

macro_rules! factory_output {
    ($(#[$doc:meta])* $name:ident, $bound:path) => {
        $(#[$doc])*
        pub trait $name {
            /// What the factory produces.
            type Output: $bound;
            /// The value, or the factory's error.
            fn into_output(self) -> Result<Self::Output, BoxError>;
        }

        impl<T: $bound> $name for T {
            type Output = T;
            fn into_output(self) -> Result<T, BoxError> {
                Ok(self)
            }
        }

        impl<T: $bound, E: Into<BoxError>> $name for Result<T, E> {
            type Output = T;
            fn into_output(self) -> Result<T, BoxError> {
                self.map_err(Into::into)
            }
        }
    };
}

factory_output!(
    /// What a toolset factory may return: a toolset or a `Result` of one.
    IntoToolset,
    Toolset
);
factory_output!(
    /// What a model provider factory may return.
    IntoModelProvider,
    ModelProvider
);
factory_output!(
    /// What a speech recognition provider factory may return.
    IntoRecognitionProvider,
    SpeechRecognitionProvider
);
factory_output!(
    /// What a speech synthesis provider factory may return.
    IntoSynthesisProvider,
    SpeechSynthesisProvider
);

pub(crate) type ToolsetFactory =
    Box<dyn Fn(&AgentPluginContext) -> Result<Arc<dyn Toolset>, BoxError> + Send + Sync>;

/// A recorded toolset factory.
pub struct ToolsetRegistration {
    info: &'static ToolsetInfo,
    type_name: &'static str,
    pub(crate) factory: ToolsetFactory,
}

impl ToolsetRegistration {
    /// The toolset's static metadata.
    pub fn info(&self) -> &'static ToolsetInfo {
        self.info
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

pub(crate) type ProviderFactory<P> =
    Box<dyn Fn(&ProviderContext) -> Result<Arc<P>, BoxError> + Send + Sync>;

/// A recorded provider factory.
pub struct ProviderRegistration<P: ?Sized> {
    type_name: &'static str,
    pub(crate) factory: ProviderFactory<P>,
}

impl<P: ?Sized> ProviderRegistration<P> {
    /// The Rust type the factory produces.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl<P: ?Sized> fmt::Debug for ProviderRegistration<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderRegistration")
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
    model_providers: Vec<ProviderRegistration<dyn ModelProvider>>,
    recognition: Vec<ProviderRegistration<dyn SpeechRecognitionProvider>>,
    synthesis: Vec<ProviderRegistration<dyn SpeechSynthesisProvider>>,
}

impl AgentPluginBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a toolset factory, called once per user scope.
    pub fn add_toolset<F, R>(&mut self, factory: F) -> &mut Self
    where
        F: Fn(&AgentPluginContext) -> R + Send + Sync + 'static,
        R: IntoToolset,
    {
        self.toolsets.push(ToolsetRegistration {
            info: <R::Output as Toolset>::toolset_info(),
            type_name: std::any::type_name::<R::Output>(),
            factory: Box::new(move |ctx| {
                factory(ctx)
                    .into_output()
                    .map(|t| Arc::new(t) as Arc<dyn Toolset>)
            }),
        });
        self
    }

    /// Records a model provider factory, called once at start-up.
    pub fn add_model_provider<F, R>(&mut self, factory: F) -> &mut Self
    where
        F: Fn(&ProviderContext) -> R + Send + Sync + 'static,
        R: IntoModelProvider,
    {
        self.model_providers.push(ProviderRegistration {
            type_name: std::any::type_name::<R::Output>(),
            factory: Box::new(move |ctx| {
                factory(ctx)
                    .into_output()
                    .map(|p| Arc::new(p) as Arc<dyn ModelProvider>)
            }),
        });
        self
    }

    /// Records a speech recognition provider factory.
    pub fn add_speech_recognition_provider<F, R>(&mut self, factory: F) -> &mut Self
    where
        F: Fn(&ProviderContext) -> R + Send + Sync + 'static,
        R: IntoRecognitionProvider,
    {
        self.recognition.push(ProviderRegistration {
            type_name: std::any::type_name::<R::Output>(),
            factory: Box::new(move |ctx| {
                factory(ctx)
                    .into_output()
                    .map(|p| Arc::new(p) as Arc<dyn SpeechRecognitionProvider>)
            }),
        });
        self
    }

    /// Records a speech synthesis provider factory.
    pub fn add_speech_synthesis_provider<F, R>(&mut self, factory: F) -> &mut Self
    where
        F: Fn(&ProviderContext) -> R + Send + Sync + 'static,
        R: IntoSynthesisProvider,
    {
        self.synthesis.push(ProviderRegistration {
            type_name: std::any::type_name::<R::Output>(),
            factory: Box::new(move |ctx| {
                factory(ctx)
                    .into_output()
                    .map(|p| Arc::new(p) as Arc<dyn SpeechSynthesisProvider>)
            }),
        });
        self
    }

    /// The recorded toolsets, in call order.
    pub fn toolsets(&self) -> &[ToolsetRegistration] {
        &self.toolsets
    }

    /// The recorded model providers, in call order.
    pub fn model_providers(&self) -> &[ProviderRegistration<dyn ModelProvider>] {
        &self.model_providers
    }

    /// The recorded speech recognition providers, in call order.
    pub fn speech_recognition_providers(
        &self,
    ) -> &[ProviderRegistration<dyn SpeechRecognitionProvider>] {
        &self.recognition
    }

    /// The recorded speech synthesis providers, in call order.
    pub fn speech_synthesis_providers(
        &self,
    ) -> &[ProviderRegistration<dyn SpeechSynthesisProvider>] {
        &self.synthesis
    }

    pub(crate) fn into_parts(self) -> BuilderParts {
        BuilderParts {
            toolsets: self.toolsets,
            model_providers: self.model_providers,
            recognition: self.recognition,
            synthesis: self.synthesis,
        }
    }
}

pub(crate) struct BuilderParts {
    pub(crate) toolsets: Vec<ToolsetRegistration>,
    pub(crate) model_providers: Vec<ProviderRegistration<dyn ModelProvider>>,
    pub(crate) recognition: Vec<ProviderRegistration<dyn SpeechRecognitionProvider>>,
    pub(crate) synthesis: Vec<ProviderRegistration<dyn SpeechSynthesisProvider>>,
}
