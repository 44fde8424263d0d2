//! [`SqliteFile`]: one SQLite database file shared by the stores that keep
//! their tables in it, with group commit.
//!
//! Rules:
//!
//! - **One writer per file per process.** Opening a path that this
//!   process has open already (the same file by its canonical path) hands
//!   back the same [`SqliteFile`], so the session store and the A2A task
//!   store in the sessions' file write through one connection and never
//!   wait on each other's lock. The writer is a thread of its own that
//!   owns that connection; it ends when the last handle is dropped.
//! - **Group commit.** The writer takes every write waiting in its queue
//!   (up to [`MAX_BATCH`]), runs them in one `BEGIN IMMEDIATE ...
//!   COMMIT`, then answers each caller: concurrent writers share one
//!   transaction and one sync. A write waits for nothing but the writes
//!   already queued: the batch is whatever queued while the previous
//!   commit synced, so a lone write commits at once.
//! - **Durable before answered.** The file is in WAL mode with
//!   `synchronous=FULL`: [`SqliteFile::write`] returns only after the
//!   `COMMIT` that holds its changes returned, which is after the
//!   write-ahead log was synced, so what it wrote survives a crash of the
//!   process or a power cut. This is never weakened for speed.
//! - **One failure fails one caller.** Each write runs inside a savepoint
//!   of the shared transaction; a write whose work returns an error (a
//!   constraint, a refused leaf) is rolled back to its savepoint and only
//!   its caller sees the error; the others commit. When the transaction
//!   itself fails (`BEGIN`, `COMMIT`, a savepoint, or SQLite rolled the
//!   whole transaction back on an I/O error), every caller of the batch
//!   gets [`SqliteFileError::Batch`] and none of the batch is kept.
//! - **Atomic per write.** A write's work sees the database as the writes
//!   before it in the batch left it, and is kept whole or not at all.
//! - **Reads do not queue behind writes.** [`SqliteFile::read`] runs on a
//!   connection of its own (a small pool, WAL readers) on tokio's blocking
//!   threads; it sees every write whose caller was answered.
//! - **Other processes** may open the file too; the writer's `BEGIN
//!   IMMEDIATE` waits up to [`BUSY_TIMEOUT`] for theirs.
//! - **Private.** The file holds conversations, and the A2A tasks and
//!   webhook credentials beside them, so it is its owner's alone
//!   (`oscova_core::fs`'s rules for private files): a missing folder is
//!   made 0700 (each missing one on the way), a missing file is created
//!   0600 before SQLite opens it, and SQLite gives the `-wal`, `-shm` and
//!   `-journal` files it makes beside it the file's own mode. A file, or a
//!   side file left by an earlier run, that its group or others have any
//!   permission on is refused ([`SqliteFileError::NotPrivate`], naming it
//!   and `chmod go-rwx`), not repaired: as the CLI refuses a config file
//!   others can write, and ssh a private key others can read, since what
//!   was open may have been read and the operator is the one to know. A
//!   file that is not a regular file (a FIFO, a device) is refused too. An
//!   existing folder is left as it is. Checked at every
//!   [`SqliteFile::open`].

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};
use std::time::Duration;

use rusqlite::Connection;
use tokio::sync::oneshot;

/// How long the writer (and a reader) waits for another process's lock.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The most writes one transaction holds; more wait for the next one.
pub const MAX_BATCH: usize = 512;

/// Idle read connections kept per file.
const IDLE_READERS: usize = 8;

