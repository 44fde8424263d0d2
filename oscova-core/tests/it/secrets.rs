//! Secrets end to end: `Debug` of every type that can hold or reach one
//! prints no value, and a tool that tries to echo its credential, through a
//! real `PluginHost` and `UserScope`, shows `[REDACTED]` in content, details
//! (strings and keys, however deep), progress, error results, panics,
//! argument errors and `UserScope::call` errors.
//!
//! Redactors are per scope: a value is redacted in the scopes that resolved
//! it, plus every value in the host's redactor in all scopes. A scope that
//! never resolved a secret does not redact it, on purpose: a redactor shared
//! by all users would let user B test whether a string is user A's secret by
//! echoing it and watching for `[REDACTED]`.

#![allow(missing_docs)]

use std::sync::{Arc, Mutex};

use oscova_core::prelude::*;
use oscova_core::provider::model::{ChatMessage, ChatRequest, ModelProviderConfig};
use oscova_core::provider::speech::{RecognitionRequest, SpeechProviderConfig, SynthesisRequest};
use oscova_core::{
    ExposeSecret, InvokeError, SecretString, UserScope, context::Credentials,
    process::ProcessSpawnPolicy, redact::REDACTED,
};
use serde_json::{Value, json};

const KEY_A: &str = "sk-alpha-SECRET-1111";
const KEY_B: &str = "sk-bravo-SECRET-2222";
const LATE_A: &str = "late-alpha-SECRET-3333";
const HOST_WIDE: &str = "host-wide-SECRET-4444";

fn resolver(user: &UserInfo, key: &str) -> Option<SecretString> {
    let value = match (user.id(), key) {
        ("a", "acme.key") => KEY_A,
        ("b", "acme.key") => KEY_B,
        ("a", "acme.late") => LATE_A,
        _ => return None,
    };
    Some(SecretString::from(value))
}

// ---------------------------------------------------------------- fixtures

pub struct LeakyToolset {
    /// Resolved in the factory.
    key: SecretString,
    /// For tools that resolve while they run.
    credentials: Credentials,
}

impl LeakyToolset {
    fn key(&self) -> &str {
        self.key.expose_secret()
    }
}

#[toolset]
impl LeakyToolset {
    /// Puts the key in the content.
    pub fn in_content(&self) -> String {
        format!("my key is {} (twice: {})", self.key(), self.key())
    }

    /// Puts the key in nested details, as values and as keys.
    pub fn in_details(&self) -> ToolResult {
        let key = self.key();
        let mut nested = serde_json::Map::new();
        nested.insert(key.to_owned(), json!("the key is a key"));
        nested.insert(format!("prefix-{key}"), json!([1, format!("x{key}x")]));
        ToolResult::text("see details").with_details(json!({
            "plain": "nothing secret",
            "list": [key, {"deeper": [format!("a {key} b")]}],
            "nested": nested,
        }))
    }

    /// Reports the key as progress.
    pub fn in_progress(&self, invocation: &ToolInvocation) -> String {
        invocation.report(ToolProgress::message(format!("using {}", self.key())));
        invocation.report(ToolProgress::ratio(self.key(), 1.0, Some(2.0)));
        "done".to_owned()
    }

    /// Fails with the key in the message.
    pub fn in_error(&self) -> Result<String, String> {
        Err(format!("bad key {}", self.key()))
    }

    /// Panics with the key in the message.
    pub fn in_panic(&self) -> String {
        panic!("leaking {}", self.key())
    }

    /// Panics after a suspension point with the key in the message.
    pub async fn in_async_panic(&self) -> String {
        tokio::task::yield_now().await;
        panic!("leaking later {}", self.key())
    }

    /// Resolves a credential only now, while running, and echoes it.
    pub fn resolve_late(&self) -> String {
        match self.credentials.get("acme.late") {
            Some(late) => format!("late: {}", late.expose_secret()),
            None => "no late key".to_owned(),
        }
    }

    /// Takes a number; a model passing a secret string here gets an
    /// argument error quoting it.
    pub fn typed(&self, count: u32) -> u32 {
        count
    }

    /// Echoes what it is given.
    pub fn echo(&self, text: String) -> String {
        text
    }
}

/// Collects what `Debug` printed inside the factory, where the context is.
#[plugin(id = "test.secrets")]
#[derive(Default)]
pub struct LeakyPlugin {
    debug_views: Arc<Mutex<Vec<String>>>,
}

impl AgentPlugin for LeakyPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        let views = self.debug_views.clone();
        builder.add_toolset(move |ctx: &AgentPluginContext| {
            let key = ctx
                .credentials()
                .get("acme.key")
                .ok_or("no acme.key for this user")?;
            views.lock().unwrap().extend([
                format!("{ctx:?}"),
                format!("{ctx:#?}"),
                format!("{:?}", ctx.credentials()),
                format!("{key:?}"),
                format!("{:?}", ctx.spawn_policy()),
                format!("{:?}", ctx.http_client()),
            ]);
            Ok::<_, String>(LeakyToolset {
                key,
                credentials: ctx.credentials().clone(),
            })
        });
    }
}

