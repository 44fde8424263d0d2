//! What a chat reports as it happens.
//!
//! Rules: events are reported in the order they happen; the sink is a
//! plain function called in line with the loop, so it should return
//! quickly (hand slow work to a channel).

use std::sync::Arc;

use oscova_core::provider::model::ToolCallRequest;
use oscova_core::{ToolProgress, ToolResult};

/// Something that happened during a chat, for a host to show as it happens.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ChatEvent {
    /// More answer text. Streamed pieces while streaming; the whole text of
    /// each answer once it arrives when not streaming.
    Text(String),
    /// The model started composing a tool call (streaming only).
    ToolCallStarted {
        /// The call id.
        id: String,
        /// The tool's wire name.
        name: String,
    },
    /// A tool call is about to run through the scope. The calls of one
    /// model answer run together unless one of their tools is sequential,
    /// so several may be running before the first finishes.
    ToolCallRunning(ToolCallRequest),
    /// Progress reported by a running tool (already redacted).
    ToolProgress {
        /// The call id.
        id: String,
        /// The update.
        progress: ToolProgress,
    },
    /// A tool call finished; `result` is what the model is told. Calls
    /// running together finish in any order; their tool messages follow
    /// the model's order.
    ToolCallFinished {
        /// The call id.
        id: String,
        /// The tool's wire name.
        name: String,
        /// The result (redacted).
        result: ToolResult,
        /// Whether the host refused the call (approval or a hook), in which
        /// case the tool did not run.
        refused: bool,
    },
}

/// Receives [`ChatEvent`]s.
pub type ChatEventSink = Arc<dyn Fn(&ChatEvent) + Send + Sync>;
