// Every supported return shape.
use std::fmt;

use oscova_core::prelude::*;
use serde::Serialize;

#[derive(Serialize)]
pub struct Row {
    id: u32,
}

#[derive(Debug)]
pub struct LookupError;

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not found")
    }
}

pub struct ReturnsToolset;

#[toolset]
impl ReturnsToolset {
    /// Nothing back.
    pub fn unit() {}

    /// Explicit unit.
    pub fn explicit_unit() -> () {}

    /// A serialisable value.
    pub fn rows() -> Vec<Row> {
        vec![Row { id: 1 }]
    }

    /// A result with a Display error.
    pub fn lookup(id: u32) -> Result<Row, LookupError> {
        if id == 0 { Err(LookupError) } else { Ok(Row { id }) }
    }

    /// A result whose value is already a tool result.
    pub async fn wrapped(id: u32) -> Result<ToolResult, String> {
        Ok(ToolResult::text(id.to_string()))
    }

    /// A tool result as is.
    pub fn raw() -> ToolResult {
        ToolResult::error("always fails")
    }

    /// A result alias that names only `T`.
    pub fn alias() -> std::io::Result<Vec<u8>> {
        Ok(vec![1])
    }

    /// A fully qualified result type.
    pub fn qualified() -> std::result::Result<String, std::io::Error> {
        Ok("ok".into())
    }
}

fn main() {
    assert_eq!(ReturnsToolset::toolset_info().tools().len(), 8);
}
