//! Checks across tools: names must be unique within one toolset after
//! normalisation, since they would collide on the wire.

use std::collections::HashMap;

use crate::ast::Toolset;
use crate::ctxt::Ctxt;

pub(crate) fn check(cx: &mut Ctxt, toolset: &Toolset) {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for tool in &toolset.tools {
        if tool.name.is_empty() {
            continue;
        }
        if let Some(first) = seen.insert(&tool.name, &tool.display_name) {
            cx.syn_error(syn::Error::new(
                tool.name_span,
                format!(
                    "duplicate tool name `{}` in `{}`: `{}` already normalises to it; give one a different #[tool(name = \"...\")]",
                    tool.name, toolset.type_name, first
                ),
            ));
        }
    }
}
