//! Tasks still running, kept per user in a small JSON file so a restart
//! forgets none: `status` without a `task_id` polls each of them, and a
//! host's follower (`follow.rs`) reads every user's list.
//!
//! Rules: one file per user, `DIR/<user>.json`, the user id made a safe
//! file name by `oscova_core::fs::user_dir_name` (so no id names a path
//! outside `DIR`); written whole to a temporary file beside it and renamed
//! over it, so a reader sees the old list or the new one, never half;
//! changes within a process are serialised by one lock. A file is read
//! capped at [`MAX_FILE_BYTES`] and holds at most [`MAX_TASKS`] tasks (the
//! oldest dropped first). A task leaves the list when a poll finds it in
//! a final state, or when it is cancelled, or when the follower delivered
//! its result. An entry keeps the session that sent the task. Nothing
//! here runs on its own: the plugin reads and writes the file only inside
//! the user's tool calls, as the plugin contract asks; the follower is the
//! host's work. The process-wide lock serialises the follower's and the
//! tools' changes within one process; two processes on one directory may
//! lose a change of the other (run one follower per directory).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// The most tasks kept per user.
pub const MAX_TASKS: usize = 256;
/// The most bytes of a user's file that are read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// One task an agent was still working on when a call returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PendingTask {
    pub(crate) agent: String,
    pub(crate) task_id: String,
    #[serde(default)]
    pub(crate) context_id: String,
    pub(crate) state: String,
    /// The session whose tool call sent it (the host's
    /// `oscova_core::tool::CallOrigin`), where the follower delivers its
    /// result; empty when the call came from no session.
    #[serde(default)]
    pub(crate) session: String,
    /// The push webhook's id (the last segment of its URL), when the
    /// agent was asked to push this task's updates.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) push_id: String,
    /// The secret the agent sends with each push (its token), so a
    /// forged webhook call is refused.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) push_token: String,
}

/// One lock for every change made by this process.
static LOCK: Mutex<()> = Mutex::new(());

/// A user's list.
#[derive(Debug, Clone)]
pub(crate) struct PendingStore {
    path: PathBuf,
}

impl PendingStore {
    /// The list of `user` under `dir`, or `None` for an id that makes no
    /// file name (the empty one).
    pub(crate) fn new(dir: &Path, user: &str) -> Option<Self> {
        let name = oscova_core::fs::user_dir_name(user)?;
        Some(Self {
            path: dir.join(format!("{name}.json")),
        })
    }

