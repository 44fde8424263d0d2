//! Compaction: the older part of a long session's branch summarised by the
//! session's model into one `compaction` entry, as pi compacts.
//!
//! Rules:
//!
//! - **When.** A host compacts when the context's tokens
//!   ([`context_tokens`]) pass the model's window minus a reserve
//!   ([`should_compact`], pi's defaults: 16,384 tokens reserved, 20,000
//!   recent tokens kept), or when the person asks (`/compact`). This
//!   module decides nothing by itself and has no events: the session
//!   agent's loop calls it, and its before-compact event may cancel the
//!   compaction or supply the summary ([`Summary::supplied`], with its
//!   own `details`), or change the cut (the preparation's fields are
//!   public) before [`compact`] writes it.
//! - **Where it cuts** ([`prepare_compaction`], `cut.rs`): never between a
//!   tool call and its result; a turn too large to keep whole is split,
//!   its start summarised apart from the history before it.
//! - **The summary** ([`summarize`], `summarize.rs`): pi's prompts, the
//!   previous compaction's summary carried into the next; offline
//!   sessions refused before any request.
//! - **The entry** ([`compact`]): one `compaction` entry after the leaf
//!   the preparation saw (its first kept entry on that branch), recording
//!   the first kept entry, the tokens
//!   before, the file lists and the usage, with the system prompt replayed
//!   into it (pi's checkpoint). It is appended like every entry: a session
//!   that moved on since the preparation, in this handle or in the store,
//!   is [`SessionError::Changed`] and nothing is written. The context
//!   built afterwards ([`ModelView::build`](super::ModelView::build))
//!   is the checkpoint, the summary, then the kept entries.
//!
//! ```
//! use oscova_agent::session::compaction::{CompactionSettings, should_compact};
//!
//! let settings = CompactionSettings::new(32_768);
//! assert!(!should_compact(16_000, &settings));
//! assert!(should_compact(16_385, &settings)); // past 32,768 - 16,384
//! ```

mod cut;
mod prompts;
mod summarize;
mod tokens;

use oscova_core::provider::model::{ModelError, TokenUsage};
use serde_json::json;

use super::entry::{EntryKind, SessionEntry};
use super::error::SessionError;
use super::handle::Session;
use super::id::{EntryId, iso_to_millis, now_iso};
use super::view::projection;

pub use cut::{CompactionPreparation, prepare_compaction};
pub use prompts::{
    SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT, TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
};
pub use summarize::{Summarizer, serialize_conversation, summarize};
pub use tokens::estimate_tokens;

/// When to compact and how much to keep (pi's `CompactionSettings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompactionSettings {
    /// The model's context window, in tokens.
    pub context_window: u64,
    /// Tokens kept free for the next answer: compaction starts when the
    /// context passes `context_window - reserve_tokens`.
    pub reserve_tokens: u64,
    /// About how many of the newest tokens stay as they are.
    pub keep_recent_tokens: u64,
}

impl CompactionSettings {
    /// pi's reserve (`DEFAULT_COMPACTION_SETTINGS.reserveTokens`).
    pub const DEFAULT_RESERVE_TOKENS: u64 = 16_384;
    /// pi's recent tokens kept (`keepRecentTokens`).
    pub const DEFAULT_KEEP_RECENT_TOKENS: u64 = 20_000;

    /// pi's defaults for a model with this window.
    pub fn new(context_window: u64) -> Self {
        Self {
            context_window,
            reserve_tokens: Self::DEFAULT_RESERVE_TOKENS,
            keep_recent_tokens: Self::DEFAULT_KEEP_RECENT_TOKENS,
        }
    }

    /// Sets the reserve.
    pub fn with_reserve_tokens(mut self, tokens: u64) -> Self {
        self.reserve_tokens = tokens;
        self
    }

    /// Sets the recent tokens kept.
    pub fn with_keep_recent_tokens(mut self, tokens: u64) -> Self {
        self.keep_recent_tokens = tokens;
        self
    }
}

/// Whether a context of `context_tokens` should be compacted: past the
/// window minus the reserve (pi's `shouldCompact`).
pub fn should_compact(context_tokens: u64, settings: &CompactionSettings) -> bool {
    context_tokens
        > settings
            .context_window
            .saturating_sub(settings.reserve_tokens)
}

/// The tokens of the context a branch (`path`, root first) builds: the
/// provider's count where trusted, else pi's estimate (see `tokens.rs`).
pub fn context_tokens(path: &[&SessionEntry]) -> u64 {
    tokens::projected_tokens(&projection(path), path)
}

/// A compaction's summary, and where it came from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Summary {
    /// The text the model sees in place of the summarised entries.
    pub text: String,
    /// What the summarising calls used, when the provider said.
    pub usage: Option<TokenUsage>,
    /// Whether an extension supplied it (pi's `fromHook`).
    pub from_hook: bool,
    /// The entry's `details` (never sent to the model); `None`: pi's file
    /// lists for a model's summary, nothing for a supplied one.
    pub details: Option<serde_json::Value>,
}

