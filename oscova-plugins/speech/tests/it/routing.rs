//! Which provider a call reaches: the user's offline setting against
//! remote providers (with a loopback server that counts connections), the
//! `provider` argument, credentials, and routers handed over by the host so
//! plugin speech providers are routed too.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use oscova_core::prelude::*;
use oscova_plugin_speech::{SpeechPlugin, SpeechSettings};
use oscova_speech::{
    BoxFuture, ProviderTypeKey, SpeechError, SpeechProviderConfig, SpeechRouters,
    SpeechSynthesisProvider, SynthesisRequest, SynthesizedAudio, wav::Pcm16kMono, wav::encode_wav,
};
use serde_json::json;
use support::{Fixture, KEY, SPEAK, TRANSCRIBE, loopback, tone_wav};

/// A remote endpoint on TEST-NET-1 (RFC 5737): never routed, never connected.
const TEST_NET: &str = "http://192.0.2.1:9";

fn openai(endpoint: &str) -> SpeechProviderConfig {
    SpeechProviderConfig::new("openai").endpoint(endpoint)
}

/// Alice's settings come from `settings`, asked at every call.
fn fixture(settings: impl Fn() -> SpeechSettings + Send + Sync + 'static) -> Fixture {
    Fixture::with(
        move |base| SpeechPlugin::per_user(base).settings(move |_| settings()),
        true,
    )
}

#[tokio::test]
async fn offline_users_are_refused_remote_providers_before_any_connection() {
    let server = loopback("should never be heard").await;
    // `127.1` and `2130706433` are 127.0.0.1 to an HTTP client, but not
    // local by the offline rule (it is decided on the text, without
    // guessing at shorthand forms), so a call that got past the router
    // would land on the counting server.
    let shorthand = server.url_via("127.1");
    let decimal = server.url_via("2130706433");
    for endpoint in [TEST_NET, shorthand.as_str(), decimal.as_str()] {
        let config = openai(endpoint);
        let f = fixture(move || {
            SpeechSettings::default()
                .synthesis(config.clone())
                .recognition(config.clone())
                .synthesis_credential("openai.api_key")
                .recognition_credential("openai.api_key")
        });
        fs_write(&f, "in.wav", &tone_wav());
        let started = Instant::now();
        let spoken = f
            .refused(
                SPEAK,
                json!({"text": "hello", "path": "new/out.wav", "create_dirs": true}),
                "offline operation is required, but endpoint",
            )
            .await;
        assert!(
            spoken.content.contains("speech provider `openai`"),
            "{}",
            spoken.content
        );
        assert!(
            spoken.content.contains("keep speech on this machine"),
            "{}",
            spoken.content
        );
        let heard = f
            .refused(
                TRANSCRIBE,
                json!({"path": "in.wav"}),
                "offline operation is required, but endpoint",
            )
            .await;
        assert!(heard.content.contains(endpoint), "{}", heard.content);
        // A connection attempt to TEST-NET would hang until a timeout.
        assert!(started.elapsed() < Duration::from_secs(2), "{endpoint}");
        assert!(!f.root().join("new").exists());
        assert!(!spoken.content.contains(KEY) && !heard.content.contains(KEY));
    }
    assert_eq!(server.connections(), 0, "{:?}", server.requests());

    // A remote provider with no endpoint at all is refused too.
    let f = fixture(|| SpeechSettings::default().recognition(SpeechProviderConfig::new("openai")));
    fs_write(&f, "in.wav", &tone_wav());
    f.refused(
        TRANSCRIBE,
        json!({"path": "in.wav"}),
        "provider `openai` has no local endpoint configured",
    )
    .await;
}

