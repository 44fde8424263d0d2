use oscova_core::prelude::*;

pub struct EchoToolset;

#[toolset]
impl EchoToolset {
    /// Echoes.
    pub fn echo(text: &str) -> String {
        text.to_owned()
    }

    /// Sums.
    pub fn sum(values: &[i64]) -> i64 {
        values.iter().sum()
    }
}

fn main() {}
