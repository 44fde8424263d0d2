//! Schema profiles: the exported catalogs, checked against each API's
//! documented rules and against golden snapshots.
//!
//! Two catalogs are covered. The linked one is what the real binary prints
//! for `tools list --profile P --json`. The test one comes from a toolset
//! defined here, whose parameters are the hard cases (nested structs,
//! enums, a tagged union, `Option`s, a map, a recursive type), exported
//! with `oscova_cli::export_catalog`, the function the command uses.
//!
//! Goldens live in `tests/golden/`; `UPDATE_GOLDEN=1` rewrites them.

use crate::support;
use crate::validators;

use std::collections::HashMap;
use std::path::PathBuf;

use oscova_agent::profile::SchemaProfile;
use oscova_cli::{Catalog, export_catalog};
use oscova_core::linked_plugins;
use oscova_core::prelude::*;
use serde::Deserialize;
use serde_json::Value;

// ----- the test toolset -----

/// A postal address.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct Address {
    /// Street and number.
    pub street: String,
    /// The postcode, when known.
    pub postcode: Option<String>,
}

/// How urgent a ticket is.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Whenever.
    Low,
    /// Soon.
    Normal,
    /// Drop everything.
    Urgent,
}

/// How to reach someone.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Contact {
    /// By email.
    Email {
        /// The address.
        address: String,
    },
    /// By phone.
    Phone {
        /// The number.
        number: String,
        /// The extension, if any.
        extension: Option<u32>,
    },
}

/// A category and its subcategories.
#[derive(Deserialize, schemars::JsonSchema)]
pub struct Category {
    /// The name.
    pub name: String,
    /// The subcategories.
    pub children: Vec<Category>,
}

/// Tools whose parameters are the hard cases for schema profiles.
pub struct ShapesToolset;

#[toolset]
impl ShapesToolset {
    /// Files a ticket.
    pub fn file_ticket(
        /// A short title.
        title: String,
        /// How urgent it is.
        priority: Priority,
        /// Who to contact.
        contact: Contact,
        /// Where, if anywhere.
        address: Option<Address>,
        /// Labels.
        tags: Vec<String>,
    ) -> String {
        let _ = (priority, contact, address, tags);
        title
    }

    /// Sets named counters.
    pub fn set_counts(
        /// Counter values by name.
        counts: HashMap<String, u32>,
    ) -> usize {
        counts.len()
    }

    /// Stores a category tree.
    pub fn store_tree(
        /// The root category.
        root: Category,
    ) -> usize {
        root.children.len()
    }

    /// Answers pong.
    pub fn ping() -> String {
        "pong".to_owned()
    }
}

/// The plugin around [`ShapesToolset`].
#[plugin(id = "test.shapes")]
pub struct ShapesPlugin;

impl AgentPlugin for ShapesPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| ShapesToolset);
    }
}

const FILE_TICKET: &str = "test_shapes__shapes__file_ticket";
const SET_COUNTS: &str = "test_shapes__shapes__set_counts";
const STORE_TREE: &str = "test_shapes__shapes__store_tree";
const PING: &str = "test_shapes__shapes__ping";

fn shapes_catalog(profile: SchemaProfile) -> Catalog {
    let host = PluginHost::builder()
        .plugins(linked_plugins![ShapesPlugin])
        .strict(true)
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("golden"));
    export_catalog(scope.tools(), profile)
}

// ----- goldens -----

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// Compares `value` with the golden file, or rewrites it under
/// `UPDATE_GOLDEN=1`. Returns a description of the difference.
fn check_golden(name: &str, value: &Value) -> Option<String> {
    let path = golden_path(name);
    let text = serde_json::to_string_pretty(value).unwrap() + "\n";
    if std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return None;
    }
    match std::fs::read_to_string(&path) {
        Ok(old) if old == text => None,
        Ok(_) => Some(format!("{name} differs")),
        Err(e) => Some(format!("{name}: {e}")),
    }
}

