// A parameter type with `Deserialize` but no `JsonSchema` is told which
// derive is missing, on the parameter's type.
use oscova_core::prelude::*;
use oscova_core::serde;

#[derive(serde::Deserialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

pub struct MapToolset;

#[toolset]
impl MapToolset {
    /// Describes a place.
    pub fn describe(
        /// Where it is.
        at: Point,
    ) -> String {
        format!("{},{}", at.x, at.y)
    }
}

fn main() {}
