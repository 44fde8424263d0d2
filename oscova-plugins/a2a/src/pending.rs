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
//!
//! The lists hold push tokens (the secret an agent sends with each push),
//! so they are private, by `oscova_core::fs`'s rules for private files: a
//! missing `DIR` is made 0700 (each missing folder on the way), every list
//! is written 0600 (its temporary file is created so, and the rename
//! keeps it), and a list its group or others have any permission on is
//! refused, not repaired, by every read and change (the error names it
//! and `chmod go-rwx`): as the CLI refuses a config file others can write,
//! since a token that was open may have been read, and the operator is the
//! one to know. An existing `DIR` is left as it is.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use oscova_core::fs::FileError;
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

#[cfg(test)]
thread_local! {
    /// How many times this thread read a list or the directory (tests:
    /// what a call touched).
    pub(crate) static READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

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
        #[cfg(test)]
        READS.with(|n| n.set(n.get() + 1));
        let bytes = match oscova_core::fs::read_private(&self.path, MAX_FILE_BYTES) {
            Ok(bytes) => bytes,
            Err(FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Vec::new());
            }
            // The refusal names the file itself.
            Err(e @ FileError::Exposed { .. }) => return Err(e.to_string()),
            Err(e) => return Err(format!("{}: {e}", self.path.display())),
        };
        serde_json::from_slice(&bytes).map_err(|e| format!("{}: {e}", self.path.display()))
    }

    /// Applies `change` to the list and writes it back. A list that cannot
    /// be read as one starts again empty; one open to others is refused as
    /// it is (see the module rules), and the change with it.
    pub(crate) fn update(&self, change: impl FnOnce(&mut Vec<PendingTask>)) -> Result<(), String> {
        let _guard = LOCK
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Err(e @ FileError::Exposed { .. }) = oscova_core::fs::check_private(&self.path) {
            return Err(e.to_string());
        }
        let mut tasks = self.list().unwrap_or_default();
        change(&mut tasks);
        if tasks.len() > MAX_TASKS {
            let extra = tasks.len() - MAX_TASKS;
            tasks.drain(..extra);
        }
        let shown = |e: std::io::Error| format!("{}: {e}", self.path.display());
        if let Some(dir) = self.path.parent() {
            oscova_core::fs::create_private_dir(dir).map_err(shown)?;
        }
        let text = serde_json::to_vec_pretty(&tasks).map_err(|e| e.to_string())?;
        let temp = self
            .path
            .with_extension(format!("json.{}.tmp", std::process::id()));
        // Created 0600 (one a crash left is made so before it is emptied),
        // so the list the rename puts in place is too.
        oscova_core::fs::create_private(&temp)
            .map_err(std::io::Error::from)
            .and_then(|mut file| file.write_all(&text))
            .map_err(shown)?;
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
        #[cfg(test)]
        READS.with(|n| n.set(n.get() + 1));
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

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[cfg(unix)]
    fn chmod(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn pushed(id: &str) -> PendingTask {
        PendingTask {
            push_id: format!("hook-{id}"),
            push_token: format!("token-{id}"),
            ..task(id)
        }
    }

    /// Issue 36: a list (push tokens in it) was written 0644 in a 0755
    /// folder under the usual umask. Under umask 000, the worst, every
    /// folder made is 0700 and the list 0600; a temporary file a crash
    /// left open to others does not make the list open.
    #[cfg(unix)]
    #[test]
    fn lists_are_private_whatever_the_umask() {
        oscova_test_support::umask::run(
            "pending::tests::lists_are_private_whatever_the_umask",
            0o000,
            || {
                let base = tempfile::tempdir().unwrap();
                let dir = base.path().join("data/oscova/a2a");
                let alice = PendingStore::new(&dir, "alice").unwrap();
                alice.put(pushed("1")).unwrap();
                for folder in ["data", "data/oscova", "data/oscova/a2a"] {
                    assert_eq!(mode(&base.path().join(folder)), 0o700, "{folder}");
                }
                assert_eq!(mode(&alice.path), 0o600);
                let temp = alice
                    .path
                    .with_extension(format!("json.{}.tmp", std::process::id()));
                std::fs::write(&temp, "left by a crash").unwrap();
                chmod(&temp, 0o666);
                alice.put(pushed("2")).unwrap();
                assert_eq!(mode(&alice.path), 0o600);
                assert_eq!(alice.list().unwrap(), [pushed("1"), pushed("2")]);
                assert!(!temp.exists());
            },
        );
    }

    /// A list open to others (an earlier version's) is refused by reads
    /// and changes alike, naming it and the fix; its mode and its tasks
    /// stay as they were until the operator runs the `chmod`.
    #[cfg(unix)]
    #[test]
    fn an_open_list_is_refused_not_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let alice = PendingStore::new(dir.path(), "alice").unwrap();
        alice.put(pushed("1")).unwrap();
        let before = std::fs::read(&alice.path).unwrap();
        for open in [0o644, 0o640, 0o604] {
            chmod(&alice.path, open);
            for refused in [
                alice.list().map(drop),
                alice.put(pushed("2")),
                alice.remove("a", "1"),
            ] {
                let text = refused.unwrap_err();
                assert!(
                    text.starts_with(&alice.path.display().to_string())
                        && text.contains(&format!("mode {open:04o}"))
                        && text.contains("chmod go-rwx"),
                    "{text}"
                );
            }
            assert_eq!(mode(&alice.path), open, "refused, not repaired");
            assert_eq!(std::fs::read(&alice.path).unwrap(), before);
        }
        chmod(&alice.path, 0o600);
        alice.put(pushed("2")).unwrap();
        assert_eq!(alice.list().unwrap(), [pushed("1"), pushed("2")]);
    }
}
