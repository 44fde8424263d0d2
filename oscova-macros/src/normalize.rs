//! The wire-name segment rule, identical to `oscova_core::wire::normalize_segment`
//! (a test in `oscova-core` checks the two agree): heck snake_case, then
//! `[a-z0-9]` kept and everything else `_`, runs collapsed, ends trimmed.

use heck::ToSnakeCase;

pub(crate) fn normalize_segment(raw: &str) -> String {
    let snake = raw.to_snake_case();
    let mut out = String::with_capacity(snake.len());
    let mut last_underscore = true;
    for c in snake.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
            last_underscore = false;
        } else if !last_underscore {
            out.push('_');
            last_underscore = true;
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

/// The owner segment: the type name less one trailing `Toolset`.
pub(crate) fn owner_segment(type_name: &str) -> String {
    let stripped = match type_name.strip_suffix("Toolset") {
        Some(rest) if !rest.is_empty() => rest,
        _ => type_name,
    };
    normalize_segment(stripped)
}
