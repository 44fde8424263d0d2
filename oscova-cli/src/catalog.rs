//! A tool catalog exported in the shape each model API takes.
//!
//! Rules: every tool given is accounted for, either as an entry in
//! [`Catalog::tools`] or, when the profile cannot express its schema or its
//! name, in [`Catalog::unsupported`] with the reason; none is dropped
//! silently. Entries keep the catalog's order. Schemas go through
//! [`oscova_agent::profile::export_schema`] and nothing else, so the rules of each
//! profile are the ones documented there.

use oscova_agent::profile::{SchemaProfile, export_schema};
use oscova_core::host::PublishedTool;
use serde::Serialize;
use serde_json::{Value, json};

/// One profile's export of a list of tools.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Catalog {
    /// The profile's name (`raw`, `openai`, `gemini`, `anthropic`).
    pub profile: &'static str,
    /// One entry per exportable tool, in the API's own shape:
    ///
    /// - `raw`: `{name, title?, description, plugin, approval,
    ///   network_scope, annotations, input_schema, output_schema?}`, the
    ///   schemas as the tool produced them, `title` and `output_schema`
    ///   only when the tool has them, `annotations` the hints it declares
    ///   (`read_only`, `destructive`, `idempotent`, `open_world`);
    /// - `openai`: `{type: "function", function: {name, description,
    ///   parameters, strict: true}}`;
    /// - `gemini`: `{name, description, parameters}`;
    /// - `anthropic`: `{name, description, input_schema}`.
    pub tools: Vec<Value>,
    /// Tools the profile cannot express, with the reason.
    pub unsupported: Vec<UnsupportedTool>,
}

/// A tool left out of a [`Catalog`], and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnsupportedTool {
    /// The wire name.
    pub name: String,
    /// Why the profile cannot express it.
    pub error: String,
}

/// Exports `tools` in `profile`.
///
/// ```
/// use oscova_cli::export_catalog;
/// use oscova_agent::profile::SchemaProfile;
/// use oscova_core::{PluginHost, UserInfo};
///
/// let host = PluginHost::builder()
///     .plugins(oscova_core::linked_plugins![example_hello_plugin::ExampleAgentPlugin])
///     .build()?;
/// let scope = host.user_scope(UserInfo::new("alice"));
/// let catalog = export_catalog(scope.tools(), SchemaProfile::Anthropic);
/// assert_eq!(catalog.tools[0]["name"], "acme_search__example__example_echo");
/// assert_eq!(catalog.tools[0]["input_schema"]["type"], "object");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn export_catalog<'a, I>(tools: I, profile: SchemaProfile) -> Catalog
where
    I: IntoIterator<Item = &'a PublishedTool>,
{
    let mut catalog = Catalog {
        profile: profile.as_str(),
        tools: Vec::new(),
        unsupported: Vec::new(),
    };
    for tool in tools {
        match export_tool(tool, profile) {
            Ok(entry) => catalog.tools.push(entry),
            Err(error) => catalog.unsupported.push(UnsupportedTool {
                name: tool.wire_name().to_owned(),
                error,
            }),
        }
    }
    catalog
}

/// Exports one tool in `profile`, or says why it cannot be.
pub fn export_tool(tool: &PublishedTool, profile: SchemaProfile) -> Result<Value, String> {
    let name = tool.wire_name();
    if let Some(problem) = name_problem(profile, name) {
        return Err(problem);
    }
    let schema = export_schema(tool.input_schema(), profile).map_err(|e| e.to_string())?;
    let description = tool.description();
    Ok(match profile {
        SchemaProfile::OpenAi => json!({
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": schema,
                "strict": true,
            }
        }),
        SchemaProfile::Gemini => json!({
            "name": name,
            "description": description,
            "parameters": schema,
        }),
        SchemaProfile::Anthropic => json!({
            "name": name,
            "description": description,
            "input_schema": schema,
        }),
        // `Raw` and any profile added later: the Oscova catalog entry,
        // with the title and output schema when the tool has them.
        _ => {
            let mut entry = json!({
                "name": name,
                "description": description,
                "plugin": tool.plugin_id(),
                "approval": tool.approval(),
                "network_scope": tool.network_scope(),
                "annotations": tool.annotations(),
                "input_schema": schema,
            });
            if let Value::Object(map) = &mut entry {
                if let Some(title) = tool.title() {
                    map.insert("title".to_owned(), Value::from(title));
                }
                if let Some(output) = tool.output_schema() {
                    map.insert("output_schema".to_owned(), output.clone());
                }
            }
            entry
        }
    })
}

/// Whether `name` breaks the profile's documented name rules. Wire names
/// already match `^[a-z0-9_]{1,64}$`, which OpenAI and Anthropic accept;
/// Gemini also wants the first character to be a letter or `_`.
fn name_problem(profile: SchemaProfile, name: &str) -> Option<String> {
    let first_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    match profile {
        SchemaProfile::Gemini if !first_ok => Some(format!(
            "gemini function names must start with a letter or `_`; `{name}` does not"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_names_start_with_a_letter() {
        assert!(name_problem(SchemaProfile::Gemini, "1password__x__y").is_some());
        assert!(name_problem(SchemaProfile::Gemini, "acme__x__y").is_none());
        assert!(name_problem(SchemaProfile::OpenAi, "1password__x__y").is_none());
    }
}
