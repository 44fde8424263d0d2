//! Starting a prepared process and collecting what it writes.
//!
//! Stdin is written while stdout and stderr are read, so no pipe can fill up and deadlock
//! the run; cancellation and dropping the future both kill the child; a failure keeps
//! the end of stderr, capped, because programs print their decisive error last.

use std::io;
use std::process::Stdio;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::ChildStdin;
use tokio_util::sync::CancellationToken;

use super::{ProcessSpawnContext, ProcessSpawnPolicy, ProcessSpawnRequest, SpawnError};

/// How much of a failed process's stderr an error keeps; enough for a diagnosis, small
/// enough to sit in a log line or a model message.
pub(super) const STDERR_CAP: usize = 4 * 1024;

/// Marks that the start of a captured stderr was cut off.
pub(super) const TRUNCATION_MARK: &str = "…";

/// What a successful process wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessOutput {
    /// Everything written to stdout.
    pub stdout: Vec<u8>,
    /// Everything written to stderr.
    pub stderr: Vec<u8>,
}

impl ProcessSpawnPolicy {
    /// Prepares and starts the process, writes `stdin` to it if given, and waits for it to
    /// exit, returning what it wrote to stdout and stderr.
    ///
    /// - Cancelling `cancel` kills the child and returns [`SpawnError::Cancelled`]
    ///   promptly.
    /// - A non-zero exit is [`SpawnError::Failed`], carrying the captured stderr, trimmed
    ///   and capped at 4 KiB.
    /// - A missing program is [`SpawnError::NotFound`], a missing working directory
    ///   [`SpawnError::WorkingDir`], other I/O errors [`SpawnError::Io`] with their source.
    ///
    /// Without `stdin` the child's stdin is the null device. Stdin is written while
    /// stdout and stderr are read, so a child that answers before reading everything, or
    /// never reads at all, cannot deadlock the run; a child that exits without reading is
    /// not an error in itself (its exit status decides). A token that is already cancelled
    /// starts nothing. Dropping the returned future also kills the child.
    ///
    /// Output is collected in memory without a limit; stderr is only capped in
    /// [`SpawnError::Failed`], where the last 4 KiB are kept because programs print their
    /// decisive error last.
    pub async fn run(
        &self,
        request: ProcessSpawnRequest,
        stdin: Option<Vec<u8>>,
        cancel: &CancellationToken,
    ) -> Result<ProcessOutput, SpawnError> {
        let context = self.prepare(request)?;
        if cancel.is_cancelled() {
            return Err(context.cancelled());
        }

        let mut command = context.to_command();
        if stdin.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command
            .spawn()
            .map_err(|source| context.spawn_error(source))?;
        let stdin_pipe = child.stdin.take();
        let stdout_pipe = child.stdout.take();
        let stderr_pipe = child.stderr.take();

        let finished = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            outcome = async {
                tokio::join!(
                    write_stdin(stdin_pipe, stdin),
                    read_pipe(stdout_pipe),
                    read_pipe(stderr_pipe),
                    child.wait(),
                )
            } => Some(outcome),
        };

        let Some((written, stdout, stderr, status)) = finished else {
            // An error here means the child already exited; either way it is gone and
            // reaped, which is all cancellation promises.
            let _already_gone = child.kill().await;
            return Err(context.cancelled());
        };

        let status = status.map_err(|source| context.io_error(source))?;
        let stderr = stderr.map_err(|source| context.io_error(source))?;
        if !status.success() {
            return Err(SpawnError::Failed {
                command: context.command_name(),
                origin: context.origin.clone(),
                status,
                stderr: stderr_summary(&stderr),
            });
        }
        let stdout = stdout.map_err(|source| context.io_error(source))?;
        written.map_err(|source| context.io_error(source))?;
        Ok(ProcessOutput { stdout, stderr })
    }
}

impl ProcessSpawnContext {
    fn command_name(&self) -> String {
        self.command.to_string_lossy().into_owned()
    }

    fn cancelled(&self) -> SpawnError {
        SpawnError::Cancelled {
            command: self.command_name(),
            origin: self.origin.clone(),
        }
    }

    fn io_error(&self, source: io::Error) -> SpawnError {
        SpawnError::Io {
            command: self.command_name(),
            origin: self.origin.clone(),
            source,
        }
    }

    fn spawn_error(&self, source: io::Error) -> SpawnError {
        if source.kind() != io::ErrorKind::NotFound {
            return self.io_error(source);
        }
        // A missing working directory also fails the spawn with "not found"; blaming the
        // program then would send the user looking in the wrong place.
        if let Some(dir) = &self.cwd
            && let Err(dir_error) = std::fs::metadata(dir)
        {
            return SpawnError::WorkingDir {
                command: self.command_name(),
                path: dir.clone(),
                origin: self.origin.clone(),
                source: dir_error,
            };
        }
        SpawnError::NotFound {
            command: self.command_name(),
            origin: self.origin.clone(),
            source,
        }
    }
}

async fn write_stdin(pipe: Option<ChildStdin>, bytes: Option<Vec<u8>>) -> io::Result<()> {
    let (Some(mut pipe), Some(bytes)) = (pipe, bytes) else {
        return Ok(());
    };
    match pipe.write_all(&bytes).await {
        // The child closed its stdin early; its exit status says whether that was fine.
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
    // Dropping the pipe here closes it, so the child sees end of input.
}

async fn read_pipe<R: AsyncRead + Unpin>(pipe: Option<R>) -> io::Result<Vec<u8>> {
    let mut buffer = Vec::new();
    if let Some(mut pipe) = pipe {
        pipe.read_to_end(&mut buffer).await?;
    }
    Ok(buffer)
}

fn stderr_summary(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim();
    if text.len() <= STDERR_CAP {
        return text.to_owned();
    }
    // The tail matters here (the error is at the end): keep the last bytes.
    let mut start = text.len() - (STDERR_CAP - TRUNCATION_MARK.len());
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("{TRUNCATION_MARK}{}", text.get(start..).unwrap_or_default())
}
