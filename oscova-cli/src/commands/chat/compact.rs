//! Compaction in `oscova chat --session`: `/compact [FOCUS]`, and the
//! automatic one after a message.
//!
//! Rules: both run through the session agent
//! ([`AgentSession::compact`](oscova_agent::session::agent::AgentSession::compact),
//! over `oscova_agent::session::compaction`), which summarises the
//! session's older entries with the chat's own model (provider, endpoint,
//! key, `--offline` as the chat's, known secrets redacted from what is
//! sent) and writes one `compaction` entry; the session's extensions see
//! it first (`SessionBeforeCompactEvent`: cancel, or supply the summary)
//! and after. The conversation then continues from the compacted context.
//! `/compact` cuts at `[sessions] keep_recent_tokens` whatever the
//! context's size; FOCUS is pi's custom instructions. The automatic one
//! runs only when `[sessions] context_window` is set, after a message the
//! model answered, when the context passes the window minus
//! `reserve_tokens`; its failure is reported and the chat goes on (the
//! message itself succeeded, and the session is whole). Ctrl-C cancels
//! the summarising call; nothing is written then.

use oscova_agent::session::compaction::{CompactionError, CompactionOutcome};
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
        let Some(agent) = self.agent.as_mut() else {
            return Err(CliError::SlashCommand {
                message: "/compact works on a session: start the chat with --session NAME".into(),
            });
        };
        let cancel = CancellationToken::new();
        agent.cancellation(cancel.clone());
        let focus = Some(focus).filter(|f| !f.is_empty());
        let outcome = cancellable(agent.compact(&settings, focus), &cancel)
            .await
            .unwrap_or(Err(CompactionError::Model {
                stage: "Summarization",
                source: ModelError::Cancelled,
            }
            .into()));
        let outcome = outcome.map_err(|error| self.redacted(error.into()))?;
        let Some(outcome) = outcome else {
            let json = json!({"command": "compact", "cancelled": true});
            return Ok(Answer {
                json,
                text: "compaction cancelled by a session extension".into(),
            });
        };
        let json = document(&outcome, json!({"command": "compact"}));
        Ok(Answer {
            text: describe(&json),
            json,
        })
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
pub(super) fn document(outcome: &CompactionOutcome, mut base: Value) -> Value {
    base["entry"] = json!(outcome.entry.as_str());
    base["first_kept_entry_id"] = json!(outcome.first_kept_entry_id.as_str());
    base["tokens_before"] = json!(outcome.tokens_before);
    base["tokens_after"] = json!(outcome.tokens_after);
    base["entries_summarized"] = json!(outcome.entries_summarized);
    base["split_turn"] = json!(outcome.split_turn);
    base
}
