use oscova_core::prelude::*;

pub struct CounterToolset {
    count: u64,
}

#[toolset]
impl CounterToolset {
    /// Counts.
    pub fn bump(&mut self) -> u64 {
        self.count += 1;
        self.count
    }

    /// Consumes the toolset.
    pub fn take(self) -> u64 {
        self.count
    }
}

fn main() {}
