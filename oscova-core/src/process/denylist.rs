//! The deny-list: which environment variable names carry secrets.
//!
//! The rule errs wide on purpose. A name denied by mistake costs a caller one explicit
//! `env` call; a secret let through leaks into whatever the child prints.

/// Exact names that are secrets on their own.
const DENIED_NAMES: [&str; 4] = ["API_KEY", "TOKEN", "SECRET", "PASSWORD"];

/// Suffixes of `UPPER_SNAKE` names that mark a secret, underscore included so that
/// `TOKENIZER_PATH` or `MAX_TOKENS` are not caught.
const DENIED_SUFFIXES: [&str; 4] = ["_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD"];

/// Endings of the last part of a `Section__Key` name. That part is a `PascalCase` key, so
/// there is no underscore to anchor on: `BotToken` and `ClientSecret` must count.
const DENIED_KEY_ENDINGS: [&str; 5] = ["APIKEY", "API_KEY", "TOKEN", "SECRET", "PASSWORD"];

fn ends_with_ignore_ascii_case(name: &str, suffix: &str) -> bool {
    name.len()
        .checked_sub(suffix.len())
        .and_then(|start| name.as_bytes().get(start..))
        .is_some_and(|tail| tail.eq_ignore_ascii_case(suffix.as_bytes()))
}

pub(super) fn is_secret_name(name: &str) -> bool {
    if DENIED_NAMES
        .iter()
        .any(|denied| name.eq_ignore_ascii_case(denied))
        || DENIED_SUFFIXES
            .iter()
            .any(|suffix| ends_with_ignore_ascii_case(name, suffix))
    {
        return true;
    }
    name.rsplit_once("__").is_some_and(|(_, key)| {
        DENIED_KEY_ENDINGS
            .iter()
            .any(|ending| ends_with_ignore_ascii_case(key, ending))
    })
}
