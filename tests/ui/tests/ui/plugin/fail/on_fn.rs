use oscova_core::prelude::*;

/// A plugin.
#[plugin(id = "acme.search")]
pub fn acme_plugin() {}

fn main() {}
