use oscova_core::prelude::*;

#[plugin(id = "acme.search")]
pub struct AcmePlugin;

fn main() {}
