//! The A2A 1.0 protocol's objects and errors, as the protocol's JSON
//! spells them.

mod error;
mod task;

pub use error::A2aError;
pub use task::*;
