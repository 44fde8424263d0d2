//! When factories run, through a real host: the seed's lifecycle rules.
//!
//! - The builder only records: no toolset or provider factory runs while
//!   `configure` runs, nor between one plugin's `configure` and the next.
//! - Provider factories run once, when the host is built; toolset factories
//!   run exactly once per user scope, never at publication.
//! - All provider factories of one plugin receive the same
//!   `ProviderContext`; another plugin's factories receive another one.
//!
//! Every count lives in the plugin values handed to the host with
//! `plugin_instance`, so the tests, which run in parallel, share nothing.

#![allow(missing_docs)] // test fixtures, not API

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use oscova_core::prelude::*;
use oscova_core::provider::BoxFuture;
use oscova_core::provider::model::{ChatRequest, ChatResponse, ModelError, ModelProvider};
use oscova_core::provider::speech::{
    RecognitionRequest, SpeechError, SpeechRecognitionProvider, SpeechSynthesisProvider,
    SynthesisRequest, SynthesizedAudio, Transcript,
};
use oscova_core::{UserScope, provider::ProviderTypeKey};
use serde_json::json;

// ---- counting ------------------------------------------------------------

/// How often each factory ran, and what they saw.
#[derive(Debug, Default)]
pub struct Counts {
    greet_toolsets: AtomicUsize,
    count_toolsets: AtomicUsize,
    models: AtomicUsize,
    recognizers: AtomicUsize,
    synthesizers: AtomicUsize,
    /// The user of every toolset factory call, in order.
    users: Mutex<Vec<String>>,
    /// The counts as the counting plugin's `configure` ends.
    end_of_configure: Mutex<Option<[usize; 5]>>,
    /// The counts as the next plugin's `configure` starts: after the first
    /// plugin's `configure` returned, before anything is published or built.
    next_configure: Mutex<Option<[usize; 5]>>,
    /// Every provider factory call: kind, `plugin_id`, the context's address.
    contexts: Mutex<Vec<(&'static str, &'static str, usize)>>,
}

impl Counts {
    /// Toolset factory calls (greet, count), then provider factory calls
    /// (model, recognition, synthesis).
    fn snapshot(&self) -> [usize; 5] {
        [
            self.greet_toolsets.load(Ordering::SeqCst),
            self.count_toolsets.load(Ordering::SeqCst),
            self.models.load(Ordering::SeqCst),
            self.recognizers.load(Ordering::SeqCst),
            self.synthesizers.load(Ordering::SeqCst),
        ]
    }

    fn provider_called(&self, counter: &AtomicUsize, kind: &'static str, ctx: &ProviderContext) {
        counter.fetch_add(1, Ordering::SeqCst);
        let address = std::ptr::from_ref(ctx) as usize;
        self.contexts
            .lock()
            .unwrap()
            .push((kind, ctx.plugin_id(), address));
    }
}

// ---- toolsets ------------------------------------------------------------

pub struct GreetToolset {
    user: String,
}

#[toolset]
impl GreetToolset {
    /// Names the user the factory was called for.
    pub fn whoami(&self) -> String {
        self.user.clone()
    }
}

pub struct CountToolset;

#[toolset]
impl CountToolset {
    /// Answers one.
    pub fn one() -> u32 {
        1
    }
}

// ---- providers -----------------------------------------------------------

/// A provider of every kind that is never asked to do anything.
pub struct Idle;

impl ModelProvider for Idle {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static("life.idle")
    }
    fn display_name(&self) -> &str {
        "idle"
    }
    fn chat<'a>(&'a self, _: ChatRequest<'a>) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async { Err(ModelError::Other("idle".into())) })
    }
}

impl SpeechRecognitionProvider for Idle {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static("life.idle")
    }
    fn display_name(&self) -> &str {
        "idle"
    }
    fn recognize<'a>(
        &'a self,
        _: RecognitionRequest<'a>,
    ) -> BoxFuture<'a, Result<Transcript, SpeechError>> {
        Box::pin(async { Ok(Transcript::default()) })
    }
}

impl SpeechSynthesisProvider for Idle {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static("life.idle")
    }
    fn display_name(&self) -> &str {
        "idle"
    }
    fn synthesize<'a>(
        &'a self,
        _: SynthesisRequest<'a>,
    ) -> BoxFuture<'a, Result<SynthesizedAudio, SpeechError>> {
        Box::pin(async { Ok(SynthesizedAudio::default()) })
    }
}

// ---- plugins -------------------------------------------------------------

/// Registers two toolsets and one provider of each kind, all counted.
#[plugin(id = "life.counted")]
#[derive(Default)]
pub struct CountedPlugin {
    counts: Arc<Counts>,
}

impl AgentPlugin for CountedPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        let c = &self.counts;
        let (t1, t2, m, r, s) = (c.clone(), c.clone(), c.clone(), c.clone(), c.clone());
        b.add_toolset(move |ctx: &AgentPluginContext| {
            t1.greet_toolsets.fetch_add(1, Ordering::SeqCst);
            t1.users.lock().unwrap().push(ctx.user_id().to_owned());
            GreetToolset {
                user: ctx.user_id().to_owned(),
            }
        })
        .add_toolset(move |_: &AgentPluginContext| {
            t2.count_toolsets.fetch_add(1, Ordering::SeqCst);
            CountToolset
        })
        .add_model_provider(move |ctx: &ProviderContext| {
            m.provider_called(&m.models, "model", ctx);
            Idle
        })
        .add_speech_recognition_provider(move |ctx: &ProviderContext| {
            r.provider_called(&r.recognizers, "recognition", ctx);
            Idle
        })
        .add_speech_synthesis_provider(move |ctx: &ProviderContext| {
            s.provider_called(&s.synthesizers, "synthesis", ctx);
            Idle
        });
        *c.end_of_configure.lock().unwrap() = Some(c.snapshot());
    }
}

