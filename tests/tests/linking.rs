//! Link-time collection: plugin crates linked into one binary are found
//! through `inventory`, and a host can insist on the ids it expects.

use oscova_core::{
    HostError, PluginHost, UserInfo, diagnostic::DiagnosticKind, linked_plugins,
    plugin::PluginRegistration,
};
use oscova_tests::example_hello_plugin::ExampleAgentPlugin;
use oscova_tests::oscova_test_plugin_alpha::AlphaPlugin;
use oscova_tests::oscova_test_plugin_beta::BetaPlugin;

/// The plugin crates this binary links, named so the linker keeps them.
fn expected() -> [PluginRegistration; 3] {
    linked_plugins![AlphaPlugin, BetaPlugin, ExampleAgentPlugin]
}

#[test]
fn inventory_collects_every_linked_plugin_crate() {
    let expected = expected();
    let linked: Vec<&str> = PluginRegistration::linked()
        .map(|r| r.manifest().id)
        .collect();
    for reg in &expected {
        assert!(
            linked.contains(&reg.manifest().id),
            "{} not collected; linked: {linked:?}",
            reg.manifest().id
        );
    }
}

#[tokio::test]
async fn a_default_host_loads_every_linked_plugin_once() {
    let host = PluginHost::builder()
        .also_load(expected())
        .require_plugin_ids(["test.alpha", "test.beta", "acme.search"])
        .build()
        .unwrap();
    let ids: Vec<&str> = host.plugins().map(|m| m.id).collect();
    for id in ["test.alpha", "test.beta", "acme.search"] {
        assert_eq!(ids.iter().filter(|i| **i == id).count(), 1, "{ids:?}");
    }
    assert!(host.diagnostics().is_empty(), "{:?}", host.diagnostics());

    let scope = host.user_scope(UserInfo::new("alice"));
    let hello = scope
        .invoke(
            "test_alpha__greet__hello",
            serde_json::json!({"name": "Ada"}),
        )
        .await;
    assert_eq!(hello.content, "Hello, Ada!");
    let sum = scope
        .invoke("test_beta__math__add", serde_json::json!({"a": 2, "b": 40}))
        .await;
    assert_eq!(sum.content, "42");
}

#[test]
fn a_missing_expected_plugin_fails_the_start_check() {
    let err = PluginHost::builder()
        .plugins(linked_plugins![AlphaPlugin])
        .require_plugin_ids(["test.alpha", "test.gamma"])
        .build()
        .unwrap_err();
    match err {
        HostError::MissingPlugins(ids) => assert_eq!(ids, ["test.gamma"]),
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn metadata_comes_from_the_manifest() {
    let manifest = <AlphaPlugin as oscova_core::plugin::RegisteredPlugin>::manifest();
    assert_eq!(manifest.id, "test.alpha");
    assert_eq!(manifest.name, "test.alpha");
    assert_eq!(manifest.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest.framework, ">=0.1");
    let seed = <ExampleAgentPlugin as oscova_core::plugin::RegisteredPlugin>::manifest();
    assert_eq!(seed.name, "Acme Search");
    assert_eq!(seed.description, "The seed plugin.");
    let _ = DiagnosticKind::MissingPlugin;
}
