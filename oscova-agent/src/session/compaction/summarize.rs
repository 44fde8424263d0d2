//! Asking the session's model for the summary (pi's `generateSummary`,
//! `generateTurnPrefixSummary` and `compact`).
//!
//! Rules, pi's own: the messages are serialised to text first, so the
//! model reads a transcript instead of continuing a conversation
//! (`[User]: ...`, `[Assistant]: ...`, `[Assistant tool calls]:
//! name(key=json, ...)`, `[Tool result]: ...` cut at 2,000 characters,
//! thinking left out), wrapped in `<conversation>` tags, followed by the
//! previous compaction's summary in `<previous-summary>` tags and pi's
//! update prompt when there is one, else pi's first prompt; pi's system
//! prompt forbids continuing the conversation. One request per part: a
//! split turn's prefix gets pi's turn-prefix prompt, and the two
//! summaries are joined under pi's `**Turn Context (split turn):**`
//! heading. An answer cut by the length limit or calling a tool is
//! refused, never stored. The lists of files read and modified follow the
//! summary in pi's tags. Oscova's own rules: [`check_offline`] runs before
//! any request, so an offline session never sends its history out; with a
//! redactor, the known secrets are replaced in the text sent and in the
//! summary kept. No tools are offered to the summarising call.

use oscova_core::provider::model::{
    ChatMessage, ChatRequest, ModelProvider, ModelProviderConfig, TokenUsage, check_offline,
};
use oscova_core::redact::Redact;
use oscova_core::{CancellationToken, SecretString};
use serde_json::Value;

use super::super::message::{AgentMessage, ContentPart, MessageContent};
use super::prompts::{
    SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT, TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
};
use super::{CompactionError, CompactionPreparation, Summary};

/// pi's bound on one tool result in a summarising request, in characters.
const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// The model that writes the summary and how to reach it: the session's
/// own model, as the chat loop calls it.
///
/// ```
/// use oscova_agent::session::compaction::Summarizer;
/// # use oscova_core::provider::model::*;
/// # use oscova_core::provider::{BoxFuture, ProviderTypeKey};
/// # struct Local;
/// # impl ModelProvider for Local {
/// #     fn type_key(&self) -> ProviderTypeKey { "ollama".into() }
/// #     fn display_name(&self) -> &str { "Ollama" }
/// #     fn chat<'a>(&'a self, _: ChatRequest<'a>) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
/// #         Box::pin(async { Err(ModelError::Other("unused".into())) })
/// #     }
/// # }
/// let config = ModelProviderConfig::new("ollama").model("llama3.2");
/// let summarizer = Summarizer::new(&Local, &config)
///     .offline(true)
///     .focus(Some("the open questions"));
/// # let _ = summarizer;
/// ```
#[derive(Clone)]
pub struct Summarizer<'a> {
    provider: &'a dyn ModelProvider,
    config: &'a ModelProviderConfig,
    api_key: Option<&'a SecretString>,
    offline: bool,
    redactor: Option<&'a dyn Redact>,
    focus: Option<&'a str>,
    cancel: CancellationToken,
}

impl std::fmt::Debug for Summarizer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Summarizer")
            .field("provider", &self.provider.type_key())
            .field("config", &self.config)
            .field("api_key", &self.api_key.map(|_| "[REDACTED]"))
            .field("offline", &self.offline)
            .field("focus", &self.focus)
            .finish()
    }
}

impl<'a> Summarizer<'a> {
    /// Summaries by `provider` with `config` (its `model` is required).
    pub fn new(provider: &'a dyn ModelProvider, config: &'a ModelProviderConfig) -> Self {
        Self {
            provider,
            config,
            api_key: None,
            offline: false,
            redactor: None,
            focus: None,
            cancel: CancellationToken::new(),
        }
    }

    /// The provider's API key.
    pub fn api_key(mut self, key: Option<&'a SecretString>) -> Self {
        self.api_key = key;
        self
    }

    /// Whether offline operation is required (a remote endpoint is then
    /// refused before any request).
    pub fn offline(mut self, offline: bool) -> Self {
        self.offline = offline;
        self
    }

    /// Known secrets to keep out of the request and the summary: the
    /// user's [`UserScope`](oscova_core::UserScope), whose redaction covers
    /// the scope's secrets and the host's (a configured model key, say),
    /// as everything that leaves for a model or lands in the store is; a
    /// bare [`Redactor`](oscova_core::redact::Redactor) where there is no
    /// scope.
    pub fn redactor(mut self, redactor: Option<&'a dyn Redact>) -> Self {
        self.redactor = redactor;
        self
    }

