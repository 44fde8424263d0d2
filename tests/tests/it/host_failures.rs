//! DESIGN.md's failure table, row by row: whatever one plugin, factory or
//! tool does wrong, the host starts, reports it, and the rest keeps working.

#![allow(missing_docs)] // test fixtures, not API
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_core::prelude::*;
use oscova_core::{
    diagnostic::DiagnosticKind,
    host::PublicationError,
    linked_plugins,
    provider::BoxFuture,
    provider::ProviderTypeKey,
    provider::speech::{RecognitionRequest, SpeechError, SpeechRecognitionProvider, Transcript},
};
use serde_json::json;

// ---- plugins used below -------------------------------------------------

pub struct PingToolset;

#[toolset]
impl PingToolset {
    /// Answers pong.
    pub fn ping() -> &'static str {
        "pong"
    }
}

#[plugin(id = "good.one")]
pub struct GoodPlugin;
impl AgentPlugin for GoodPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| PingToolset);
    }
}

#[plugin(id = "bad.panics")]
pub struct PanickingPlugin;
impl AgentPlugin for PanickingPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| PingToolset);
        panic!("configure blew up");
    }
}

#[plugin(id = "bad.errs")]
pub struct ErringPlugin;
impl AgentPlugin for ErringPlugin {
    fn try_configure(
        &self,
        _: &mut AgentPluginBuilder,
    ) -> Result<(), oscova_core::provider::BoxError> {
        Err("the acme licence file is missing".into())
    }
}

#[plugin(id = "bad.future", framework = ">=99.0")]
pub struct FuturePlugin;
impl AgentPlugin for FuturePlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| PingToolset);
    }
}

/// Same id as `GoodPlugin`, different type.
#[plugin(id = "good.one")]
pub struct ImpostorPlugin;
impl AgentPlugin for ImpostorPlugin {}

// ---- rows ----------------------------------------------------------------

fn build(plugins: impl IntoIterator<Item = oscova_core::plugin::PluginRegistration>) -> PluginHost {
    PluginHost::builder().plugins(plugins).build().unwrap()
}

fn kinds(host: &PluginHost) -> Vec<(DiagnosticKind, Option<String>)> {
    host.diagnostics()
        .iter()
        .map(|d| (d.kind, d.plugin.clone()))
        .collect()
}

#[tokio::test]
async fn configure_panicking_or_erring_skips_only_that_plugin() {
    let host = build(linked_plugins![PanickingPlugin, ErringPlugin, GoodPlugin]);
    assert_eq!(
        host.plugins().map(|m| m.id).collect::<Vec<_>>(),
        ["good.one"]
    );
    assert_eq!(
        kinds(&host),
        [
            (DiagnosticKind::ConfigureFailed, Some("bad.panics".into())),
            (DiagnosticKind::ConfigureFailed, Some("bad.errs".into())),
        ]
    );
    assert!(host.diagnostics()[0].message.contains("configure blew up"));
    assert!(
        host.diagnostics()[1]
            .message
            .contains("licence file is missing")
    );
    // Nothing the panicking plugin recorded before panicking is published.
    let scope = host.user_scope(UserInfo::new("u"));
    let names: Vec<_> = scope.tools().map(|t| t.wire_name().to_owned()).collect();
    assert_eq!(names, ["good_one__ping__ping"]);
    assert_eq!(
        scope
            .invoke("good_one__ping__ping", json!({}))
            .await
            .content,
        "pong"
    );
}

#[test]
fn an_incompatible_framework_range_skips_the_plugin() {
    let host = build(linked_plugins![FuturePlugin, GoodPlugin]);
    assert_eq!(host.plugins().count(), 1);
    assert_eq!(
        kinds(&host),
        [(
            DiagnosticKind::IncompatibleFramework,
            Some("bad.future".into())
        )]
    );
    assert!(
        host.diagnostics()[0].message.contains(">=99.0"),
        "{}",
        host.diagnostics()[0]
    );
}

#[test]
fn a_duplicate_plugin_id_keeps_the_first() {
    let host = build(linked_plugins![GoodPlugin, ImpostorPlugin]);
    assert_eq!(host.plugins().count(), 1);
    assert_eq!(
        kinds(&host),
        [(DiagnosticKind::DuplicatePluginId, Some("good.one".into()))]
    );
}

// -- a toolset factory failing for one user only --

pub struct UserToolset {
    user: String,
}

#[toolset]
impl UserToolset {
    /// Who am I?
    pub fn whoami(&self) -> String {
        self.user.clone()
    }
}

