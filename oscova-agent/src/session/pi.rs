//! pi's session files (JSONL, format version 3), both ways.
//!
//! Rules: a file is a header line (`{"type":"session","version":3,"id",
//! "timestamp","cwd"}`) and then one entry per line, exactly as a store
//! keeps it: exporting and importing is a mapping. pi takes the last
//! entry of a file as the leaf, so [`export`] writes the entries in append
//! order with the leaf's entry moved last (a session whose leaf was reset
//! to nothing exports as its last entry). [`parse`] reads what pi's
//! `parseSessionEntries` reads: blank lines and lines that are not JSON are
//! skipped (a line cut by a crash), entries of kinds this crate does not
//! know are an error; a version 2 file has its `hookMessage` roles renamed
//! `custom`, as pi migrates it; version 1 files (no tree) are refused.
//! [`import`] stores a file as a new session of the user, chain by chain,
//! and deletes it again if a chain is refused.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use oscova_core::UserInfo;
use serde::{Deserialize, Serialize};

use super::entry::SessionEntry;
use super::error::SessionError;
use super::handle::Session;
use super::id::{EntryId, SessionId};
use super::store::SessionStore;

/// The format version written and read.
pub const PI_SESSION_VERSION: u32 = 3;

/// The first line of a pi session file (pi: `SessionHeader`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PiHeader {
    /// Always `session`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The format version.
    #[serde(default)]
    pub version: Option<u32>,
    /// The session id.
    pub id: String,
    /// When the session started (ISO 8601).
    pub timestamp: String,
    /// The working folder the session started in.
    #[serde(default)]
    pub cwd: String,
    /// The file this one was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
}

/// A pi session file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct PiFile {
    /// The header.
    pub header: PiHeader,
    /// The entries, in file order.
    pub entries: Vec<SessionEntry>,
    /// How many lines were skipped as pi skips them (not JSON).
    pub skipped_lines: usize,
}

impl PiFile {
    /// The leaf pi would resume at: the last entry.
    pub fn leaf(&self) -> Option<&EntryId> {
        self.entries.last().map(|e| &e.id)
    }
}

fn invalid(reason: String) -> SessionError {
    SessionError::InvalidAppend(reason)
}

/// Writes `session` as a pi session file, `cwd` in its header.
pub fn export(session: &Session, cwd: &str) -> Result<String, SessionError> {
    let header = PiHeader {
        kind: "session".into(),
        version: Some(PI_SESSION_VERSION),
        id: session.id().to_string(),
        timestamp: session.info().created.clone(),
        cwd: cwd.to_owned(),
        parent_session: None,
    };
    let line = |e: Result<String, serde_json::Error>| e.map_err(|e| invalid(e.to_string()));
    let mut out = line(serde_json::to_string(&header))?;
    out.push('\n');
    let leaf = session.leaf();
    let mut last = None;
    for entry in session.entries() {
        if Some(&entry.id) == leaf {
            last = Some(entry);
            continue;
        }
        out.push_str(&line(entry.to_json_line())?);
        out.push('\n');
    }
    if let Some(entry) = last {
        out.push_str(&line(entry.to_json_line())?);
        out.push('\n');
    }
    Ok(out)
}

/// Reads a pi session file (see the module rules).
pub fn parse(text: &str) -> Result<PiFile, SessionError> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let mut skipped = 0;
    let header = loop {
        let Some(first) = lines.next() else {
            return Err(invalid("the file has no session header".into()));
        };
        match serde_json::from_str::<serde_json::Value>(first) {
            Ok(value) if value["type"] == "session" => {
                break serde_json::from_value::<PiHeader>(value)
                    .map_err(|e| invalid(format!("the session header: {e}")))?;
            }
            Ok(_) => return Err(invalid("the first line is not a session header".into())),
            Err(_) => skipped += 1,
        }
    };
    let version = header.version.unwrap_or(1);
    if version < 2 {
        return Err(invalid(
            "version 1 files have no tree; open the file in pi once to migrate it".into(),
        ));
    }
    let mut entries = Vec::new();
    for (n, line) in lines.enumerate() {
        // The common case reads the line once; only a line that is not an
        // entry, or a version 2 file, is read as plain JSON too.
        if version >= 3
            && let Ok(entry) = SessionEntry::from_json_line(line)
        {
            entries.push(entry);
            continue;
        }
        let Ok(mut value) = serde_json::from_str::<serde_json::Value>(line) else {
            skipped += 1;
            continue;
        };
        if version < 3 && value["type"] == "message" && value["message"]["role"] == "hookMessage" {
            value["message"]["role"] = "custom".into();
        }
        let entry = serde_json::from_value(value)
            .map_err(|e| invalid(format!("entry {} of the file: {e}", n + 1)))?;
        entries.push(entry);
    }
    Ok(PiFile {
        header,
        entries,
        skipped_lines: skipped,
    })
}

/// Stores a pi session file as a new session of `user` named `name`,
/// resumed at the file's last entry.
pub async fn import(
    store: Arc<dyn SessionStore>,
    user: UserInfo,
    name: &str,
    text: &str,
) -> Result<Session, SessionError> {
    let file = parse(text)?;
    let info = store.create(&user, name).await?;
    match store_chains(&*store, &user, &info.id, &file).await {
        Ok(()) => Session::open_id(store, user, &info.id).await,
        Err(error) => {
            // Best effort: the error that matters is the first one.
            let _ = store.delete(&user, &info.id).await;
            Err(error)
        }
    }
}

/// Appends the file's entries, parents before children, as chains: a run
/// of entries each the child of the one before is one append. Then the
/// leaf goes to the file's last entry.
async fn store_chains(
    store: &dyn SessionStore,
    user: &UserInfo,
    id: &SessionId,
    file: &PiFile,
) -> Result<(), SessionError> {
    let ordered = parents_first(&file.entries)?;
    let mut leaf: Option<EntryId> = None;
    let mut start = 0;
    for end in 1..=ordered.len() {
        let breaks =
            end == ordered.len() || ordered[end].parent_id.as_ref() != Some(&ordered[end - 1].id);
        if breaks {
            let info = store
                .append(user, id, leaf.as_ref(), &ordered[start..end])
                .await?;
            leaf = info.leaf;
            start = end;
        }
    }
    if leaf.as_ref() != file.leaf() {
        store.set_leaf(user, id, leaf.as_ref(), file.leaf()).await?;
    }
    Ok(())
}

/// The entries in file order, except that a child never comes before its
/// parent.
fn parents_first(entries: &[SessionEntry]) -> Result<Vec<SessionEntry>, SessionError> {
    let known: HashSet<&EntryId> = entries.iter().map(|e| &e.id).collect();
    let mut waiting: HashMap<&EntryId, Vec<usize>> = HashMap::new();
    let mut placed: HashSet<&EntryId> = HashSet::with_capacity(entries.len());
    let mut out = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        match &entry.parent_id {
            Some(parent) if !known.contains(parent) => {
                return Err(invalid(format!(
                    "entry `{}` names a parent `{parent}` that is not in the file",
                    entry.id
                )));
            }
            Some(parent) if !placed.contains(parent) => {
                waiting.entry(parent).or_default().push(i);
                continue;
            }
            _ => {}
        }
        let mut ready = vec![i];
        while let Some(next) = ready.pop() {
            let entry = &entries[next];
            placed.insert(&entry.id);
            out.push(entry.clone());
            if let Some(children) = waiting.remove(&entry.id) {
                ready.extend(children.into_iter().rev());
            }
        }
    }
    if out.len() != entries.len() {
        return Err(invalid("the entries' parents form a cycle".into()));
    }
    Ok(out)
}
