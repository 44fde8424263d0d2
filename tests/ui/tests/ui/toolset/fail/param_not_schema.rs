use oscova_core::prelude::*;

pub struct Point {
    pub x: f64,
    pub y: f64,
}

pub struct MapToolset;

#[toolset]
impl MapToolset {
    /// Describes a place.
    pub fn describe(
        /// The name of the place.
        name: String,
        /// Where it is.
        at: Point,
    ) -> String {
        format!("{name} at {},{}", at.x, at.y)
    }
}

fn main() {}
