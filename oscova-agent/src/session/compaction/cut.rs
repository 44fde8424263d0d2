//! Where a compaction cuts a branch, and what it hands the model to
//! summarise (pi's `findCutPoint` and `prepareCompaction`).
//!
//! Rules, pi's own: the branch is taken as its context is built (the
//! latest compaction leading, edits applied). Only the entries after the
//! latest compaction are candidates; its summary is carried into the next
//! one (pi's update prompt). Walking back from the newest entry, the
//! estimated tokens are added up until `keep_recent_tokens` is reached;
//! the cut goes to the nearest valid cut point at or after that entry, and
//! a valid cut point is an entry whose messages include a user-like or
//! assistant message, **never a tool result**, so a tool call and its
//! result stay on one side (cutting at an assistant message keeps its
//! results after it). Entries that add nothing to the context just before
//! the cut (settings, labels) are kept with it. When the cut lands inside
//! a turn (on an assistant message, not on the user message that began
//! the turn), the turn is split: the history before the turn and the
//! turn's prefix are summarised separately, in two parts. No preparation
//! when the branch ends with a compaction, or nothing is left to
//! summarise. Files read and changed by pi's `read`, `write` and `edit`
//! tools are listed, carried over from the previous compaction.

use std::collections::{BTreeSet, HashSet};

use serde_json::Value;

use super::super::entry::{EntryKind, SessionEntry};
use super::super::id::EntryId;
use super::super::message::{AgentMessage, ContentPart, SystemMessage};
use super::super::view::{entry_messages, projection};
use super::CompactionSettings;
use super::tokens::{current_system_message, estimate_tokens, projected_tokens};

/// What a compaction of a branch needs: where it cuts and what the model
/// summarises (pi's `CompactionPreparation`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CompactionPreparation {
    /// The branch's tip the preparation was made on; writing the
    /// compaction after the session moved on is refused.
    pub leaf: Option<EntryId>,
    /// The first entry the context keeps after the summary.
    pub first_kept_entry_id: EntryId,
    /// The messages before the cut (before the split turn, when the cut
    /// splits one), summarised with pi's prompt.
    pub messages_to_summarize: Vec<AgentMessage>,
    /// The start of the turn the cut splits, summarised on its own.
    pub turn_prefix_messages: Vec<AgentMessage>,
    /// Whether the cut lands inside a turn.
    pub is_split_turn: bool,
    /// The context's tokens before compacting ([`context_tokens`](super::context_tokens)).
    pub tokens_before: u64,
    /// The summary of the previous compaction, carried into this one.
    pub previous_summary: Option<String>,
    /// How many entries of the branch the summary replaces.
    pub entries_summarized: usize,
    /// Files only read, by pi's `read` tool (sorted).
    pub read_files: Vec<String>,
    /// Files written or edited, by pi's `write` and `edit` tools (sorted).
    pub modified_files: Vec<String>,
    /// The system prompt at this point (all system messages replayed),
    /// which leads the compacted context.
    pub system_message: Option<SystemMessage>,
}

type Projected<'a> = (&'a SessionEntry, Vec<AgentMessage>);

