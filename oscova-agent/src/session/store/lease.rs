//! [`SessionLease`]: one process at a time runs a session.
//!
//! Rules: the lease is the store's ([`SessionStore::lease`]), on its clock,
//! taken for [`LEASE_TTL`] (or the length given) and renewed every third
//! of it while the guard lives, so it stays held as long as its process
//! runs and lapses at most one length after that process stopped (a
//! `kill -9`, a crash, a lost machine). Dropping the guard stops the
//! renewal and gives the lease back. A holder is named
//! `PLACE:PID:RANDOM`, its place this kernel's boot and PID namespace
//! (`/proc/sys/kernel/random/boot_id`, `/proc/self/ns/pid`): a lease held
//! by a process of the same place that no longer runs (no `/proc/PID`) is
//! taken over at once ([`SessionStore::take_over`], only while that holder
//! still has it) rather than waited out, so a `kill -9`'d chat's next start
//! on the same machine does not wait; elsewhere, or where the place cannot
//! be read, a dead holder's lease lapses. A renewal that fails (the store
//! unreachable, or the lease taken over after a pause longer than its
//! length) is logged and ends the renewal; [`SessionLease::lost`] says so.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use oscova_core::UserInfo;
use tokio::sync::oneshot;

use super::SessionStore;
use crate::session::error::SessionError;
use crate::session::id::SessionId;

/// How long a lease lasts unless renewed: 15 seconds, renewed every 5.
pub const LEASE_TTL: Duration = Duration::from_secs(15);

/// A session's lease, held while this value lives (see the module rules).
///
/// ```
/// use std::sync::Arc;
/// use oscova_agent::session::{LEASE_TTL, MemoryStore, SessionError, SessionLease, SessionStore};
/// use oscova_core::UserInfo;
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
/// let alice = UserInfo::new("alice");
/// let id = store.create(&alice, "notes").await.unwrap().id;
/// let held = SessionLease::take(store.clone(), &alice, &id, LEASE_TTL).await.unwrap();
/// let second = SessionLease::take(store.clone(), &alice, &id, LEASE_TTL).await;
/// assert!(matches!(second, Err(SessionError::Leased { .. })));
/// drop(held);
/// # });
/// ```
#[derive(Debug)]
pub struct SessionLease {
    holder: String,
    stop: Option<oneshot::Sender<()>>,
    lost: Arc<AtomicBool>,
}

impl SessionLease {
    /// Takes the user's session `id`'s lease for `ttl` (at least a second)
    /// and keeps renewing it on the current Tokio runtime until dropped.
    ///
    /// # Errors
    ///
    /// [`SessionError::Leased`] when another holder's lease runs;
    /// [`SessionError::NotFound`] for a session not the user's; the
    /// store's error otherwise.
    pub async fn take(
        store: Arc<dyn SessionStore>,
        user: &UserInfo,
        id: &SessionId,
        ttl: Duration,
    ) -> Result<Self, SessionError> {
        let ttl = ttl.max(Duration::from_secs(1));
        // A session id is a random id: the holder's name, never reused.
        let place = place().unwrap_or_else(|| "elsewhere".to_owned());
        let holder = format!("{place}:{}:{}", std::process::id(), SessionId::random()?);
        match store.lease(user, id, &holder, ttl).await {
            Err(SessionError::Leased { holder: other, .. }) if gone(&other) => {
                store.take_over(user, id, &other, &holder, ttl).await?;
            }
            taken => taken?,
        }
        let (stop, mut stopped) = oneshot::channel();
        let lost = Arc::new(AtomicBool::new(false));
        let (user, id, name, flag) = (user.clone(), id.clone(), holder.clone(), lost.clone());
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut stopped => break,
                    () = tokio::time::sleep(ttl / 3) => {}
                }
                if let Err(error) = store.lease(&user, &id, &name, ttl).await {
                    tracing::warn!(session = %id, %error, "the session's lease could not be renewed");
                    flag.store(true, Ordering::Release);
                    return;
                }
            }
            if let Err(error) = store.release(&id, &name).await {
                tracing::warn!(session = %id, %error, "the session's lease could not be given back; it lapses");
            }
        });
        Ok(Self {
            holder,
            stop: Some(stop),
            lost,
        })
    }

    /// Whether a renewal failed: the lease may be another's now.
    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// This holder's name in the store (`PLACE:PID:RANDOM`).
    pub fn holder(&self) -> &str {
        &self.holder
    }
}

/// This process's place: its kernel's boot and its PID namespace, where
/// a process id names one process (`None` where they cannot be read).
fn place() -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let namespace = std::fs::read_link("/proc/self/ns/pid").ok()?;
    let inode: String = namespace
        .to_string_lossy()
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    let boot = boot.trim();
    (!boot.is_empty() && !inode.is_empty()).then(|| format!("{boot}.{inode}"))
}

/// Whether `holder` is a process of this place that no longer runs.
fn gone(holder: &str) -> bool {
    let mut parts = holder.rsplitn(3, ':');
    let (Some(_), Some(pid), Some(at)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    place().is_some_and(|here| here == at)
        && pid != std::process::id()
        && !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

impl Drop for SessionLease {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
