//! Oscova for Rust: a plugin framework for AI-agent hosts.
//!
//! Plugin authors annotate plain structs; hosts link plugin crates and get,
//! per user, a catalog of callable tools with JSON Schemas, plus shared model
//! and speech providers.
//!
//! # 1. Write a toolset
//!
//! Every `pub fn` of a `#[toolset]` impl block is a tool. Its doc comment is
//! the description, its parameters the argument object, and what it returns
//! the result.
//!
//! ```
//! use oscova_core::prelude::*;
//!
//! /// Echo tools.
//! pub struct ExampleToolset;
//!
//! #[toolset]
//! impl ExampleToolset {
//!     /// Returns the supplied text unchanged.
//!     #[tool(name = "example_echo")]
//!     pub fn echo(
//!         /// The text to return.
//!         text: String,
//!     ) -> String {
//!         text
//!     }
//! }
//! # fn main() {}
//! ```
//!
//! # 2. Declare a plugin
//!
//! ```
//! # use oscova_core::prelude::*;
//! # pub struct ExampleToolset;
//! # #[toolset] impl ExampleToolset { pub fn echo(text: String) -> String { text } }
//! #[plugin(id = "acme.search", name = "Acme Search", framework = ">=0.1")]
//! pub struct ExampleAgentPlugin;
//!
//! impl AgentPlugin for ExampleAgentPlugin {
//!     fn configure(&self, builder: &mut AgentPluginBuilder) {
//!         builder.add_toolset(|_ctx: &AgentPluginContext| ExampleToolset);
//!     }
//! }
//! # fn main() {}
//! ```
//!
//! # 3. Host it
//!
//! ```
//! # use oscova_core::prelude::*;
//! # pub struct ExampleToolset;
//! # #[toolset] impl ExampleToolset { #[tool(name = "example_echo")] pub fn echo(text: String) -> String { text } }
//! # #[plugin(id = "acme.search")] pub struct ExampleAgentPlugin;
//! # impl AgentPlugin for ExampleAgentPlugin {
//! #     fn configure(&self, b: &mut AgentPluginBuilder) { b.add_toolset(|_: &AgentPluginContext| ExampleToolset); }
//! # }
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! // Every linked plugin, this one first (and kept by the linker).
//! let host = PluginHost::builder()
//!     .also_load(oscova_core::linked_plugins![ExampleAgentPlugin])
//!     .build()?;
//! let scope = host.user_scope(UserInfo::new("alice").with_time_zone("Europe/Berlin"));
//! let result = scope
//!     .invoke("acme_search__example__example_echo", serde_json::json!({"text": "hi"}))
//!     .await;
//! assert_eq!(result.content, "hi");
//! host.shutdown().await;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # 4. Test it
//!
//! The `oscova-test-kit` crate hosts one plugin or one toolset in a line,
//! with test users (time zone, credentials, a files root), calls by short
//! name that record progress and approvals, fake model and speech
//! providers and a loopback HTTP server.
//!
//! # Cargo features
//!
//! All on by default; a plugin names the ones it uses with
//! `default-features = false` (the seed plugin, with `macros` alone, builds
//! 40 crates instead of about 120):
//!
//! - `macros`: `#[toolset]` and `#[plugin]`;
//! - `http`: the scoped [`HttpClient`] (`ctx.http_client()`), over reqwest
//!   and rustls, and the plumbing model and speech back ends share
//!   ([`http::backend`]);
//! - `process`: starting child processes under the spawn policy
//!   ([`ProcessSpawnPolicy::run`](process::ProcessSpawnPolicy::run));
//! - `fs`: the per-user files root's handles ([`fs::UserRoot`]).
//!
//! `ARCHITECTURE.md` in the repository describes the crates, the flow from
//! annotation to invocation, the wire-name rules, the failure semantics and
//! the boundaries.

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

// The contract: what plugins are written against. None of these modules
// imports `host`.
pub mod context;
pub mod interaction;
pub mod plugin;
pub mod provider;
pub mod runtime;
pub mod tool;

// The host: load, publish, provision, scopes, the invoke pipeline.
pub mod host;

// The boundaries and the rules both sides use.
pub mod args;
pub mod diagnostic;
pub mod fs;
pub mod http;
pub mod locality;
pub mod process;
pub mod redact;
pub mod text;
pub mod wire;