/// Loaded after `CountedPlugin`: looks at its counts, and registers a
/// provider of its own to get a context of its own.
#[plugin(id = "life.next")]
#[derive(Default)]
pub struct NextPlugin {
    counts: Arc<Counts>,
}

impl AgentPlugin for NextPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        let c = &self.counts;
        *c.next_configure.lock().unwrap() = Some(c.snapshot());
        let own = Arc::new(AtomicUsize::new(0));
        let counts = c.clone();
        b.add_speech_recognition_provider(move |ctx: &ProviderContext| {
            counts.provider_called(&own, "recognition", ctx);
            Idle
        });
    }
}

fn host(counts: &Arc<Counts>) -> PluginHost {
    let host = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(CountedPlugin {
            counts: counts.clone(),
        })
        .plugin_instance(NextPlugin {
            counts: counts.clone(),
        })
        .build()
        .unwrap();
    assert!(host.diagnostics().is_empty(), "{:?}", host.diagnostics());
    host
}

async fn call(scope: &UserScope, name: &str) -> String {
    let result = scope.invoke(name, json!({})).await;
    assert!(!result.is_error, "{}", result.content);
    result.content
}

// ---- the rules -----------------------------------------------------------

#[test]
fn nothing_is_created_while_configure_runs() {
    let counts = Arc::new(Counts::default());
    let host = host(&counts);

    // Inside configure, after every registration: nothing ran.
    assert_eq!(*counts.end_of_configure.lock().unwrap(), Some([0; 5]));
    // After that configure returned, while the next plugin configures:
    // still nothing.
    assert_eq!(*counts.next_configure.lock().unwrap(), Some([0; 5]));

    // Building the host published the tools without calling a toolset
    // factory, and ran each provider factory once.
    assert_eq!(host.tools().len(), 2);
    assert_eq!(counts.snapshot(), [0, 0, 1, 1, 1]);
    assert_eq!(
        host.providers::<dyn oscova_core::provider::model::ModelProvider>()
            .len(),
        1
    );
    assert_eq!(
        host.providers::<dyn oscova_core::provider::speech::SpeechRecognitionProvider>()
            .len(),
        2
    );
    assert_eq!(
        host.providers::<dyn oscova_core::provider::speech::SpeechSynthesisProvider>()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_toolset_factory_runs_exactly_once_per_user_scope() {
    let counts = Arc::new(Counts::default());
    let host = host(&counts);
    assert_eq!(counts.snapshot()[..2], [0, 0]);

    let alice = host.user_scope(UserInfo::new("alice"));
    assert_eq!(counts.snapshot()[..2], [1, 1]);
    let bob = host.user_scope(UserInfo::new("bob"));
    assert_eq!(counts.snapshot()[..2], [2, 2]);

    // Calls reuse the scope's toolsets: no factory runs again.
    for _ in 0..3 {
        assert_eq!(call(&alice, "life_counted__greet__whoami").await, "alice");
        assert_eq!(call(&bob, "life_counted__greet__whoami").await, "bob");
        assert_eq!(call(&bob, "life_counted__count__one").await, "1");
    }
    assert_eq!(counts.snapshot()[..2], [2, 2]);
    assert_eq!(*counts.users.lock().unwrap(), ["alice", "bob"]);

    // Once per scope, not once per user: a new scope is assembled anew.
    let again = host.user_scope(UserInfo::new("alice"));
    assert_eq!(counts.snapshot()[..2], [3, 3]);
    assert_eq!(call(&again, "life_counted__greet__whoami").await, "alice");

    // Scopes never build providers; those ran once, at start-up.
    assert_eq!(counts.snapshot()[2..], [1, 1, 1]);
}

#[test]
fn provider_factories_of_one_plugin_share_one_context() {
    let counts = Arc::new(Counts::default());
    let host = host(&counts);
    let contexts = counts.contexts.lock().unwrap().clone();
    // Creation order: the counted plugin's three, then the next plugin's.
    let kinds: Vec<_> = contexts
        .iter()
        .map(|(kind, plugin, _)| (*kind, *plugin))
        .collect();
    assert_eq!(
        kinds,
        [
            ("model", "life.counted"),
            ("recognition", "life.counted"),
            ("synthesis", "life.counted"),
            ("recognition", "life.next"),
        ]
    );
    // The same context, not three alike: one address for all three.
    // (Addresses are not compared across plugins: a context that is gone
    // may leave its address to the next one, so plugins are told apart by
    // `plugin_id` instead.)
    let counted: Vec<_> = contexts[..3].iter().map(|(_, _, addr)| *addr).collect();
    assert!(counted.iter().all(|a| *a == counted[0]), "{contexts:?}");

    // The published providers carry the plugin whose context built them.
    let recognizers: Vec<_> = host
        .providers::<dyn oscova_core::provider::speech::SpeechRecognitionProvider>()
        .iter()
        .map(|p| p.plugin_id())
        .collect();
    assert_eq!(recognizers, ["life.counted", "life.next"]);
    assert_eq!(
        host.providers::<dyn oscova_core::provider::model::ModelProvider>()[0].plugin_id(),
        "life.counted"
    );
    assert_eq!(
        host.providers::<dyn oscova_core::provider::speech::SpeechSynthesisProvider>()[0]
            .plugin_id(),
        "life.counted"
    );
}