fn host(plugin: LeakyPlugin) -> PluginHost {
    PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(plugin)
        .credentials(resolver)
        .spawn_policy(ProcessSpawnPolicy::with_base_env([
            ("OPENAI_API_KEY", HOST_WIDE),
            ("PATH", "/usr/bin:/bin"),
        ]))
        .strict(true)
        .build()
        .unwrap()
}

fn scope_for(host: &PluginHost, user: &str) -> UserScope {
    let scope = host.user_scope(UserInfo::new(user));
    assert!(scope.diagnostics().is_empty(), "{:?}", scope.diagnostics());
    scope
}

fn wire(tool: &str) -> String {
    format!("test_secrets__leaky__{tool}")
}

fn assert_clean(text: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(!text.contains(secret), "{secret} leaked in {text}");
    }
}

fn all_secrets() -> [&'static str; 4] {
    [KEY_A, KEY_B, LATE_A, HOST_WIDE]
}

// ------------------------------------------------------------------- Debug

/// Compiles only if `$ty` implements none of `$trait`: with an impl, the
/// call below becomes ambiguous between the two blanket impls (the
/// technique of `static_assertions::assert_not_impl_any!`).
macro_rules! assert_not_impl {
    ($ty:ty: $($trait:path),+) => {
        const _: fn() = || {
            trait AmbiguousIfImpl<A> {
                fn some_item() {}
            }
            impl<T: ?Sized> AmbiguousIfImpl<()> for T {}
            $({
                #[allow(dead_code)]
                struct Invalid;
                impl<T: ?Sized + $trait> AmbiguousIfImpl<Invalid> for T {}
            })+
            let _ = <$ty as AmbiguousIfImpl<_>>::some_item;
        };
    };
}