// The front door: what most plugin authors and hosts name. Everything
// else lives in the modules above, named by concept.
pub use context::{AgentPluginContext, ProviderContext, UserInfo};
pub use diagnostic::Diagnostic;
pub use host::invoke::InvokeError;
pub use host::{
    ApprovalDecision, ApprovalRequest, HostError, PluginHost, PluginHostBuilder, UserScope,
};
#[cfg(feature = "http")]
pub use http::HttpClient;
pub use plugin::{AgentPlugin, AgentPluginBuilder};
pub use tool::{NetworkScope, ToolApprovalMode, ToolInvocation, ToolProgress, ToolResult, Toolset};

pub use secrecy::{ExposeSecret, SecretString};
pub use tokio_util::sync::CancellationToken;

/// The attribute macros, re-exported from `oscova-macros`.
#[cfg(feature = "macros")]
pub use oscova_macros::{plugin, toolset};

/// The serde, serde_json and schemars this crate uses, for authors who want
/// the same versions.
pub use {schemars, serde, serde_json};

/// What a plugin author usually needs.
pub mod prelude {
    #[cfg(feature = "http")]
    pub use crate::HttpClient;
    pub use crate::plugin::IntoToolset;
    pub use crate::{
        AgentPlugin, AgentPluginBuilder, AgentPluginContext, ApprovalDecision, ApprovalRequest,
        CancellationToken, ExposeSecret, NetworkScope, PluginHost, ProviderContext, SecretString,
        ToolApprovalMode, ToolInvocation, ToolProgress, ToolResult, Toolset, UserInfo,
        linked_plugins,
    };
    #[cfg(feature = "macros")]
    pub use crate::{plugin, toolset};
    pub use serde_json::json;
}

#[doc(hidden)]
/// Not public API. Used by generated code.
pub mod __private {
    pub use crate::args::{ArgError, ArgReader};
    pub use crate::plugin::{AgentPlugin, PluginManifest, PluginRegistration, RegisteredPlugin};
    pub use crate::tool::{
        Dispatched, InputSchemaBuilder, NetworkScope, ToolAnnotations, ToolApprovalMode, ToolInfo,
        ToolInvocation, ToolResult, Toolset, ToolsetInfo,
    };
    pub use inventory;
    /// The metadata's borrowed-or-owned text (`#[tool(prompt_guidelines)]`).
    pub use std::borrow::Cow;
    pub use tokio_util::sync::CancellationToken;
    pub use {schemars, serde, serde_json};

    use std::fmt::Display;
    use std::future::Future;

    // The four traits below are what generated code checks an author's
    // types against, as `<Type as Trait>::method`, with `Type` carrying the
    // author's span: a wrong type is one error on that type. The blanket
    // impls are `do_not_recommend`, so rustc reports the trait and its
    // message once instead of one error per missing serde/schemars bound.

