//! Warnings: what an author wrote that compiles, but is most likely not
//! what they meant (a doc-commented helper that is not a tool, a tool the
//! model gets no description of).
//!
//! Rules: stable Rust has no way for a proc macro to emit a warning
//! (`proc_macro::Diagnostic` is unstable), so a warning is made the usual
//! stable way (as the `proc-macro-warning` crate does): a
//! `#[deprecated(note = "...")]` constant, used once on the offending
//! token's span, so rustc's own `deprecated` lint warns there with the note
//! as its text. Warnings are emitted only when the macro had no errors: an
//! author fixing errors is not shown warnings about the same code. The
//! constant's name says what the warning is about, since rustc prints it.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;

/// One warning, on one token.
pub(crate) struct Warning {
    span: Span,
    /// The deprecated constant's name, which rustc prints first.
    name: &'static str,
    /// What to do about it, which rustc prints after the name.
    note: String,
}

impl Warning {
    pub(crate) fn new(span: Span, name: &'static str, note: String) -> Self {
        Self { span, name, note }
    }

    /// The warning as tokens: an anonymous constant holding the deprecated
    /// one and its one use, which is what rustc points at.
    pub(crate) fn to_tokens(&self) -> TokenStream {
        let ident = Ident::new(self.name, self.span);
        let note = &self.note;
        let used = quote_spanned! {self.span=> let _ = #ident; };
        quote! {
            const _: () = {
                #[deprecated(note = #note)]
                #[allow(non_upper_case_globals)]
                const #ident: () = ();
                #used
            };
        }
    }
}
