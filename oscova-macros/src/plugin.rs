//! `#[plugin(id = "...")]`: a manifest, a `RegisteredPlugin` impl, and an
//! `inventory` registration. The id, version and framework range are
//! checked here, so a typo is a compile error rather than a plugin that is
//! silently skipped at start-up. The id is kept as written in the manifest
//! and normalised by the host like every other wire-name segment, so the
//! only id refused here is one that normalises to nothing.

use oscova_wire::normalize_segment;
use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, ExprLit, Fields, Ident, Item, Lit, LitStr};

use crate::attr::{doc_text, missing_value, parse_key_values};
use crate::ctxt::Ctxt;

const PLUGIN: &str = "plugin";
const ID: &str = "id";
const NAME: &str = "name";
const VERSION: &str = "version";
const DESCRIPTION: &str = "description";
const FRAMEWORK: &str = "framework";
const KEYS: &str = "`id`, `name`, `version`, `description`, `framework`";

#[derive(Default)]
struct PluginAttr {
    /// Whether an `id` key was written at all (even with a bad value).
    id_written: bool,
    id: Option<LitStr>,
    name: Option<LitStr>,
    version: Option<LitStr>,
    description: Option<LitStr>,
    framework: Option<LitStr>,
}

fn parse_args(cx: &mut Ctxt, args: TokenStream) -> PluginAttr {
    let mut out = PluginAttr::default();
    let parser = |input: ParseStream<'_>| {
        parse_key_values(cx, input, PLUGIN, |cx, key, value| {
            set_key(cx, &mut out, &key, value);
        })
    };
    if let Err(e) = parser.parse2(args) {
        cx.syn_error(e);
    }
    out
}

fn set_key(cx: &mut Ctxt, out: &mut PluginAttr, key: &Ident, value: Option<Expr>) {
    let slot = if key == ID {
        out.id_written = true;
        &mut out.id
    } else if key == NAME {
        &mut out.name
    } else if key == VERSION {
        &mut out.version
    } else if key == DESCRIPTION {
        &mut out.description
    } else if key == FRAMEWORK {
        &mut out.framework
    } else {
        cx.error_spanned_by(
            key,
            format!("unknown key `{key}` in #[plugin]; expected one of {KEYS}"),
        );
        return;
    };
    let Some(value) = value else {
        return missing_value(cx, PLUGIN, key, "\"...\"");
    };
    let lit = match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => s,
        other => {
            cx.error_spanned_by(
                &other,
                format!("`{key}` takes a string literal: #[plugin({key} = \"...\")]"),
            );
            return;
        }
    };
    if slot.is_some() {
        cx.error_spanned_by(key, format!("duplicate `{key}` in #[plugin]"));
    } else {
        *slot = Some(lit);
    }
}

/// The id rule: any text is an id, normalised like every other wire-name
/// segment (`Oscova.LocalSpeech` publishes as `oscova_local_speech__…`);
/// capitals, dots, dashes, spaces and `__` are normalised, not refused. Only
/// an id with no ASCII letter or digit, which normalises to nothing, is an
/// error, since it cannot prefix a wire name.
fn check_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        Err("plugin id is empty; use a stable id such as \"acme.search\"".into())
    } else if normalize_segment(id).is_empty() {
        Err(format!(
            "plugin id {id:?} normalises to an empty wire-name segment; an id needs at least one ASCII letter or digit, such as \"acme.search\""
        ))
    } else {
        Ok(())
    }
}

