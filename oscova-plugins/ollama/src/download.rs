//! Model downloads through Ollama: the catalog and `POST /api/pull`.
//!
//! Rules: the catalog is what the server has installed (`/api/tags`), plus
//! the names a user listed in the configuration's `catalog` option and its
//! `model`, marked not installed when the server lacks them (Ollama has no
//! API for its remote library). A pull streams one JSON line per step
//! (`pulling manifest`, one `pulling <digest>` run per layer with `total`
//! and `completed`, `verifying sha256 digest`, `writing manifest`,
//! `success`); every line becomes one progress callback, in order. Only a
//! final `success` counts as done. Cancelling drops the response, which
//! closes the connection, and Ollama stops the transfer when its client
//! goes away.

use oscova_core::http::backend::{Body, Scrub, authorized, check_status, excerpt, send};
use oscova_core::provider::BoxFuture;
use oscova_core::provider::model::{
    DownloadProgress, ModelDownloadProvider, ModelError, ModelInfo, ModelProviderConfig,
};
use oscova_core::{CancellationToken, SecretString};
use serde_json::{Value, json};

use crate::api::{
    CATALOG, INSECURE, PullLine, canonical, error_text, is_missing_model, parse_line, pull_line,
};
use crate::lines::{Flow, read_lines};
use crate::provider::{OllamaProvider, plain_failure};

impl OllamaProvider {
    async fn catalog_of(
        &self,
        config: &ModelProviderConfig,
        api_key: Option<&SecretString>,
        cancel: CancellationToken,
    ) -> Result<Vec<ModelInfo>, ModelError> {
        let mut models = self.list_models(config, api_key, cancel).await?;
        let listed = config
            .options
            .get(CATALOG)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str);
        for name in listed.chain(config.model.as_deref()) {
            let name = name.trim();
            let known = models.iter().any(|m| canonical(&m.name) == canonical(name));
            if !name.is_empty() && !known {
                models.push(ModelInfo::new(name));
            }
        }
        Ok(models)
    }

    async fn pull(
        &self,
        config: &ModelProviderConfig,
        api_key: Option<&SecretString>,
        model: &str,
        progress: &(dyn Fn(DownloadProgress) + Send + Sync),
        cancel: CancellationToken,
    ) -> Result<(), ModelError> {
        let model = model.trim();
        if model.is_empty() {
            return Err(ModelError::Other("no model name was given to pull".into()));
        }
        let url = format!("{}/api/pull", Self::base_url(config));
        let scrub = Scrub::new(api_key);
        // `name` is the field older servers read; newer ones read `model`.
        let mut body = json!({"model": model, "name": model, "stream": true});
        if config.options.get(INSECURE).and_then(Value::as_bool) == Some(true) {
            body["insecure"] = json!(true);
        }
        let request = authorized(self.http_for(config).post(&url).json(&body), api_key);
        let response = send(request, &url, &cancel, &scrub).await?;
        let response = match check_status(response, &url, &cancel, &scrub).await? {
            Ok(response) => response,
            Err(failure) => {
                let error = parse_line(&failure.body).ok().and_then(|o| error_text(&o));
                if error.as_deref().is_some_and(is_missing_model) {
                    return Err(self.model_not_found(config, api_key, model, cancel).await);
                }
                return Err(plain_failure(failure, &url, &scrub));
            }
        };

        let mut succeeded = false;
        let mut server_error = None;
        let mut last = String::new();
        read_lines(Body::new(response, &url), &cancel, &scrub, &mut |line| {
            if line.trim().is_empty() {
                return Ok(Flow::Continue);
            }
            last = excerpt(line);
            match pull_line(line)? {
                PullLine::Error(error) => {
                    server_error = Some(error);
                    Ok(Flow::Stop)
                }
                PullLine::Progress(step) => {
                    succeeded = step.status == "success";
                    progress(step);
                    Ok(if succeeded {
                        Flow::Stop
                    } else {
                        Flow::Continue
                    })
                }
            }
        })
        .await?;

        if let Some(error) = server_error {
            if is_missing_model(&error) {
                return Err(self.model_not_found(config, api_key, model, cancel).await);
            }
            return Err(ModelError::Other(format!(
                "the server could not pull `{model}`: {}",
                scrub.text(&error)
            )));
        }
        if !succeeded {
            return Err(ModelError::Malformed {
                message: "the pull stream ended before `success`".into(),
                line: if last.is_empty() {
                    "(no line)".into()
                } else {
                    last
                },
            });
        }
        Ok(())
    }
}

impl ModelDownloadProvider for OllamaProvider {
    fn catalog<'a>(
        &'a self,
        config: &'a ModelProviderConfig,
        api_key: Option<&'a SecretString>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<ModelInfo>, ModelError>> {
        Box::pin(self.catalog_of(config, api_key, cancel))
    }

    fn download<'a>(
        &'a self,
        config: &'a ModelProviderConfig,
        api_key: Option<&'a SecretString>,
        model: &'a str,
        progress: &'a (dyn Fn(DownloadProgress) + Send + Sync),
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<(), ModelError>> {
        Box::pin(self.pull(config, api_key, model, progress, cancel))
    }
}
