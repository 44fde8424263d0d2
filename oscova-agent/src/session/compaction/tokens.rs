//! How many tokens a context holds, as pi counts them.
//!
//! Rules, pi's own (`estimateTokens`, `estimateContextTokens`,
//! `estimateProjectedContextTokens`): the provider's own count wins where
//! there is one. That is the usage on the last assistant message of the
//! context that reported any (`usage.totalTokens`, else input + output +
//! cache read + cache write), not aborted or failed, plus an estimate of
//! the messages after it. The count is trusted only when no compaction or
//! context edit came after it on the branch (either changes what the
//! model is sent). Everything else is estimated: characters / 4, rounded
//! up (a conservative overestimate), characters counted as JavaScript
//! counts them (UTF-16 units) so both implementations agree, an image
//! counted as 4,800 characters, a tool call as its name and its arguments'
//! JSON, thinking included; the system prompt counted once, as the
//! replayed current one. The chat loop stores no usage on assistant
//! messages today (it writes zeros, which pi also skips), so its sessions
//! are estimated.

use serde_json::Value;

use super::super::entry::{EntryKind, SessionEntry};
use super::super::message::{AgentMessage, ContentPart, Extra, MessageContent, SystemMessage};

/// pi's stand-in size of one image, in characters.
const IMAGE_CHARS: usize = 4800;

/// A string's length as JavaScript counts it.
fn js_len(text: &str) -> usize {
    text.encode_utf16().count()
}

fn parts_chars(parts: &[ContentPart]) -> usize {
    parts
        .iter()
        .map(|part| match part {
            ContentPart::Text { text, .. } => js_len(text),
            ContentPart::Image { .. } => IMAGE_CHARS,
            _ => 0,
        })
        .sum()
}

fn content_chars(content: &MessageContent) -> usize {
    match content {
        MessageContent::Text(text) => js_len(text),
        MessageContent::Parts(parts) => parts_chars(parts),
    }
}

fn tokens(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

/// pi's `estimateTokens`: a message's size in tokens, characters / 4
/// rounded up.
///
/// ```
/// use oscova_agent::session::compaction::estimate_tokens;
/// use oscova_agent::session::{AgentMessage, MessageContent, UserMessage};
///
/// let hello = AgentMessage::User(UserMessage {
///     content: MessageContent::Text("Hello".into()),
///     timestamp: 0,
/// });
/// assert_eq!(estimate_tokens(&hello), 2); // 5 characters
/// ```
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    match message {
        AgentMessage::System(system) => {
            let mut chars = content_chars(&system.content);
            for section in system.sections.iter().flat_map(|s| s.values()) {
                if let Value::String(text) = section {
                    chars += js_len(text);
                }
            }
            if let Some(tools) = system.extra.get("toolsAdded") {
                chars += js_len(&tools.to_string());
            }
            tokens(chars)
        }
        AgentMessage::User(m) => tokens(content_chars(&m.content)),
        AgentMessage::Assistant(m) => tokens(
            m.content
                .iter()
                .map(|part| match part {
                    ContentPart::Text { text, .. } => js_len(text),
                    ContentPart::Thinking { thinking, .. } => js_len(thinking),
                    ContentPart::ToolCall {
                        name, arguments, ..
                    } => js_len(name) + js_len(&arguments.to_string()),
                    ContentPart::Image { .. } => 0,
                })
                .sum(),
        ),
        AgentMessage::ToolResult(m) => tokens(parts_chars(&m.content)),
        AgentMessage::Custom(m) => tokens(content_chars(&m.content)),
        AgentMessage::BashExecution(m) => tokens(js_len(&m.command) + js_len(&m.output)),
        AgentMessage::BranchSummary(m) => tokens(js_len(&m.summary)),
        AgentMessage::CompactionSummary(m) => tokens(js_len(&m.summary)),
    }
}

/// The tokens an assistant message's provider reported (pi's
/// `getAssistantUsage`): none for an aborted or failed answer, or an
/// all-zero count.
fn reported_usage(message: &AgentMessage) -> Option<u64> {
    let AgentMessage::Assistant(m) = message else {
        return None;
    };
    let stop = m.extra.get("stopReason");
    if matches!(
        stop.as_ref().and_then(Value::as_str),
        Some("aborted" | "error")
    ) {
        return None;
    }
    let usage = m.extra.get("usage")?;
    let usage = usage.as_object()?;
    let field = |name: &str| usage.get(name).and_then(Value::as_u64).unwrap_or(0);
    let total = match field("totalTokens") {
        0 => field("input") + field("output") + field("cacheRead") + field("cacheWrite"),
        total => total,
    };
    (total > 0).then_some(total)
}

