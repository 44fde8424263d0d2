//! Collects every mistake an author made so all of them are reported at
//! once, each on its own token (as serde_derive's `Ctxt` does).
//!
//! Rules it keeps:
//! - Every `Ctxt` made is consumed by [`Ctxt::check`] before it goes out of
//!   scope, on every path through a macro, including the early returns;
//!   errors recorded and then dropped would be a macro that compiles code
//!   it should have refused, with no message.
//! - In debug builds (the macros' own tests, `trybuild`, a workspace build)
//!   dropping an unchecked `Ctxt` panics: the one panic this crate means to
//!   have, a drop bomb that makes a forgotten `check` fail loudly where it is
//!   written rather than lose an author's error in a release.

use std::fmt::Display;

use quote::ToTokens;

use crate::warning::Warning;

/// The error collector for one macro call; it keeps the warnings too.
#[derive(Default)]
pub(crate) struct Ctxt {
    errors: Option<syn::Error>,
    warnings: Vec<Warning>,
    /// Set by [`Ctxt::check`]; the drop bomb goes off without it.
    checked: bool,
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

    /// Records a warning (code that compiles but is likely a mistake).
    pub(crate) fn warn(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    /// The warnings recorded so far, taken out.
    pub(crate) fn take_warnings(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.warnings)
    }

    /// The combined errors, if any. Consumes the collector, which defuses
    /// its drop bomb.
    pub(crate) fn check(mut self) -> Result<(), syn::Error> {
        self.checked = true;
        match self.errors.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Ctxt {
    #[allow(
        clippy::panic,
        reason = "the drop bomb: the one intended panic, see the module rules"
    )]
    fn drop(&mut self) {
        // The intended panic (see the module rules): a code path that forgot
        // `check` would silently drop the author's errors. Debug builds only,
        // as serde_derive's bomb; and never while already unwinding, where a
        // second panic would abort and hide the first.
        if cfg!(debug_assertions) && !self.checked && !std::thread::panicking() {
            panic!(
                "oscova-macros: a `Ctxt` was dropped without `check()`; its errors were never reported"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Ctxt;

    #[test]
    fn a_checked_context_gives_back_its_errors() {
        let mut cx = Ctxt::default();
        cx.syn_error(syn::Error::new(proc_macro2::Span::call_site(), "one"));
        cx.syn_error(syn::Error::new(proc_macro2::Span::call_site(), "two"));
        let errors = cx.check().err().map(|e| e.into_iter().count());
        assert_eq!(errors, Some(2));
        assert!(Ctxt::default().check().is_ok());
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "dropped without `check()`")]
    fn an_unchecked_context_panics_when_dropped() {
        let mut cx = Ctxt::default();
        cx.syn_error(syn::Error::new(proc_macro2::Span::call_site(), "lost"));
        drop(cx);
    }
}