/// Why the file, or the batch a write was in, failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqliteFileError {
    /// The folder of the file could not be created.
    #[error("cannot create the folder of {path}: {source}")]
    Folder {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file, or a file SQLite keeps beside it (`-wal`, `-shm`,
    /// `-journal`), is open to its group or others, or is not a regular
    /// file (see the module rules): refused, nothing opened.
    #[error("{}", not_private(.path, .source))]
    NotPrivate {
        /// The database file.
        path: PathBuf,
        /// Why, naming the file at fault
        /// ([`FileError::Exposed`](oscova_core::fs::FileError::Exposed)
        /// for one open to others).
        #[source]
        source: oscova_core::fs::FileError,
    },
    /// The file could not be opened or set up.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: rusqlite::Error,
    },
    /// The shared transaction failed: nothing of the batch was kept.
    #[error("the transaction failed and nothing of it was kept: {0}")]
    Batch(#[source] Arc<rusqlite::Error>),
    /// The writer thread is gone, or a read's thread ended early.
    #[error("the database's {0} ended before it answered")]
    Closed(&'static str),
}

/// The refusal's text, naming the database once.
fn not_private(path: &Path, source: &oscova_core::fs::FileError) -> String {
    match source {
        // It names the file at fault (the database or a side file).
        oscova_core::fs::FileError::Exposed { .. } => format!("refusing the database: {source}"),
        _ => format!("refusing the database {}: {source}", path.display()),
    }
}

/// A write waiting in the writer's queue.
trait Job: Send {
    /// Runs the work; returns whether it succeeded and what to answer
    /// once the transaction ended.
    fn run(self: Box<Self>, conn: &Connection) -> (bool, Box<dyn Reply>);
    /// Answers without running: the transaction failed first.
    fn refuse(self: Box<Self>, error: SqliteFileError);
}

/// The answer of a write that ran, sent once its transaction ended.
trait Reply: Send {
    fn send(self: Box<Self>, committed: Result<(), Arc<rusqlite::Error>>);
}

struct Write<F, T, E> {
    work: F,
    reply: oneshot::Sender<Result<T, E>>,
}

struct Answer<T, E> {
    outcome: Result<T, E>,
    reply: oneshot::Sender<Result<T, E>>,
}

impl<F, T, E> Job for Write<F, T, E>
where
    F: FnOnce(&Connection) -> Result<T, E> + Send + 'static,
    T: Send + 'static,
    E: From<SqliteFileError> + Send + 'static,
{
    fn run(self: Box<Self>, conn: &Connection) -> (bool, Box<dyn Reply>) {
        let Write { work, reply } = *self;
        let outcome = work(conn);
        (outcome.is_ok(), Box::new(Answer { outcome, reply }))
    }

    fn refuse(self: Box<Self>, error: SqliteFileError) {
        let _ = self.reply.send(Err(E::from(error)));
    }
}

impl<T, E> Reply for Answer<T, E>
where
    T: Send + 'static,
    E: From<SqliteFileError> + Send + 'static,
{
    fn send(self: Box<Self>, committed: Result<(), Arc<rusqlite::Error>>) {
        let result = match (self.outcome, committed) {
            (Err(error), _) => Err(error),
            (Ok(value), Ok(())) => Ok(value),
            (Ok(_), Err(error)) => Err(E::from(SqliteFileError::Batch(error))),
        };
        let _ = self.reply.send(result);
    }
}

struct Shared {
    path: PathBuf,
    jobs: Sender<Box<dyn Job>>,
    readers: Mutex<Vec<Connection>>,
    /// Transactions the writer committed.
    commits: Arc<AtomicU64>,
}

/// The files open in this process, by canonical path.
static OPEN: LazyLock<Mutex<HashMap<PathBuf, Weak<Shared>>>> = LazyLock::new(Mutex::default);

/// One SQLite file, its writer thread and its readers (see the module
/// rules). Cloning shares them.
///
/// ```
/// use oscova_agent::session::store::{SqliteFile, SqliteFileError};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let file = SqliteFile::open(dir.path().join("data.db")).await.unwrap();
/// file.write(|conn| {
///     conn.execute_batch("CREATE TABLE IF NOT EXISTS notes (text TEXT NOT NULL)")?;
///     conn.execute("INSERT INTO notes (text) VALUES (?1)", ["kept"])?;
///     Ok::<_, Error>(())
/// })
/// .await
/// .unwrap();
/// let count: i64 = file
///     .read(|conn| Ok::<_, Error>(conn.query_row("SELECT count(*) FROM notes", [], |r| r.get(0))?))
///     .await
///     .unwrap();
/// assert_eq!(count, 1);
///
/// // The caller's error type takes the file's errors and its own.
/// #[derive(Debug)]
/// enum Error { File(SqliteFileError), Sql(rusqlite::Error) }
/// impl From<SqliteFileError> for Error { fn from(e: SqliteFileError) -> Self { Self::File(e) } }
/// impl From<rusqlite::Error> for Error { fn from(e: rusqlite::Error) -> Self { Self::Sql(e) } }
/// # });
/// ```
#[derive(Clone)]
pub struct SqliteFile {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for SqliteFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteFile")
            .field("path", &self.shared.path)
            .finish()
    }
}

impl SqliteFile {
    /// Opens (or creates) the file at `path` and its folder, or hands back
    /// the one this process has open there.
    ///
    /// A folder it makes is mode 0700 and the file it creates 0600; an
    /// existing file, or its `-wal`, `-shm` or `-journal` file, that its
    /// group or others have any permission on is refused, not repaired
    /// (see the module rules).
    ///
    /// # Errors
    ///
    /// [`SqliteFileError::Folder`], [`SqliteFileError::NotPrivate`],
    /// [`SqliteFileError::Open`].
    pub async fn open(path: impl Into<PathBuf>) -> Result<Self, SqliteFileError> {
        let path = path.into();
        let shared = tokio::task::spawn_blocking(move || open_shared(path))
            .await
            .map_err(|_| SqliteFileError::Closed("opening thread"))??;
        Ok(Self { shared })
    }

    /// The file's path as it was first opened.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// How many transactions the writer committed so far: with group
    /// commit, fewer than the writes it ran when writers were concurrent.
    pub fn commits(&self) -> u64 {
        self.shared.commits.load(Ordering::Acquire)
    }

    /// Runs `work` on the writer's connection inside the shared
    /// transaction and returns its result once that transaction committed
    /// (see the module rules): an `Ok` is on disk. An `Err` from `work`
    /// undoes what `work` did, and only that.
    pub async fn write<T, E>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<SqliteFileError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        self.shared
            .jobs
            .send(Box::new(Write { work, reply }))
            .map_err(|_| SqliteFileError::Closed("writer"))?;
        answer
            .await
            .map_err(|_| SqliteFileError::Closed("writer"))?
    }

    /// Runs `work` on a read connection on a blocking thread; it sees
    /// every write whose caller was answered. For a consistent view over
    /// several statements, open a transaction in `work`
    /// (`Connection::unchecked_transaction`).
    pub async fn read<T, E>(
        &self,
        work: impl FnOnce(&Connection) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<SqliteFileError> + Send + 'static,
    {
        let shared = self.shared.clone();
        tokio::task::spawn_blocking(move || {
            let conn = shared.reader()?;
            let outcome = work(&conn);
            shared.give_back(conn);
            outcome
        })
        .await
        .map_err(|_| SqliteFileError::Closed("reading thread"))?
    }
}

impl Shared {
    fn reader(&self) -> Result<Connection, SqliteFileError> {
        let idle = self
            .readers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        match idle {
            Some(conn) => Ok(conn),
            None => connect(&self.path, false),
        }
    }

    fn give_back(&self, conn: Connection) {
        // A connection left inside a transaction by its work is dropped,
        // which rolls that back; only clean ones are reused.
        if !conn.is_autocommit() {
            return;
        }
        let mut idle = self.readers.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < IDLE_READERS {
            idle.push(conn);
        }
    }
}

fn connect(path: &Path, writer: bool) -> Result<Connection, SqliteFileError> {
    let open = |source| SqliteFileError::Open {
        path: path.to_owned(),
        source,
    };
    let conn = Connection::open(path).map_err(open)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(open)?;
    if writer {
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(open)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(open)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open)?;
    } else {
        conn.pragma_update(None, "query_only", "ON").map_err(open)?;
    }
    Ok(conn)
}