#[plugin(id = "per.user")]
pub struct PerUserPlugin;
impl AgentPlugin for PerUserPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|ctx: &AgentPluginContext| -> Result<UserToolset, String> {
            match ctx.user_id() {
                "bob" => Err("bob has no licence".into()),
                "mallory" => panic!("factory panicked for mallory"),
                user => Ok(UserToolset { user: user.into() }),
            }
        })
        .add_toolset(|_: &AgentPluginContext| PingToolset);
    }
}

#[tokio::test]
async fn a_toolset_factory_failing_for_one_user_drops_it_for_that_user_only() {
    let host = build(linked_plugins![PerUserPlugin]);
    let alice = host.user_scope(UserInfo::new("alice"));
    let bob = host.user_scope(UserInfo::new("bob"));
    let mallory = host.user_scope(UserInfo::new("mallory"));

    assert_eq!(alice.tools().count(), 2);
    assert!(alice.diagnostics().is_empty());
    assert_eq!(
        alice
            .invoke("per_user__user__whoami", json!({}))
            .await
            .content,
        "alice"
    );

    for (scope, why) in [(&bob, "bob has no licence"), (&mallory, "factory panicked")] {
        let names: Vec<_> = scope.tools().map(|t| t.wire_name()).collect();
        assert_eq!(names, ["per_user__ping__ping"]);
        assert_eq!(scope.diagnostics().len(), 1);
        assert_eq!(scope.diagnostics()[0].kind, DiagnosticKind::ToolsetFailed);
        assert!(scope.diagnostics()[0].message.contains(why));
        let r = scope.invoke("per_user__user__whoami", json!({})).await;
        assert!(r.is_error);
        assert!(
            r.content.contains("not available for this user"),
            "{}",
            r.content
        );
        // The rest of the scope works.
        assert_eq!(
            scope
                .invoke("per_user__ping__ping", json!({}))
                .await
                .content,
            "pong"
        );
    }
    // Alice is unaffected by later failures.
    assert_eq!(
        alice
            .invoke("per_user__user__whoami", json!({}))
            .await
            .content,
        "alice"
    );
}

// -- provider factories --

struct Recognizer {
    key: &'static str,
    shutdowns: Arc<std::sync::Mutex<Vec<&'static str>>>,
}

impl SpeechRecognitionProvider for Recognizer {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(self.key)
    }
    fn display_name(&self) -> &str {
        self.key
    }
    fn recognize<'a>(
        &'a self,
        _: RecognitionRequest<'a>,
    ) -> BoxFuture<'a, Result<Transcript, SpeechError>> {
        Box::pin(async { Ok(Transcript::default()) })
    }
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        let log = self.shutdowns.clone();
        let key = self.key;
        Box::pin(async move {
            if let Ok(mut l) = log.lock() {
                l.push(key);
            }
        })
    }
}

static SHUTDOWNS: std::sync::LazyLock<Arc<std::sync::Mutex<Vec<&'static str>>>> =
    std::sync::LazyLock::new(Default::default);

#[plugin(id = "providers")]
pub struct ProviderPlugin;
impl AgentPlugin for ProviderPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_speech_recognition_provider(|_: &ProviderContext| Recognizer {
            key: "first",
            shutdowns: SHUTDOWNS.clone(),
        })
        .add_speech_recognition_provider(|_: &ProviderContext| -> Recognizer {
            panic!("the recognizer's model is missing")
        })
        .add_speech_recognition_provider(|_: &ProviderContext| -> Result<Recognizer, String> {
            Err("no audio device".into())
        })
        .add_speech_recognition_provider(|ctx: &ProviderContext| {
            assert_eq!(ctx.plugin_id(), "providers");
            Recognizer {
                key: "last",
                shutdowns: SHUTDOWNS.clone(),
            }
        });
    }
}

#[tokio::test]
async fn a_provider_factory_panicking_skips_it_and_later_ones_are_built() {
    let host = build(linked_plugins![ProviderPlugin]);
    let keys: Vec<_> = host
        .providers::<dyn oscova_core::provider::speech::SpeechRecognitionProvider>()
        .iter()
        .map(|p| p.provider().type_key().to_string())
        .collect();
    assert_eq!(keys, ["first", "last"]);
    let diags = host.diagnostics();
    assert_eq!(diags.len(), 2);
    assert!(
        diags
            .iter()
            .all(|d| d.kind == DiagnosticKind::ProviderFailed)
    );
    assert!(diags[0].message.contains("model is missing"));
    assert!(diags[1].message.contains("no audio device"));

    // Shutdown runs once, in reverse order of creation.
    host.shutdown().await;
    host.shutdown().await;
    assert_eq!(*SHUTDOWNS.lock().unwrap(), ["last", "first"]);
}

