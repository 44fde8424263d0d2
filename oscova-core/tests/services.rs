//! Host services: what the host built, handed to toolsets through their
//! context, typed — providers by kind, services by type, the user's files
//! root — and the rules for building them (once, after the providers, in
//! the order the host added them, one per type, failures isolated).
//! Services are the host's alone: a plugin's builder has no service
//! registration (the UI test `plugin/fail/add_service.rs` pins that).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_core::context::ServiceContext;
use oscova_core::diagnostic::DiagnosticKind;
use oscova_core::prelude::*;
use oscova_core::provider::model::{ChatRequest, ChatResponse, ModelError, ModelProvider};
use oscova_core::provider::{BoxFuture, ProviderTypeKey};

/// A model provider that answers nothing; only its key matters here.
struct Named(&'static str);

impl ModelProvider for Named {
    fn type_key(&self) -> ProviderTypeKey {
        ProviderTypeKey::from_static(self.0)
    }
    fn display_name(&self) -> &str {
        self.0
    }
    fn chat<'a>(&'a self, _: ChatRequest<'a>) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async { Err(ModelError::Other("not a real model".into())) })
    }
}

/// A service built over the host's model providers.
struct ModelIndex {
    keys: Vec<String>,
}

impl ModelIndex {
    fn over(ctx: &ServiceContext<'_>) -> Self {
        Self {
            keys: ctx
                .providers::<dyn ModelProvider>()
                .iter()
                .map(|p| p.provider().type_key().to_string())
                .collect(),
        }
    }
}

static INDEX_BUILDS: AtomicUsize = AtomicUsize::new(0);

/// Reports what its context handed it.
pub struct ReportToolset {
    models: Vec<String>,
    index: Option<Arc<ModelIndex>>,
    root: Option<String>,
}

#[toolset]
impl ReportToolset {
    /// What this toolset saw when it was built.
    pub fn report(&self) -> String {
        format!(
            "models={} index={} root={}",
            self.models.join(","),
            self.index
                .as_ref()
                .map_or_else(|| "-".to_owned(), |i| i.keys.join(",")),
            self.root.as_deref().unwrap_or("-")
        )
    }
}

/// Registers two model providers and a toolset that uses the host's
/// `ModelIndex` service when there is one.
#[plugin(id = "svc.models")]
pub struct ModelsPlugin;

impl AgentPlugin for ModelsPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_model_provider(|_: &ProviderContext| Named("alpha"))
            .add_provider::<dyn ModelProvider, _, _>(|_: &ProviderContext| Named("beta"))
            .add_toolset(|ctx: &AgentPluginContext| ReportToolset {
                models: ctx
                    .providers::<dyn ModelProvider>()
                    .iter()
                    .map(|p| p.provider().type_key().to_string())
                    .collect(),
                index: ctx.service::<ModelIndex>(),
                root: ctx.files_root().map(|p| p.display().to_string()),
            });
    }
}

const REPORT: &str = "svc_models__report__report";

#[tokio::test]
async fn a_toolset_reaches_providers_services_and_the_files_root_through_its_context() {
    let before = INDEX_BUILDS.load(Ordering::SeqCst);
    let host = PluginHost::builder()
        .plugins(linked_plugins![ModelsPlugin])
        .service_with(|ctx: &ServiceContext<'_>| {
            INDEX_BUILDS.fetch_add(1, Ordering::SeqCst);
            ModelIndex::over(ctx)
        })
        .files_roots_under("/srv/files")
        .build()
        .unwrap();
    assert_eq!(host.providers::<dyn ModelProvider>().len(), 2);
    assert_eq!(
        host.service::<ModelIndex>().unwrap().keys,
        ["alpha", "beta"]
    );

    let alice = host.user_scope(UserInfo::new("alice"));
    let bob = host.user_scope(UserInfo::new("bob").with_files_root("/home/bob/files"));
    let a = alice.invoke(REPORT, json!({})).await;
    assert_eq!(
        a.content,
        "models=alpha,beta index=alpha,beta root=/srv/files/alice"
    );
    // A user's own files root wins over the host's.
    let b = bob.invoke(REPORT, json!({})).await;
    assert_eq!(
        b.content,
        "models=alpha,beta index=alpha,beta root=/home/bob/files"
    );
    assert_eq!(bob.user().files_root(), Some(Path::new("/home/bob/files")));
    // Built once at start-up, shared by both users.
    assert_eq!(INDEX_BUILDS.load(Ordering::SeqCst) - before, 1);
}

