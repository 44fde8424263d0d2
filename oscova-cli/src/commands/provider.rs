//! What `chat` and `models` share: the model provider, its configuration,
//! its key, and the offline check.
//!
//! Rules: the provider is one the host loaded (the first registered under
//! the type key), `--provider` or else the embedded `llamacpp` when the
//! program links it, else `ollama`; an unknown key is a usage error
//! listing the loaded ones. A command that needs a model takes `--model`,
//! else the config's, else the provider's own default
//! (`ModelProvider::default_model`: `llamacpp` names its catalog's).
//! The configuration is the config file's `[providers.<key>]` table with
//! `--endpoint` laid over it; the saved `endpoint_scope` is kept whatever
//! the endpoint. The key is the user's credential `<key>.api_key`
//! (`OSCOVA_CREDENTIAL_<KEY>_API_KEY`, the user's or the shared
//! `[credentials]`), resolved like any credential and never printed: the
//! host's redactor already holds every configured secret. `check_offline`
//! runs here, before the command reads input or makes any request, so a
//! refusal makes no connection. A saved `endpoint_scope = "local"` for an
//! endpoint that does not name this machine wins, and is said so on
//! stderr, naming the endpoint, every time it is used.

use std::sync::Arc;

use oscova_agent::chat::{model_provider, model_provider_keys};
use oscova_core::provider::model::{ModelProvider, ModelProviderConfig, check_offline};
use oscova_core::{SecretString, UserInfo, context::CredentialResolver};

use super::Env;
use crate::cli::ProviderArgs;
use crate::error::CliError;
use crate::output::warn;

/// A provider ready to call.
pub(super) struct Selected {
    /// The provider the host built.
    pub(super) provider: Arc<dyn ModelProvider>,
    /// Its configuration, flags applied.
    pub(super) config: ModelProviderConfig,
    /// The user's key for it, if one is configured.
    pub(super) api_key: Option<SecretString>,
    /// The user the command acts for.
    pub(super) user: UserInfo,
    /// `--offline` was given.
    pub(super) offline: bool,
}

/// Picks the provider and its configuration, and refuses a non-local
/// endpoint when `--offline` was given.
pub(super) fn select(
    env: &Env,
    args: &ProviderArgs,
    user: Option<&str>,
) -> Result<Selected, CliError> {
    let key = match args.provider.as_deref() {
        Some(key) => key.trim(),
        None => default_provider(env),
    };
    let Some(provider) = model_provider(&env.host, key) else {
        return Err(CliError::UnknownProvider {
            key: key.to_owned(),
            available: model_provider_keys(&env.host),
        });
    };
    let mut config = env.config.model_provider(key);
    if let Some(endpoint) = args.endpoint.as_deref().map(str::trim) {
        config.endpoint = Some(endpoint.to_owned()).filter(|e| !e.is_empty());
    }
    check_offline(&config, &*provider, args.offline)
        .map_err(|e| CliError::from(e).redacted(&[env.host.redactor()]))?;
    if let Some(warning) = config.scope_override() {
        warn(&warning.to_string());
    }
    let user = env.config.user(user);
    let api_key = env
        .config
        .credentials()
        .resolve(&user, &api_key_credential(key));
    Ok(Selected {
        provider,
        config,
        api_key,
        user,
        offline: args.offline,
    })
}

/// [`select`], then the model: `model` (`--model`) over the configured
/// one, else the provider's default; none is [`CliError::NoModel`].
pub(super) fn select_with_model(
    env: &Env,
    args: &ProviderArgs,
    user: Option<&str>,
    model: Option<&str>,
) -> Result<Selected, CliError> {
    let mut selected = select(env, args, user)?;
    if let Some(model) = model.map(str::trim) {
        selected.config.model = Some(model.to_owned()).filter(|m| !m.is_empty());
    }
    if selected.config.model.is_none() {
        selected.config.model = selected.provider.default_model();
    }
    if selected.config.model.is_none() {
        return Err(CliError::NoModel {
            provider: selected.config.provider.to_string(),
        });
    }
    Ok(selected)
}

/// The provider used without `--provider`: the embedded `llamacpp` when
/// this program links it, else `ollama`.
pub(super) fn default_provider(env: &Env) -> &'static str {
    if model_provider(&env.host, EMBEDDED).is_some() {
        EMBEDDED
    } else {
        "ollama"
    }
}

/// The type key of the embedded model provider.
const EMBEDDED: &str = "llamacpp";

/// The credential holding provider `key`'s API key: `<key>.api_key`.
pub(super) fn api_key_credential(key: &str) -> String {
    format!("{key}.api_key")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_key_credential_has_a_documented_variable() {
        assert_eq!(
            crate::config::credential_env_var(&super::api_key_credential("openai")),
            "OSCOVA_CREDENTIAL_OPENAI_API_KEY"
        );
    }
}