    /// The tasks, oldest first (none when there is no file yet).
    pub(crate) fn list(&self) -> Result<Vec<PendingTask>, String> {
        let bytes = match oscova_core::fs::read_regular(&self.path, MAX_FILE_BYTES) {
            Ok(bytes) => bytes,
            Err(oscova_core::fs::FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Vec::new());
            }
            Err(e) => return Err(format!("{}: {e}", self.path.display())),
        };
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", self.path.display()))
    }

    /// Applies `change` to the list and writes it back.
    pub(crate) fn update(&self, change: impl FnOnce(&mut Vec<PendingTask>)) -> Result<(), String> {
        let _guard = LOCK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut tasks = self.list().unwrap_or_default();
        change(&mut tasks);
        if tasks.len() > MAX_TASKS {
            let extra = tasks.len() - MAX_TASKS;
            tasks.drain(..extra);
        }
        let shown = |e: std::io::Error| format!("{}: {e}", self.path.display());
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(shown)?;
        }
        let text = serde_json::to_vec_pretty(&tasks).map_err(|e| e.to_string())?;
        let temp = self
            .path
            .with_extension(format!("json.{}.tmp", std::process::id()));
        std::fs::write(&temp, text).map_err(shown)?;
        std::fs::rename(&temp, &self.path).map_err(shown)
    }

    /// Records `task` (replacing an entry for the same agent and id, whose
    /// session is kept: the session that sent a task is the one told).
    pub(crate) fn put(&self, mut task: PendingTask) -> Result<(), String> {
        self.update(|tasks| {
            if let Some(old) = tasks
                .iter()
                .find(|t| t.agent == task.agent && t.task_id == task.task_id)
                .filter(|t| !t.session.is_empty())
            {
                task.session = old.session.clone();
            }
            if let Some(old) = tasks
                .iter()
                .find(|t| t.agent == task.agent && t.task_id == task.task_id)
                .filter(|t| !t.push_id.is_empty() && task.push_id.is_empty())
            {
                task.push_id = old.push_id.clone();
                task.push_token = old.push_token.clone();
            }
            tasks.retain(|t| !(t.agent == task.agent && t.task_id == task.task_id));
            tasks.push(task);
        })
    }

    /// Every user's list under `dir`: the user id (from the file name)
    /// and the list. Files that are not lists are skipped.
    pub(crate) fn all(dir: &Path) -> Vec<(String, Self)> {
        let Ok(read) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for entry in read.flatten() {
            let name = entry.file_name();
            let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
                continue;
            };
            let Some(user) = user_of(stem) else {
                continue;
            };
            // Only the file that user's id names (no alias spelling).
            if oscova_core::fs::user_dir_name(&user).as_deref() != Some(stem) {
                continue;
            }
            found.push((user, Self { path: entry.path() }));
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    }

    /// Forgets the task `id` of `agent`.
    pub(crate) fn remove(&self, agent: &str, id: &str) -> Result<(), String> {
        self.update(|tasks| tasks.retain(|t| !(t.agent == agent && t.task_id == id)))
    }
}

/// The user id a file stem spells (`oscova_core::fs::user_dir_name`
/// undone: `%XX` is the byte XX).
fn user_of(stem: &str) -> Option<String> {
    let bytes = stem.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str) -> PendingTask {
        PendingTask {
            agent: "a".into(),
            task_id: id.into(),
            context_id: String::new(),
            state: "TASK_STATE_WORKING".into(),
            session: String::new(),
            push_id: String::new(),
            push_token: String::new(),
        }
    }

    #[test]
    fn every_users_list_is_found_by_its_id_and_the_first_session_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        for user in ["alice", "../bob", ".x y"] {
            let store = PendingStore::new(dir.path(), user).unwrap();
            let mut first = task("1");
            first.session = format!("s-{user}");
            store.put(first).unwrap();
            store.put(task("1")).unwrap();
        }
        std::fs::write(dir.path().join("%zz.json"), "[]").unwrap();
        let all = PendingStore::all(dir.path());
        let users: Vec<&str> = all.iter().map(|(u, _)| u.as_str()).collect();
        assert_eq!(users, ["../bob", ".x y", "alice"]);
        for (user, store) in &all {
            assert_eq!(store.list().unwrap()[0].session, format!("s-{user}"));
        }
    }

    #[test]
    fn tasks_are_kept_per_user_replaced_by_id_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let alice = PendingStore::new(dir.path(), "alice").unwrap();
        let evil = PendingStore::new(dir.path(), "../alice").unwrap();
        assert!(evil.path.starts_with(dir.path()));
        assert_ne!(evil.path, alice.path);
        assert_eq!(alice.list().unwrap(), []);
        alice.put(task("1")).unwrap();
        alice.put(task("1")).unwrap();
        alice.put(task("2")).unwrap();
        assert_eq!(alice.list().unwrap(), [task("1"), task("2")]);
        assert_eq!(evil.list().unwrap(), []);
        alice.remove("a", "1").unwrap();
        assert_eq!(alice.list().unwrap(), [task("2")]);
        for n in 0..MAX_TASKS + 5 {
            alice.put(task(&format!("n{n}"))).unwrap();
        }
        let kept = alice.list().unwrap();
        assert_eq!(kept.len(), MAX_TASKS);
        assert_eq!(kept[MAX_TASKS - 1], task(&format!("n{}", MAX_TASKS + 4)));
    }
}