impl Summary {
    /// A summary supplied instead of the model's (by a before-compact
    /// handler, or a person): no model is called.
    pub fn supplied(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            usage: None,
            from_hook: true,
            details: None,
        }
    }

    /// Sets the entry's `details` (an extension's own data, as pi's
    /// `CompactionResult.details`).
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }
}

/// What a compaction did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CompactionOutcome {
    /// The `compaction` entry written.
    pub entry: EntryId,
    /// The first entry kept after the summary.
    pub first_kept_entry_id: EntryId,
    /// The context's tokens before.
    pub tokens_before: u64,
    /// The context's tokens after (estimated).
    pub tokens_after: u64,
    /// How many entries the summary replaced.
    pub entries_summarized: usize,
    /// Whether the cut split a turn (two summaries).
    pub split_turn: bool,
    /// The summary.
    pub summary: String,
}

/// Why a compaction did not happen.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompactionError {
    /// The branch ends with a compaction or holds nothing older than what
    /// is kept.
    #[error("nothing to compact: the branch holds nothing older than what is kept")]
    NothingToCompact,
    /// The configuration names no model to summarise with.
    #[error("no model to summarise with: provider `{provider}` has no model configured")]
    NoModel {
        /// The provider's type key.
        provider: String,
    },
    /// The summarising call failed (or offline operation refused it).
    #[error("{stage} failed: {source}")]
    Model {
        /// `Summarization` or `Turn prefix summarization`.
        stage: &'static str,
        /// The provider's error.
        #[source]
        source: ModelError,
    },
    /// The model stopped at its length limit; a partial summary is never
    /// stored.
    #[error("{stage} failed: generation hit the token cap and the summary is incomplete")]
    Incomplete {
        /// Which request.
        stage: &'static str,
    },
    /// The model called a tool instead of summarising.
    #[error("{stage} attempted to call a tool")]
    ToolCall {
        /// Which request.
        stage: &'static str,
    },
    /// The session refused the entry (another writer moved it:
    /// [`SessionError::Changed`]; the store failed).
    #[error(transparent)]
    Session(#[from] SessionError),
}

impl CompactionError {
    /// Whether the session changed under the compaction (resume and decide
    /// anew).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Session(e) if e.is_conflict())
    }
}

/// Writes the compaction entry of `preparation` with `summary` after the
/// leaf the preparation saw (see the module rules).
pub async fn compact(
    session: &mut Session,
    preparation: &CompactionPreparation,
    summary: Summary,
) -> Result<EntryId, CompactionError> {
    if session.leaf() != preparation.leaf.as_ref() {
        return Err(SessionError::Changed {
            expected: preparation.leaf.clone(),
            actual: session.leaf().cloned(),
        }
        .into());
    }
    // A cut moved by a handler must still lie on this branch.
    if !session
        .branch()
        .iter()
        .any(|e| e.id == preparation.first_kept_entry_id)
    {
        return Err(SessionError::UnknownEntry(preparation.first_kept_entry_id.clone()).into());
    }
    let details = match summary.details {
        Some(details) => Some(details),
        None => (!summary.from_hook).then(|| {
            json!({
                "readFiles": preparation.read_files,
                "modifiedFiles": preparation.modified_files,
            })
        }),
    };
    let usage = summary.usage.map(|u| {
        let input = u.input_tokens.unwrap_or(0);
        let output = u.output_tokens.unwrap_or(0);
        json!({
            "input": input,
            "output": output,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": input + output,
        })
    });
    let millis = iso_to_millis(&now_iso()).unwrap_or(0);
    // pi's checkpoint is a whole message, its role included (the entry
    // type alone does not name it).
    let system_message = preparation.system_message.clone().map(|mut s| {
        s.timestamp = millis;
        s.extra.insert("role", json!("system"));
        s
    });
    let id = session
        .append(EntryKind::Compaction {
            summary: summary.text,
            first_kept_entry_id: preparation.first_kept_entry_id.clone(),
            tokens_before: preparation.tokens_before,
            details,
            usage,
            from_hook: Some(summary.from_hook),
            system_message,
        })
        .await?;
    Ok(id)
}

/// Compacts the session's active branch now: prepares, summarises with
/// `summarizer` (or takes `supplied`, calling no model) and writes the
/// entry.
pub async fn compact_now(
    session: &mut Session,
    summarizer: &Summarizer<'_>,
    settings: &CompactionSettings,
    supplied: Option<String>,
) -> Result<CompactionOutcome, CompactionError> {
    let preparation =
        prepare_compaction(&session.branch(), settings).ok_or(CompactionError::NothingToCompact)?;
    let summary = match supplied {
        Some(text) => Summary::supplied(text),
        None => summarize(&preparation, summarizer).await?,
    };
    let text = summary.text.clone();
    let entry = compact(session, &preparation, summary).await?;
    Ok(CompactionOutcome {
        entry,
        first_kept_entry_id: preparation.first_kept_entry_id,
        tokens_before: preparation.tokens_before,
        tokens_after: context_tokens(&session.branch()),
        entries_summarized: preparation.entries_summarized,
        split_turn: preparation.is_split_turn,
        summary: text,
    })
}
