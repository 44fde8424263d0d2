//! `#[plugin(id = "...")]`: a manifest, a `PluginInfo` impl, and an
//! `inventory` registration. The id, version and framework range are
//! checked here, so a typo is a compile error rather than a plugin that is
//! silently skipped at start-up.

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, ExprLit, Fields, Ident, Item, Lit, LitStr, Token};

use crate::attr::doc_text;
use crate::ctxt::Ctxt;

const ID: &str = "id";
const NAME: &str = "name";
const VERSION: &str = "version";
const DESCRIPTION: &str = "description";
const FRAMEWORK: &str = "framework";
const KEYS: &str = "`id`, `name`, `version`, `description`, `framework`";

#[derive(Default)]
struct PluginAttr {
    id: Option<LitStr>,
    name: Option<LitStr>,
    version: Option<LitStr>,
    description: Option<LitStr>,
    framework: Option<LitStr>,
}

fn parse_args(cx: &mut Ctxt, args: TokenStream) -> PluginAttr {
    let mut out = PluginAttr::default();
    let parser = |input: ParseStream<'_>| {
        while !input.is_empty() {
            let key: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            let value: Expr = input.parse()?;
            let lit = match value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s),
                other => {
                    cx.error_spanned_by(&other, format!("`{key}` takes a string literal"));
                    None
                }
            };
            let slot = if key == ID {
                Some(&mut out.id)
            } else if key == NAME {
                Some(&mut out.name)
            } else if key == VERSION {
                Some(&mut out.version)
            } else if key == DESCRIPTION {
                Some(&mut out.description)
            } else if key == FRAMEWORK {
                Some(&mut out.framework)
            } else {
                cx.error_spanned_by(
                    &key,
                    format!("unknown key `{key}` in #[plugin]; expected one of {KEYS}"),
                );
                None
            };
            if let (Some(slot), Some(lit)) = (slot, lit) {
                if slot.is_some() {
                    cx.error_spanned_by(&key, format!("duplicate `{key}` in #[plugin]"));
                } else {
                    *slot = Some(lit);
                }
            }
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(())
    };
    if let Err(e) = parser.parse2(args) {
        cx.syn_error(e);
    }
    out
}

/// The id rule: lowercase ASCII letters and digits, with `.`, `-` or `_`
/// between them, starting with a letter; no `__`, which is the wire-name
/// separator.
fn check_id(id: &str) -> Result<(), String> {
    let first_ok = id.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    let chars_ok = id
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '-' | '_'));
    let last_ok = id.chars().last().is_some_and(|c| c.is_ascii_alphanumeric());
    let separators_ok = !id.contains("__")
        && !id.as_bytes().windows(2).any(
            |w| matches!(w, [a, b] if !a.is_ascii_alphanumeric() && !b.is_ascii_alphanumeric()),
        );
    if id.is_empty() {
        Err("plugin id is empty; use a stable id such as \"acme.search\"".into())
    } else if !(first_ok && chars_ok && last_ok && separators_ok) {
        Err(format!(
            "invalid plugin id {id:?}: use lowercase letters and digits separated by single `.`, `-` or `_`, starting with a letter (for example \"acme.search\")"
        ))
    } else {
        Ok(())
    }
}

pub(crate) fn expand(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    let attr = parse_args(&mut cx, args);
    let item: Item = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(e) => return e.to_compile_error(),
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
            let err = syn::Error::new_spanned(
                other,
                "#[plugin] goes on a struct or enum that implements `AgentPlugin`",
            );
            let mut out = err.to_compile_error();
            out.extend(input);
            return out;
        }
    };
    if !generics.params.is_empty() {
        cx.error_spanned_by(generics, "#[plugin] types cannot be generic");
    }
    match &attr.id {
        None if !cx.has_errors() => cx.syn_error(syn::Error::new(
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
    if let Err(errors) = cx.check() {
        let errors = errors.to_compile_error();
        return quote! { #item #errors };
    }
    let Some(id) = attr.id else {
        return quote! { #item };
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
    let construct = if unit {
        quote!(#ident)
    } else {
        quote!(<#ident as ::core::default::Default>::default())
    };
    quote! {
        #item

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
            impl ::oscova_core::__private::PluginInfo for #ident {
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

            ::oscova_core::__private::inventory::submit! {
                ::oscova_core::__private::PluginRegistration::new(
                    &__OSCOVA_MANIFEST,
                    ::core::concat!(::core::module_path!(), "::", ::core::stringify!(#ident)),
                    __oscova_create,
                )
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::check_id;

    #[test]
    fn ids() {
        for ok in ["acme.search", "a", "oscova.time", "x-y_z.9"] {
            assert!(check_id(ok).is_ok(), "{ok}");
        }
        for bad in ["", "Acme", "9a", "a..b", "a__b", "a.", "-a", "a b", "a._b"] {
            assert!(check_id(bad).is_err(), "{bad}");
        }
    }
}