fn is_cut_point(message: &AgentMessage) -> bool {
    matches!(
        message,
        AgentMessage::User(_)
            | AgentMessage::Assistant(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
    )
}

fn starts_turn(message: &AgentMessage) -> bool {
    is_cut_point(message) && !matches!(message, AgentMessage::Assistant(_))
}

fn is_compaction(entry: &SessionEntry) -> bool {
    matches!(entry.kind, EntryKind::Compaction { .. })
}

fn is_turn_start(projected: &Projected<'_>) -> bool {
    !is_compaction(projected.0) && projected.1.iter().any(starts_turn)
}

/// Where the cut goes (pi's `findProjectedCutPoint`).
struct Cut {
    first_kept: usize,
    /// The entry that began the turn the cut splits.
    split_from: Option<usize>,
}

fn find_cut(entries: &[Projected<'_>], start: usize, keep_recent_tokens: u64) -> Cut {
    let end = entries.len();
    let cut_points: Vec<usize> = (start..end)
        .filter(|&i| !is_compaction(entries[i].0) && entries[i].1.iter().any(is_cut_point))
        .collect();
    let (Some(&first_point), Some(&last_point)) = (cut_points.first(), cut_points.last()) else {
        return Cut {
            first_kept: start,
            split_from: None,
        };
    };
    let mut accumulated = 0;
    let mut exceeded = false;
    let mut cut = first_point;
    for i in (start..end).rev() {
        let tokens: u64 = entries[i].1.iter().map(estimate_tokens).sum();
        if tokens == 0 {
            continue;
        }
        accumulated += tokens;
        if accumulated >= keep_recent_tokens {
            exceeded = true;
            // Trailing tool results over the budget by themselves keep
            // the assistant call before them.
            cut = cut_points
                .iter()
                .copied()
                .find(|&c| c >= i)
                .unwrap_or(last_point);
            break;
        }
    }
    if exceeded && is_recovery_suffix(&entries[cut + 1..]) {
        cut += 1;
    }
    while cut > start {
        let previous = &entries[cut - 1];
        if is_compaction(previous.0) || !previous.1.is_empty() {
            break;
        }
        cut -= 1;
    }
    let split_from = if is_turn_start(&entries[cut]) {
        None
    } else {
        (start..=cut).rev().find(|&i| is_turn_start(&entries[i]))
    };
    Cut {
        first_kept: cut,
        split_from,
    }
}

/// pi's recovery rule: after the cut only an abandoned attempt remains (an
/// assistant answer a context edit left out, and its edits), so the cut
/// moves past the last visible input rather than keep nothing but it.
fn is_recovery_suffix(suffix: &[Projected<'_>]) -> bool {
    let visible = |p: &Projected<'_>| {
        !matches!(p.0.kind, EntryKind::ContextEdit { .. }) && !entry_messages(p.0).is_empty()
    };
    let omitted = |p: &Projected<'_>| visible(p) && p.1.is_empty();
    let omitted_ids: HashSet<&EntryId> = suffix
        .iter()
        .filter(|p| omitted(p))
        .map(|p| &p.0.id)
        .collect();
    let external_replacement = suffix.iter().any(|p| {
        matches!(&p.0.kind, EntryKind::ContextEdit { target_id, replacement: Some(_) }
            if !omitted_ids.contains(target_id))
    });
    !external_replacement
        && suffix.iter().any(|p| {
            matches!(
                &p.0.kind,
                EntryKind::Message {
                    message: AgentMessage::Assistant(_)
                }
            ) && omitted(p)
        })
        && suffix
            .iter()
            .all(|p| !is_compaction(p.0) && (!visible(p) || omitted(p)))
}

/// The messages of a range of entries a summary covers: no compaction's,
/// no system message (the compaction entry replays those).
fn summarised(entries: &[Projected<'_>]) -> Vec<AgentMessage> {
    entries
        .iter()
        .filter(|p| !is_compaction(p.0))
        .flat_map(|p| p.1.iter())
        .filter(|m| !matches!(m, AgentMessage::System(_)))
        .cloned()
        .collect()
}

/// Files touched by pi's file tools (pi's `FileOperations`).
#[derive(Default)]
struct FileOps {
    read: BTreeSet<String>,
    modified: BTreeSet<String>,
}

impl FileOps {
    fn add(&mut self, tool: &str, arguments: &Value) {
        let Some(path) = arguments.get("path").and_then(Value::as_str) else {
            return;
        };
        match tool {
            "read" => {
                self.read.insert(path.to_owned());
            }
            "write" | "edit" => {
                self.modified.insert(path.to_owned());
            }
            _ => {}
        }
    }

    fn scan(&mut self, message: &AgentMessage) {
        match message {
            AgentMessage::Assistant(m) => {
                for part in &m.content {
                    if let ContentPart::ToolCall {
                        name, arguments, ..
                    } = part
                    {
                        self.add(name, arguments);
                    }
                }
            }
            // Calls a code-mode script made are recorded on its result.
            AgentMessage::ToolResult(m) => {
                let calls = m.extra.get("nestedCalls");
                let calls = calls
                    .as_ref()
                    .and_then(|n| n.get("calls"))
                    .and_then(Value::as_array);
                for call in calls.into_iter().flatten() {
                    if let (Some(name), Some(arguments)) = (
                        call.get("name").and_then(Value::as_str),
                        call.get("arguments"),
                    ) {
                        self.add(name, arguments);
                    }
                }
            }
            _ => {}
        }
    }

    /// pi's `computeFileLists`: read-only files and modified files, sorted.
    fn lists(self) -> (Vec<String>, Vec<String>) {
        let read = self
            .read
            .into_iter()
            .filter(|f| !self.modified.contains(f))
            .collect();
        (read, self.modified.into_iter().collect())
    }
}

/// Prepares a compaction of a branch (`path`, root first, as
/// [`Session::branch`](crate::session::Session::branch) gives it): `None`
/// when it ends with a compaction or holds nothing to summarise.
pub fn prepare_compaction(
    path: &[&SessionEntry],
    settings: &CompactionSettings,
) -> Option<CompactionPreparation> {
    let last = path.last()?;
    if is_compaction(last) {
        return None;
    }
    let projected = projection(path);
    // The newest compaction leads the projection; it alone contributes.
    let previous = projected
        .iter()
        .position(|p| is_compaction(p.0) && !p.1.is_empty());
    let start = previous.map_or(0, |i| i + 1);
    let previous_summary = previous.and_then(|i| match &projected[i].0.kind {
        EntryKind::Compaction { summary, .. } => Some(summary.clone()),
        _ => None,
    });
    let tokens_before = projected_tokens(&projected, path);
    let cut = find_cut(&projected, start, settings.keep_recent_tokens);
    let first_kept_entry_id = projected.get(cut.first_kept)?.0.id.clone();
    let history_end = cut.split_from.unwrap_or(cut.first_kept);
    let messages_to_summarize = summarised(&projected[start..history_end]);
    let turn_prefix_messages = match cut.split_from {
        Some(from) => summarised(&projected[from..cut.first_kept]),
        None => Vec::new(),
    };
    if messages_to_summarize.is_empty() && turn_prefix_messages.is_empty() {
        return None;
    }
    let mut files = FileOps::default();
    if let Some(EntryKind::Compaction {
        details: Some(details),
        from_hook,
        ..
    }) = previous.map(|i| &projected[i].0.kind)
        && *from_hook != Some(true)
    {
        let list = |key: &str| {
            details
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        files.read.extend(list("readFiles"));
        files.modified.extend(list("modifiedFiles"));
    }
    for message in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        files.scan(message);
    }
    let (read_files, modified_files) = files.lists();
    let entries_summarized = projected[start..cut.first_kept]
        .iter()
        .filter(|p| !is_compaction(p.0) && !p.1.is_empty())
        .count();
    let system_message = current_system_message(projected.iter().flat_map(|p| &p.1), 0);
    Some(CompactionPreparation {
        leaf: Some(last.id.clone()),
        first_kept_entry_id,
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.split_from.is_some(),
        tokens_before,
        previous_summary,
        entries_summarized,
        read_files,
        modified_files,
        system_message,
    })
}