    /// What the summary should focus on (pi's custom instructions, the
    /// text after `/compact`).
    pub fn focus(mut self, focus: Option<&'a str>) -> Self {
        self.focus = focus.filter(|f| !f.trim().is_empty());
        self
    }

    /// Cancels the summarising requests.
    pub fn cancellation(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// One summarising request: pi's system prompt and `prompt`.
    async fn ask(&self, prompt: &str, stage: &'static str) -> Result<Summary, CompactionError> {
        let model = self
            .config
            .model
            .as_deref()
            .ok_or_else(|| CompactionError::NoModel {
                provider: self.config.provider.to_string(),
            })?;
        let prompt = match self.redactor {
            Some(r) => r.redact_text(prompt).into_owned(),
            None => prompt.to_owned(),
        };
        let messages = [
            ChatMessage::system(SUMMARIZATION_SYSTEM_PROMPT),
            ChatMessage::user(prompt),
        ];
        let request = ChatRequest {
            config: self.config,
            api_key: self.api_key,
            model,
            messages: &messages,
            tools: &[],
            stream: None,
            cancel: self.cancel.clone(),
        };
        let response = self
            .provider
            .chat(request)
            .await
            .map_err(|source| CompactionError::Model { stage, source })?;
        if response.finish_reason.as_deref() == Some("length") {
            return Err(CompactionError::Incomplete { stage });
        }
        if !response.message.tool_calls.is_empty() {
            return Err(CompactionError::ToolCall { stage });
        }
        let text = match self.redactor {
            Some(r) => r.redact_text(&response.message.content).into_owned(),
            None => response.message.content,
        };
        Ok(Summary {
            text,
            usage: response.usage,
            from_hook: false,
            details: None,
        })
    }
}

/// Writes the summary of a prepared compaction with the session's model:
/// one request, or two for a split turn (see the module rules).
pub async fn summarize(
    preparation: &CompactionPreparation,
    summarizer: &Summarizer<'_>,
) -> Result<Summary, CompactionError> {
    check_offline(summarizer.config, summarizer.provider, summarizer.offline).map_err(
        |source| CompactionError::Model {
            stage: "Summarization",
            source,
        },
    )?;
    let previous = preparation.previous_summary.as_deref();
    let mut summary = if preparation.is_split_turn && !preparation.turn_prefix_messages.is_empty() {
        let history = if preparation.messages_to_summarize.is_empty() {
            Summary {
                text: previous.unwrap_or("No prior history.").to_owned(),
                usage: None,
                from_hook: false,
                details: None,
            }
        } else {
            let prompt = history_prompt(
                &preparation.messages_to_summarize,
                previous,
                summarizer.focus,
            );
            summarizer.ask(&prompt, "Summarization").await?
        };
        let prompt = turn_prefix_prompt(&preparation.turn_prefix_messages, summarizer.focus);
        let prefix = summarizer.ask(&prompt, "Turn prefix summarization").await?;
        Summary {
            text: format!(
                "{}\n\n---\n\n**Turn Context (split turn):**\n\n{}",
                history.text, prefix.text
            ),
            usage: combine(history.usage, prefix.usage),
            from_hook: false,
            details: None,
        }
    } else {
        let prompt = history_prompt(
            &preparation.messages_to_summarize,
            previous,
            summarizer.focus,
        );
        summarizer.ask(&prompt, "Summarization").await?
    };
    summary.text.push_str(&file_lists(
        &preparation.read_files,
        &preparation.modified_files,
    ));
    Ok(summary)
}

fn combine(a: Option<TokenUsage>, b: Option<TokenUsage>) -> Option<TokenUsage> {
    let add = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (None, None) => None,
        (x, y) => Some(x.unwrap_or(0) + y.unwrap_or(0)),
    };
    match (a, b) {
        (Some(a), Some(b)) => Some(TokenUsage {
            input_tokens: add(a.input_tokens, b.input_tokens),
            output_tokens: add(a.output_tokens, b.output_tokens),
            cached_input_tokens: add(a.cached_input_tokens, b.cached_input_tokens),
        }),
        (a, b) => a.or(b),
    }
}

