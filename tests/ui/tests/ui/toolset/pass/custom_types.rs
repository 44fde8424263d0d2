// Parameters of the author's own types, with only oscova_core's re-exports.
use oscova_core::prelude::*;
use oscova_core::{schemars, serde};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "oscova_core::serde")]
#[schemars(crate = "oscova_core::schemars")]
pub struct Filter {
    /// The field to match.
    pub field: String,
    /// The value it must have.
    pub value: String,
}

pub struct FilterToolset;

#[toolset]
impl FilterToolset {
    /// Filters rows.
    pub fn filter(
        /// Every condition must hold.
        filters: Vec<Filter>,
    ) -> usize {
        filters.iter().filter(|f| f.field != f.value).count()
    }
}

fn main() {
    let schema = FilterToolset::toolset_info().tools()[0].input_schema();
    assert!(schema["$defs"]["Filter"].is_object());
}
