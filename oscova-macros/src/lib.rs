//! The attribute macros of Oscova for Rust: `#[toolset]` and `#[plugin]`.
//!
//! Use them through `oscova_core` (`use oscova_core::prelude::*;`); the
//! generated code names `::oscova_core::__private` only, so this crate has
//! no runtime part. Each step has its own module, in the order the macros
//! run them: `attr` (attribute parsing), `ast` (the typed model built from
//! syn), `valid` (checks across items), `expand` (code generation), and
//! `fallback` (a minimal impl emitted beside errors so one mistake does not
//! cause a cascade of follow-on errors).

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod ast;
mod attr;
mod ctxt;
mod expand;
mod fallback;
mod plugin;
mod valid;

use proc_macro::TokenStream;

/// Turns every `pub fn` of an inherent impl block into a tool.
///
/// ```ignore
/// #[toolset]
/// impl WeatherToolset {
///     /// Today's forecast for a city.
///     #[tool(name = "forecast", approval = NotRequired, network = Internet)]
///     pub async fn forecast(&self, /** The city. */ city: String) -> Result<String, MyError> { ... }
/// }
/// ```
///
/// `#[tool(...)]` keys: `name`, `description`, `approval` (`Default`,
/// `Required`, `NotRequired`) and `network` (`None`, `Local`, `Internet`).
#[proc_macro_attribute]
pub fn toolset(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::toolset(args.into(), input.into()).into()
}

/// Registers a type implementing `AgentPlugin` as a linked plugin.
///
/// ```ignore
/// #[plugin(id = "acme.search", name = "Acme Search", framework = ">=0.1")]
/// pub struct AcmePlugin;
/// ```
///
/// Keys: `id` (required), `name`, `version` (default: the crate's),
/// `description`, `framework` (a semver requirement on the framework).
#[proc_macro_attribute]
pub fn plugin(args: TokenStream, input: TokenStream) -> TokenStream {
    plugin::expand(args.into(), input.into()).into()
}
