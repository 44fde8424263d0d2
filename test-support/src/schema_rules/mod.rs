//! The documented rules of each model API's tool declarations, as
//! validators that list every rule a schema or an exported entry breaks.
//!
//! Each validator walks the whole output, every schema node with its JSON
//! pointer, and returns one line per broken rule (empty when it complies),
//! so a failing test shows all of them at once:
//! - OpenAI strict mode's "Supported schemas": [`openai_problems`].
//! - The Gemini `Schema` object: [`gemini_problems`].
//! - Anthropic's `input_schema`: [`anthropic_problems`].
//!
//! The entry checks add each API's tool declaration around the schema:
//! OpenAI `{type: "function", function: {name, description, parameters,
//! strict}}` with names `^[a-zA-Z0-9_-]{1,64}$`
//! ([`openai_entry_problems`]), Gemini `{name, description, parameters}`
//! with names that start with a letter or `_` and use `[a-zA-Z0-9_.:-]`, at
//! most 64 ([`gemini_entry_problems`]), Anthropic `{name, description,
//! input_schema}` with names `^[a-zA-Z0-9_-]{1,64}$`
//! ([`anthropic_entry_problems`]), and Oscova's own raw entry
//! ([`raw_entry_problems`]).
//!
//! The rules are written out here from the APIs' documentation, not taken
//! from the exporter they check, so the two can disagree and a test fails.

mod anthropic;
mod entry;
mod gemini;
mod openai;
mod walk;

pub use anthropic::anthropic_problems;
pub use entry::{
    anthropic_entry_problems, gemini_entry_problems, openai_entry_problems, raw_entry_problems,
};
pub use gemini::gemini_problems;
pub use openai::openai_problems;