#[tokio::test]
async fn the_same_endpoint_is_reached_once_the_user_allows_the_network() {
    // The control for the test above: the refused endpoint does reach the
    // counting server when offline operation is not required.
    let server = loopback("hello from the loopback service").await;
    let offline = Arc::new(AtomicBool::new(true));
    let flag = offline.clone();
    let config = openai(&server.url_via("127.1"));
    let f = fixture(move || {
        SpeechSettings::default()
            .offline(flag.load(Ordering::SeqCst))
            .recognition(config.clone())
            .recognition_credential("openai.api_key")
    });
    fs_write(&f, "in.wav", &tone_wav());
    f.refused(
        TRANSCRIBE,
        json!({"path": "in.wav"}),
        "offline operation is required",
    )
    .await;
    assert_eq!(server.connections(), 0);

    // Settings are read per call: the same scope now may go online.
    offline.store(false, Ordering::SeqCst);
    let heard = f.ok(TRANSCRIBE, json!({"path": "in.wav"})).await;
    assert_eq!(heard.content, "hello from the loopback service");
    assert_eq!(heard.details["provider"], "openai");
    assert_eq!(heard.details["offline"], false);
    assert_eq!(server.connections(), 1);
    let seen = server.requests();
    assert_eq!(seen[0].path, "/v1/audio/transcriptions");
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[tokio::test]
async fn a_local_openai_compatible_server_is_allowed_offline() {
    let server = loopback("local whisper heard this").await;
    let config = openai(&server.url_via("127.0.0.1"));
    let f = fixture(move || {
        SpeechSettings::default()
            .synthesis(config.clone())
            .recognition(config.clone())
            .synthesis_credential("openai.api_key")
    });
    let spoken = f
        .ok(
            SPEAK,
            json!({"text": "hello", "path": "served.wav", "voice": "nova"}),
        )
        .await;
    assert_eq!(spoken.details["provider"], "openai");
    assert_eq!(spoken.details["voice"], "nova");
    assert_eq!(spoken.details["duration_seconds"], 0.5);
    let heard = f.ok(TRANSCRIBE, json!({"path": "served.wav"})).await;
    assert_eq!(heard.content, "local whisper heard this");
    assert_eq!(server.connections(), 2);
    let seen = server.requests();
    assert_eq!(seen[0].path, "/v1/audio/speech");
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    // No credential was named for recognition, so no key was sent.
    assert_eq!(seen[1].header("authorization"), None);
}

#[tokio::test]
async fn the_provider_argument_may_pick_only_configured_or_local_providers() {
    let f = Fixture::new();
    f.refused(
        SPEAK,
        json!({"text": "hello", "path": "a.wav", "provider": "openai"}),
        "speech provider `openai` is not set up for you for speaking; leave `provider` out to use `flite`, or pick one of: flite",
    )
    .await;
    // The default recognizer is whisper when its model is installed.
    let listed = match oscova_speech::providers::default_offline_recognizer() {
        "whisper" => "leave `provider` out to use `whisper`, or pick one of: whisper, pocketsphinx",
        _ => "or pick one of: pocketsphinx",
    };
    f.refused(
        TRANSCRIBE,
        json!({"path": "a.wav", "provider": "acme.nothing"}),
        listed,
    )
    .await;
    assert!(!f.root().join("a.wav").exists());

    // A user configured for a remote service may still pick a local one.
    let f = fixture(|| SpeechSettings::default().synthesis(openai(TEST_NET)));
    let r = f
        .ok(
            SPEAK,
            json!({"text": "hello", "path": "b.wav", "provider": "flite"}),
        )
        .await;
    assert_eq!(r.details["provider"], "flite");
}

/// Speaks every text as a quarter second of tone; local by design.
struct Beep;

impl SpeechSynthesisProvider for Beep {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static("acme.beep")
    }
    fn display_name(&self) -> &str {
        "Acme beeper"
    }
    fn default_is_local_endpoint(&self) -> bool {
        true
    }
    fn synthesize<'a>(
        &'a self,
        _: SynthesisRequest<'a>,
    ) -> BoxFuture<'a, Result<SynthesizedAudio, SpeechError>> {
        let samples = (0..4_000)
            .map(|i| ((i % 40) * 500 - 10_000) as i16)
            .collect();
        Box::pin(async move {
            Ok(SynthesizedAudio {
                wav: encode_wav(&Pcm16kMono { samples }),
            })
        })
    }
}

/// Registers [`Beep`].
#[plugin(id = "acme.beep")]
#[derive(Default)]
pub struct BeepPlugin;

impl AgentPlugin for BeepPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_speech_synthesis_provider(|_: &ProviderContext| Beep);
    }
}