// -- publication errors --

#[plugin(id = "twice")]
pub struct TwicePlugin;
impl AgentPlugin for TwicePlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| UserToolset {
            user: "first".into(),
        })
        .add_toolset(|_: &AgentPluginContext| UserToolset {
            user: "second".into(),
        })
        .add_toolset(|_: &AgentPluginContext| UserToolset {
            user: "third".into(),
        });
    }
}

#[tokio::test]
async fn duplicate_wire_names_are_all_reported_and_the_earlier_tool_kept() {
    let host = build(linked_plugins![TwicePlugin]);
    let errors = host.publication_errors();
    assert_eq!(errors.len(), 2, "{errors:?}");
    for e in errors {
        match e {
            PublicationError::DuplicateWireName { wire_name, .. } => {
                assert_eq!(wire_name, "twice__user__whoami");
            }
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!(
        host.diagnostics()
            .iter()
            .filter(|d| d.kind == DiagnosticKind::DuplicateWireName)
            .count(),
        2
    );
    let scope = host.user_scope(UserInfo::new("u"));
    assert_eq!(scope.tools().count(), 1);
    assert_eq!(
        scope.invoke("twice__user__whoami", json!({})).await.content,
        "first"
    );
}

pub struct LongNamesToolset;

#[toolset]
impl LongNamesToolset {
    /// Fits.
    pub fn short() {}

    /// Does not fit.
    #[tool(name = "a_tool_name_that_is_long_enough_to_push_the_wire_name_past_64")]
    pub fn long() {}
}

#[plugin(id = "long.names")]
pub struct LongPlugin;
impl AgentPlugin for LongPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| LongNamesToolset);
    }
}

#[test]
fn a_name_over_64_characters_is_a_publication_error_naming_tool_and_length() {
    let host = build(linked_plugins![LongPlugin]);
    let errors = host.publication_errors();
    assert_eq!(errors.len(), 1);
    let text = errors[0].to_string();
    assert!(text.contains("`long`"), "{text}");
    assert!(text.contains("85 characters"), "{text}");
    assert_eq!(host.tools().len(), 1);
    assert_eq!(host.tools()[0].wire_name(), "long_names__long_names__short");
    assert!(
        PluginHost::builder()
            .plugins(linked_plugins![LongPlugin])
            .strict(true)
            .build()
            .is_err()
    );
}

// -- tool bodies --

pub struct FragileToolset {
    calls: Arc<AtomicUsize>,
}

#[toolset]
impl FragileToolset {
    /// Divides.
    pub fn divide(&self, a: i64, b: i64) -> Result<i64, String> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        a.checked_div(b)
            .ok_or_else(|| format!("cannot divide {a} by zero; pass a non-zero `b`"))
    }

    /// Panics.
    pub async fn explode(&self) -> String {
        self.calls.fetch_add(1, Ordering::SeqCst);
        panic!("kaboom")
    }
}

static CALLS: std::sync::LazyLock<Arc<AtomicUsize>> = std::sync::LazyLock::new(Default::default);

#[plugin(id = "fragile")]
pub struct FragilePlugin;
impl AgentPlugin for FragilePlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| FragileToolset {
            calls: CALLS.clone(),
        });
    }
}

#[tokio::test]
async fn tool_errors_panics_and_bad_arguments_are_error_results() {
    let host = build(linked_plugins![FragilePlugin]);
    let scope = host.user_scope(UserInfo::new("u"));

    let r = scope
        .invoke("fragile__fragile__divide", json!({"a": 1, "b": 0}))
        .await;
    assert!(r.is_error);
    assert_eq!(r.content, "cannot divide 1 by zero; pass a non-zero `b`");

    let r = scope.invoke("fragile__fragile__explode", json!({})).await;
    assert!(r.is_error);
    assert!(r.content.contains("kaboom"), "{}", r.content);

    let before = CALLS.load(Ordering::SeqCst);
    let r = scope
        .invoke("fragile__fragile__divide", json!({"a": "ten", "b": 2}))
        .await;
    assert!(r.is_error);
    assert!(
        r.content.contains("fragile__fragile__divide"),
        "{}",
        r.content
    );
    assert!(r.content.contains("/a: expected i64"), "{}", r.content);
    assert_eq!(
        CALLS.load(Ordering::SeqCst),
        before,
        "the method must not run"
    );

    // The host and other calls carry on.
    let r = scope
        .invoke("fragile__fragile__divide", json!({"a": 9, "b": 3}))
        .await;
    assert_eq!(r.content, "3");
}
