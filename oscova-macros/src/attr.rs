//! Parsing `#[tool(...)]`. Keywords are constants, not strings scattered
//! about; every mistake is recorded on its own token and parsing goes on.

use quote::ToTokens as _;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Attribute, Expr, ExprLit, ExprPath, Ident, Lit, LitStr, Token};

use crate::ctxt::Ctxt;

pub(crate) const TOOL: &str = "tool";
pub(crate) const NAME: &str = "name";
pub(crate) const DESCRIPTION: &str = "description";
pub(crate) const APPROVAL: &str = "approval";
pub(crate) const NETWORK: &str = "network";
pub(crate) const TITLE: &str = "title";
pub(crate) const READ_ONLY: &str = "read_only";
pub(crate) const DESTRUCTIVE: &str = "destructive";
pub(crate) const IDEMPOTENT: &str = "idempotent";
pub(crate) const OPEN_WORLD: &str = "open_world";
pub(crate) const SEQUENTIAL: &str = "sequential";
pub(crate) const PROMPT_SNIPPET: &str = "prompt_snippet";
pub(crate) const PROMPT_GUIDELINES: &str = "prompt_guidelines";
pub(crate) const KEYS: &str = "`name`, `title`, `description`, `approval`, `network`, `read_only`, `destructive`, `idempotent`, `open_world`, `sequential`, `prompt_snippet`, `prompt_guidelines`";
/// The flags, written bare (`read_only`) or with a boolean
/// (`read_only = false`): the annotation hints and `sequential`.
const FLAGS: [&str; 5] = [READ_ONLY, DESTRUCTIVE, IDEMPOTENT, OPEN_WORLD, SEQUENTIAL];

pub(crate) const APPROVAL_MODES: &[&str] = &["Default", "Required", "NotRequired"];
pub(crate) const NETWORK_SCOPES: &[&str] = &["None", "Local", "Internet"];

/// What `#[tool(...)]` said about one method.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) approval: Option<Ident>,
    pub(crate) network: Option<Ident>,
    pub(crate) title: Option<LitStr>,
    pub(crate) read_only: Option<Flag>,
    pub(crate) destructive: Option<Flag>,
    pub(crate) idempotent: Option<Flag>,
    pub(crate) open_world: Option<Flag>,
    pub(crate) sequential: Option<Flag>,
    pub(crate) prompt_snippet: Option<LitStr>,
    /// The list as written, for errors on it, and its checked bullets.
    pub(crate) prompt_guidelines: Option<Vec<LitStr>>,
}

/// An annotation flag as written: its key (for errors) and its value.
pub(crate) struct Flag {
    pub(crate) key: Ident,
    pub(crate) value: bool,
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
        match &attr.meta {
            syn::Meta::Path(_) => continue, // a bare `#[tool]` only marks the method
            syn::Meta::NameValue(nv) => {
                cx.error_spanned_by(
                    &nv.value,
                    "#[tool] takes a list of keys: #[tool(name = \"...\", approval = Required)]",
                );
                continue;
            }
            syn::Meta::List(_) => {}
        }
        let result = attr.parse_args_with(|input: ParseStream<'_>| {
            parse_key_values(cx, input, TOOL, |cx, key, value| {
                set_key(cx, &mut out, &key, value);
            })
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    out
}

/// Parses `key = value, ...` and hands each pair to `f`, which reports
/// unknown keys. A key without `= value` comes with `None`; parsing goes on
/// after the next comma, so later keys are still checked.
pub(crate) fn parse_key_values(
    cx: &mut Ctxt,
    input: ParseStream<'_>,
    attr: &str,
    mut f: impl FnMut(&mut Ctxt, Ident, Option<Expr>),
) -> syn::Result<()> {
    while !input.is_empty() {
        let key = input.call(Ident::parse_any)?;
        if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            let value: Expr = input.parse()?;
            f(cx, key, Some(value));
        } else {
            while !input.is_empty() && !input.peek(Token![,]) {
                input.parse::<proc_macro2::TokenTree>()?;
            }
            f(cx, key, None);
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("expected `,` between the keys of #[{attr}(key = value, ...)]"),
            )
        })?;
    }
    Ok(())
}

/// The error for a known key written without a value.
pub(crate) fn missing_value(cx: &mut Ctxt, attr: &str, key: &Ident, example: &str) {
    cx.error_spanned_by(
        key,
        format!("`{key}` needs a value: #[{attr}({key} = {example})]"),
    );
}