#[tokio::test]
async fn the_tools_route_plugin_providers_with_no_wiring() {
    let base = tempfile::tempdir().unwrap();
    let speech = SpeechPlugin::per_user(base.path())
        .settings(|_| SpeechSettings::default().synthesis(SpeechProviderConfig::new("acme.beep")));
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![BeepPlugin])
        .plugin_instance(speech)
        .approval_handler(|_: &oscova_core::ApprovalRequest<'_>| true)
        .strict(true)
        .build()
        .unwrap();
    // A plugin registers no host service: the plugin routes over what its
    // context sees, every plugin's speech providers.
    assert!(host.service::<SpeechRouters>().is_none());

    let scope = host.user_scope(UserInfo::new("alice"));
    let r = scope
        .invoke(SPEAK, json!({"text": "beep", "path": "beep.wav"}))
        .await;
    assert!(!r.is_error, "{}", r.content);
    assert_eq!(r.details["provider"], "acme.beep");
    assert_eq!(r.details["duration_seconds"], 0.25);
    assert!(base.path().join("alice/beep.wav").is_file());

    // A plugin provider that runs locally may be picked by name, and the
    // built-in ones still route.
    let r = scope
        .invoke(
            SPEAK,
            json!({"text": "hello", "path": "flite.wav", "provider": "flite"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.content);
    // A second user's scope routes the same way.
    let bob = host.user_scope(UserInfo::new("bob"));
    let r = bob
        .invoke(SPEAK, json!({"text": "beep", "path": "beep.wav"}))
        .await;
    assert_eq!(r.details["provider"], "acme.beep", "{}", r.content);
}

#[tokio::test]
async fn a_host_builds_the_routers_once_over_every_plugins_providers() {
    let base = tempfile::tempdir().unwrap();
    let speech = SpeechPlugin::per_user(base.path())
        .settings(|_| SpeechSettings::default().synthesis(SpeechProviderConfig::new("acme.beep")));
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![BeepPlugin])
        .plugin_instance(speech)
        .service_with(SpeechRouters::from_context)
        .approval_handler(|_: &oscova_core::ApprovalRequest<'_>| true)
        .strict(true)
        .build()
        .unwrap();
    let routers = host.service::<SpeechRouters>().expect("the host's service");
    // kokoro, piper: this crate's tests enable oscova-speech's `piper` feature.
    assert_eq!(
        routers.synthesis().keys(),
        ["acme.beep", "flite", "kokoro", "openai", "piper"]
    );
    assert_eq!(routers.diagnostics().count(), 0);
    let r = host
        .user_scope(UserInfo::new("alice"))
        .invoke(SPEAK, json!({"text": "beep", "path": "beep.wav"}))
        .await;
    assert_eq!(r.details["provider"], "acme.beep", "{}", r.content);
}

#[tokio::test]
async fn routers_the_host_registers_take_precedence() {
    let base = tempfile::tempdir().unwrap();
    let speech = SpeechPlugin::default()
        .settings(|_| SpeechSettings::default().synthesis(SpeechProviderConfig::new("acme.beep")));
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![BeepPlugin])
        .plugin_instance(speech)
        .service(SpeechRouters::builtin(
            oscova_core::HttpClient::shared_default(),
            oscova_core::process::ProcessSpawnPolicy::new(),
        ))
        .files_roots_under(base.path())
        .approval_handler(|_: &oscova_core::ApprovalRequest<'_>| true)
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let r = scope
        .invoke(SPEAK, json!({"text": "beep", "path": "beep.wav"}))
        .await;
    assert!(r.is_error);
    assert!(
        r.content.contains(
            "no speech provider has type `acme.beep`; known types: flite, kokoro, openai"
        ),
        "{}",
        r.content
    );
    // The plugin took the user's files root from the host.
    let r = scope
        .invoke(
            SPEAK,
            json!({"text": "hello", "path": "flite.wav", "provider": "flite"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.content);
    assert!(base.path().join("alice/flite.wav").is_file());
}

fn fs_write(f: &Fixture, name: &str, bytes: &[u8]) {
    std::fs::write(f.root().join(name), bytes).unwrap();
}
