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

#[cfg(test)]
mod tests {
    //! Running real programs (`cat`, `sh`): stdin, arguments, the working
    //! directory, failures with capped stderr, cancellation and dropping.

    use std::ffi::OsString;
    use std::path::Path;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::process::tests::{policy, temp_path};

    fn process_gone(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            // A killed but not yet reaped child is a zombie: no longer running.
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        }
    }

    async fn wait_for_pid(path: &Path) -> u32 {
        for _ in 0..200 {
            if let Ok(text) = std::fs::read_to_string(path)
                && let Ok(pid) = text.trim().parse()
            {
                return pid;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("child never wrote its pid");
    }

    #[tokio::test]
    async fn stdin_is_passed() {
        let output = policy()
            .run(
                ProcessSpawnRequest::new("cat"),
                Some(b"hello from stdin".to_vec()),
                &CancellationToken::new(),
            )
            .await
            .expect("cat runs");
        assert_eq!(output.stdout, b"hello from stdin");
        assert!(output.stderr.is_empty());
    }

    #[tokio::test]
    async fn large_stdin_does_not_deadlock() {
        // Far beyond a pipe buffer: cat blocks writing stdout unless it is read meanwhile.
        let input: Vec<u8> = (0..4 * 1024 * 1024).map(|i| (i % 251) as u8).collect();
        let output = tokio::time::timeout(
            Duration::from_secs(20),
            policy().run(
                ProcessSpawnRequest::new("cat"),
                Some(input.clone()),
                &CancellationToken::new(),
            ),
        )
        .await
        .expect("no deadlock")
        .expect("cat runs");
        assert_eq!(output.stdout, input);

        // A child that never reads its stdin.
        let output = tokio::time::timeout(
            Duration::from_secs(20),
            policy().run(
                ProcessSpawnRequest::new("sh").args(["-c", "echo done"]),
                Some(input),
                &CancellationToken::new(),
            ),
        )
        .await
        .expect("no deadlock")
        .expect("sh runs");
        assert_eq!(output.stdout, b"done\n");
    }

    #[tokio::test]
    async fn args_are_not_interpreted_by_a_shell() {
        let output = policy()
            .run(
                ProcessSpawnRequest::new("printf").args(["%s|%s", "$HOME; *", "`id`"]),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect("printf runs");
        assert_eq!(output.stdout, b"$HOME; *|`id`");
    }

    #[tokio::test]
    async fn cwd_is_used() {
        let dir = std::env::temp_dir().canonicalize().expect("temp dir");
        let output = policy()
            .run(
                ProcessSpawnRequest::new("pwd").cwd(&dir),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect("pwd runs");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout).trim(),
            dir.to_string_lossy()
        );
    }

    #[tokio::test]
    async fn missing_program_is_not_found() {
        let error = policy()
            .run(
                ProcessSpawnRequest::new("oscova-no-such-program").origin("plugin.x"),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect_err("fails");
        assert!(
            matches!(&error, SpawnError::NotFound { command, .. } if command == "oscova-no-such-program"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "program `oscova-no-such-program` not found (for plugin.x): is it installed and on PATH?"
        );
        assert!(std::error::Error::source(&error).is_some());
    }

    #[tokio::test]
    async fn missing_working_directory_is_reported_as_such() {
        let error = policy()
            .run(
                ProcessSpawnRequest::new("env").cwd("/nonexistent/oscova/dir"),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect_err("fails");
        assert!(matches!(error, SpawnError::WorkingDir { .. }), "{error:?}");
    }

    #[tokio::test]
    async fn non_zero_exit_carries_stderr() {
        let error = policy()
            .run(
                ProcessSpawnRequest::new("sh")
                    .args(["-c", "echo partial; echo '  boom  ' >&2; exit 3"]),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect_err("fails");
        match &error {
            SpawnError::Failed {
                command,
                status,
                stderr,
                ..
            } => {
                assert_eq!(command, "sh");
                assert_eq!(status.code(), Some(3));
                assert_eq!(stderr, "boom");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(error.to_string(), "`sh` failed (exit status: 3): boom");
    }

    #[tokio::test]
    async fn captured_stderr_is_capped_keeping_the_end() {
        let error = policy()
            .run(
                ProcessSpawnRequest::new("sh").args([
                    "-c",
                    "i=0; while [ $i -lt 2000 ]; do printf 'noise ü ' >&2; i=$((i+1)); done; echo FINAL >&2; exit 1",
                ]),
                None,
                &CancellationToken::new(),
            )
            .await
            .expect_err("fails");
        let SpawnError::Failed { stderr, .. } = error else {
            panic!("unexpected {error:?}");
        };
        assert!(stderr.len() <= STDERR_CAP, "{}", stderr.len());
        assert!(stderr.starts_with(TRUNCATION_MARK));
        assert!(stderr.ends_with("FINAL"));
    }

    #[tokio::test]
    async fn cancellation_kills_the_child() {
        let pid_file = temp_path("pid");
        let cancel = CancellationToken::new();
        let started = Instant::now();
        let request = ProcessSpawnRequest::new("sh").args([
            OsString::from("-c"),
            OsString::from("echo $$ > \"$1\"; exec sleep 30"),
            OsString::from("sh"),
            pid_file.clone().into_os_string(),
        ]);
        let policy = policy();
        let (result, pid) = tokio::join!(policy.run(request, None, &cancel), async {
            let pid = wait_for_pid(&pid_file).await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            cancel.cancel();
            pid
        });
        let elapsed = started.elapsed();
        let _ = std::fs::remove_file(&pid_file);
        assert!(
            matches!(result, Err(SpawnError::Cancelled { .. })),
            "{result:?}"
        );
        assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "child {pid} still exists"
        );
    }

    #[tokio::test]
    async fn already_cancelled_starts_nothing() {
        let marker = temp_path("cancel-marker");
        let cancel = CancellationToken::new();
        cancel.cancel();
        let result = policy()
            .run(
                ProcessSpawnRequest::new("touch").arg(&marker),
                None,
                &cancel,
            )
            .await;
        assert!(matches!(result, Err(SpawnError::Cancelled { .. })));
        assert!(!marker.exists());
    }

    #[tokio::test]
    async fn dropping_the_run_kills_the_child() {
        let pid_file = temp_path("drop-pid");
        let request = ProcessSpawnRequest::new("sh").args([
            OsString::from("-c"),
            OsString::from("echo $$ > \"$1\"; exec sleep 30"),
            OsString::from("sh"),
            pid_file.clone().into_os_string(),
        ]);
        let policy = policy();
        let cancel = CancellationToken::new();
        let (timed_out, pid) = tokio::join!(
            tokio::time::timeout(
                Duration::from_millis(500),
                policy.run(request, None, &cancel)
            ),
            wait_for_pid(&pid_file),
        );
        let _ = std::fs::remove_file(&pid_file);
        assert!(timed_out.is_err());
        let deadline = Instant::now() + Duration::from_secs(2);
        while !process_gone(pid) {
            assert!(Instant::now() < deadline, "child {pid} survived the drop");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
