//! What is emitted beside errors: the author's impl block (helper
//! attributes stripped) plus a `Toolset` impl with no tools, so code that
//! registers the toolset still type-checks and the author sees only the
//! real mistakes.

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemImpl;

pub(crate) fn toolset(item: &ItemImpl, type_is_usable: bool) -> TokenStream {
    if !type_is_usable || item.trait_.is_some() || !item.generics.params.is_empty() {
        return TokenStream::new();
    }
    let self_ty = &item.self_ty;
    quote! {
        const _: () = {
            static __OSCOVA_TOOLSET: ::oscova_core::__private::ToolsetInfo =
                ::oscova_core::__private::ToolsetInfo::__new("", "", &[]);

            impl ::oscova_core::__private::Toolset for #self_ty {
                fn toolset_info() -> &'static ::oscova_core::__private::ToolsetInfo {
                    &__OSCOVA_TOOLSET
                }

                fn dispatch<'__oscova>(
                    &'__oscova self,
                    __oscova_index: usize,
                    _: ::oscova_core::__private::serde_json::Value,
                    _: &'__oscova ::oscova_core::__private::ToolInvocation<'_>,
                ) -> ::core::result::Result<
                    ::oscova_core::__private::Dispatched<'__oscova>,
                    ::oscova_core::__private::ArgError,
                > {
                    ::core::result::Result::Err(
                        ::oscova_core::__private::ArgError::__unknown_tool(__oscova_index),
                    )
                }
            }
        };
    }
}
