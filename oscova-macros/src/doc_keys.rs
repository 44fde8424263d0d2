//! Keeps the `#[toolset]` documentation true to the parser.
//!
//! Rules: the keys the `#[toolset]` rustdoc lists (its "`#[tool(...)]`
//! keys" list, read from `lib.rs` itself) are exactly the keys the parser
//! accepts (each is parsed here, and the parser's own list in its
//! unknown-key message is compared), and the values and defaults it names
//! are the parser's and the expansion's. A key added to the parser without
//! a line in the docs, or a doc line the parser no longer takes, fails.

use std::collections::BTreeSet;

use quote::quote;
use syn::Attribute;

use crate::attr::{APPROVAL_MODES, KEYS, NETWORK_SCOPES, parse_tool_attrs};
use crate::ctxt::Ctxt;

/// The `#[toolset]` rustdoc's list of keys: `(key, the rest of its line)`.
fn documented() -> Vec<(String, String)> {
    let source = include_str!("lib.rs");
    let doc: Vec<&str> = source
        .lines()
        .skip_while(|l| !l.starts_with("/// `#[tool(...)]` keys"))
        .take_while(|l| !l.starts_with("pub fn toolset"))
        .filter_map(|l| l.strip_prefix("///"))
        .collect();
    let mut items: Vec<String> = Vec::new();
    for line in doc {
        if let Some(item) = line.strip_prefix(" - ") {
            items.push(item.to_owned());
        } else if let (Some(last), true) = (items.last_mut(), line.starts_with("   ")) {
            last.push(' ');
            last.push_str(line.trim());
        }
    }
    let mut keys = Vec::new();
    for item in items {
        let (names, rest) = item.split_once(':').expect("each item is `keys: meaning`");
        for name in names.split(',') {
            keys.push((name.trim().trim_matches('`').to_owned(), rest.to_owned()));
        }
    }
    keys
}

/// The keys in the parser's unknown-key message.
fn parser_keys() -> BTreeSet<String> {
    KEYS.split(',')
        .map(|k| k.trim().trim_matches('`').to_owned())
        .collect()
}

/// Parses one `#[tool(...)]` and returns its errors.
fn parse(attr: Attribute) -> Option<String> {
    let mut cx = Ctxt::default();
    let _ = parse_tool_attrs(&mut cx, &[attr]);
    cx.check().err().map(|e| e.to_string())
}

#[test]
fn the_documented_keys_are_the_parsers() {
    let documented = documented();
    let names: BTreeSet<String> = documented.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(names.len(), 12, "the doc lists {names:?}");
    assert_eq!(
        names,
        parser_keys(),
        "the #[toolset] doc and the parser differ"
    );
    for (key, _) in &documented {
        let key = syn::Ident::new(key, proc_macro2::Span::call_site());
        let attr: Attribute = match key.to_string().as_str() {
            "approval" => syn::parse_quote!(#[tool(#key = Required)]),
            "network" => syn::parse_quote!(#[tool(#key = Local)]),
            "read_only" | "destructive" | "idempotent" | "open_world" | "sequential" => {
                syn::parse_quote!(#[tool(#key)])
            }
            "prompt_guidelines" => syn::parse_quote!(#[tool(#key = ["Some text", "More"])]),
            _ => syn::parse_quote!(#[tool(#key = "Some text")]),
        };
        assert_eq!(parse(attr), None, "documented key `{key}` is refused");
    }
    let unknown = parse(syn::parse_quote!(#[tool(readonly)])).expect("an unknown key is an error");
    assert!(unknown.contains("unknown key `readonly`"), "{unknown}");
}

#[test]
fn the_documented_values_and_defaults_are_the_codes() {
    let documented = documented();
    let line = |key: &str| {
        documented
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, rest)| rest.clone())
            .unwrap_or_default()
    };
    let listed = |rest: &str, values: &[&str]| {
        for value in values {
            assert!(
                rest.contains(&format!("`{value}`")),
                "`{value}` is not in: {rest}"
            );
        }
    };
    listed(&line("approval"), APPROVAL_MODES);
    listed(&line("network"), NETWORK_SCOPES);
    // The defaults the doc names are what a method without `#[tool]` gets.
    let expanded = crate::expand::toolset(quote!(), quote!(impl T { pub fn f() {} })).to_string();
    for (key, path) in [
        ("approval", "ToolApprovalMode"),
        ("network", "NetworkScope"),
    ] {
        let rest = line(key);
        let default = rest
            .split("(default: `")
            .nth(1)
            .and_then(|d| d.split('`').next())
            .unwrap_or_else(|| panic!("`{key}` names no default: {rest}"));
        let generated = format!("{path} :: {default}");
        assert!(
            expanded.contains(&generated),
            "`{key}` defaults to `{default}` in the doc, not in the expansion: {expanded}"
        );
    }
}