/// The files SQLite may keep beside a database (its journal in rollback
/// mode, the write-ahead log and its index in WAL mode).
const SIDE_FILES: [&str; 3] = ["-journal", "-wal", "-shm"];

/// Makes the folder (0700) and the file (0600) when missing, and refuses a
/// file or side file that is not private (see the module rules).
fn make_private(path: &Path) -> Result<(), SqliteFileError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        oscova_core::fs::create_private_dir(dir).map_err(|source| SqliteFileError::Folder {
            path: path.to_owned(),
            source,
        })?;
    }
    let refused = |source| SqliteFileError::NotPrivate {
        path: path.to_owned(),
        source,
    };
    oscova_core::fs::ensure_private(path).map_err(refused)?;
    for suffix in SIDE_FILES {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        oscova_core::fs::check_private(Path::new(&side)).map_err(refused)?;
    }
    Ok(())
}

fn open_shared(path: PathBuf) -> Result<Arc<Shared>, SqliteFileError> {
    // Before SQLite opens it: SQLite would create it with the umask's mode.
    make_private(&path)?;
    // The file exists now, so it has a canonical path.
    let conn = connect(&path, true)?;
    let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    let mut open = OPEN.lock().unwrap_or_else(PoisonError::into_inner);
    open.retain(|_, shared| shared.strong_count() > 0);
    if let Some(shared) = open.get(&key).and_then(Weak::upgrade) {
        return Ok(shared);
    }
    let (jobs, queue) = std::sync::mpsc::channel();
    let commits = Arc::new(AtomicU64::new(0));
    let counted = commits.clone();
    std::thread::Builder::new()
        .name("oscova-sqlite-writer".into())
        .spawn(move || writer(conn, queue, &counted))
        .map_err(|_| SqliteFileError::Closed("writer"))?;
    let shared = Arc::new(Shared {
        path,
        jobs,
        readers: Mutex::default(),
        commits,
    });
    open.insert(key, Arc::downgrade(&shared));
    Ok(shared)
}

