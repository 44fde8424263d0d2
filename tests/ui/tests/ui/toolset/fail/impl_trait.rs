use oscova_core::prelude::*;

pub struct EchoToolset;

#[toolset]
impl EchoToolset {
    /// Echoes.
    pub fn echo(text: impl Into<String>) -> String {
        text.into()
    }

    /// Counts.
    pub fn count(n: u32) -> impl serde::Serialize {
        n
    }
}

fn main() {}
