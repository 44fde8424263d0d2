//! Parsing `#[tool(...)]`. Keywords are constants, not strings scattered
//! about; every mistake is recorded on its own token and parsing goes on.

use syn::parse::ParseStream;
use syn::{Attribute, Expr, ExprLit, ExprPath, Ident, Lit, LitStr, Token};

use crate::ctxt::Ctxt;

pub(crate) const TOOL: &str = "tool";
pub(crate) const NAME: &str = "name";
pub(crate) const DESCRIPTION: &str = "description";
pub(crate) const APPROVAL: &str = "approval";
pub(crate) const NETWORK: &str = "network";
const KEYS: &str = "`name`, `description`, `approval`, `network`";

pub(crate) const APPROVAL_MODES: &[&str] = &["Default", "Required", "NotRequired"];
pub(crate) const NETWORK_SCOPES: &[&str] = &["None", "Local", "Internet"];

/// What `#[tool(...)]` said about one method.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) approval: Option<Ident>,
    pub(crate) network: Option<Ident>,
}

/// Whether `attr` is `#[tool]` / `#[tool(...)]` (by its one-segment path, or
/// a path ending in `oscova_core::tool`).
pub(crate) fn is_tool_attr(attr: &Attribute) -> bool {
    let path = attr.path();
    path.is_ident(TOOL)
        || (path.segments.len() > 1
            && path.segments.last().is_some_and(|s| s.ident == TOOL)
            && path.segments.iter().any(|s| s.ident == "oscova_core"))
}

/// Parses every `#[tool]` on a method into one `ToolAttr`.
pub(crate) fn parse_tool_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> ToolAttr {
    let mut out = ToolAttr::default();
    for attr in attrs.iter().filter(|a| is_tool_attr(a)) {
        if matches!(attr.meta, syn::Meta::Path(_)) {
            continue; // a bare `#[tool]` only marks the method
        }
        let result = attr.parse_args_with(|input: ParseStream<'_>| {
            while !input.is_empty() {
                let key: Ident = input.parse()?;
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                set_key(cx, &mut out, &key, value);
                if input.is_empty() {
                    break;
                }
                input.parse::<Token![,]>()?;
            }
            Ok(())
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    out
}

fn set_key(cx: &mut Ctxt, out: &mut ToolAttr, key: &Ident, value: Expr) {
    let duplicate =
        |cx: &mut Ctxt| cx.error_spanned_by(key, format!("duplicate `{key}` in #[tool]"));
    if key == NAME {
        if out.name.is_some() {
            return duplicate(cx);
        }
        out.name = string_value(cx, key, value);
    } else if key == DESCRIPTION {
        if out.description.is_some() {
            return duplicate(cx);
        }
        out.description = string_value(cx, key, value);
    } else if key == APPROVAL {
        if out.approval.is_some() {
            return duplicate(cx);
        }
        out.approval = variant_value(cx, key, value, "ToolApprovalMode", APPROVAL_MODES);
    } else if key == NETWORK {
        if out.network.is_some() {
            return duplicate(cx);
        }
        out.network = variant_value(cx, key, value, "NetworkScope", NETWORK_SCOPES);
    } else {
        cx.error_spanned_by(
            key,
            format!("unknown key `{key}` in #[tool]; expected one of {KEYS}"),
        );
    }
}

fn string_value(cx: &mut Ctxt, key: &Ident, value: Expr) -> Option<LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s),
        other => {
            cx.error_spanned_by(
                other,
                format!("`{key}` takes a string literal: #[tool({key} = \"...\")]"),
            );
            None
        }
    }
}

/// Accepts `Required` or `ToolApprovalMode::Required` (any path ending in a
/// known variant, whose other segments name the enum).
fn variant_value(
    cx: &mut Ctxt,
    key: &Ident,
    value: Expr,
    enum_name: &str,
    variants: &[&str],
) -> Option<Ident> {
    let expected = variants
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let Expr::Path(ExprPath {
        path, qself: None, ..
    }) = &value
    else {
        cx.error_spanned_by(
            &value,
            format!(
                "`{key}` takes one of {expected}: #[tool({key} = {})]",
                variants[1]
            ),
        );
        return None;
    };
    let last = path.segments.last()?;
    let prefix_ok = path
        .segments
        .iter()
        .rev()
        .nth(1)
        .is_none_or(|s| s.ident == enum_name);
    if !prefix_ok || !variants.iter().any(|v| last.ident == v) {
        cx.error_spanned_by(
            path,
            format!(
                "unknown {key} value `{}`; expected one of {expected}",
                last.ident
            ),
        );
        return None;
    }
    Some(last.ident.clone())
}

/// The doc comment text of `attrs`, lines joined, common indent removed.
pub(crate) fn doc_text(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) = &nv.value
        {
            for line in s.value().lines() {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
            }
        }
    }
    while lines.first().is_some_and(String::is_empty) {
        lines.remove(0);
    }
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines.join("\n")
}
