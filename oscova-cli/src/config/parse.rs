//! Reading the file's TOML, and what a parse error shows.
//!
//! Rules: a parse error names the line, column, table and key and gives
//! the parser's reason, but never quotes the offending line (the TOML
//! parser's own error text does, and the line may be a credential's), and
//! every value of the credentials tables is redacted from the reason, in
//! case it quotes one (`invalid type: string "…"`). For a file that does
//! not parse at all, the value on the offending line is redacted when the
//! line belongs to a credentials table.

use std::path::Path;

use super::FileConfig;
use crate::error::CliError;

/// Parses a config file's text; `path` names it in the error.
pub(super) fn parse(text: &str, path: &Path) -> Result<FileConfig, CliError> {
    toml::from_str(text).map_err(|e| CliError::ConfigParse {
        path: path.to_path_buf(),
        message: parse_error_message(&e, text),
    })
}

/// A parse error as the operator sees it: where (line, column, table,
/// key) and the parser's reason, never the offending line itself, and with
/// every credential value in the file redacted should the reason quote one
/// (`invalid type: string "…"`).
fn parse_error_message(error: &toml::de::Error, text: &str) -> String {
    let redactor = oscova_core::redact::Redactor::new();
    if let Ok(table) = toml::from_str::<toml::Table>(text) {
        for value in credential_values(&table) {
            redactor.add(value);
        }
    }
    let reason = error.message().trim();
    let Some(start) = error.span().map(|span| span.start) else {
        return redactor.redact(reason).into_owned();
    };
    let before = text.get(..start).unwrap_or(text);
    let line_number = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .unwrap_or_default()
        .chars()
        .count()
        + 1;
    let line = text.lines().nth(line_number - 1).unwrap_or_default();
    let table = before
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|header| {
            header
                .split(']')
                .next()
                .unwrap_or(header)
                .trim_start_matches('[')
        });
    let key = line.split_once('=').map(|(key, _)| key.trim());
    // A value on a credentials line is a secret even when the file does
    // not parse at all.
    if let Some((key, value)) = line.split_once('=')
        && (key.contains("credentials") || table.is_some_and(|t| t.contains("credentials")))
    {
        redactor.add(value.trim().trim_matches(['"', '\'']));
    }
    let mut place = format!("line {line_number}, column {column}");
    if let Some(table) = table {
        place.push_str(&format!(", in [{table}]"));
    }
    if let Some(key) = key.filter(|k| !k.is_empty()) {
        place.push_str(&format!(", key {key}"));
    }
    redactor.redact(&format!("{place}: {reason}")).into_owned()
}

/// Every string under `[credentials]` and `[users.<id>.credentials]`.
fn credential_values(table: &toml::Table) -> Vec<&str> {
    fn strings<'a>(value: &'a toml::Value, out: &mut Vec<&'a str>) {
        match value {
            toml::Value::String(s) => out.push(s),
            toml::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
            toml::Value::Table(t) => t.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Some(shared) = table.get("credentials") {
        strings(shared, &mut out);
    }
    if let Some(toml::Value::Table(users)) = table.get("users") {
        for user in users.values() {
            if let Some(own) = user.get("credentials") {
                strings(own, &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 13: a parse error quoted the whole line of a credential.
    #[test]
    fn parse_errors_never_quote_a_credential() {
        let none: [(&str, &str); 0] = [];
        let cases = [
            // An unterminated string on a credential line.
            "[credentials]\n\"acme.api_key\" = \"sk-live-unterminated-0123\n",
            // A user's credential with a stray character after the value.
            "[users.alice.credentials]\n\"acme.api_key\" = \"sk-live-unterminated-0123\" x\n",
            // A well-formed file of the wrong shape: the reason quotes the value.
            "[users.alice]\ncredentials = \"sk-live-unterminated-0123\"\n",
            // A credential next to the mistake.
            "[credentials]\n\"a.key\" = \"sk-live-unterminated-0123\"\n[users.bob]\ntime_zone = 5\n",
        ];
        for text in cases {
            let err = super::super::Config::from_toml_str(text, none).unwrap_err();
            let shown = err.to_string();
            assert!(matches!(err, CliError::ConfigParse { .. }), "{shown}");
            assert!(!shown.contains("sk-live"), "{text:?}: {shown}");
            assert!(shown.contains("line "), "{shown}");
        }
        let err = super::super::Config::from_toml_str(cases[0], none)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 2")
                && err.contains("[credentials]")
                && err.contains("\"acme.api_key\""),
            "{err}"
        );
    }
}