/// The context's tokens (pi's `estimateProjectedContextTokens`), from the
/// projected entries of a branch (`projection`) and the branch itself
/// (`path`, root first).
pub(crate) fn projected_tokens(
    projection: &[(&SessionEntry, Vec<AgentMessage>)],
    path: &[&SessionEntry],
) -> u64 {
    let last_usage = projection
        .iter()
        .enumerate()
        .flat_map(|(e, (_, messages))| messages.iter().enumerate().map(move |(m, msg)| (e, m, msg)))
        .filter_map(|(e, m, msg)| reported_usage(msg).map(|tokens| (e, m, tokens)))
        .next_back();
    if let Some((at_entry, at_message, usage)) = last_usage {
        let usage_id = &projection[at_entry].0.id;
        let usage_index = path.iter().position(|e| e.id == *usage_id);
        let invalidated = path.iter().rposition(|e| {
            matches!(
                e.kind,
                EntryKind::ContextEdit { .. } | EntryKind::Compaction { .. }
            )
        });
        let trusted = match (usage_index, invalidated) {
            (Some(used), Some(changed)) => used > changed,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if trusted {
            let trailing: u64 = projection[at_entry].1[at_message + 1..]
                .iter()
                .chain(projection[at_entry + 1..].iter().flat_map(|(_, m)| m))
                .map(estimate_tokens)
                .sum();
            return usage + trailing;
        }
    }
    let messages: Vec<&AgentMessage> = projection.iter().flat_map(|(_, m)| m).collect();
    let system = current_system_message(messages.iter().copied(), 0)
        .map(|s| estimate_tokens(&AgentMessage::System(s)))
        .unwrap_or(0);
    system
        + messages
            .iter()
            .filter(|m| !matches!(m, AgentMessage::System(_)))
            .map(|m| estimate_tokens(m))
            .sum::<u64>()
}

/// Every system message replayed into one (pi's
/// `getCurrentSystemMessage`): the texts joined by blank lines, sections
/// patched by name (`null` removes one), tools added and removed by name;
/// stamped with the first one's time, else `timestamp`. `None` when there
/// is no system message and no tool.
pub(crate) fn current_system_message<'a>(
    messages: impl IntoIterator<Item = &'a AgentMessage>,
    timestamp: i64,
) -> Option<SystemMessage> {
    let mut content: Vec<String> = Vec::new();
    let mut sections: Vec<(String, Value)> = Vec::new();
    let mut tools: Vec<(String, Value)> = Vec::new();
    let mut first = None;
    for message in messages {
        let AgentMessage::System(system) = message else {
            continue;
        };
        first.get_or_insert(system.timestamp);
        let text = system.content.text();
        if !text.is_empty() {
            content.push(text);
        }
        for (name, value) in system.sections.iter().flat_map(|s| s.iter()) {
            if value.is_null() {
                sections.retain(|(n, _)| n != name);
            } else {
                match sections.iter_mut().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 = value.clone(),
                    None => sections.push((name.clone(), value.clone())),
                }
            }
        }
        let named = |key: &str| {
            system
                .extra
                .get(key)
                .and_then(|v| match v {
                    Value::Array(tools) => Some(tools),
                    _ => None,
                })
                .into_iter()
                .flatten()
                .filter_map(|tool| Some((tool.get("name")?.as_str()?.to_owned(), tool)))
                .collect::<Vec<_>>()
        };
        for (name, _) in named("toolsRemoved") {
            tools.retain(|(n, _)| *n != name);
        }
        for (name, tool) in named("toolsAdded") {
            match tools.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = tool,
                None => tools.push((name, tool)),
            }
        }
    }
    if first.is_none() && tools.is_empty() {
        return None;
    }
    let mut extra = Extra::new();
    if !tools.is_empty() {
        extra.insert(
            "toolsAdded",
            Value::Array(tools.into_iter().map(|(_, t)| t).collect()),
        );
    }
    Some(SystemMessage {
        content: MessageContent::Text(content.join("\n\n")),
        sections: (!sections.is_empty()).then(|| sections.into_iter().collect()),
        timestamp: first.unwrap_or(timestamp),
        extra,
    })
}
