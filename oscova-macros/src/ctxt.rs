//! Collects every mistake an author made so all of them are reported at
//! once, each on its own token (as serde_derive's `Ctxt` does).

use std::fmt::Display;

use quote::ToTokens;

/// The error collector for one macro call.
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Option<syn::Error>,
}

impl Ctxt {
    /// Records an error spanning `tokens`.
    pub(crate) fn error_spanned_by<T: ToTokens, M: Display>(&mut self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens, message));
    }

    /// Records a syn error.
    pub(crate) fn syn_error(&mut self, err: syn::Error) {
        match &mut self.errors {
            Some(all) => all.combine(err),
            None => self.errors = Some(err),
        }
    }

    /// The combined errors, if any.
    pub(crate) fn check(self) -> Result<(), syn::Error> {
        match self.errors {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
