//! The one error type of the time tools.
//!
//! Rules: every message is written for the model that made the call: it
//! names the input that was wrong and shows a form that would work, so the
//! model can retry without asking the user.

use std::fmt;

/// Why a time tool could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeError {
    /// A time-zone name that is not in the IANA database.
    #[error("unknown time zone `{name}`{}", Suggestions(.suggestions))]
    UnknownZone {
        /// The name as given.
        name: String,
        /// Close matches from the database, best first (may be empty).
        suggestions: Vec<String>,
    },
    /// A time that could not be read.
    #[error(
        "could not read the time `{input}` ({reason}); write it like `2024-03-10T14:30`, \
         `2024-03-10T14:30:00+01:00`, `2024-03-10T14:30[Europe/Berlin]`, `2024-03-10` or `now`"
    )]
    BadTime {
        /// The time as given.
        input: String,
        /// What the parser said.
        reason: String,
    },
    /// A duration that could not be read.
    #[error(
        "could not read the duration `{input}` ({reason}); write it in ISO 8601 like `PT1H30M` \
         or `P2DT3H`, or in words like `1 hour 30 minutes` or `-2 days`"
    )]
    BadDuration {
        /// The duration as given.
        input: String,
        /// What the parser said.
        reason: String,
    },
    /// The arithmetic left the supported range (years -9999 to 9999) or
    /// mixed units that need a time zone to be resolved.
    #[error("cannot compute {what}: {reason}")]
    Arithmetic {
        /// What was being computed.
        what: String,
        /// Why it failed.
        reason: String,
    },
}

struct Suggestions<'a>(&'a [String]);

impl fmt::Display for Suggestions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("; use an IANA name such as `Europe/Berlin`, `America/New_York` or `UTC`")?;
        if let Some((first, rest)) = self.0.split_first() {
            write!(f, ". Close matches: `{first}`")?;
            for name in rest {
                write!(f, ", `{name}`")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_zone_lists_matches() {
        let e = TimeError::UnknownZone {
            name: "Europe/Berlni".into(),
            suggestions: vec!["Europe/Berlin".into(), "Europe/Berne".into()],
        };
        let text = e.to_string();
        assert!(
            text.starts_with("unknown time zone `Europe/Berlni`"),
            "{text}"
        );
        assert!(
            text.ends_with("Close matches: `Europe/Berlin`, `Europe/Berne`"),
            "{text}"
        );
    }
}
