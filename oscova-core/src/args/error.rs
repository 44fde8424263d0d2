//! The problems a tool's arguments can have, and how they are worded.
//!
//! Rules: a problem names its place as a JSON pointer (RFC 6901: `~` and
//! `/` escaped); a key or a value quoted back is cut at 200 bytes and
//! marked (`…`, or the length in all), so a 50 MB argument never makes a
//! 50 MB error; serde's `invalid type: X, expected Y` reads as
//! `expected Y, found X`, what to send first.

use std::fmt;

/// One problem with one argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgProblem {
    /// A JSON pointer to the offending value (`/limit`, `/rows/0/id`); empty
    /// for the argument object itself.
    pub path: String,
    /// What is wrong, e.g. `expected u32, found string "ten"`.
    pub message: String,
}

impl fmt::Display for ArgProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.message)
    }
}

/// Why a tool's arguments were refused. The method was not called.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", display_problems(.problems))]
pub struct ArgError {
    pub(super) problems: Vec<ArgProblem>,
}

fn display_problems(problems: &[ArgProblem]) -> String {
    let mut out = String::new();
    for (i, p) in problems.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        out.push_str(&p.to_string());
    }
    out
}

impl ArgError {
    /// An error with one problem.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            problems: vec![ArgProblem {
                path: path.into(),
                message: message.into(),
            }],
        }
    }

    /// Every problem found, in parameter order.
    pub fn problems(&self) -> &[ArgProblem] {
        &self.problems
    }

    /// The same problems with every message (and path) rewritten.
    pub(crate) fn map_messages(mut self, f: impl Fn(String) -> String) -> Self {
        for p in &mut self.problems {
            p.message = f(std::mem::take(&mut p.message));
            p.path = f(std::mem::take(&mut p.path));
        }
        self
    }

    #[doc(hidden)]
    pub fn __unknown_tool(index: usize) -> Self {
        Self::new("", format!("no tool with index {index} in this toolset"))
    }
}

/// `/` plus the key escaped as RFC 6901 says. A key longer than 200 bytes
/// is cut there and marked with `…`: the path names it well enough, and a
/// 100 KB key must not make a 100 KB error.
pub(super) fn pointer_segment(key: &str) -> String {
    let kept = crate::text::prefix(key, crate::text::Limit::Bytes(MAX_QUOTED));
    let cut = key.get(kept.len()..).unwrap_or_default();
    let mut out = String::with_capacity(kept.len() + 4);
    out.push('/');
    for c in kept.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    if !cut.is_empty() {
        out.push('…');
    }
    out
}

/// Turns serde's `invalid type: string "ten", expected u32` into
/// `expected u32, found string "ten"`: what to send first, then what came.
pub(super) fn humanize(message: &str) -> String {
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix)
            && let Some((found, expected)) = rest.rsplit_once(", expected ")
        {
            return format!("expected {expected}, found {}", shorten(found));
        }
    }
    shorten(message)
}

/// Longest text of a value quoted back in a message: serde quotes a wrong
/// string whole, and a 50 MB argument must not become a 50 MB error.
pub(super) const MAX_QUOTED: usize = 200;

pub(crate) fn shorten(text: &str) -> String {
    match crate::text::prefix(text, crate::text::Limit::Bytes(MAX_QUOTED)) {
        kept if kept.len() == text.len() => text.to_owned(),
        kept => format!("{kept}… ({} bytes in all)", text.len()),
    }
}