    /// A type a tool parameter may have, as read from the JSON arguments.
    /// Its schema is [`ToolArgumentSchema`]'s: two traits, so a type that
    /// misses one derive is told which.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool parameter: it does not implement `serde::Deserialize`",
        label = "add `#[derive(serde::Deserialize)]` to `{Self}`: the arguments are read into it",
        note = "a parameter type needs both: `#[derive(serde::Deserialize, schemars::JsonSchema)]`"
    )]
    pub trait ToolArgument: Sized {
        /// Reads parameter number `index`.
        fn __take<const N: usize>(
            reader: &mut ArgReader<N>,
            index: usize,
            required: bool,
        ) -> Option<Self>;
    }

    #[diagnostic::do_not_recommend]
    impl<T: serde::de::DeserializeOwned> ToolArgument for T {
        #[inline]
        fn __take<const N: usize>(
            reader: &mut ArgReader<N>,
            index: usize,
            required: bool,
        ) -> Option<Self> {
            reader.take::<T>(index, required)
        }
    }

    /// A type a tool parameter may have, as described in the input schema.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool parameter: it does not implement `schemars::JsonSchema`",
        label = "add `#[derive(schemars::JsonSchema)]` to `{Self}`: the input schema the model reads describes it",
        note = "a parameter type needs both: `#[derive(serde::Deserialize, schemars::JsonSchema)]`"
    )]
    pub trait ToolArgumentSchema {
        /// Adds the parameter `name` to a schema.
        fn __param(builder: &mut InputSchemaBuilder, name: &str, doc: &str, required: bool);
    }

    #[diagnostic::do_not_recommend]
    impl<T: schemars::JsonSchema> ToolArgumentSchema for T {
        #[inline]
        fn __param(builder: &mut InputSchemaBuilder, name: &str, doc: &str, required: bool) {
            builder.param::<T>(name, doc, required);
        }
    }

    /// A type a tool may return.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be returned from a tool",
        label = "a tool returns `T: serde::Serialize`, `Result<T, E: Display>` or `ToolResult`",
        note = "derive it on your own types: `#[derive(serde::Serialize)]`"
    )]
    pub trait ToolOutput {
        /// The value as a successful result.
        fn __to_result(&self) -> ToolResult;
    }

    #[diagnostic::do_not_recommend]
    impl<T: serde::Serialize + ?Sized> ToolOutput for T {
        #[inline]
        fn __to_result(&self) -> ToolResult {
            ToolResult::from_output(self)
        }
    }

    /// An error type a tool may return.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool's error type",
        label = "a tool's error type must implement `std::fmt::Display`",
        note = "its `Display` text is what the model sees"
    )]
    pub trait ToolError {
        /// The error as an error result.
        fn __to_error(&self) -> ToolResult;
    }

    #[diagnostic::do_not_recommend]
    impl<T: Display + ?Sized> ToolError for T {
        #[inline]
        fn __to_error(&self) -> ToolResult {
            ToolResult::from_error(self)
        }
    }

    /// Carries a tool's return type to the output schema probe below.
    pub struct OutputProbe<T: ?Sized>(std::marker::PhantomData<fn(&T)>);

    impl<T: ?Sized> OutputProbe<T> {
        /// A probe for `T` (`const`, unlike `Default`).
        #[allow(clippy::new_without_default)]
        #[inline]
        pub const fn new() -> Self {
            Self(std::marker::PhantomData)
        }
    }

    /// Picked by method lookup on `&OutputProbe<T>` when `T: JsonSchema`.
    pub trait HasOutputSchema {
        /// The schema of the probed type.
        fn __output_schema(&self) -> Option<serde_json::Value>;
    }

    impl<T: schemars::JsonSchema + ?Sized> HasOutputSchema for OutputProbe<T> {
        fn __output_schema(&self) -> Option<serde_json::Value> {
            Some(crate::tool::output_schema_for::<T>())
        }
    }

    /// The fallback, one autoref further away: no schema.
    pub trait NoOutputSchema {
        /// No schema.
        fn __output_schema(&self) -> Option<serde_json::Value>;
    }

    impl<T: ?Sized> NoOutputSchema for &OutputProbe<T> {
        fn __output_schema(&self) -> Option<serde_json::Value> {
            None
        }
    }

    /// A `String` output: the content as it stands.
    #[inline]
    pub fn text(content: String) -> ToolResult {
        ToolResult::text(content)
    }

    /// A result returned as is.
    #[inline]
    pub fn result(result: ToolResult) -> ToolResult {
        result
    }

    /// A pending call.
    #[inline]
    pub fn pending<'a>(fut: impl Future<Output = ToolResult> + Send + 'a) -> Dispatched<'a> {
        Dispatched::Pending(Box::pin(fut))
    }

    /// How `#[plugin]` creates a plugin that is not a unit struct.
    #[diagnostic::on_unimplemented(
        message = "#[plugin] creates `{Self}` with `Default::default()`, but `{Self}` does not implement `Default`",
        label = "derive or implement `Default` for this type, or make it a unit struct"
    )]
    pub trait PluginDefault: Sized {
        /// The plugin value.
        fn __create() -> Self;
    }

    #[diagnostic::do_not_recommend]
    impl<T: Default> PluginDefault for T {
        #[inline]
        fn __create() -> Self {
            T::default()
        }
    }

    /// The plugin created for a registration. Bounded by `RegisteredPlugin`, not
    /// `AgentPlugin`: the `RegisteredPlugin` impl `#[plugin]` writes already
    /// reports a missing `AgentPlugin` impl, once.
    pub fn boxed<P: crate::plugin::RegisteredPlugin>(plugin: P) -> Box<dyn AgentPlugin> {
        Box::new(plugin)
    }
}
