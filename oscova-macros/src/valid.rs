//! Checks across tools and across keys: names must be unique within one
//! toolset after normalisation, since they would collide on the wire; and
//! a tool's annotations must not contradict each other (`read_only` with
//! `destructive`). Every `pub fn` takes part, including ones with other
//! mistakes, so a duplicate is reported in the same pass as everything
//! else.

use std::collections::HashMap;

use crate::ast::{Tool, Toolset};
use crate::ctxt::Ctxt;

pub(crate) fn check(cx: &mut Ctxt, toolset: &Toolset) {
    let mut seen: HashMap<&str, &Tool> = HashMap::new();
    for tool in &toolset.tools {
        check_annotations(cx, tool);
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

/// A tool that only reads destroys nothing: `read_only` with `destructive`
/// is a contradiction, reported on `destructive`.
fn check_annotations(cx: &mut Ctxt, tool: &Tool) {
    if let (Some(read_only), Some(destructive)) = (&tool.read_only, &tool.destructive)
        && read_only.value
        && destructive.value
    {
        cx.error_spanned_by(
            &destructive.key,
            format!(
                "`{}` is `read_only`, so it cannot be `destructive`: a tool that only reads destroys nothing; remove one of them",
                tool.method
            ),
        );
    }
}
