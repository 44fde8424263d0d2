//! `oscova models list|pull`.
//!
//! Rules: the provider and the offline check come from `provider::select`,
//! so a refused endpoint gets no request. `list` asks the provider through
//! the contract (`ModelProvider::list_models`: for `llamacpp` its catalog
//! with sizes, licences and what is installed, for `ollama` the installed
//! models plus the config's `catalog` option and `model`, for `openai` the
//! server's `GET /v1/models`); a provider that cannot list is a usage
//! error. `pull` needs a download side
//! (a usage error without one) and shows progress as `progress` says; it
//! succeeds only when the provider reports the download complete. Ctrl-C
//! cancels the request's token: the provider drops the connection and
//! returns "cancelled" (130).

mod progress;

use indicatif::HumanBytes;
use oscova_core::CancellationToken;
use oscova_core::provider::model::{DownloadProgress, ModelError};
use serde_json::json;

use super::provider::{Selected, select};
use super::{Env, cancellable};
use crate::cli::{ModelsCommand, ModelsListArgs, PullArgs};
use crate::error::{CliError, ExitStatus};
use crate::output::{print_json, print_json_line, print_text};
use progress::PullProgress;

pub(super) async fn run(env: &Env, command: ModelsCommand) -> Result<ExitStatus, CliError> {
    match command {
        ModelsCommand::List(args) => list(env, args).await,
        ModelsCommand::Pull(args) => pull(env, args).await,
    }
}

async fn list(env: &Env, args: ModelsListArgs) -> Result<ExitStatus, CliError> {
    let selected = select(env, &args.provider, args.user.user.as_deref())?;
    let Selected {
        provider,
        config,
        api_key,
        ..
    } = &selected;
    let key = config.provider.as_str();
    let cancel = CancellationToken::new();
    let work = provider.list_models(config, api_key.as_ref(), cancel.clone());
    let models = finish(env, cancellable(work, &cancel).await)?;
    if env.json {
        print_json(&json!({
            "provider": key,
            "endpoint": config.endpoint,
            "models": models,
        }))?;
        return Ok(ExitStatus::Success);
    }
    if models.is_empty() {
        print_text("no models")?;
        return Ok(ExitStatus::Success);
    }
    let width = models.iter().map(|m| m.name.len()).max().unwrap_or(0);
    // A licence column when the provider knows licences (llamacpp's catalog).
    let licensed = models.iter().any(|m| m.license.is_some());
    let mut text = String::new();
    for m in &models {
        let size = m
            .size
            .map_or_else(|| "-".to_owned(), |s| HumanBytes(s).to_string());
        let state = if m.installed {
            "installed"
        } else {
            "not installed"
        };
        let license = match licensed {
            true => format!("  {:<10}", m.license.as_deref().unwrap_or("-")),
            false => String::new(),
        };
        text.push_str(&format!(
            "{:width$}  {size:>10}{license}  {state}\n",
            m.name
        ));
    }
    print_text(text.trim_end())?;
    Ok(ExitStatus::Success)
}

async fn pull(env: &Env, args: PullArgs) -> Result<ExitStatus, CliError> {
    let selected = select(env, &args.provider, args.user.user.as_deref())?;
    let key = selected.config.provider.to_string();
    let Some(downloads) = selected.provider.downloads() else {
        return Err(CliError::Unsupported {
            provider: key,
            operation: "download models",
        });
    };
    let name = args.name.trim();
    let display = PullProgress::new(env.json);
    let on_progress = |p: DownloadProgress| display.update(&p);
    let cancel = CancellationToken::new();
    let work = downloads.download(
        &selected.config,
        selected.api_key.as_ref(),
        name,
        &on_progress,
        cancel.clone(),
    );
    let outcome = cancellable(work, &cancel).await;
    display.finish();
    finish(env, outcome)?;
    if env.json {
        print_json_line(&json!({"event": "done", "provider": key, "model": name}))?;
    } else {
        print_text(&format!("pulled {name}"))?;
    }
    Ok(ExitStatus::Success)
}

/// The provider's result as the CLI's, redacted; `None` (a second Ctrl-C)
/// is a cancellation.
fn finish<T>(env: &Env, outcome: Option<Result<T, ModelError>>) -> Result<T, CliError> {
    match outcome {
        Some(Ok(value)) => Ok(value),
        Some(Err(error)) => Err(CliError::from(error).redacted(&[env.host.redactor()])),
        None => Err(ModelError::Cancelled.into()),
    }
}