/// The writer thread: one batch after the other until every handle is
/// gone.
fn writer(conn: Connection, queue: Receiver<Box<dyn Job>>, commits: &AtomicU64) {
    while let Ok(first) = queue.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        commit(&conn, batch, commits);
    }
}

/// Runs `batch` in one transaction, each write in its savepoint, and
/// answers every caller once the transaction ended (counted in `commits`
/// first when it committed).
fn commit(conn: &Connection, batch: Vec<Box<dyn Job>>, commits: &AtomicU64) {
    if let Err(error) = conn.execute_batch("BEGIN IMMEDIATE") {
        let error = Arc::new(error);
        for job in batch {
            job.refuse(SqliteFileError::Batch(error.clone()));
        }
        return;
    }
    let mut replies = Vec::with_capacity(batch.len());
    let mut broken: Option<Arc<rusqlite::Error>> = None;
    for job in batch {
        if let Some(error) = &broken {
            job.refuse(SqliteFileError::Batch(error.clone()));
            continue;
        }
        if let Err(error) = conn.execute_batch("SAVEPOINT oscova_write") {
            let error = Arc::new(error);
            job.refuse(SqliteFileError::Batch(error.clone()));
            broken = Some(error);
            continue;
        }
        // A panicking work drops its caller's channel (the caller sees
        // `Closed`) and is undone like a failed one.
        let ran = std::panic::catch_unwind(AssertUnwindSafe(|| job.run(conn)));
        let ok = match ran {
            Ok((ok, reply)) => {
                replies.push(reply);
                ok
            }
            Err(_) => false,
        };
        let end = if ok {
            "RELEASE oscova_write"
        } else {
            "ROLLBACK TO oscova_write; RELEASE oscova_write"
        };
        if let Err(error) = conn.execute_batch(end) {
            broken = Some(Arc::new(error));
        } else if conn.is_autocommit() {
            // SQLite ended the transaction itself (an I/O error, a full
            // disk): what ran before is gone, so nothing of it is told.
            broken = Some(Arc::new(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ABORT),
                Some("the transaction was rolled back by SQLite".into()),
            )));
        }
    }
    let committed = match broken {
        None => conn.execute_batch("COMMIT").map_err(Arc::new),
        Some(error) => Err(error),
    };
    if committed.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    if committed.is_ok() {
        commits.fetch_add(1, Ordering::AcqRel);
    }
    for reply in replies {
        reply.send(committed.clone());
    }
}
