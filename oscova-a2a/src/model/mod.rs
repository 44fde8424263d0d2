//! The A2A 1.0 protocol as both sides speak it: its objects, as its JSON
//! spells them (`task.rs`, `push.rs`), its methods and their HTTP+JSON
//! requests (`method.rs`), its errors with their codes (`error.rs`), and
//! the paths and header every client and server agree on. The server
//! serves these; the `oscova.a2a` client sends and reads them.
//!
//! Rules: unknown fields a peer sends are ignored, never an error; fields
//! with no value are left out, not sent empty.

mod card;
mod error;
mod method;
mod push;
mod task;

pub use card::{AgentCapabilities, AgentCard, AgentInterface, AgentSkill};
pub use error::A2aError;
pub use method::{Method, Verb, path_segment};
pub use push::{PushAuthentication, PushConfig};
#[cfg(feature = "server")]
pub use task::now_rfc3339;
pub use task::{Artifact, Message, Part, Role, Task, TaskState, TaskStatus, new_id};

/// The path of the agent card, under the agent's URL.
pub const CARD_PATH: &str = "/.well-known/agent-card.json";

/// The header naming the protocol version of a request.
pub const VERSION_HEADER: &str = "A2A-Version";

/// The protocol version spoken here, sent as [`VERSION_HEADER`].
pub const PROTOCOL_VERSION: &str = "1.0";

/// Where an Oscova host takes push webhooks for its own A2A calls
/// (`{public_url}/a2a/followups/{id}`): the client names it in the
/// webhooks it sets, the server answers it
/// ([`A2aServer::followups`](crate::A2aServer::followups), feature
/// `server`).
pub const FOLLOWUPS_PATH: &str = "/a2a/followups/";