fn set_key(cx: &mut Ctxt, out: &mut ToolAttr, key: &Ident, value: Option<Expr>) {
    let known = [
        NAME,
        DESCRIPTION,
        APPROVAL,
        NETWORK,
        TITLE,
        PROMPT_SNIPPET,
        PROMPT_GUIDELINES,
    ];
    if let Some(flag) = FLAGS.iter().find(|k| key == *k) {
        let slot = match *flag {
            READ_ONLY => &mut out.read_only,
            DESTRUCTIVE => &mut out.destructive,
            IDEMPOTENT => &mut out.idempotent,
            SEQUENTIAL => &mut out.sequential,
            _ => &mut out.open_world,
        };
        if slot.is_some() {
            return cx.error_spanned_by(key, format!("duplicate `{key}` in #[tool]"));
        }
        *slot = flag_value(cx, key, value).map(|value| Flag {
            key: key.clone(),
            value,
        });
        return;
    }
    if !known.iter().any(|k| key == k) {
        let all = [
            NAME,
            TITLE,
            DESCRIPTION,
            APPROVAL,
            NETWORK,
            READ_ONLY,
            DESTRUCTIVE,
            IDEMPOTENT,
            OPEN_WORLD,
            SEQUENTIAL,
            PROMPT_SNIPPET,
            PROMPT_GUIDELINES,
        ];
        cx.error_spanned_by(
            key,
            format!(
                "unknown key `{key}` in #[tool]{}; expected one of {KEYS}",
                suggestion(&key.to_string(), &all)
            ),
        );
        return;
    }
    let Some(value) = value else {
        let example = if key == APPROVAL {
            APPROVAL_MODES[1]
        } else if key == NETWORK {
            NETWORK_SCOPES[1]
        } else if key == PROMPT_GUIDELINES {
            "[\"...\", \"...\"]"
        } else {
            "\"...\""
        };
        return missing_value(cx, TOOL, key, example);
    };
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
    } else if key == TITLE {
        if out.title.is_some() {
            return duplicate(cx);
        }
        out.title = string_value(cx, key, value);
        if let Some(title) = &out.title
            && title.value().trim().is_empty()
        {
            cx.error_spanned_by(
                title,
                "`title` cannot be empty: #[tool(title = \"Search records\")], or leave it out",
            );
        }
    } else if key == PROMPT_SNIPPET {
        if out.prompt_snippet.is_some() {
            return duplicate(cx);
        }
        out.prompt_snippet = string_value(cx, key, value).filter(|s| prompt_line(cx, key, s));
    } else if key == PROMPT_GUIDELINES {
        if out.prompt_guidelines.is_some() {
            return duplicate(cx);
        }
        out.prompt_guidelines = guidelines_value(cx, key, value);
    } else if key == APPROVAL {
        if out.approval.is_some() {
            return duplicate(cx);
        }
        out.approval = variant_value(cx, key, value, "ToolApprovalMode", APPROVAL_MODES);
    } else {
        if out.network.is_some() {
            return duplicate(cx);
        }
        out.network = variant_value(cx, key, value, "NetworkScope", NETWORK_SCOPES);
    }
}

/// A flag written bare is `true`; `= true` and `= false` are accepted so a
/// default (such as `open_world` from the network scope) can be turned off.
fn flag_value(cx: &mut Ctxt, key: &Ident, value: Option<Expr>) -> Option<bool> {
    match value {
        None => Some(true),
        Some(Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        })) => Some(b.value),
        Some(other) => {
            cx.error_spanned_by(
                other,
                format!(
                    "`{key}` is a flag: write #[tool({key})], or #[tool({key} = false)] to say it is not"
                ),
            );
            None
        }
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

/// Whether `text` can be one line of the system prompt: not blank, no line
/// break. Reported on the literal otherwise.
fn prompt_line(cx: &mut Ctxt, key: &Ident, text: &LitStr) -> bool {
    let value = text.value();
    let blank = value.trim().is_empty();
    if !blank && !value.contains(['\n', '\r']) {
        return true;
    }
    let message = match (key == PROMPT_SNIPPET, blank) {
        (true, true) => format!(
            "`{key}` cannot be empty: #[tool({key} = \"Searches the records by name.\")], or leave it out"
        ),
        (true, false) => format!(
            "`{key}` is one line of the system prompt, so it cannot hold a line break: #[tool({key} = \"Searches the records by name.\")]; put further advice in #[tool(prompt_guidelines = [\"...\", \"...\"])]"
        ),
        (false, true) => format!(
            "a bullet of `{key}` cannot be empty: #[tool({key} = [\"First bullet.\", \"Second bullet.\"])]"
        ),
        (false, false) => format!(
            "each bullet of `{key}` is one line of the system prompt, so it cannot hold a line break: write one string per bullet, #[tool({key} = [\"First bullet.\", \"Second bullet.\"])]"
        ),
    };
    cx.error_spanned_by(text, message);
    false
}