// Nothing that holds or reaches a secret can be displayed or serialised.
assert_not_impl!(SecretString: std::fmt::Display, oscova_core::serde::Serialize);
assert_not_impl!(Credentials: std::fmt::Display, oscova_core::serde::Serialize);
assert_not_impl!(AgentPluginContext: std::fmt::Display, oscova_core::serde::Serialize);
assert_not_impl!(ProviderContext: std::fmt::Display, oscova_core::serde::Serialize);
assert_not_impl!(ProcessSpawnPolicy: std::fmt::Display, oscova_core::serde::Serialize);
assert_not_impl!(RecognitionRequest<'static>: std::fmt::Display, oscova_core::serde::Serialize);
assert_not_impl!(SynthesisRequest<'static>: std::fmt::Display, oscova_core::serde::Serialize);
assert_not_impl!(ChatRequest<'static>: std::fmt::Display, oscova_core::serde::Serialize);

#[test]
fn debug_of_contexts_and_credentials_prints_no_secret() {
    let plugin = LeakyPlugin::default();
    let views = plugin.debug_views.clone();
    let host = host(plugin);
    let _scope = scope_for(&host, "a");
    let views = views.lock().unwrap();
    assert_eq!(views.len(), 6);
    for view in views.iter() {
        assert_clean(view, &all_secrets());
    }
    assert!(views[0].contains("AgentPluginContext"), "{}", views[0]);
    assert!(views[2].contains("Credentials"), "{}", views[2]);
    assert!(views[3].contains("REDACTED"), "{}", views[3]);
    assert_clean(&format!("{host:?}"), &all_secrets());
    assert_clean(&format!("{:?}", host.spawn_policy()), &all_secrets());
}

#[test]
fn debug_of_provider_context_and_secret_string_prints_no_secret() {
    let policy = ProcessSpawnPolicy::with_base_env([("OPENAI_API_KEY", KEY_A)]);
    let ctx = ProviderContext::new("test.provider", HttpClient::new(), policy);
    assert_clean(&format!("{ctx:?}"), &all_secrets());
    assert_clean(&format!("{ctx:#?}"), &all_secrets());

    let secret = SecretString::from(KEY_A);
    assert_clean(&format!("{secret:?}"), &all_secrets());
    assert_clean(&format!("{secret:#?}"), &all_secrets());
    assert_eq!(secret.expose_secret(), KEY_A);
}

#[test]
fn debug_of_provider_requests_prints_no_key() {
    let key = SecretString::from(KEY_A);
    let speech = SpeechProviderConfig::new("openai").endpoint("http://127.0.0.1:9/");
    let recognition = RecognitionRequest {
        config: &speech,
        api_key: Some(&key),
        download_url: None,
        offline: false,
        audio: b"RIFF....",
        cancel: CancellationToken::new(),
        progress: None,
    };
    let synthesis = SynthesisRequest {
        config: &speech,
        api_key: Some(&key),
        download_url: None,
        offline: false,
        text: "hello",
        voice: None,
        cancel: CancellationToken::new(),
    };
    let model = ModelProviderConfig::new("openai");
    let messages = [ChatMessage::user("hi")];
    let chat = ChatRequest {
        config: &model,
        api_key: Some(&key),
        model: "gpt",
        messages: &messages,
        tools: &[],
        stream: None,
        cancel: CancellationToken::new(),
    };
    for text in [
        format!("{recognition:?}"),
        format!("{synthesis:?}"),
        format!("{chat:?}"),
        format!("{chat:#?}"),
    ] {
        assert_clean(&text, &all_secrets());
        assert!(text.contains(REDACTED), "a key is shown as present: {text}");
    }
}

// -------------------------------------------------------- tool output paths

#[tokio::test]
async fn content_is_redacted() {
    let host = host(LeakyPlugin::default());
    let scope = scope_for(&host, "a");
    let result = scope.invoke(&wire("in_content"), Value::Null).await;
    assert!(!result.is_error);
    assert_eq!(result.content, "my key is [REDACTED] (twice: [REDACTED])");
}

#[tokio::test]
async fn details_are_redacted_in_strings_and_keys() {
    let host = host(LeakyPlugin::default());
    let scope = scope_for(&host, "a");
    let result = scope.invoke(&wire("in_details"), Value::Null).await;
    let text = result.details.to_string();
    assert_clean(&text, &all_secrets());
    assert_eq!(result.details["plain"], "nothing secret");
    assert_eq!(result.details["list"][0], REDACTED);
    assert_eq!(result.details["list"][1]["deeper"][0], "a [REDACTED] b");
    assert_eq!(result.details["nested"][REDACTED], "the key is a key");
    assert_eq!(
        result.details["nested"]["prefix-[REDACTED]"],
        json!([1, "x[REDACTED]x"])
    );
}

#[tokio::test]
async fn progress_is_redacted() {
    let host = host(LeakyPlugin::default());
    let scope = scope_for(&host, "a");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let result = scope
        .invoke(&wire("in_progress"), Value::Null)
        .progress(move |p: ToolProgress| sink.lock().unwrap().push(p))
        .await;
    assert_eq!(result.content, "done");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].message, "using [REDACTED]");
    assert_eq!(seen[1].message, REDACTED);
    assert_eq!(seen[1].progress, Some(1.0));
}

#[tokio::test]
async fn error_results_are_redacted() {
    let host = host(LeakyPlugin::default());
    let scope = scope_for(&host, "a");
    let result = scope.invoke(&wire("in_error"), Value::Null).await;
    assert!(result.is_error);
    assert_eq!(result.content, "bad key [REDACTED]");
}

#[tokio::test]
async fn panics_are_redacted_in_results_and_call_errors() {
    let host = host(LeakyPlugin::default());
    let scope = scope_for(&host, "a");
    for tool in ["in_panic", "in_async_panic"] {
        let result = scope.invoke(&wire(tool), Value::Null).await;
        assert!(result.is_error, "{result:?}");
        assert_clean(&result.content, &all_secrets());
        assert!(result.content.contains(REDACTED), "{}", result.content);

        let err = scope
            .invoke(&wire(tool), Value::Null)
            .checked()
            .await
            .unwrap_err();
        assert!(matches!(err, InvokeError::Panicked { .. }), "{err:?}");
        assert_clean(&err.to_string(), &all_secrets());
        assert_clean(&format!("{err:?}"), &all_secrets());
    }
}

#[tokio::test]
async fn a_credential_resolved_during_the_call_is_redacted_in_its_result() {
    let host = host(LeakyPlugin::default());
    let scope = scope_for(&host, "a");
    let result = scope.invoke(&wire("resolve_late"), Value::Null).await;
    assert_eq!(result.content, "late: [REDACTED]");
}

#[tokio::test]
async fn argument_errors_quoting_a_secret_are_redacted() {
    let host = host(LeakyPlugin::default());
    let scope = scope_for(&host, "a");

    // A secret passed as a value of the wrong type is quoted back by serde.
    let result = scope
        .invoke(&wire("typed"), json!({ "count": KEY_A }))
        .await;
    assert!(result.is_error);
    assert_clean(&result.content, &all_secrets());
    assert!(result.content.contains("/count"), "{}", result.content);
    assert!(result.content.contains(REDACTED), "{}", result.content);

    // A secret as an unknown property's name is in the path.
    let result = scope
        .invoke(&wire("typed"), json!({ "count": 1, KEY_A: true }))
        .await;
    assert_clean(&result.content, &all_secrets());

    // The same through argument text: a duplicate property named by it.
    let text = format!(r#"{{"count": 1, "{KEY_A}": 1, "{KEY_A}": 2}}"#);
    let result = scope
        .invoke(
            &wire("typed"),
            oscova_core::host::invoke::Arguments::json(&text),
        )
        .await;
    assert!(result.is_error);
    assert_clean(&result.content, &all_secrets());

    // And through `call`, whose error is typed.
    let err = scope
        .invoke(&wire("typed"), json!({ "count": KEY_A }))
        .checked()
        .await
        .unwrap_err();
    assert!(matches!(err, InvokeError::InvalidArguments { .. }));
    assert_clean(&err.to_string(), &all_secrets());
    assert_clean(&format!("{err:?}"), &all_secrets());
}

#[tokio::test]
async fn an_unknown_tool_named_by_a_secret_is_redacted() {
    let host = host(LeakyPlugin::default());
    let scope = scope_for(&host, "a");
    let result = scope.invoke(KEY_A, Value::Null).await;
    assert!(result.is_error);
    assert_clean(&result.content, &all_secrets());
    let result = scope
        .invoke(KEY_A, oscova_core::host::invoke::Arguments::json("{}"))
        .await;
    assert_clean(&result.content, &all_secrets());
    let err = scope
        .invoke(KEY_A, oscova_core::host::invoke::Arguments::json("{}"))
        .checked()
        .await
        .unwrap_err();
    assert!(matches!(err, InvokeError::UnknownTool(_)), "{err:?}");
    assert_clean(&err.to_string(), &all_secrets());
}

// ------------------------------------------------------- scopes and the host

#[tokio::test]
async fn redaction_is_per_scope_and_the_host_redactor_is_everywhere() {
    let host = host(LeakyPlugin::default());
    let a = scope_for(&host, "a");
    let b = scope_for(&host, "b");

    // Each scope redacts its own user's key.
    assert_eq!(
        b.invoke(&wire("in_content"), Value::Null).await.content,
        "my key is [REDACTED] (twice: [REDACTED])"
    );

    // B never resolved A's key, so B's scope does not know it is a secret:
    // redacting it there would tell B that it is someone's secret.
    let echoed = b.invoke(&wire("echo"), json!({ "text": KEY_A })).await;
    assert_eq!(echoed.content, KEY_A);
    assert!(!b.redactor().is_empty());
    assert_eq!(a.redactor().redact(KEY_B), KEY_B);

    // A, which resolved it, redacts it in whatever tool echoes it.
    let echoed = a.invoke(&wire("echo"), json!({ "text": KEY_A })).await;
    assert_eq!(echoed.content, REDACTED);

    // A value the host knows is redacted in every scope, even ones built
    // before it was added.
    host.redactor().add(HOST_WIDE);
    for scope in [&a, &b] {
        let result = scope
            .invoke(&wire("echo"), json!({ "text": format!("x {HOST_WIDE} y") }))
            .await;
        assert_eq!(result.content, "x [REDACTED] y");
    }
    let late = scope_for(&host, "b");
    let result = late
        .invoke(&wire("echo"), json!({ "text": HOST_WIDE }))
        .await;
    assert_eq!(result.content, REDACTED);
}

#[tokio::test]
async fn a_second_scope_for_the_same_user_redacts_its_own_resolution() {
    let host = host(LeakyPlugin::default());
    let first = scope_for(&host, "a");
    let second = scope_for(&host, "a");
    // Both factories resolved `acme.key`; only `first` resolved the late key.
    let _ = first.invoke(&wire("resolve_late"), Value::Null).await;
    assert_eq!(
        second
            .invoke(&wire("in_content"), Value::Null)
            .await
            .content,
        "my key is [REDACTED] (twice: [REDACTED])"
    );
    assert_eq!(
        second
            .invoke(&wire("echo"), json!({ "text": LATE_A }))
            .await
            .content,
        LATE_A,
        "per scope: the second scope never resolved it"
    );
}

/// Resolves a key, then fails with an error that quotes it.
#[plugin(id = "test.blurt")]
pub struct BlurtingPlugin;

impl AgentPlugin for BlurtingPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|ctx: &AgentPluginContext| {
            let key = ctx.credentials().get("acme.key").ok_or("no key")?;
            Err::<LeakyToolset, String>(format!("the server refused {}", key.expose_secret()))
        });
    }
}

#[test]
fn a_failing_factorys_diagnostic_does_not_quote_the_credential_it_resolved() {
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![BlurtingPlugin])
        .credentials(resolver)
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("a"));
    let [diagnostic] = scope.diagnostics() else {
        panic!("one diagnostic expected: {:?}", scope.diagnostics());
    };
    assert!(
        diagnostic
            .message
            .contains(&format!("the server refused {REDACTED}")),
        "{diagnostic}"
    );
    assert_clean(&diagnostic.to_string(), &[KEY_A]);
}
