//! What the model sees of a session: the branch from the leaf, as pi's
//! `buildSessionContext` builds it.
//!
//! Rules, pi's own: walk from the leaf to the root through `parentId`
//! (no leaf: nothing). When a compaction lies on that path, the latest one
//! leads: its checkpoint system message (when it has one) and its summary
//! first, then the entries from its `firstKeptEntryId` up to it (system
//! messages among them dropped in favour of the checkpoint), then every
//! entry after it. Each `context_edit` on the selected entries replaces or
//! leaves out its target's contribution, the latest edit winning. Messages
//! go in as stored; custom messages, branch summaries and the compaction
//! summary become messages; custom entries, labels, session info, usage,
//! edits and model or thinking-level changes add none. The thinking level
//! and the model are the latest on the whole path (an assistant message
//! names its model too).

use std::borrow::Cow;
use std::collections::HashMap;

use oscova_core::provider::model::ChatMessage;

use super::entry::{EntryKind, SessionEntry};
use super::id::{EntryId, iso_to_millis};
use super::message::{
    AgentMessage, BranchSummaryMessage, CompactionSummaryMessage, ContentPart, CustomMessage,
    MessageContent, ModelRef,
};

/// The model's context of a session's branch: what one model call reads
/// (pi's `buildSessionContext`). A value, not a `…Context` type: those are
/// what the host hands to code it runs (ARCHITECTURE's Words).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelView {
    /// The messages, in pi's form (summaries and custom messages
    /// included), in order.
    pub messages: Vec<AgentMessage>,
    /// The thinking level (`off` until changed).
    pub thinking_level: String,
    /// The model last chosen or last answering, if any.
    pub model: Option<ModelRef>,
}

impl ModelView {
    /// Builds the context of the branch ending at `leaf` from a session's
    /// entries (what [`Session::context`](super::Session::context) does).
    pub fn build(entries: &[SessionEntry], leaf: Option<&EntryId>) -> Self {
        build_context(entries, &index(entries), leaf)
    }

    /// The messages as the chat loop sends them (pi's `convertToLlm`).
    pub fn chat_messages(&self) -> Vec<ChatMessage> {
        self.messages
            .iter()
            .filter_map(AgentMessage::to_chat)
            .collect()
    }
}

/// An index of entries by id, built once per session.
pub(crate) type EntryIndex = HashMap<EntryId, usize>;

/// Indexes `entries` by id (a later duplicate wins, as in pi's map).
pub(crate) fn index(entries: &[SessionEntry]) -> EntryIndex {
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.clone(), i))
        .collect()
}

/// The entries from the root to `leaf`, in order (pi's `getBranch`). An
/// unknown leaf gives an empty path.
pub(crate) fn branch_path<'a>(
    entries: &'a [SessionEntry],
    by_id: &EntryIndex,
    leaf: Option<&EntryId>,
) -> Vec<&'a SessionEntry> {
    let mut path = Vec::new();
    let mut current = leaf.and_then(|id| by_id.get(id)).map(|&i| &entries[i]);
    while let Some(entry) = current {
        path.push(entry);
        // A parent cycle in a hand-edited file would loop forever.
        if path.len() > entries.len() {
            break;
        }
        current = entry
            .parent_id
            .as_ref()
            .and_then(|id| by_id.get(id))
            .map(|&i| &entries[i]);
    }
    path.reverse();
    path
}

fn is_system_message(entry: &SessionEntry) -> bool {
    matches!(
        &entry.kind,
        EntryKind::Message {
            message: AgentMessage::System(_)
        }
    )
}

/// The compaction-aware entries of the branch (pi's `buildContextEntries`).
pub(crate) fn context_entries<'a>(path: &[&'a SessionEntry]) -> Vec<&'a SessionEntry> {
    let Some(at) = path
        .iter()
        .rposition(|e| matches!(e.kind, EntryKind::Compaction { .. }))
    else {
        return path.to_vec();
    };
    let EntryKind::Compaction {
        first_kept_entry_id,
        ..
    } = &path[at].kind
    else {
        return path.to_vec();
    };
    let mut out = vec![path[at]];
    let mut kept = false;
    for entry in &path[..at] {
        kept |= entry.id == *first_kept_entry_id;
        if kept && !is_system_message(entry) {
            out.push(entry);
        }
    }
    out.extend_from_slice(&path[at + 1..]);
    out
}

/// The messages one entry contributes (pi's
/// `sessionEntryToContextMessages`).
pub(crate) fn entry_messages(entry: &SessionEntry) -> Vec<AgentMessage> {
    let millis = || iso_to_millis(&entry.timestamp).unwrap_or(0);
    match &entry.kind {
        EntryKind::Message { message } => vec![message.clone()],
        EntryKind::CustomMessage {
            custom_type,
            content,
            details,
            display,
        } => vec![AgentMessage::Custom(CustomMessage {
            custom_type: custom_type.clone(),
            content: content.clone(),
            display: *display,
            details: details.clone(),
            timestamp: millis(),
        })],
        EntryKind::BranchSummary {
            from_id, summary, ..
        } if !summary.is_empty() => vec![AgentMessage::BranchSummary(BranchSummaryMessage {
            summary: summary.clone(),
            from_id: Some(from_id.to_string()),
            timestamp: millis(),
        })],
        EntryKind::Compaction {
            summary,
            tokens_before,
            system_message,
            ..
        } => {
            let summary = AgentMessage::CompactionSummary(CompactionSummaryMessage {
                summary: summary.clone(),
                tokens_before: *tokens_before,
                timestamp: millis(),
            });
            match system_message {
                Some(system) => {
                    // The stored checkpoint names its role; the message's
                    // tag says it once.
                    let mut system = system.clone();
                    system.extra.remove("role");
                    vec![AgentMessage::System(system), summary]
                }
                None => vec![summary],
            }
        }
        _ => Vec::new(),
    }
}

