//! Checks across tools: names must be unique within one toolset after
//! normalisation, since they would collide on the wire. Every `pub fn` takes
//! part, including ones with other mistakes, so a duplicate is reported in
//! the same pass as everything else.

use std::collections::HashMap;

use crate::ast::{Tool, Toolset};
use crate::ctxt::Ctxt;

pub(crate) fn check(cx: &mut Ctxt, toolset: &Toolset) {
    let mut seen: HashMap<&str, &Tool> = HashMap::new();
    for tool in &toolset.tools {
        if tool.name.is_empty() {
            continue; // already reported
        }
        if let Some(first) = seen.get(tool.name.as_str()) {
            let how = if tool.display_name == tool.name {
                String::new()
            } else {
                format!(" (normalised from {:?})", tool.display_name)
            };
            cx.syn_error(syn::Error::new(
                tool.name_span,
                format!(
                    "duplicate tool name `{}`{how} in `{}`: method `{}` already has it; give one a different #[tool(name = \"...\")]",
                    tool.name, toolset.type_name, first.method
                ),
            ));
        } else {
            seen.insert(&tool.name, tool);
        }
    }
}