/// The error for `#[plugin]` on something other than a struct or enum, on
/// the item's keyword and name rather than the whole item.
fn not_a_type(item: &Item) -> syn::Error {
    let (keyword, ident): (&dyn quote::ToTokens, &dyn quote::ToTokens) = match item {
        Item::Fn(f) => (&f.sig.fn_token, &f.sig.ident),
        Item::Trait(t) => (&t.trait_token, &t.ident),
        Item::Union(u) => (&u.union_token, &u.ident),
        Item::Mod(m) => (&m.mod_token, &m.ident),
        Item::Const(c) => (&c.const_token, &c.ident),
        Item::Static(s) => (&s.static_token, &s.ident),
        Item::Type(t) => (&t.type_token, &t.ident),
        Item::Impl(i) => (&i.impl_token, &i.self_ty),
        other => (other, &quote!()),
    };
    syn::Error::new_spanned(
        quote!(#keyword #ident),
        "#[plugin] goes on the struct or enum that implements `AgentPlugin`: `#[plugin(id = \"acme.search\")] pub struct AcmePlugin;`",
    )
}

pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    let attr = parse_args(&mut cx, args);
    let item: Item = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(e) => {
            let mut out = e.to_compile_error();
            if let Err(e) = cx.check() {
                out.extend(e.to_compile_error());
            }
            return out;
        }
    };
    let (ident, generics, unit, attrs) = match &item {
        Item::Struct(s) => (
            &s.ident,
            &s.generics,
            matches!(s.fields, Fields::Unit),
            &s.attrs,
        ),
        Item::Enum(e) => (&e.ident, &e.generics, false, &e.attrs),
        other => {
            let mut out = not_a_type(other).to_compile_error();
            if let Err(e) = cx.check() {
                out.extend(e.to_compile_error());
            }
            out.extend(input);
            return out;
        }
    };
    let generic = !generics.params.is_empty() || generics.where_clause.is_some();
    if generic {
        cx.error_spanned_by(
            generics,
            "#[plugin] types cannot be generic: the host creates one plugin of one concrete type",
        );
    }
    match &attr.id {
        None if !attr.id_written => cx.syn_error(syn::Error::new(
            proc_macro2::Span::call_site(),
            "#[plugin] needs an id: #[plugin(id = \"acme.search\")]",
        )),
        None => {}
        Some(id) => {
            if let Err(msg) = check_id(&id.value()) {
                cx.error_spanned_by(id, msg);
            }
        }
    }
    if let Some(v) = &attr.version
        && let Err(e) = semver::Version::parse(&v.value())
    {
        cx.error_spanned_by(
            v,
            format!("`version` must be a semver version such as \"1.2.0\": {e}"),
        );
    }
    if let Some(f) = &attr.framework
        && let Err(e) = semver::VersionReq::parse(&f.value())
    {
        cx.error_spanned_by(
            f,
            format!("`framework` must be a semver requirement such as \">=0.1\": {e}"),
        );
    }
    // A unit struct is its own value; anything else is made by `Default`,
    // checked through a trait whose message says so, on the type's name.
    let construct = if unit {
        quote!(#ident)
    } else {
        quote!(<#ident as ::oscova_core::__private::PluginDefault>::__create())
    };
    let id = match (cx.check(), attr.id) {
        (Ok(()), Some(id)) => id,
        (result, _) => {
            // Fallback: a `RegisteredPlugin` impl with an empty manifest and no
            // registration, so code naming the plugin (`linked_plugins!`)
            // raises no follow-on error. Nothing runs: the crate does not
            // compile.
            let errors = result.err().map(|e| e.to_compile_error());
            if generic {
                return quote! { #item #errors };
            }
            let empty = quote!("");
            let fallback = info_impl(ident, &construct, &empty, &empty, &empty, "", "", false);
            return quote! { #item #fallback #errors };
        }
    };
    let name = attr.name.unwrap_or_else(|| id.clone());
    let version = match attr.version {
        Some(v) => quote!(#v),
        None => quote!(::core::env!("CARGO_PKG_VERSION")),
    };
    let description = match attr.description {
        Some(d) => d.value(),
        None => doc_text(attrs),
    };
    let framework = attr.framework.map(|f| f.value()).unwrap_or_default();
    let registration = info_impl(
        ident,
        &construct,
        &quote!(#id),
        &quote!(#name),
        &version,
        &description,
        &framework,
        true,
    );
    quote! {
        #item
        #registration
    }
}

/// The manifest, the `RegisteredPlugin` impl and (when `submit`) the inventory
/// registration of a plugin type.
#[allow(clippy::too_many_arguments)]
fn info_impl(
    ident: &Ident,
    construct: &TokenStream,
    id: &TokenStream,
    name: &TokenStream,
    version: &TokenStream,
    description: &str,
    framework: &str,
    submit: bool,
) -> TokenStream {
    let submit = submit.then(|| {
        quote! {
            ::oscova_core::__private::inventory::submit! {
                ::oscova_core::__private::PluginRegistration::new(
                    &__OSCOVA_MANIFEST,
                    ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#ident)),
                    __oscova_create,
                )
            }
        }
    });
    quote! {
        const _: () = {
            static __OSCOVA_MANIFEST: ::oscova_core::__private::PluginManifest =
                ::oscova_core::__private::PluginManifest {
                    id: #id,
                    name: #name,
                    version: #version,
                    description: #description,
                    framework: #framework,
                };

            fn __oscova_create() -> ::std::boxed::Box<dyn ::oscova_core::__private::AgentPlugin> {
                ::oscova_core::__private::boxed(#construct)
            }

            #[automatically_derived]
            impl ::oscova_core::__private::RegisteredPlugin for #ident {
                fn manifest() -> &'static ::oscova_core::__private::PluginManifest {
                    &__OSCOVA_MANIFEST
                }

                fn registration() -> ::oscova_core::__private::PluginRegistration {
                    ::oscova_core::__private::PluginRegistration::new(
                        &__OSCOVA_MANIFEST,
                        ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#ident)),
                        __oscova_create,
                    )
                }
            }

            #submit
        };
    }
}

#[cfg(test)]
mod tests {
    use super::check_id;

    #[test]
    fn ids() {
        // Oscova manifest ids, and what used to be refused, are segments
        // like any other: normalised, not refused.
        for ok in [
            "acme.search",
            "a",
            "oscova.time",
            "x-y_z.9",
            "Oscova.LocalSpeech",
            "Ceo.Probe-Tools",
            "Acme",
            "9a",
            "a..b",
            "a__b",
            "a.",
            "-a",
            "a b",
            "a._b",
        ] {
            assert!(check_id(ok).is_ok(), "{ok}");
        }
        // Only an id that normalises to nothing is an error.
        for bad in ["", "...", "__", " ", "名前"] {
            assert!(check_id(bad).is_err(), "{bad}");
        }
    }
}