fn apply_edit(messages: Vec<AgentMessage>, edit: &EntryKind) -> Vec<AgentMessage> {
    let EntryKind::ContextEdit { replacement, .. } = edit else {
        return messages;
    };
    let Some(replacement) = replacement else {
        return Vec::new();
    };
    let as_parts = || match &replacement.content {
        MessageContent::Text(text) => vec![ContentPart::text(text.clone())],
        MessageContent::Parts(parts) => parts.clone(),
    };
    messages
        .into_iter()
        .map(|message| match message {
            AgentMessage::User(mut m) => {
                m.content = replacement.content.clone();
                AgentMessage::User(m)
            }
            AgentMessage::Custom(mut m) => {
                m.content = replacement.content.clone();
                AgentMessage::Custom(m)
            }
            AgentMessage::Assistant(mut m) => {
                m.content = as_parts();
                AgentMessage::Assistant(m)
            }
            AgentMessage::ToolResult(mut m) => {
                m.content = as_parts();
                AgentMessage::ToolResult(m)
            }
            other => other,
        })
        .collect()
}

/// Each entry of the compaction-aware branch with the messages it
/// contributes, edits applied (pi's `buildSessionProjection`): what the
/// context is made of, entry by entry, so compaction can cut between them.
pub(crate) fn projection<'a>(
    path: &[&'a SessionEntry],
) -> Vec<(&'a SessionEntry, Vec<AgentMessage>)> {
    let selected = context_entries(path);
    let mut edits: HashMap<&EntryId, &EntryKind> = HashMap::new();
    for entry in &selected {
        if let EntryKind::ContextEdit { target_id, .. } = &entry.kind {
            edits.insert(target_id, &entry.kind);
        }
    }
    selected
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            // Only the leading (newest) compaction contributes; an older one
            // inside the kept range adds nothing.
            if i > 0 && matches!(entry.kind, EntryKind::Compaction { .. }) {
                return (*entry, Vec::new());
            }
            let own = entry_messages(entry);
            let messages = match edits.get(&entry.id) {
                Some(edit) => apply_edit(own, edit),
                None => own,
            };
            (*entry, messages)
        })
        .collect()
}

/// The context's messages, in order: borrowed from the entries where an
/// entry's message goes in as stored, made where it does not (summaries,
/// custom messages, edits). The same messages as [`projection`], without
/// copying the stored ones.
pub(crate) fn context_messages<'a>(path: &[&'a SessionEntry]) -> Vec<Cow<'a, AgentMessage>> {
    let selected = context_entries(path);
    let mut edits: HashMap<&EntryId, &EntryKind> = HashMap::new();
    for entry in &selected {
        if let EntryKind::ContextEdit { target_id, .. } = &entry.kind {
            edits.insert(target_id, &entry.kind);
        }
    }
    let mut out = Vec::with_capacity(selected.len());
    for (i, entry) in selected.iter().enumerate() {
        // Only the leading (newest) compaction contributes.
        if i > 0 && matches!(entry.kind, EntryKind::Compaction { .. }) {
            continue;
        }
        match (edits.get(&entry.id), &entry.kind) {
            (None, EntryKind::Message { message }) => out.push(Cow::Borrowed(message)),
            (None, _) => out.extend(entry_messages(entry).into_iter().map(Cow::Owned)),
            (Some(edit), _) => out.extend(
                apply_edit(entry_messages(entry), edit)
                    .into_iter()
                    .map(Cow::Owned),
            ),
        }
    }
    out
}

/// Builds the context of the branch ending at `leaf` (pi's
/// `buildSessionContext`).
pub(crate) fn build_context(
    entries: &[SessionEntry],
    by_id: &EntryIndex,
    leaf: Option<&EntryId>,
) -> ModelView {
    let path = branch_path(entries, by_id, leaf);
    // Borrowed while walking, copied once: the walk meets a model on
    // every answer.
    let mut thinking_level = "off";
    let mut model = None;
    for entry in &path {
        match &entry.kind {
            EntryKind::ThinkingLevelChange { thinking_level: l } => thinking_level = l,
            EntryKind::ModelChange { provider, model_id } => model = Some((provider, model_id)),
            EntryKind::Message {
                message: AgentMessage::Assistant(a),
            } => model = Some((&a.provider, &a.model)),
            _ => {}
        }
    }
    let thinking_level = thinking_level.to_owned();
    let model = model.map(|(provider, model_id)| ModelRef {
        provider: provider.clone(),
        model_id: model_id.clone(),
    });
    let messages = context_messages(&path)
        .into_iter()
        .map(Cow::into_owned)
        .collect();
    ModelView {
        messages,
        thinking_level,
        model,
    }
}
