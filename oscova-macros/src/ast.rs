//! The typed model of a `#[toolset]` impl block, built from syn. Building
//! it records every mistake in the context and keeps going, so the author
//! sees all of them at once.

use oscova_wire::{normalize_segment, owner_segment};
use proc_macro2::Span;
use syn::{
    FnArg, GenericArgument, Ident, ImplItem, ImplItemFn, ItemImpl, LitStr, Pat, PathArguments,
    ReturnType, Type, Visibility,
};

use crate::attr::{self, ToolAttr};
use crate::ctxt::Ctxt;
use crate::warning::Warning;

/// The whole toolset.
pub(crate) struct Toolset {
    /// The type name as written (`ExampleToolset`).
    pub(crate) type_name: String,
    /// The normalised owner segment.
    pub(crate) owner: String,
    pub(crate) tools: Vec<Tool>,
}

/// One tool (one `pub fn`).
pub(crate) struct Tool {
    pub(crate) method: Ident,
    pub(crate) display_name: String,
    /// The normalised tool segment.
    pub(crate) name: String,
    /// Where to point errors about the name.
    pub(crate) name_span: Span,
    pub(crate) description: String,
    pub(crate) approval: Ident,
    pub(crate) network: Ident,
    /// `#[tool(title = "...")]`.
    pub(crate) title: Option<String>,
    /// The annotation flags as written; `open_world` not written follows
    /// the network scope when generating.
    pub(crate) read_only: Option<attr::Flag>,
    pub(crate) destructive: Option<attr::Flag>,
    pub(crate) idempotent: Option<attr::Flag>,
    pub(crate) open_world: Option<attr::Flag>,
    /// `#[tool(sequential)]`: a batch holding this tool runs one call at a
    /// time.
    pub(crate) sequential: bool,
    /// `#[tool(prompt_snippet = "...")]`, checked to be one line.
    pub(crate) prompt_snippet: Option<String>,
    /// `#[tool(prompt_guidelines = [...])]`, each checked to be one line.
    pub(crate) prompt_guidelines: Vec<String>,
    pub(crate) has_self: bool,
    pub(crate) is_async: bool,
    pub(crate) params: Vec<Param>,
    pub(crate) output: Output,
}

/// One parameter, in declaration order.
pub(crate) enum Param {
    /// A JSON property.
    Json {
        ident: Ident,
        /// The property name (the identifier without `r#`).
        name: String,
        ty: Box<Type>,
        doc: String,
        required: bool,
    },
    /// `&ToolInvocation`, passed by the host.
    Invocation,
    /// `CancellationToken`, passed by the host.
    Cancel,
}

/// What the method returns, by the shape of its return type.
pub(crate) enum Output {
    /// `()`: no return type.
    Unit,
    /// `ToolResult`.
    ToolResult,
    /// `Result<T, E>`, or an alias named `Result` (`io::Result<T>`), whose
    /// `T` and `E` are given when written out; `ok_is_result` when `T` is
    /// `ToolResult`.
    Result {
        ty: Box<Type>,
        ok: Option<Box<Type>>,
        err: Option<Box<Type>>,
        ok_is_result: bool,
    },
    /// Any other type: serialised.
    Value(Box<Type>),
}

const INTERNAL_PREFIX: &str = "__oscova";

