//! Code generation for `#[toolset]`. Generated code names
//! `::oscova_core::__private` only, and every trait-bound check is spanned
//! on the author's own tokens (the parameter type, the return type), so a
//! wrong type is reported where it was written.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ImplItem, Item, ItemImpl};

use crate::ast::{Output, Param, Tool, Toolset};
use crate::attr;
use crate::ctxt::Ctxt;
use crate::fallback;
use crate::valid;
use crate::warning::Warning;

pub(crate) fn toolset(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut cx = Ctxt::default();
    if !args.is_empty() {
        cx.error_spanned_by(
            &args,
            "#[toolset] takes no arguments; configure each tool with #[tool(...)]",
        );
    }
    let mut item: ItemImpl = match syn::parse2::<Item>(input.clone()) {
        Ok(Item::Impl(item)) => item,
        other => {
            let err = not_an_impl(other.ok().as_ref(), &input);
            let mut out = err.to_compile_error();
            if let Err(e) = cx.check() {
                out.extend(e.to_compile_error());
            }
            out.extend(input);
            return out;
        }
    };
    let model = Toolset::from_syn(&mut cx, &item);
    if let Some(model) = &model {
        valid::check(&mut cx, model);
    }
    strip_helper_attrs(&mut item);
    let warnings = cx.take_warnings();
    match (cx.check(), model) {
        (Ok(()), Some(model)) => {
            let generated = generate(&item, &model);
            let warnings = warnings.iter().map(Warning::to_tokens);
            quote! { #item #generated #(#warnings)* }
        }
        (Err(errors), model) => {
            let fallback = fallback::toolset(&item, model.is_some());
            let errors = errors.to_compile_error();
            quote! { #item #fallback #errors }
        }
        (Ok(()), None) => quote! { #item },
    }
}

/// The error for `#[toolset]` on something other than an impl block, on the
/// item's keyword and name (`struct SearchToolset`), never its doc comment.
fn not_an_impl(item: Option<&Item>, input: &TokenStream) -> syn::Error {
    let (keyword, what, name): (&dyn quote::ToTokens, _, _) = match item {
        Some(Item::Struct(s)) => (&s.struct_token, "a struct", &s.ident),
        Some(Item::Enum(e)) => (&e.enum_token, "an enum", &e.ident),
        Some(Item::Union(u)) => (&u.union_token, "a union", &u.ident),
        Some(Item::Trait(t)) => (&t.trait_token, "a trait", &t.ident),
        Some(Item::Fn(f)) => {
            let (fn_token, ident) = (&f.sig.fn_token, &f.sig.ident);
            return syn::Error::new_spanned(
                quote!(#fn_token #ident),
                format!(
                    "#[toolset] goes on an impl block, not on a function: put `pub fn {ident}` inside `#[toolset] impl MyToolset {{ ... }}`"
                ),
            );
        }
        _ => {
            return syn::Error::new(
                first_span(input),
                "#[toolset] goes on an inherent impl block: `#[toolset] impl MyToolset { pub fn ... }`",
            );
        }
    };
    syn::Error::new_spanned(
        quote!(#keyword #name),
        format!(
            "#[toolset] goes on an impl block, not on {what}: write `#[toolset] impl {name} {{ pub fn ... }}`"
        ),
    )
}

fn first_span(tokens: &TokenStream) -> Span {
    tokens
        .clone()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |t| t.span())
}

/// Removes `#[tool]` from impl items and doc comments from parameters:
/// rustc accepts neither there once the macro is done. Also spells out the
/// lifetime of a `&ToolInvocation` parameter (`&ToolInvocation<'_>`), which
/// an `async fn` may not leave out, so authors never have to.
fn strip_helper_attrs(item: &mut ItemImpl) {
    for impl_item in &mut item.items {
        let attrs = match impl_item {
            ImplItem::Fn(f) => {
                for input in &mut f.sig.inputs {
                    if let syn::FnArg::Typed(pt) = input {
                        pt.attrs.retain(|a| !a.path().is_ident("doc"));
                        fill_invocation_lifetime(&mut pt.ty);
                    }
                }
                &mut f.attrs
            }
            ImplItem::Const(c) => &mut c.attrs,
            ImplItem::Type(t) => &mut t.attrs,
            ImplItem::Macro(m) => &mut m.attrs,
            _ => continue,
        };
        attrs.retain(|a| !attr::is_tool_attr(a));
    }
}

/// `&ToolInvocation` becomes `&ToolInvocation<'_>`; any other type, and a
/// `ToolInvocation` that already has arguments, is left as written.
fn fill_invocation_lifetime(ty: &mut syn::Type) {
    let syn::Type::Reference(r) = ty else {
        return;
    };
    let syn::Type::Path(p) = &mut *r.elem else {
        return;
    };
    if p.qself.is_some() {
        return;
    }
    if let Some(last) = p.path.segments.last_mut()
        && last.ident == "ToolInvocation"
        && last.arguments.is_none()
    {
        let lifetime = syn::Lifetime::new("'_", last.ident.span());
        last.arguments = syn::PathArguments::AngleBracketed(syn::parse_quote!(<#lifetime>));
    }
}

fn generate(item: &ItemImpl, model: &Toolset) -> TokenStream {
    let self_ty = &item.self_ty;
    let type_name = &model.type_name;
    let owner = &model.owner;
    let count = model.tools.len();

    let schema_fns = model.tools.iter().enumerate().map(|(i, t)| schema_fn(i, t));
    let output_fns = model
        .tools
        .iter()
        .enumerate()
        .filter_map(|(i, t)| output_schema_fn(i, t));
    let infos = model.tools.iter().enumerate().map(|(i, t)| tool_info(i, t));
    let arms = model
        .tools
        .iter()
        .enumerate()
        .map(|(i, t)| dispatch_arm(i, t));

    quote! {
        const _: () = {
            #(#schema_fns)*
            #(#output_fns)*

            static __OSCOVA_TOOLS: [::oscova_core::__private::ToolInfo; #count] = [#(#infos),*];
            static __OSCOVA_TOOLSET: ::oscova_core::__private::ToolsetInfo =
                ::oscova_core::__private::ToolsetInfo::__new(#type_name, #owner, &__OSCOVA_TOOLS);

            #[automatically_derived]
            impl ::oscova_core::__private::Toolset for #self_ty {
                fn toolset_info() -> &'static ::oscova_core::__private::ToolsetInfo {
                    &__OSCOVA_TOOLSET
                }

                #[allow(unused_variables, unreachable_code, clippy::let_unit_value)]
                fn dispatch<'__oscova>(
                    &'__oscova self,
                    __oscova_index: usize,
                    __oscova_args: ::oscova_core::__private::serde_json::Value,
                    __oscova_inv: &'__oscova ::oscova_core::__private::ToolInvocation<'_>,
                ) -> ::core::result::Result<
                    ::oscova_core::__private::Dispatched<'__oscova>,
                    ::oscova_core::__private::ArgError,
                > {
                    match __oscova_index {
                        #(#arms)*
                        _ => ::core::result::Result::Err(
                            ::oscova_core::__private::ArgError::__unknown_tool(__oscova_index),
                        ),
                    }
                }
            }
        };
    }
}

fn schema_fn(index: usize, tool: &Tool) -> TokenStream {
    let name = format_ident!("__oscova_schema_{}", index);
    let params = tool.params.iter().filter_map(|p| match p {
        Param::Json {
            name,
            ty,
            doc,
            required,
            ..
        } => Some(quote! {
            <#ty as ::oscova_core::__private::ToolArgumentSchema>::__param(
                &mut __oscova_builder, #name, #doc, #required,
            );
        }),
        _ => None,
    });
    quote! {
        fn #name() -> ::oscova_core::__private::serde_json::Value {
            #[allow(unused_mut)]
            let mut __oscova_builder = ::oscova_core::__private::InputSchemaBuilder::new();
            #(#params)*
            __oscova_builder.finish()
        }
    }
}

/// The type whose schema is the tool's output schema: the `T` of a value
/// or of `Result<T, E>`, unless it is text (`String`) or already a result.
fn output_type(tool: &Tool) -> Option<&syn::Type> {
    match &tool.output {
        Output::Value(ty) if !is_string(ty) => Some(ty),
        Output::Result {
            ok: Some(ty),
            ok_is_result: false,
            ..
        } if !is_string(ty) => Some(ty),
        _ => None,
    }
}

/// The output schema function of a tool returning a value: the schema of
/// its type when that type implements `JsonSchema`, else `None` (a
/// `Serialize`-only type is still a fine return type, with no schema).
/// Which applies is decided at compile time by autoref specialisation on
/// the author's concrete type.
fn output_schema_fn(index: usize, tool: &Tool) -> Option<TokenStream> {
    let ty = output_type(tool)?;
    let name = format_ident!("__oscova_output_schema_{}", index);
    Some(quote! {
        fn #name() -> ::core::option::Option<::oscova_core::__private::serde_json::Value> {
            #[allow(unused_imports)]
            use ::oscova_core::__private::{HasOutputSchema as _, NoOutputSchema as _};
            (&::oscova_core::__private::OutputProbe::<#ty>::new()).__output_schema()
        }
    })
}

fn annotations(tool: &Tool) -> TokenStream {
    let mut out = quote!(::oscova_core::__private::ToolAnnotations::new());
    let flags = [
        (&tool.read_only, "with_read_only"),
        (&tool.destructive, "with_destructive"),
        (&tool.idempotent, "with_idempotent"),
    ];
    for (flag, setter) in flags {
        if let Some(flag) = flag {
            let setter = format_ident!("{}", setter);
            let value = flag.value;
            out = quote!(#out.#setter(#value));
        }
    }
    let open_world = tool
        .open_world
        .as_ref()
        .map_or_else(|| tool.network == "Internet", |f| f.value);
    quote!(#out.with_open_world(#open_world))
}

fn tool_info(index: usize, tool: &Tool) -> TokenStream {
    let schema = format_ident!("__oscova_schema_{}", index);
    let method = tool.method.to_string();
    let method = method.strip_prefix("r#").unwrap_or(&method);
    let name = &tool.name;
    let display = &tool.display_name;
    let description = &tool.description;
    let approval = &tool.approval;
    let network = &tool.network;
    let is_async = tool.is_async;
    let title = tool
        .title
        .as_ref()
        .map(|title| quote!(.__with_title(#title)));
    let output = output_type(tool).map(|_| {
        let f = format_ident!("__oscova_output_schema_{}", index);
        quote!(.__with_output_schema(#f))
    });
    let annotations = annotations(tool);
    let sequential = tool.sequential.then(|| quote!(.__with_sequential(true)));
    let snippet = tool
        .prompt_snippet
        .as_ref()
        .map(|snippet| quote!(.__with_prompt_snippet(#snippet)));
    let guidelines = (!tool.prompt_guidelines.is_empty()).then(|| {
        let bullets = &tool.prompt_guidelines;
        // A slice of constants in a `static`'s initializer: promoted to
        // `'static`, so the metadata borrows it.
        quote!(.__with_prompt_guidelines(&[
            #(::oscova_core::__private::Cow::Borrowed(#bullets)),*
        ]))
    });
    quote! {
        ::oscova_core::__private::ToolInfo::__new(
            #method,
            #name,
            #display,
            #description,
            ::oscova_core::__private::ToolApprovalMode::#approval,
            ::oscova_core::__private::NetworkScope::#network,
            #is_async,
            #schema,
        )
        .__with_annotations(#annotations)
        #title
        #output
        #sequential
        #snippet
        #guidelines
    }
}

fn dispatch_arm(index: usize, tool: &Tool) -> TokenStream {
    let json: Vec<_> = tool
        .params
        .iter()
        .filter_map(|p| match p {
            Param::Json {
                ident,
                name,
                ty,
                required,
                ..
            } => Some((ident, name, ty, *required)),
            _ => None,
        })
        .collect();
    let names: Vec<_> = json.iter().map(|(_, name, ..)| name).collect();
    let slots = 0..names.len();
    let reads = json
        .iter()
        .enumerate()
        .map(|(i, (ident, _, ty, required))| {
            quote! {
                let #ident = <#ty as ::oscova_core::__private::ToolArgument>::__take(
                    &mut __oscova_reader, #i, #required,
                );
            }
        });
    let idents: Vec<_> = json.iter().map(|(ident, ..)| *ident).collect();
    let unwrap = if idents.is_empty() {
        quote!()
    } else {
        quote! {
            let (#(::core::option::Option::Some(#idents),)*) = (#(#idents,)*) else {
                return ::core::result::Result::Err(
                    ::oscova_core::__private::ArgError::new("", "the arguments could not be read"),
                );
            };
        }
    };
    let call_args = tool.params.iter().map(|p| match p {
        Param::Json { ident, .. } => quote!(#ident),
        Param::Invocation => quote!(__oscova_inv),
        Param::Cancel => quote!(::core::clone::Clone::clone(
            __oscova_inv.cancellation_token()
        )),
    });
    let method = &tool.method;
    let mut call = if tool.has_self {
        quote!(self.#method(#(#call_args),*))
    } else {
        quote!(Self::#method(#(#call_args),*))
    };
    if tool.is_async {
        call = quote!(#call.await);
    }
    let convert = convert_output(&tool.output, call);
    let body = if tool.is_async {
        quote! {
            ::core::result::Result::Ok(::oscova_core::__private::pending(async move { #convert }))
        }
    } else {
        quote! {
            ::core::result::Result::Ok(::oscova_core::__private::Dispatched::Ready(#convert))
        }
    };
    quote! {
        #index => {
            // Built in place and filled there, not returned in a `Result`:
            // each move of the reader was a copy of it per call.
            let mut __oscova_reader =
                ::oscova_core::__private::ArgReader::start(&[#(#names),*]);
            __oscova_reader.read(
                __oscova_args,
                |__oscova_key| match __oscova_key {
                    #(#names => ::core::option::Option::Some(#slots),)*
                    _ => ::core::option::Option::None,
                },
            )?;
            #(#reads)*
            __oscova_reader.finish()?;
            #unwrap
            #body
        }
    }
}

/// Turns the method's return value into a `ToolResult`. Each conversion
/// names the author's own type (`<Vec<Row> as ToolOutput>`), so a type
/// that does not fit is reported on that type: the `E` of `Result<T, E>`
/// for a non-`Display` error, the `T` for a non-`Serialize` value.
/// Whether `ty` is written as `String` (or `std::string::String`).
fn is_string(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "String" && s.arguments.is_none()),
        _ => false,
    }
}

fn convert_output(output: &Output, call: TokenStream) -> TokenStream {
    let private = quote!(::oscova_core::__private);
    match output {
        Output::Unit => quote! {{
            #call;
            <() as #private::ToolOutput>::__to_result(&())
        }},
        Output::ToolResult => quote!(#private::result(#call)),
        // A `String` is the content as it stands: moved, not serialised
        // into a JSON string and copied back out.
        Output::Value(ty) if is_string(ty) => quote!(#private::text(#call)),
        Output::Value(ty) => quote! {
            <#ty as #private::ToolOutput>::__to_result(&#call)
        },
        Output::Result {
            ty,
            ok,
            err,
            ok_is_result,
        } => {
            // An alias such as `io::Result<T>` does not spell out every
            // type; the check then falls back to inference, on the whole
            // return type.
            let span = ty.span();
            let ok = match ok {
                _ if *ok_is_result => quote!(#private::result(__oscova_ok)),
                Some(t) if is_string(t) => quote!(#private::text(__oscova_ok)),
                Some(t) => quote!(<#t as #private::ToolOutput>::__to_result(&__oscova_ok)),
                None => quote_spanned!(span=> #private::ToolOutput::__to_result(&__oscova_ok)),
            };
            let err = match err {
                Some(e) => quote!(<#e as #private::ToolError>::__to_error(&__oscova_err)),
                None => quote_spanned!(span=> #private::ToolError::__to_error(&__oscova_err)),
            };
            quote! {
                match #call {
                    ::core::result::Result::Ok(__oscova_ok) => #ok,
                    ::core::result::Result::Err(__oscova_err) => #err,
                }
            }
        }
    }
}