fn assert_goldens(stale: Vec<String>) {
    assert!(
        stale.is_empty(),
        "golden files differ (rerun with UPDATE_GOLDEN=1 and review the diff):\n{}",
        stale.join("\n")
    );
}

// ----- tests -----

#[test]
fn the_linked_catalog_matches_its_goldens_and_each_api() {
    let mut stale = Vec::new();
    for profile in SchemaProfile::ALL {
        let (code, doc) = support::run_json(&[
            "tools",
            "list",
            "--user",
            "golden",
            "--profile",
            profile.as_str(),
        ]);
        assert_eq!(code, 0, "{doc}");
        assert_eq!(doc["profile"], profile.as_str());
        let tools = doc["tools"].as_array().unwrap();
        assert!(!tools.is_empty());
        for entry in tools {
            validators::assert_entry(profile, entry);
        }
        for unsupported in doc["unsupported"].as_array().unwrap() {
            assert!(unsupported["error"].as_str().is_some_and(|e| !e.is_empty()));
        }
        stale.extend(check_golden(&format!("linked.{profile}.json"), &doc));
    }
    assert_goldens(stale);
}

#[test]
fn hard_cases_are_exported_or_listed_with_the_reason() {
    let mut stale = Vec::new();
    for profile in SchemaProfile::ALL {
        let catalog = shapes_catalog(profile);
        let name = |entry: &Value| -> String {
            let name = match profile {
                SchemaProfile::OpenAi => &entry["function"]["name"],
                _ => &entry["name"],
            };
            name.as_str().unwrap().to_owned()
        };
        let exported: Vec<String> = catalog.tools.iter().map(name).collect();
        let refused: Vec<&str> = catalog
            .unsupported
            .iter()
            .map(|u| u.name.as_str())
            .collect();
        let (want_exported, want_refused): (&[&str], &[&str]) = match profile {
            SchemaProfile::OpenAi => (&[FILE_TICKET, PING], &[SET_COUNTS, STORE_TREE]),
            SchemaProfile::Gemini => (&[FILE_TICKET, SET_COUNTS, PING], &[STORE_TREE]),
            _ => (&[FILE_TICKET, SET_COUNTS, STORE_TREE, PING], &[]),
        };
        assert_eq!(exported, want_exported, "{profile}");
        assert_eq!(refused, want_refused, "{profile}");
        for u in &catalog.unsupported {
            let why = if u.name == SET_COUNTS {
                "additionalProperties"
            } else {
                "recursive"
            };
            assert!(u.error.contains(why), "{profile} {}: {}", u.name, u.error);
        }
        for entry in &catalog.tools {
            validators::assert_entry(profile, entry);
        }
        let doc = serde_json::to_value(&catalog).unwrap();
        stale.extend(check_golden(&format!("shapes.{profile}.json"), &doc));
    }
    assert_goldens(stale);
}

#[test]
fn hard_cases_keep_their_meaning_per_profile() {
    let openai = shapes_catalog(SchemaProfile::OpenAi);
    let params = &openai.tools[0]["function"]["parameters"];
    // Optional parameters are required but nullable in strict mode.
    let required: Vec<&str> = params["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(required.len(), 5, "{params}");
    let address = &params["properties"]["address"];
    assert!(address.to_string().contains("\"null\""), "{address}");
    let priorities: Vec<&Value> = params["properties"]["priority"]["anyOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["const"])
        .collect();
    assert_eq!(priorities, ["low", "normal", "urgent"], "{params}");

    let gemini = shapes_catalog(SchemaProfile::Gemini);
    let params = &gemini.tools[0]["parameters"];
    assert_eq!(
        params["properties"]["address"]["nullable"], true,
        "{params}"
    );
    assert_eq!(params["properties"]["priority"]["type"], "string");
    let counts = &gemini.tools[1]["parameters"]["properties"]["counts"];
    assert_eq!(counts["type"], "object", "a map loses its value schema");

    let anthropic = shapes_catalog(SchemaProfile::Anthropic);
    let tree = &anthropic.tools[2]["input_schema"];
    assert!(tree["$defs"]["Category"].is_object(), "{tree}");
}
