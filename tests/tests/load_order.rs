//! Which plugin is "first": the host's explicit list in its order, then
//! every other linked plugin sorted by normalised id and type name, never
//! in the order the linker laid the crates out. And two plugins whose ids
//! normalise to one wire-name prefix: the earlier is kept, the other
//! reported.
//!
//! This binary links the seed plugin (`acme.search`), `test.alpha`,
//! `test.beta`, and the two plugins below, one of which (`Acme-Search`)
//! normalises to the seed's prefix.

#![allow(missing_docs)] // test fixtures, not API

use oscova_core::prelude::*;
use oscova_core::{diagnostic::DiagnosticKind, linked_plugins, plugin::PluginRegistration};
use oscova_tests::example_hello_plugin::ExampleAgentPlugin;
use oscova_tests::oscova_test_plugin_alpha::AlphaPlugin;
use oscova_tests::oscova_test_plugin_beta::BetaPlugin;

pub struct TwinToolset;

#[toolset]
impl TwinToolset {
    /// Says which plugin answered.
    pub fn which() -> &'static str {
        "twin"
    }
}

/// Normalises to `acme_search`, the seed plugin's prefix. Its type name,
/// `load_order::AcmeSearchTwin`, sorts after the seed's
/// `example_hello_plugin::ExampleAgentPlugin`.
#[plugin(id = "Acme-Search")]
pub struct AcmeSearchTwin;
impl AgentPlugin for AcmeSearchTwin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| TwinToolset);
    }
}

/// An Oscova-style id that sorts between the seed and `test.alpha`.
#[plugin(id = "Oscova.LocalSpeech")]
pub struct LocalSpeech;
impl AgentPlugin for LocalSpeech {}

/// Every plugin this binary links, referenced in an order that is neither
/// sorted nor the one the host uses, so the linker keeps every crate.
fn referenced() -> [PluginRegistration; 5] {
    linked_plugins![
        BetaPlugin,
        LocalSpeech,
        ExampleAgentPlugin,
        AcmeSearchTwin,
        AlphaPlugin
    ]
}

fn ids(host: &PluginHost) -> Vec<&'static str> {
    host.plugins().map(|m| m.id).collect()
}

fn duplicate_diagnostics(host: &PluginHost) -> Vec<(Option<String>, String)> {
    host.diagnostics()
        .iter()
        .filter(|d| d.kind == DiagnosticKind::DuplicatePluginId)
        .map(|d| (d.plugin.clone(), d.message.clone()))
        .collect()
}

#[test]
fn linked_plugins_load_sorted_by_normalised_id_then_type_name() {
    std::hint::black_box(referenced());
    let host = PluginHost::builder().build().unwrap();
    // acme_search (the seed, then its twin by type name), oscova_local_speech,
    // test_alpha, test_beta.
    assert_eq!(
        ids(&host),
        [
            "acme.search",
            "Oscova.LocalSpeech",
            "test.alpha",
            "test.beta"
        ]
    );
    let linked: Vec<_> = PluginRegistration::linked()
        .map(|r| r.manifest().id)
        .collect();
    assert_eq!(
        linked,
        [
            "acme.search",
            "Acme-Search",
            "Oscova.LocalSpeech",
            "test.alpha",
            "test.beta"
        ]
    );
    // The twin came second, so it is the one skipped, by its id, naming the
    // plugin that kept the prefix.
    let dups = duplicate_diagnostics(&host);
    assert_eq!(dups.len(), 1, "{dups:?}");
    assert_eq!(dups[0].0.as_deref(), Some("Acme-Search"));
    assert!(
        dups[0].1.contains("`acme_search`") && dups[0].1.contains("`acme.search`"),
        "{}",
        dups[0].1
    );
    assert!(host.tool("acme_search__twin__which").is_none());
    assert_eq!(
        host.tool("acme_search__example__example_echo")
            .map(|t| t.plugin_id()),
        Some("acme.search")
    );
}

#[test]
fn an_explicit_list_loads_in_its_own_order() {
    let host = PluginHost::builder()
        .plugins(linked_plugins![BetaPlugin, ExampleAgentPlugin, AlphaPlugin])
        .build()
        .unwrap();
    assert_eq!(ids(&host), ["test.beta", "acme.search", "test.alpha"]);
    assert!(host.diagnostics().is_empty(), "{:?}", host.diagnostics());
    // Publication follows the load order.
    let plugins: Vec<_> = host.tools().iter().map(|t| t.plugin_id()).collect();
    let first_seed = plugins.iter().position(|p| *p == "acme.search");
    let first_alpha = plugins.iter().position(|p| *p == "test.alpha");
    assert_eq!(plugins.first(), Some(&"test.beta"));
    assert!(first_seed < first_alpha, "{plugins:?}");
}

#[test]
fn expected_plugins_load_first_then_the_rest_sorted() {
    let host = PluginHost::builder()
        .also_load(linked_plugins![BetaPlugin, AcmeSearchTwin])
        .also_load(linked_plugins![AlphaPlugin])
        .build()
        .unwrap();
    assert_eq!(
        ids(&host),
        [
            "test.beta",
            "Acme-Search",
            "test.alpha",
            "Oscova.LocalSpeech"
        ]
    );
    // Named first, the twin now keeps the prefix and the seed is reported.
    let dups = duplicate_diagnostics(&host);
    assert_eq!(dups.len(), 1, "{dups:?}");
    assert_eq!(dups[0].0.as_deref(), Some("acme.search"));
    assert!(dups[0].1.contains("`Acme-Search`"), "{}", dups[0].1);
}

#[tokio::test]
async fn of_two_ids_that_normalise_alike_the_earlier_is_kept() {
    for (list, kept, skipped) in [
        (
            linked_plugins![ExampleAgentPlugin, AcmeSearchTwin],
            "acme.search",
            "Acme-Search",
        ),
        (
            linked_plugins![AcmeSearchTwin, ExampleAgentPlugin],
            "Acme-Search",
            "acme.search",
        ),
    ] {
        let host = PluginHost::builder().plugins(list).build().unwrap();
        assert_eq!(ids(&host), [kept]);
        let dups = duplicate_diagnostics(&host);
        assert_eq!(dups.len(), 1, "{dups:?}");
        assert_eq!(dups[0].0.as_deref(), Some(skipped));
        assert!(dups[0].1.contains("acme_search"), "{}", dups[0].1);
        // Every published tool is the kept plugin's.
        assert!(host.tools().iter().all(|t| t.plugin_id() == kept));
        assert!(host.publication_errors().is_empty());
    }

    // The twin's tool is callable when it is the one kept.
    let host = PluginHost::builder()
        .plugins(linked_plugins![AcmeSearchTwin, ExampleAgentPlugin])
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("ann"));
    let answer = scope
        .invoke("acme_search__twin__which", serde_json::json!({}))
        .await;
    assert_eq!(answer.content, "twin");
}