/// `["...", "..."]`: a list of one-line strings, at least one. Each
/// mistake is reported on its own element.
fn guidelines_value(cx: &mut Ctxt, key: &Ident, value: Expr) -> Option<Vec<LitStr>> {
    let example = "#[tool(prompt_guidelines = [\"First bullet.\", \"Second bullet.\"])]";
    let array = match value {
        Expr::Array(array) => array,
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => {
            cx.error_spanned_by(
                &s,
                format!(
                    "`{key}` takes a list of strings, even for one bullet: #[tool({key} = [{}])]",
                    s.to_token_stream()
                ),
            );
            return None;
        }
        other => {
            cx.error_spanned_by(other, format!("`{key}` takes a list of strings: {example}"));
            return None;
        }
    };
    if array.elems.is_empty() {
        cx.error_spanned_by(
            &array,
            format!("`{key}` is empty: give at least one bullet, {example}, or leave it out"),
        );
        return None;
    }
    let mut bullets = Vec::new();
    let mut ok = true;
    for elem in array.elems {
        match elem {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => {
                ok &= prompt_line(cx, key, &s);
                bullets.push(s);
            }
            other => {
                ok = false;
                cx.error_spanned_by(
                    other,
                    format!("each bullet of `{key}` is a string literal: {example}"),
                );
            }
        }
    }
    ok.then_some(bullets)
}

/// Accepts `Required` or `ToolApprovalMode::Required` (any path ending in a
/// known variant, whose other segments name the enum). A mistake is
/// reported on the offending part: the variant, or the enum it names.
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
    let path = match &value {
        Expr::Path(ExprPath {
            path, qself: None, ..
        }) => path,
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => {
            let text = s.value();
            let example = variants
                .iter()
                .find(|v| v.eq_ignore_ascii_case(&text.replace(['_', '-', ' '], "")))
                .unwrap_or(&variants[1]);
            cx.error_spanned_by(
                s,
                format!(
                    "`{key}` takes a `{enum_name}` variant, not a string: #[tool({key} = {example})]"
                ),
            );
            return None;
        }
        other => {
            cx.error_spanned_by(
                other,
                format!(
                    "`{key}` takes one of {expected}: #[tool({key} = {})]",
                    variants[1]
                ),
            );
            return None;
        }
    };
    let last = path.segments.last()?;
    if let Some(prefix) = path.segments.iter().rev().nth(1)
        && prefix.ident != enum_name
    {
        cx.error_spanned_by(
            &prefix.ident,
            format!(
                "`{key}` takes a `{enum_name}`, not a `{}`: #[tool({key} = {enum_name}::{})]",
                prefix.ident, variants[1]
            ),
        );
        return None;
    }
    if !variants.iter().any(|v| last.ident == v) || !last.arguments.is_none() {
        cx.error_spanned_by(
            &last.ident,
            format!(
                "unknown {key} value `{}`{}; expected one of {expected}",
                last.ident,
                suggestion(&last.ident.to_string(), variants)
            ),
        );
        return None;
    }
    Some(last.ident.clone())
}

/// ` (did you mean `{candidate}`?)` when `word` is most likely a slip for
/// one of `candidates`, else nothing.
pub(crate) fn suggestion(word: &str, candidates: &[&str]) -> String {
    did_you_mean(word, candidates).map_or_else(String::new, |c| format!(" (did you mean `{c}`?)"))
}

/// The candidate `word` was most likely meant as: the same word in another
/// case or with `_`/`-` left out or added (`required`, `not_required`), or
/// within a typo or two of it (`Requried`); `None` when nothing is close.
fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let folded = |w: &str| w.replace(['_', '-'], "").to_ascii_lowercase();
    let word = folded(word);
    if let Some(same) = candidates.iter().find(|c| folded(c) == word) {
        return Some(same);
    }
    let limit = (word.chars().count() / 3).clamp(1, 2);
    candidates
        .iter()
        .map(|c| (edit_distance(&word, &folded(c)), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
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

#[cfg(test)]
mod tests {
    use super::{APPROVAL_MODES, NETWORK_SCOPES, did_you_mean};

    #[test]
    fn a_slip_is_matched_to_what_was_meant() {
        assert_eq!(did_you_mean("required", APPROVAL_MODES), Some("Required"));
        assert_eq!(
            did_you_mean("not_required", APPROVAL_MODES),
            Some("NotRequired")
        );
        assert_eq!(did_you_mean("Requried", APPROVAL_MODES), Some("Required"));
        assert_eq!(did_you_mean("internet", NETWORK_SCOPES), Some("Internet"));
        assert_eq!(
            did_you_mean("descripton", &["name", "description"]),
            Some("description")
        );
    }

    #[test]
    fn nothing_close_is_no_suggestion() {
        assert_eq!(did_you_mean("Always", APPROVAL_MODES), None);
        assert_eq!(did_you_mean("Web", NETWORK_SCOPES), None);
    }
}