/// The prompt of the history part (pi's `generateSummary`).
fn history_prompt(
    messages: &[AgentMessage],
    previous: Option<&str>,
    focus: Option<&str>,
) -> String {
    let mut prompt = format!(
        "<conversation>\n{}\n</conversation>\n\n",
        serialize_conversation(messages)
    );
    if let Some(previous) = previous {
        prompt.push_str(&format!(
            "<previous-summary>\n{previous}\n</previous-summary>\n\n"
        ));
    }
    prompt.push_str(match previous {
        Some(_) => UPDATE_SUMMARIZATION_PROMPT,
        None => SUMMARIZATION_PROMPT,
    });
    if let Some(focus) = focus {
        prompt.push_str(&format!("\n\nAdditional focus: {focus}"));
    }
    prompt
}

/// The prompt of a split turn's prefix (pi's `generateTurnPrefixSummary`).
fn turn_prefix_prompt(messages: &[AgentMessage], focus: Option<&str>) -> String {
    let mut prompt = format!(
        "# Conversation\n{}\n\n# Instructions\n{TURN_PREFIX_SUMMARIZATION_PROMPT}",
        serialize_conversation(messages)
    );
    if let Some(focus) = focus {
        prompt.push_str(&format!("\n\nAdditional focus: {focus}"));
    }
    prompt
}

/// pi's `formatFileOperations`.
fn file_lists(read: &[String], modified: &[String]) -> String {
    let mut sections = Vec::new();
    if !read.is_empty() {
        sections.push(format!("<read-files>\n{}\n</read-files>", read.join("\n")));
    }
    if !modified.is_empty() {
        sections.push(format!(
            "<modified-files>\n{}\n</modified-files>",
            modified.join("\n")
        ));
    }
    if sections.is_empty() {
        String::new()
    } else {
        format!("\n\n{}", sections.join("\n\n"))
    }
}

fn text_of(parts: &[ContentPart], separator: &str) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            ContentPart::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(separator)
}

fn content_text(content: &MessageContent) -> String {
    match content {
        MessageContent::Text(text) => text.clone(),
        MessageContent::Parts(parts) => text_of(parts, ""),
    }
}

/// At most `max` UTF-16 units of `text` (pi's `sliceHead`), with pi's
/// note of how many were cut.
fn truncate(text: &str, max: usize) -> String {
    let total = text.encode_utf16().count();
    if total <= max {
        return text.to_owned();
    }
    let mut units = 0;
    let mut end = 0;
    for (at, c) in text.char_indices() {
        if units + c.len_utf16() > max {
            break;
        }
        units += c.len_utf16();
        end = at + c.len_utf8();
    }
    format!(
        "{}\n\n[... {} more characters truncated]",
        &text[..end],
        total - max
    )
}

/// pi's `serializeConversation` over the messages as `convertToLlm` makes
/// them: the transcript a summarising request carries.
pub fn serialize_conversation(messages: &[AgentMessage]) -> String {
    let mut parts = Vec::new();
    for message in messages {
        match message {
            AgentMessage::User(m) => push_user(&mut parts, content_text(&m.content)),
            AgentMessage::Custom(m) => push_user(&mut parts, content_text(&m.content)),
            AgentMessage::Assistant(m) => {
                let calls: Vec<String> = m
                    .content
                    .iter()
                    .filter_map(|p| match p {
                        ContentPart::ToolCall {
                            name, arguments, ..
                        } => Some(format!("{name}({})", call_arguments(arguments))),
                        _ => None,
                    })
                    .collect();
                if m.content
                    .iter()
                    .any(|p| matches!(p, ContentPart::Text { .. }))
                {
                    parts.push(format!("[Assistant]: {}", text_of(&m.content, "\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            AgentMessage::ToolResult(m) => {
                let text = text_of(&m.content, "");
                if !text.is_empty() {
                    parts.push(format!(
                        "[Tool result]: {}",
                        truncate(&text, TOOL_RESULT_MAX_CHARS)
                    ));
                }
            }
            AgentMessage::System(_) => {}
            // Bash runs and summaries reach the model as user messages.
            other => {
                if let Some(chat) = other.to_chat() {
                    push_user(&mut parts, chat.content);
                }
            }
        }
    }
    parts.join("\n\n")
}

fn push_user(parts: &mut Vec<String>, text: String) {
    if !text.is_empty() {
        parts.push(format!("[User]: {text}"));
    }
}

fn call_arguments(arguments: &Value) -> String {
    match arguments {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    }
}
