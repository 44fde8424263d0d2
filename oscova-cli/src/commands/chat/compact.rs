//! Compaction in `oscova chat --session`: `/compact [FOCUS]`, and the
//! automatic one after a message.
//!
//! Rules: both summarise the session's older entries with the chat's own
//! model (provider, endpoint, key, `--offline` as the chat's, known
//! secrets redacted from what is sent), through
//! `oscova_agent::session::compaction`, and write one `compaction` entry;
//! the conversation then continues from the compacted context. `/compact`
//! cuts at `[sessions] keep_recent_tokens` whatever the context's size;
//! FOCUS is pi's custom instructions. The automatic one runs only when
//! `[sessions] context_window` is set, after a message the model
//! answered, when the context passes the window minus `reserve_tokens`;
//! its failure is reported and the chat goes on (the message itself
//! succeeded, and the session is whole). Ctrl-C cancels the summarising
//! call; nothing is written then.

use oscova_agent::session::compaction::{
    CompactionError, CompactionOutcome, CompactionSettings, Summarizer, compact_now,
    context_tokens, should_compact,
};
use oscova_core::CancellationToken;
use oscova_core::provider::model::ModelError;
use serde_json::{Value, json};

use super::slash::Answer;
use super::{Chat, cancellable};
use crate::error::CliError;

impl Chat<'_> {
    /// `/compact [FOCUS]`.
    pub(super) async fn compact_command(&mut self, focus: &str) -> Result<Answer, CliError> {
        let settings = self.env.config.compaction().on_request();
        let outcome = self.compact_with(&settings, Some(focus)).await?;
        let json = document(&outcome, json!({"command": "compact"}));
        Ok(Answer {
            text: describe(&json),
            json,
        })
    }

    /// The automatic compaction after a message: the outcome document when
    /// it compacted. A failure is returned for the caller to report.
    pub(super) async fn compact_if_needed(&mut self) -> Result<Option<Value>, CliError> {
        let Some(settings) = self.env.config.compaction().automatic() else {
            return Ok(None);
        };
        let Some(session) = self.session.as_ref() else {
            return Ok(None);
        };
        if !should_compact(context_tokens(&session.branch()), &settings) {
            return Ok(None);
        }
        let outcome = self.compact_with(&settings, None).await?;
        Ok(Some(document(&outcome, json!({"automatic": true}))))
    }

    async fn compact_with(
        &mut self,
        settings: &CompactionSettings,
        focus: Option<&str>,
    ) -> Result<CompactionOutcome, CliError> {
        let Some(session) = self.session.as_mut() else {
            return Err(CliError::SlashCommand {
                message: "/compact works on a session: start the chat with --session NAME".into(),
            });
        };
        let cancel = CancellationToken::new();
        let summarizer = Summarizer::new(&*self.provider, &self.config)
            .api_key(self.api_key.as_ref())
            .offline(self.offline)
            .redactor(Some(self.scope.redactor()))
            .focus(focus)
            .cancellation(cancel.clone());
        let outcome = cancellable(compact_now(session, &summarizer, settings, None), &cancel)
            .await
            .unwrap_or(Err(CompactionError::Model {
                stage: "Summarization",
                source: ModelError::Cancelled,
            }));
        let outcome = outcome.map_err(|error| {
            let redactors = [self.scope.redactor(), self.env.host.redactor()];
            CliError::from(error).redacted(&redactors)
        })?;
        self.messages = session.context().chat_messages();
        self.stored = self.messages.len();
        Ok(outcome)
    }
}

/// What a compaction did, for people, from its document.
pub(super) fn describe(done: &Value) -> String {
    let n = done["entries_summarized"].as_u64().unwrap_or(0);
    format!(
        "compacted: {n} entr{} summarised{}, {} tokens before, about {} after; kept from entry {}",
        if n == 1 { "y" } else { "ies" },
        if done["split_turn"] == true {
            " (a turn split in two parts)"
        } else {
            ""
        },
        done["tokens_before"],
        done["tokens_after"],
        done["first_kept_entry_id"].as_str().unwrap_or_default(),
    )
}

/// What a compaction did, as fields added to `base`.
fn document(outcome: &CompactionOutcome, mut base: Value) -> Value {
    base["entry"] = json!(outcome.entry.as_str());
    base["first_kept_entry_id"] = json!(outcome.first_kept_entry_id.as_str());
    base["tokens_before"] = json!(outcome.tokens_before);
    base["tokens_after"] = json!(outcome.tokens_after);
    base["entries_summarized"] = json!(outcome.entries_summarized);
    base["split_turn"] = json!(outcome.split_turn);
    base
}