impl Toolset {
    pub(crate) fn from_syn(cx: &mut Ctxt, item: &ItemImpl) -> Option<Self> {
        if let Some((path, _)) = &item.trait_ {
            cx.error_spanned_by(
                path,
                format!(
                    "#[toolset] goes on an inherent impl block, not on a trait impl: write `#[toolset] impl {} {{ pub fn ... }}`",
                    type_text(&item.self_ty)
                ),
            );
            return None;
        }
        if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
            cx.error_spanned_by(
                &item.generics,
                "#[toolset] does not support generic impl blocks; a toolset is one concrete type",
            );
        }
        if let Some(unsafety) = &item.unsafety {
            cx.error_spanned_by(unsafety, "#[toolset] impl blocks cannot be `unsafe`");
        }
        let Some(type_name) = type_ident(&item.self_ty) else {
            cx.error_spanned_by(
                &item.self_ty,
                "#[toolset] needs a named type here (`impl MyToolset { ... }`)",
            );
            return None;
        };
        let type_name = type_name.to_string();
        let owner = owner_segment(&type_name);
        if owner.is_empty() {
            cx.error_spanned_by(
                &item.self_ty,
                format!(
                    "the owner segment of `{type_name}` normalises to nothing; rename the type"
                ),
            );
        }
        let mut tools = Vec::new();
        for impl_item in &item.items {
            match impl_item {
                ImplItem::Fn(f) if matches!(f.vis, Visibility::Public(_)) => {
                    tools.push(Tool::from_syn(cx, f));
                }
                ImplItem::Fn(f) => {
                    let tool_attr = f.attrs.iter().find(|a| attr::is_tool_attr(a));
                    if tool_attr.is_none() && f.attrs.iter().any(|a| a.path().is_ident("doc")) {
                        let name = &f.sig.ident;
                        cx.warn(Warning::new(
                            name.span(),
                            "not_a_tool",
                            format!(
                                "`{name}` has a doc comment but is not `pub`, so it is not a tool: only the `pub fn`s of a #[toolset] impl are tools. Make it `pub fn` to publish it; for a helper, move it to a plain `impl` block, or use `//` comments"
                            ),
                        ));
                    }
                    if let Some(a) = tool_attr {
                        let target: &dyn quote::ToTokens = match &f.vis {
                            Visibility::Inherited => a,
                            restricted => restricted,
                        };
                        cx.error_spanned_by(
                            target,
                            format!(
                                "only `pub fn`s are tools, and `{}` is not `pub`; make it `pub fn` or remove #[tool]",
                                f.sig.ident
                            ),
                        );
                    }
                }
                other => {
                    if let Some(a) = item_attrs(other).iter().find(|a| attr::is_tool_attr(a)) {
                        cx.error_spanned_by(a, "#[tool] goes on a `pub fn` of a #[toolset] impl");
                    }
                }
            }
        }
        Some(Self {
            type_name,
            owner,
            tools,
        })
    }
}

/// The attributes of an impl item other than a method.
fn item_attrs(item: &ImplItem) -> &[syn::Attribute] {
    match item {
        ImplItem::Const(c) => &c.attrs,
        ImplItem::Type(t) => &t.attrs,
        ImplItem::Macro(m) => &m.attrs,
        _ => &[],
    }
}

/// The last identifier of a path type. Generic arguments are allowed here:
/// `impl Wrapper<u32>` is one concrete type, and a generic impl block is
/// reported on its own generics, not a second time here.
fn type_ident(ty: &Type) -> Option<&Ident> {
    last_segment(ty).map(|s| &s.ident)
}

/// The last segment's identifier of a path type, generics allowed.
fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

/// A type as an author would write it (`Vec<String>`, not `Vec < String >`).
fn type_text(ty: &Type) -> String {
    let mut text = quote::quote!(#ty).to_string();
    for (from, to) in [
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ::", "::"),
        (":: ", "::"),
        (" ,", ","),
    ] {
        text = text.replace(from, to);
    }
    text
}

fn is_named(ty: &Type, name: &str) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == name)
}

