//! The chat's slash commands: `/help`, `/name NEW`, `/tree`, and the list
//! that names `/compact` and `/retry` (which run in `compact.rs` and
//! `retry.rs`: they need the chat's model).
//!
//! Rules: a line that starts with `/` is a command, never sent to the
//! model. `/name`, `/tree`, `/compact` and `/retry` act on the session
//! (`--session`); without one they are usage errors that say so. An unknown
//! command is a usage error naming `/help`. With `--session`, a command
//! that is not one of these is the session extensions' (`/hello world`,
//! run by the chat), and `/help` lists them after the built-in ones, each
//! with its extension; a built-in name wins over an extension's.

use oscova_agent::session::agent::CommandInfo;
use oscova_agent::session::{EntryKind, Session};
use serde_json::{Value, json};

use crate::error::CliError;

/// The commands and what each does, for `/help`.
pub(super) const COMMANDS: [(&str, &str); 5] = [
    ("/help", "list the commands"),
    (
        "/name NEW",
        "name the session (a session_info entry; needs --session)",
    ),
    (
        "/tree",
        "list the session's branches, the active one marked (needs --session)",
    ),
    (
        "/compact [FOCUS]",
        "summarise the older part of the session with the chat's model (needs --session)",
    ),
    (
        "/retry",
        "ask the model again after a failed answer, without sending your message twice \
         (needs --session)",
    ),
];

/// Whether `name` (`/help`) is a built-in command.
pub(super) fn is_builtin(name: &str) -> bool {
    COMMANDS
        .iter()
        .any(|(c, _)| c.split_whitespace().next() == Some(name))
}

/// What a command printed: the JSON document and the text.
pub(super) struct Answer {
    pub(super) json: Value,
    pub(super) text: String,
}

/// Runs the command line `line` (it starts with `/`).
pub(super) async fn run(
    line: &str,
    session: Option<&mut Session>,
    extensions: &[CommandInfo],
) -> Result<Answer, CliError> {
    let (name, rest) = match line.split_once(char::is_whitespace) {
        Some((name, rest)) => (name, rest.trim()),
        None => (line, ""),
    };
    match name {
        "/help" => {
            let mut text = COMMANDS
                .iter()
                .map(|(c, what)| format!("{c:<16} {what}"))
                .collect::<Vec<_>>();
            let mut list: Vec<Value> = COMMANDS
                .iter()
                .map(|(c, what)| json!({"command": c, "description": what}))
                .collect();
            for command in extensions {
                let name = format!("/{}", command.name);
                text.push(crate::term::one_line(&format!(
                    "{name:<16} {} (extension {})",
                    command.description, command.extension
                )));
                list.push(json!({
                    "command": name,
                    "description": command.description,
                    "extension": command.extension,
                }));
            }
            let text = text.join("\n");
            Ok(Answer {
                json: json!({"command": "help", "commands": list}),
                text,
            })
        }
        "/name" => {
            let session = need(session, "/name")?;
            if rest.is_empty() {
                return Err(CliError::SlashCommand {
                    message: "/name needs the new name: /name NEW".into(),
                });
            }
            let id = session
                .append(EntryKind::SessionInfo {
                    name: Some(rest.to_owned()),
                })
                .await?;
            Ok(Answer {
                json: json!({"command": "name", "name": rest, "entry": id.as_str()}),
                text: format!("named {rest}"),
            })
        }
        "/tree" => {
            let session = need(session, "/tree")?;
            let tree = session.tree();
            let branches = tree.branches();
            let mut text = String::new();
            let mut list = Vec::new();
            for branch in &branches {
                let tip = session.entry(&branch.tip);
                let said = tip.map(super::super::sessions::summary).unwrap_or_default();
                text.push_str(&format!(
                    "{} {}  {} entr{}  {said}\n",
                    if branch.active { "*" } else { " " },
                    branch.tip,
                    branch.len,
                    if branch.len == 1 { "y" } else { "ies" },
                ));
                list.push(json!({
                    "tip": branch.tip.as_str(),
                    "entries": branch.len,
                    "active": branch.active,
                }));
            }
            if branches.is_empty() {
                text.push_str("the session has no entries yet");
            }
            Ok(Answer {
                json: json!({"command": "tree", "leaf": session.leaf().map(|l| l.as_str()), "branches": list}),
                text: text.trim_end().to_owned(),
            })
        }
        other => Err(CliError::SlashCommand {
            message: format!("unknown command {other}; /help lists the commands"),
        }),
    }
}

fn need<'a>(session: Option<&'a mut Session>, command: &str) -> Result<&'a mut Session, CliError> {
    session.ok_or_else(|| CliError::SlashCommand {
        message: format!("{command} works on a session: start the chat with --session NAME"),
    })
}
