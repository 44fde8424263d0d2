//! `oscova sessions`: list, show, export, import and delete a user's
//! sessions, in the store `[sessions]` names.
//!
//! Rules: every verb acts for one user (`--user`, as other commands), and
//! another user's session is "not found", word for word as a missing one
//! (the store's rule), exit status 2. Text from a session (names, entry
//! text) reaches the terminal through `output::print_text`, so it passes
//! the redactors and `term::for_terminal`; JSON through `print_json`.
//! `show --json` prints `{"session", "leaf", "entries"}`, each entry pi's
//! own JSON object except that its parent is `parent_id` (pi writes
//! `parentId`). `import` stores the file as a new session or nothing: a
//! file that fails half way leaves no session behind (pi::import's rule).
//!
//! Files follow the CLI's rule for files a command names: `import` reads
//! a regular file only (opened non-blocking and checked on the handle, so
//! a FIFO or `/dev/zero` is refused at once), of at most
//! [`MAX_IMPORT_BYTES`] counted while reading, as `--args-file` and
//! `speech hear` do; `export -o` writes a regular file only (a FIFO is
//! refused, never waited on, as `speech say -o` does), and the export
//! holds a conversation, so it is private: created 0600, and an existing
//! file is made 0600 before it is emptied (`oscova_core::fs::create_private`).
//! Both refusals are usage errors (exit 2). The store's file is private
//! too: one open to its group or others is refused (`SqliteStore::open`),
//! exit 2, as a config file others can write is.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use oscova_agent::session::{
    EntryKind, Session, SessionEntry, SessionError, SessionStore, SqliteStore, pi,
};
use oscova_core::fs::{FileError, FileKind, create_private, read_regular};
use serde_json::{Value, json};

use super::Env;
use crate::cli::{SessionFormat, SessionsCommand};
use crate::config::SessionsStore;
use crate::error::{CliError, ExitStatus};
use crate::output::{print_json, print_text};
use crate::term::one_line;

/// The largest session file `import` reads, in bytes: far more than a real
/// one, and a bound on what a wrong file can cost.
const MAX_IMPORT_BYTES: u64 = 256 * 1024 * 1024;

pub(super) async fn run(env: &Env, command: SessionsCommand) -> Result<ExitStatus, CliError> {
    let store = open_store(&env.config).await?;
    match command {
        SessionsCommand::List(args) => {
            let user = env.config.user(args.user.user.as_deref());
            let sessions = store.list(&user).await?;
            if env.json {
                let list: Vec<Value> = sessions
                    .iter()
                    .map(|s| {
                        json!({
                            "session": s.name,
                            "id": s.id.as_str(),
                            "leaf": s.leaf.as_ref().map(|l| l.as_str()),
                            "entries": s.entry_count,
                            "created": s.created,
                            "updated": s.updated,
                        })
                    })
                    .collect();
                print_json(&json!({"user": user.id(), "sessions": list}))?;
            } else if sessions.is_empty() {
                print_text(&format!("no sessions for {}", user.id()))?;
            } else {
                let mut text = String::new();
                for s in &sessions {
                    text.push_str(&format!(
                        "{}  {} entr{}  updated {}\n",
                        one_line(&s.name),
                        s.entry_count,
                        if s.entry_count == 1 { "y" } else { "ies" },
                        s.updated
                    ));
                }
                print_text(text.trim_end())?;
            }
        }
        SessionsCommand::Show(args) => {
            let user = env.config.user(args.user.user.as_deref());
            let session = Session::open(store, user, &args.name).await?;
            show(env, &args.name, &session)?;
        }
        SessionsCommand::Export(args) => {
            let user = env.config.user(args.user.user.as_deref());
            let session = Session::open(store, user, &args.name).await?;
            let SessionFormat::Pi = args.format;
            let cwd = std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default();
            let text = pi::export(&session, &cwd)?;
            write_export(&args.output, &text)?;
            let count = session.entries().len();
            report(
                env,
                json!({"session": args.name, "file": args.output, "entries": count}),
                &format!(
                    "wrote {count} entries of {} to {}",
                    args.name,
                    args.output.display()
                ),
            )?;
        }
        SessionsCommand::Import(args) => {
            let user = env.config.user(args.user.user.as_deref());
            let SessionFormat::Pi = args.format;
            let text = read_import(&args.file)?;
            let name = match args.name {
                Some(name) => name,
                None => default_name(&args.file)?,
            };
            let session = pi::import(store, user, &name, &text).await?;
            let count = session.entries().len();
            report(
                env,
                json!({
                    "session": name,
                    "leaf": session.leaf().map(|l| l.as_str()),
                    "entries": count,
                }),
                &format!("imported {count} entries as {name}"),
            )?;
        }
        SessionsCommand::Delete(args) => {
            let user = env.config.user(args.user.user.as_deref());
            let info = store
                .find(&user, &args.name)
                .await?
                .ok_or_else(|| not_found(&args.name))?;
            if !store.delete(&user, &info.id).await? {
                return Err(not_found(&args.name));
            }
            report(
                env,
                json!({"session": args.name, "deleted": true}),
                &format!("deleted {}", args.name),
            )?;
        }
    }
    Ok(ExitStatus::Success)
}

