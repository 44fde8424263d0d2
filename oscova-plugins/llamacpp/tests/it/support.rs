//! The model, a host with the time plugin on a fixed clock, and the
//! provider's configuration.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use oscova_core::CancellationToken;
use oscova_core::prelude::*;
use oscova_core::provider::model::{ModelProvider, ModelProviderConfig};
use oscova_plugin_llamacpp::{DEFAULT_MODEL, LlamaCppPlugin, LlamaCppProvider};
use oscova_plugin_time::TimePlugin;

/// 2026-03-14T03:15:00Z: 12:15 in Tokyo.
pub(crate) const NOW: u64 = 1_773_458_100;

/// The provider's configuration, after checking the default model is
/// installed; a test without it fails saying how to install it.
pub(crate) async fn config() -> ModelProviderConfig {
    let config = ModelProviderConfig::new("llamacpp");
    let provider = LlamaCppProvider::default();
    let catalog = provider
        .downloads()
        .expect("downloads")
        .catalog(&config, None, CancellationToken::new())
        .await
        .expect("catalog");
    let default = catalog
        .iter()
        .find(|m| m.name == DEFAULT_MODEL)
        .expect("the default model is in the catalog");
    assert!(
        default.installed,
        "these tests need the model {DEFAULT_MODEL}: run scripts/ensure-llamacpp-model.sh \
         (scripts/test.sh does)"
    );
    config
}

/// A host with the embedded model and the time plugin reading [`NOW`].
pub(crate) fn host() -> PluginHost {
    let clock: oscova_plugin_time::Clock =
        Arc::new(|| SystemTime::UNIX_EPOCH + Duration::from_secs(NOW));
    PluginHost::builder()
        .plugins(oscova_core::linked_plugins![LlamaCppPlugin])
        .plugin_instance(TimePlugin::with_clock(clock))
        .build()
        .expect("host")
}

/// The host's llamacpp provider.
pub(crate) fn provider(host: &PluginHost) -> Arc<dyn ModelProvider> {
    oscova_agent::chat::model_provider(host, "llamacpp").expect("registered")
}
