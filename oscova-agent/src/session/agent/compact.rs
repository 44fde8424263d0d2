//! Compaction in the session agent: [`AgentSession::compact`] and the
//! automatic one after a run, around `session::compaction`.
//!
//! Rules: the cut is prepared from the active branch first; then
//! `SessionBeforeCompactEvent` (with the tokens before): a handler may
//! cancel (nothing is written, `Ok(None)`) or supply the summary (no model
//! is called; the entry says an extension made it). Otherwise the
//! session's model summarises, with its key, under the host's offline
//! rule, cancelled by an abort. Whoever makes the summary, the user's and
//! the host's known secrets are redacted (the scope's one redaction, as
//! for tool output) from what is sent and from the summary stored. The
//! entry is written after the leaf the preparation saw (a session that
//! moved on is `SessionError::Changed`), then `SessionCompactEvent`. The automatic compaction runs after a run
//! that succeeded, when the host set [`AgentHostBuilder::compaction`](super::AgentHostBuilder::compaction)
//! and the context passes the window minus the reserve; its failure is
//! reported on the run's outcome, never as the run's failure. A handler
//! or command asks for one with [`ExtensionContext::compact`](super::ExtensionContext::compact):
//! it runs when the run (or the command) is done, whatever the context's
//! size.

use std::sync::Arc;

use super::dispatch::dispatch;
use super::error::AgentError;
use super::events::{SessionBeforeCompactEvent, SessionCompactEvent};
use super::host::AgentSession;
use super::run::RunOutcome;
use super::state::Shared;
use crate::chat::ChatError;
use crate::session::compaction::{
    CompactionError, CompactionOutcome, CompactionSettings, Summarizer, Summary, compact,
    context_tokens, prepare_compaction, should_compact, summarize,
};

impl AgentSession {
    /// Compacts the session's active branch now (see the module rules):
    /// `Ok(None)` when a handler cancelled it. `focus` is pi's custom
    /// instructions for the summary.
    pub async fn compact(
        &mut self,
        settings: &CompactionSettings,
        focus: Option<&str>,
    ) -> Result<Option<CompactionOutcome>, AgentError> {
        self.shared.check_fresh()?;
        compact_session(&self.shared, settings, focus).await
    }

    /// The automatic compaction after a run, recorded on its outcome.
    pub(crate) async fn compact_after(&mut self, outcome: &mut RunOutcome) {
        let requested = std::mem::take(&mut self.shared.state().compact_requested);
        let settings = match self.host.inner.compaction {
            Some(settings) => settings,
            // Asked for without the host's settings: pi's reserve and
            // kept tokens, whatever the context's size.
            None if requested => CompactionSettings::new(u64::MAX),
            None => return,
        };
        let tokens = {
            let session = self.shared.session.lock().await;
            context_tokens(&session.branch())
        };
        if !requested && !should_compact(tokens, &settings) {
            return;
        }
        match compact_session(&self.shared, &settings, None).await {
            Ok(done) => outcome.compaction = done,
            Err(error) => {
                outcome.compaction_error =
                    Some(self.shared.scope.redact(&error.to_string()).into_owned());
            }
        }
    }
}

async fn compact_session(
    shared: &Arc<Shared>,
    settings: &CompactionSettings,
    focus: Option<&str>,
) -> Result<Option<CompactionOutcome>, AgentError> {
    let preparation = {
        let session = shared.session.lock().await;
        prepare_compaction(&session.branch(), settings)
    }
    .ok_or(CompactionError::NothingToCompact)?;
    let event = SessionBeforeCompactEvent {
        tokens_before: preparation.tokens_before,
        summary: None,
        cancelled: false,
    };
    let event = dispatch(shared, event).await?;
    if event.cancelled {
        return Ok(None);
    }
    let from_extension = event.summary.is_some();
    let summary = match event.summary {
        Some(text) => Summary::supplied(shared.scope.redact(&text).into_owned()),
        None => {
            let choice = shared.state().model.clone().ok_or_else(|| {
                AgentError::Chat(ChatError::NoModel {
                    provider: "(none configured)".into(),
                })
            })?;
            let summarizer = Summarizer::new(&*choice.provider, &choice.config)
                .api_key(choice.api_key.as_ref())
                .offline(shared.host.offline)
                .redactor(Some(&shared.scope))
                .focus(focus)
                .cancellation(shared.cancellation());
            summarize(&preparation, &summarizer).await?
        }
    };
    let text = summary.text.clone();
    let (entry, tokens_after) = {
        let mut session = shared.session.lock().await;
        let entry = compact(&mut session, &preparation, summary).await?;
        (entry, context_tokens(&session.branch()))
    };
    let done = SessionCompactEvent {
        summary: text.clone(),
        from_extension,
    };
    let _ = dispatch(shared, done).await;
    Ok(Some(CompactionOutcome {
        entry,
        first_kept_entry_id: preparation.first_kept_entry_id,
        tokens_before: preparation.tokens_before,
        tokens_after,
        entries_summarized: preparation.entries_summarized,
        split_turn: preparation.is_split_turn,
        summary: text,
    }))
}