/// Opens the store `[sessions]` names.
pub(super) async fn open_store(
    config: &crate::config::Config,
) -> Result<Arc<dyn SessionStore>, CliError> {
    match config.sessions() {
        SessionsStore::Sqlite(path) => {
            let store = match path {
                Some(path) => SqliteStore::open(path.clone()).await?,
                None => SqliteStore::open_default().await?,
            };
            Ok(Arc::new(store))
        }
        #[cfg(feature = "sessions-postgres")]
        SessionsStore::Postgres { url, password } => {
            let config = match password {
                Some(password) => {
                    use oscova_core::ExposeSecret as _;
                    crate::config::sessions::with_password(url, password.expose_secret())
                }
                None => url.clone(),
            };
            let store = oscova_agent::session::PostgresStore::connect(&config).await?;
            Ok(Arc::new(store))
        }
        // Refused when the file was loaded; kept for the match.
        #[cfg(not(feature = "sessions-postgres"))]
        SessionsStore::Postgres { .. } => Err(CliError::SessionsPostgresOff),
    }
}

fn not_found(name: &str) -> CliError {
    SessionError::NotFound {
        session: name.to_owned(),
    }
    .into()
}

/// The text of the file `import` reads: a regular file (a FIFO or device
/// is refused at once) of at most [`MAX_IMPORT_BYTES`], counted while
/// reading, and UTF-8.
fn read_import(path: &Path) -> Result<String, CliError> {
    let refuse = |reason: String| CliError::File {
        path: path.to_path_buf(),
        reason,
    };
    let bytes = read_regular(path, MAX_IMPORT_BYTES).map_err(|e| {
        refuse(match e {
            FileError::TooLarge { limit } => {
                format!("it is larger than {limit} bytes, the most `sessions import` reads")
            }
            other => other.to_string(),
        })
    })?;
    String::from_utf8(bytes).map_err(|_| refuse("it is not UTF-8 text".into()))
}

/// Writes the export to `path`: a regular file only (a FIFO or device is
/// refused, never waited on or written), private (0600; an existing file
/// is made so before it is emptied), its whole content `text`.
fn write_export(path: &Path, text: &str) -> Result<(), CliError> {
    let refuse = |reason: String| CliError::File {
        path: path.to_path_buf(),
        reason,
    };
    let failed = |source: std::io::Error| CliError::Write {
        path: path.to_path_buf(),
        source,
    };
    let mut file = create_private(path).map_err(|e| match e {
        FileError::NotRegular {
            kind: FileKind::Directory,
        } => refuse("it is a folder; name a file to write".into()),
        FileError::NotRegular { .. } => refuse(format!("{e}; name a file to write")),
        FileError::Io(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
            refuse("it is a folder; name a file to write".into())
        }
        other => failed(other.into()),
    })?;
    file.write_all(text.as_bytes()).map_err(failed)
}

/// The file's name without its extension, as a session name.
fn default_name(file: &Path) -> Result<String, CliError> {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| CliError::File {
            path: file.to_path_buf(),
            reason: "no file name to name the session after; pass --name".into(),
        })
}

fn report(env: &Env, doc: Value, text: &str) -> Result<(), CliError> {
    if env.json {
        print_json(&doc)
    } else {
        print_text(text)
    }
}

fn show(env: &Env, name: &str, session: &Session) -> Result<(), CliError> {
    let leaf = session.leaf();
    if env.json {
        let entries = session
            .entries()
            .iter()
            .map(entry_json)
            .collect::<Result<Vec<_>, _>>()?;
        return print_json(&json!({
            "session": name,
            "leaf": leaf.map(|l| l.as_str()),
            "entries": entries,
        }));
    }
    let mut text = format!("{name}: {} entries\n", session.entries().len());
    for entry in session.entries() {
        let mark = if Some(&entry.id) == leaf { "*" } else { " " };
        let parent = entry.parent_id.as_ref().map_or("-", |p| p.as_str());
        text.push_str(&format!(
            "{mark} {}  <- {parent}  {}  {}\n",
            entry.id,
            entry.kind.type_name(),
            summary(entry)
        ));
    }
    print_text(text.trim_end())
}

/// One entry as `show --json` prints it: pi's object, `parentId` as
/// `parent_id`.
pub(super) fn entry_json(entry: &SessionEntry) -> Result<Value, CliError> {
    let line = entry
        .to_json_line()
        .map_err(|e| CliError::Output(std::io::Error::other(e)))?;
    let mut value: Value =
        serde_json::from_str(&line).map_err(|e| CliError::Output(std::io::Error::other(e)))?;
    if let Some(object) = value.as_object_mut() {
        let parent = object.remove("parentId").unwrap_or(Value::Null);
        object.insert("parent_id".into(), parent);
    }
    Ok(value)
}

/// A line of what an entry says, for the text listing.
pub(super) fn summary(entry: &SessionEntry) -> String {
    let text = match &entry.kind {
        EntryKind::Message { message } => match message.to_chat() {
            Some(chat) => {
                let role = serde_json::to_value(chat.role)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let calls: Vec<&str> = chat.tool_calls.iter().map(|c| c.name.as_str()).collect();
                if calls.is_empty() {
                    format!("{role}: {}", chat.content)
                } else {
                    format!("{role}: {} [calls {}]", chat.content, calls.join(", "))
                }
            }
            None => String::new(),
        },
        EntryKind::SessionInfo { name } => format!("name: {}", name.as_deref().unwrap_or("")),
        EntryKind::ModelChange { provider, model_id } => format!("{provider}/{model_id}"),
        _ => String::new(),
    };
    let line = one_line(&text);
    match line.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}
