//! The attribute macros of Oscova for Rust: `#[toolset]` and `#[plugin]`.
//!
//! Use them through `oscova_core` (`use oscova_core::prelude::*;`); the
//! generated code names `::oscova_core::__private` only, so this crate has
//! no runtime part. Each step has its own module, in the order the macros
//! run them: `attr` (attribute parsing), `ast` (the typed model built from
//! syn), `valid` (checks across items), `expand` (code generation), and
//! `fallback` (a minimal impl emitted beside errors so one mistake does not
//! cause a cascade of follow-on errors); `warning` makes rustc warn about
//! code that compiles but is likely a mistake.

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod ast;
mod attr;
mod ctxt;
#[cfg(test)]
mod doc_keys;
mod expand;
mod fallback;
mod plugin;
mod valid;
mod warning;

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
/// `#[tool(...)]` keys (a test checks this list against the parser's):
///
/// - `name`: the tool segment of the wire name (default: the method name);
/// - `title`: a display name for people, such as `"Search records"`;
/// - `description`: what the model reads (default: the doc comment);
/// - `approval`: `Default`, `Required` or `NotRequired` (default: `Default`);
/// - `network`: `None`, `Local` or `Internet` (default: `None`), what the
///   tool's HTTP client may reach;
/// - `read_only`, `destructive`, `idempotent`, `open_world`: MCP's tool
///   hints, written bare for yes or `= false` for no; not written, they say
///   nothing, except `open_world`, which follows `network` (`Internet` is an
///   open world);
/// - `sequential`: a flag (default: not written, calls overlap); a batch of
///   calls (one model answer's) holding this tool runs one call at a time,
///   in order, instead of all together;
/// - `prompt_snippet`: one line the host's system prompt lists under its
///   tools, as `- {wire name}: {snippet}`;
/// - `prompt_guidelines`: a list of strings, `["...", "..."]`, bullets the
///   host's system prompt adds to its guidelines (the same bullet from
///   several tools shown once).
///
/// Prompt texts are one line each: an empty one, or one with a line break,
/// is a compile error on the string.
///
/// The wire name is `{plugin}__{owner}__{tool}`. The owner is the type name
/// less one trailing `Toolset`; the tool is `name`, else the method name.
/// Each is normalised at compile time by the rule of the `oscova-wire`
/// crate (snake_case; every character outside `[a-z0-9]` becomes `_`; runs
/// of `_` collapse; ends are trimmed), so `#[tool(name = "Search-Records")]`
/// and `#[tool(name = "search__records")]` are both `search_records`: `__`
/// inside a name is normalised, not an error. A name that normalises to
/// nothing is a compile error on it, and so are two tools of one toolset
/// that normalise to the same name.
///
/// Code that compiles but is likely a mistake gets a warning on the
/// method's name (rustc's `deprecated` lint, the one stable way a macro
/// can warn): a tool with no doc comment and no `description` (the model
/// would read an empty description), and a doc-commented fn that is not
/// `pub` (it is not a tool; keep documented helpers in a plain `impl`
/// block). A misspelled key or value is an error naming the one most
/// likely meant (`approval = required`: did you mean `Required`?).
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
///
/// The id is the first segment of every wire name the plugin publishes and
/// is normalised like the others, by the rule of the `oscova-wire` crate:
/// ids written the Oscova way are fine, `#[plugin(id = "Oscova.LocalSpeech")]`
/// publishes `oscova_local_speech__…` and `"Ceo.Probe-Tools"` publishes
/// `ceo_probe_tools__…`. Capitals, dots, dashes, spaces and `__` are
/// normalised, not refused. The manifest keeps the id as written. An id
/// that normalises to nothing (`""`, `"..."`) is a compile error on the
/// literal. Two plugins whose ids normalise alike cannot both load: the host
/// keeps the first (see `PluginHostBuilder::build` for the order) and
/// reports the other.
#[proc_macro_attribute]
pub fn plugin(args: TokenStream, input: TokenStream) -> TokenStream {
    plugin::expand(args.into(), input.into()).into()
}