impl Tool {
    /// Every `pub fn` becomes a `Tool`, mistakes or not, so checks across
    /// tools (duplicate names) still see it. Nothing is generated from a
    /// model that has errors, so the parts of a broken tool that could not
    /// be read are placeholders.
    fn from_syn(cx: &mut Ctxt, f: &ImplItemFn) -> Self {
        let sig = &f.sig;
        let attr: ToolAttr = attr::parse_tool_attrs(cx, &f.attrs);
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            cx.error_spanned_by(
                &sig.generics,
                "tool methods cannot be generic: the argument schema needs concrete types",
            );
        }
        if let syn::Safety::Unsafe(u) = &sig.safety {
            cx.error_spanned_by(u, "tool methods cannot be `unsafe`");
        }
        if let Some(abi) = &sig.abi {
            cx.error_spanned_by(abi, "tool methods cannot have an `extern` ABI");
        }
        if let Some(v) = &sig.variadic {
            cx.error_spanned_by(v, "tool methods cannot be variadic");
        }

        let method = sig.ident.clone();
        let method_name = method.to_string();
        let method_name = method_name.strip_prefix("r#").unwrap_or(&method_name);
        let (display_name, name_span) = match &attr.name {
            Some(lit) => (lit.value(), lit.span()),
            None => (method_name.to_owned(), method.span()),
        };
        let name = normalize_segment(&display_name);
        if name.is_empty() {
            cx.syn_error(syn::Error::new(
                name_span,
                format!(
                    "tool name {display_name:?} normalises to an empty name; use letters or digits"
                ),
            ));
        }
        let title = attr.title.as_ref().map(LitStr::value);
        let description = match &attr.description {
            Some(lit) => lit.value(),
            None => attr::doc_text(&f.attrs),
        };
        if description.trim().is_empty() {
            let span = attr
                .description
                .as_ref()
                .map_or(method.span(), LitStr::span);
            cx.warn(Warning::new(
                span,
                "tool_without_description",
                format!(
                    "the tool `{method_name}` has no description, so the model is told nothing about when to call it: write a doc comment (`/// What it does.`) above it, or #[tool(description = \"...\")]"
                ),
            ));
        }

        let mut has_self = false;
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(r) => {
                    check_receiver(cx, r);
                    has_self = true;
                }
                FnArg::Typed(pt) => params.extend(Param::from_syn(cx, pt)),
            }
        }

        let output = match &sig.output {
            ReturnType::Default => Output::Unit,
            ReturnType::Type(_, ty) => Output::from_type(cx, ty),
        };

        Self {
            method,
            display_name,
            name,
            name_span,
            description,
            approval: attr
                .approval
                .unwrap_or_else(|| Ident::new("Default", Span::call_site())),
            network: attr
                .network
                .unwrap_or_else(|| Ident::new("None", Span::call_site())),
            title,
            read_only: attr.read_only,
            destructive: attr.destructive,
            idempotent: attr.idempotent,
            open_world: attr.open_world,
            sequential: attr.sequential.is_some_and(|f| f.value),
            prompt_snippet: attr.prompt_snippet.as_ref().map(LitStr::value),
            prompt_guidelines: attr
                .prompt_guidelines
                .iter()
                .flatten()
                .map(LitStr::value)
                .collect(),
            has_self,
            is_async: sig.asyncness.is_some(),
            params,
            output,
        }
    }
}

const SHARED: &str = "a toolset serves concurrent calls through a shared reference";