#[tokio::test]
async fn the_first_service_of_a_type_is_kept_and_a_later_one_is_reported() {
    let host = PluginHost::builder()
        .plugins(linked_plugins![ModelsPlugin])
        .service(ModelIndex {
            keys: vec!["from-host".into()],
        })
        .service_with(ModelIndex::over)
        .build()
        .unwrap();
    assert_eq!(host.service::<ModelIndex>().unwrap().keys, ["from-host"]);
    let dropped: Vec<_> = host
        .diagnostics()
        .iter()
        .filter(|d| d.kind == DiagnosticKind::DuplicateService)
        .collect();
    assert_eq!(dropped.len(), 1, "{:?}", host.diagnostics());
    assert_eq!(dropped[0].plugin, None);
    assert!(dropped[0].message.contains("ModelIndex"), "{}", dropped[0]);

    // No files root anywhere: the context says so.
    let scope = host.user_scope(UserInfo::new("carol"));
    let r = scope.invoke(REPORT, json!({})).await;
    assert_eq!(r.content, "models=alpha,beta index=from-host root=-");
}

struct Later(usize);
struct Fragile;

#[test]
fn a_failing_or_panicking_service_is_left_out_and_the_rest_are_built() {
    let host = PluginHost::builder()
        .no_linked_plugins()
        .try_service_with(|_: &ServiceContext<'_>| Err::<Fragile, _>("no disk"))
        .service_with(|_: &ServiceContext<'_>| -> Later { panic!("boom") })
        .service_with(|ctx: &ServiceContext<'_>| {
            // Services see the ones built before them.
            Later(usize::from(ctx.service::<Fragile>().is_some()) + 40)
        })
        .build()
        .unwrap();
    assert!(host.service::<Fragile>().is_none());
    let failed: Vec<_> = host
        .diagnostics()
        .iter()
        .filter(|d| d.kind == DiagnosticKind::ServiceFailed)
        .map(|d| d.message.clone())
        .collect();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(failed[0].contains("failed: no disk"), "{}", failed[0]);
    assert!(failed[1].contains("panicked: boom"), "{}", failed[1]);
    // The panicking one did not take the type: the next `Later` is built.
    assert_eq!(host.service::<Later>().map(|l| l.0), Some(40));
}

#[test]
fn a_hand_built_context_has_no_providers_and_no_services() {
    let ctx = AgentPluginContext::for_user("demo", UserInfo::new("dan"));
    assert!(ctx.providers::<dyn ModelProvider>().is_empty());
    assert!(ctx.service::<ModelIndex>().is_none());
    assert_eq!(ctx.files_root(), None);
}

/// Loads two of its three sources; says so with a load diagnostic.
#[plugin(id = "svc.partial")]
pub struct PartialPlugin;

impl AgentPlugin for PartialPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_model_provider(|_: &ProviderContext| Named("gamma"))
            .report(oscova_core::diagnostic::Diagnostic::warning(
                DiagnosticKind::ConfigureFailed,
                // A plugin speaks for itself only: the host puts its id here.
                Some("someone.else"),
                "source `archive` unreachable; its tools are left out",
            ));
    }
}

#[test]
fn a_plugin_reports_what_it_left_out_as_its_own_load_diagnostic() {
    let host = PluginHost::builder()
        .plugins(linked_plugins![PartialPlugin])
        .build()
        .unwrap();
    let reported: Vec<_> = host
        .diagnostics()
        .iter()
        .filter(|d| d.message.contains("archive"))
        .collect();
    assert_eq!(reported.len(), 1, "{:?}", host.diagnostics());
    assert_eq!(reported[0].plugin.as_deref(), Some("svc.partial"));
    // The rest of the plugin loaded.
    assert_eq!(host.providers::<dyn ModelProvider>().len(), 1);
}
