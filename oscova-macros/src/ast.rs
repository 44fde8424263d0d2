//! The typed model of a `#[toolset]` impl block, built from syn. Building
//! it records every mistake in the context and keeps going, so the author
//! sees all of them at once.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, Ident, ImplItem, ImplItemFn, ItemImpl, Pat, PathArguments, ReturnType,
    Type, Visibility,
};

use crate::attr::{self, ToolAttr};
use crate::ctxt::Ctxt;
use crate::normalize::{normalize_segment, owner_segment};

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
    /// `Result<T, E>` (or an alias named `Result`); `ok_is_result` when `T`
    /// is `ToolResult`.
    Result { ty: Type, ok_is_result: bool },
    /// Any other type: serialised.
    Value(Type),
}

const INTERNAL_PREFIX: &str = "__oscova";

impl Toolset {
    pub(crate) fn from_syn(cx: &mut Ctxt, item: &ItemImpl) -> Option<Self> {
        if let Some((_, path, _)) = &item.trait_ {
            cx.error_spanned_by(
                path,
                "#[toolset] goes on an inherent impl block (`impl MyToolset { ... }`), not on a trait impl",
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
        let tools = item
            .items
            .iter()
            .filter_map(|i| match i {
                ImplItem::Fn(f) if matches!(f.vis, Visibility::Public(_)) => Some(f),
                _ => None,
            })
            .filter_map(|f| Tool::from_syn(cx, f))
            .collect();
        Some(Self {
            type_name,
            owner,
            tools,
        })
    }
}

/// The last identifier of a path type, without generics.
fn type_ident(ty: &Type) -> Option<&Ident> {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            if !matches!(last.arguments, PathArguments::None) {
                return None;
            }
            Some(&last.ident)
        }
        Type::Group(g) => type_ident(&g.elem),
        Type::Paren(p) => type_ident(&p.elem),
        _ => None,
    }
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

fn is_named(ty: &Type, name: &str) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == name)
}

impl Tool {
    fn from_syn(cx: &mut Ctxt, f: &ImplItemFn) -> Option<Self> {
        let sig = &f.sig;
        let errors_before = cx.count();
        let attr: ToolAttr = attr::parse_tool_attrs(cx, &f.attrs);
        let fail = |cx: &mut Ctxt, tokens: &dyn quote::ToTokens, msg: &str| {
            cx.error_spanned_by(tokens, msg);
        };
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            fail(
                cx,
                &sig.generics,
                "tool methods cannot be generic: the argument schema needs concrete types",
            );
        }
        if let Some(u) = &sig.unsafety {
            fail(cx, u, "tool methods cannot be `unsafe`");
        }
        if let Some(abi) = &sig.abi {
            fail(cx, abi, "tool methods cannot have an `extern` ABI");
        }
        if let Some(v) = &sig.variadic {
            fail(cx, v, "tool methods cannot be variadic");
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
        let description = match &attr.description {
            Some(lit) => lit.value(),
            None => attr::doc_text(&f.attrs),
        };

        let mut has_self = false;
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(r) => {
                    if r.reference.is_none() || r.mutability.is_some() || r.colon_token.is_some() {
                        fail(
                            cx,
                            r,
                            "tools take `&self` or no receiver: a toolset serves concurrent calls through a shared reference",
                        );
                    }
                    has_self = true;
                }
                FnArg::Typed(pt) => params.extend(Param::from_syn(cx, pt)),
            }
        }

        let output = match &sig.output {
            ReturnType::Default => Output::Unit,
            ReturnType::Type(_, ty) => Output::from_type(cx, ty)?,
        };

        (cx.count() == errors_before).then(|| Self {
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
            has_self,
            is_async: sig.asyncness.is_some(),
            params,
            output,
        })
    }
}

impl Param {
    fn from_syn(cx: &mut Ctxt, pt: &syn::PatType) -> Option<Self> {
        let ty = &*pt.ty;
        if let Type::Reference(r) = ty {
            if is_named(&r.elem, "ToolInvocation") && r.mutability.is_none() {
                return Some(Self::Invocation);
            }
            cx.error_spanned_by(
                ty,
                "tool parameters are owned values read from JSON (take `String`, not `&str`); only `&ToolInvocation` may be borrowed",
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
        if pat.by_ref.is_some() || pat.subpat.is_some() {
            cx.error_spanned_by(&pt.pat, "tool parameters must be plain names");
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
    fn from_type(cx: &mut Ctxt, ty: &Type) -> Option<Self> {
        if let Type::ImplTrait(_) = ty {
            cx.error_spanned_by(
                ty,
                "tools cannot return `impl Trait`; write `async fn` for async tools, or return a concrete type",
            );
            return None;
        }
        if let Type::Tuple(t) = ty
            && t.elems.is_empty()
        {
            return Some(Self::Unit);
        }
        if is_named(ty, "ToolResult") {
            return Some(Self::ToolResult);
        }
        if let Some(seg) = last_segment(ty)
            && seg.ident == "Result"
        {
            let ok_is_result = match &seg.arguments {
                PathArguments::AngleBracketed(args) => args.args.first().is_some_and(
                    |a| matches!(a, GenericArgument::Type(t) if is_named(t, "ToolResult")),
                ),
                _ => false,
            };
            return Some(Self::Result {
                ty: ty.clone(),
                ok_is_result,
            });
        }
        Some(Self::Value(ty.clone()))
    }

    /// Where to point trait-bound errors about the output.
    pub(crate) fn span(&self) -> Span {
        match self {
            Self::Unit | Self::ToolResult => Span::call_site(),
            Self::Result { ty, .. } | Self::Value(ty) => ty.span(),
        }
    }
}