/// Only `&self` is accepted; each other receiver gets an error on the
/// token that makes it wrong.
fn check_receiver(cx: &mut Ctxt, r: &syn::Receiver) {
    match &r.kind {
        syn::ReceiverKind::Typed(_, ty) => cx.error_spanned_by(
            ty,
            format!("tools take `&self` or no receiver, not `self: Type`: {SHARED}"),
        ),
        syn::ReceiverKind::Reference(and, _, Some(m)) => cx.error_spanned_by(
            quote::quote!(#and #m),
            format!(
                "tools take `&self`, not `&mut self`: {SHARED}; keep mutable state behind a `Mutex` or an atomic"
            ),
        ),
        syn::ReceiverKind::Reference(_, _, None) => {}
        _ => cx.error_spanned_by(
            r.self_token,
            format!("tools take `&self`, not `self` by value: {SHARED}"),
        ),
    }
}

impl Param {
    fn from_syn(cx: &mut Ctxt, pt: &syn::PatType) -> Option<Self> {
        let ty = &*pt.ty;
        if let Type::Reference(r) = ty {
            if is_named(&r.elem, "ToolInvocation") {
                if let Some(m) = &r.mutability {
                    cx.error_spanned_by(
                        m,
                        "take the invocation as `&ToolInvocation`, not `&mut ToolInvocation`",
                    );
                    return None;
                }
                return Some(Self::Invocation);
            }
            let owned = match &*r.elem {
                Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => {
                    "`String`, not `&str`".to_owned()
                }
                Type::Slice(s) => format!("`Vec<{}>`, not a slice", type_text(&s.elem)),
                elem => format!("`{}`, not a reference", type_text(elem)),
            };
            cx.error_spanned_by(
                ty,
                format!(
                    "tool parameters are owned values read from JSON: take {owned}; only `&ToolInvocation` may be borrowed"
                ),
            );
            return None;
        }
        if is_named(ty, "ToolInvocation") {
            cx.error_spanned_by(ty, "take the invocation by reference: `&ToolInvocation`");
            return None;
        }
        if is_named(ty, "CancellationToken") {
            return Some(Self::Cancel);
        }
        if let Type::ImplTrait(_) = ty {
            cx.error_spanned_by(
                ty,
                "tool parameters cannot be `impl Trait`: the argument schema needs a concrete type",
            );
            return None;
        }
        let Pat::Ident(pat) = &*pt.pat else {
            cx.error_spanned_by(
                &pt.pat,
                "tool parameters must be plain names; each name is a JSON property",
            );
            return None;
        };
        if let Some((at, sub)) = &pat.subpat {
            cx.error_spanned_by(
                quote::quote!(#at #sub),
                "tool parameters must be plain names; each name is a JSON property",
            );
            return None;
        }
        if let Some(by_ref) = &pat.by_ref {
            cx.error_spanned_by(
                by_ref,
                "tool parameters must be plain names; each name is a JSON property",
            );
            return None;
        }
        let raw = pat.ident.to_string();
        let name = raw.strip_prefix("r#").unwrap_or(&raw).to_owned();
        if name.starts_with(INTERNAL_PREFIX) {
            cx.error_spanned_by(
                &pat.ident,
                "parameter names starting with `__oscova` are reserved for generated code",
            );
            return None;
        }
        Some(Self::Json {
            ident: pat.ident.clone(),
            name,
            ty: Box::new(ty.clone()),
            doc: attr::doc_text(&pt.attrs),
            required: !is_named(ty, "Option"),
        })
    }
}

impl Output {
    /// Reads the return type; an `impl Trait` is an error and reads as `()`.
    fn from_type(cx: &mut Ctxt, ty: &Type) -> Self {
        if let Type::ImplTrait(_) = ty {
            cx.error_spanned_by(
                ty,
                "tools cannot return `impl Trait`; write `async fn` for async tools, or return a concrete type",
            );
            return Self::Unit;
        }
        if let Type::Tuple(t) = ty
            && t.elems.is_empty()
        {
            return Self::Unit;
        }
        if is_named(ty, "ToolResult") {
            return Self::ToolResult;
        }
        if let Some(seg) = last_segment(ty)
            && seg.ident == "Result"
        {
            let mut types = match &seg.arguments {
                PathArguments::AngleBracketed(args) => args
                    .args
                    .iter()
                    .filter_map(|a| match a {
                        GenericArgument::Type(t) => Some(Box::new(t.clone())),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            }
            .into_iter();
            let ok = types.next();
            let err = types.next();
            let ok_is_result = ok.as_ref().is_some_and(|t| is_named(t, "ToolResult"));
            return Self::Result {
                ty: Box::new(ty.clone()),
                ok,
                err,
                ok_is_result,
            };
        }
        Self::Value(Box::new(ty.clone()))
    }
}
