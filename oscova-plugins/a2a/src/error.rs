//! The one error type of the A2A tools: why this client's call to an
//! agent failed ([`ClientError`]; the protocol's own errors, with their
//! codes, are `oscova_a2a::model::A2aError`, which an agent's answer
//! carries as [`ClientError::Remote`]).
//!
//! Rules: each message names the agent and says what the model (or the
//! person) can do next: pick a configured agent, ask the operator, try
//! again later, check the task id. A missing credential is not an error
//! of this type: it is an error result made by
//! `ToolResult::missing_credential` (see `toolset.rs`), as `oscova.mcp`
//! gives.

use oscova_core::http::backend::BackendError;

/// Why a call to an agent failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// No agent of that name is configured.
    #[error("no A2A agent `{name}` is configured; the configured agents are: {known}")]
    UnknownAgent {
        /// The name asked for.
        name: String,
        /// The configured names, comma-separated.
        known: String,
    },
    /// Offline operation is required and the agent is not on this machine.
    #[error(
        "A2A agent `{agent}` is at `{url}`, which is not on this machine, and offline \
         operation is required (`[a2a] offline = true`); no connection was made"
    )]
    Offline {
        /// The agent.
        agent: String,
        /// Its URL.
        url: String,
    },
    /// The message being handled has already made too many hops.
    #[error(
        "refused: the request being handled has already made {hops} A2A hop(s), and the \
         limit is {max} (`[a2a] max_hops`); agents calling each other must stop here"
    )]
    HopLimit {
        /// The hops of the inbound message.
        hops: u32,
        /// The limit.
        max: u32,
    },
    /// The card could not be fetched or read.
    #[error("the card of A2A agent `{agent}` could not be read: {reason}")]
    Card {
        /// The agent.
        agent: String,
        /// Why.
        reason: String,
    },
    /// The card offers no interface this client may use.
    #[error("A2A agent `{agent}`: {reason}")]
    Interface {
        /// The agent.
        agent: String,
        /// Why.
        reason: String,
    },
    /// Connecting or reading failed.
    #[error("A2A agent `{agent}`: {source}")]
    Transport {
        /// The agent.
        agent: String,
        /// The transport's error (scrubbed).
        #[source]
        source: Box<BackendError>,
    },
    /// The agent refused the credential.
    #[error(
        "A2A agent `{agent}` refused the request ({status}): the credential is missing or \
         wrong; the user should check the credential set for this agent"
    )]
    Unauthorized {
        /// The agent.
        agent: String,
        /// The HTTP status.
        status: u16,
    },
    /// Another HTTP status that is not a success.
    #[error("A2A agent `{agent}` answered HTTP {status}: {body}")]
    Status {
        /// The agent.
        agent: String,
        /// The HTTP status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// A JSON-RPC error (or HTTP+JSON error body) from the agent.
    #[error("A2A agent `{agent}` answered with error {code}: {message}")]
    Remote {
        /// The agent.
        agent: String,
        /// The JSON-RPC code (or HTTP status).
        code: i64,
        /// The agent's message.
        message: String,
    },
    /// An answer that is not what A2A 1.0 says.
    #[error("A2A agent `{agent}` gave an answer this client cannot read: {reason}")]
    BadAnswer {
        /// The agent.
        agent: String,
        /// What was wrong.
        reason: String,
    },
    /// A request took longer than the agent's `timeout_secs`.
    #[error("A2A agent `{agent}` did not answer within {seconds} s; try again later")]
    Timeout {
        /// The agent.
        agent: String,
        /// The bound.
        seconds: f64,
    },
    /// A file to attach could not be read from the user's files root.
    #[error("the file `{path}` cannot be attached: {reason}")]
    File {
        /// The path as given.
        path: String,
        /// Why.
        reason: String,
    },
    /// An argument out of range.
    #[error("{0}")]
    BadArgument(String),
    /// The call was cancelled.
    #[error("the call was cancelled")]
    Cancelled,
}
