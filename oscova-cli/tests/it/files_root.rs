//! Where the `oscova` binary roots the files plugin: `OSCOVA_FILES_ROOT`,
//! else the config's `files_root` (relative to the config file), else the
//! platform data directory; never the working directory, which for
//! `oscova mcp` is wherever the client started it.

use crate::support;

use std::path::Path;

use support::{oscova, run, temp_dir};

const WRITE: &str = "oscova_files__files__write";

/// Writes `note.txt` as `user` from the working directory `cwd`, with the
/// config and extra variables given.
fn write_note(cwd: &Path, config: Option<&Path>, env: &[(&str, &Path)], user: &str) {
    let config = config.map(|c| c.to_str().unwrap().to_owned());
    let mut args = vec![];
    if let Some(config) = &config {
        args.extend(["--config", config.as_str()]);
    }
    args.extend([
        "tools",
        "call",
        WRITE,
        "--yes",
        "--user",
        user,
        "--args",
        r#"{"path": "note.txt", "content": "milk\n"}"#,
    ]);
    let mut cmd = oscova(&args);
    cmd.current_dir(cwd);
    for (name, value) in env {
        cmd.env(name, value);
    }
    let (code, out, err) = run(&mut cmd);
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
}

#[test]
fn the_default_root_is_the_platform_data_directory() {
    let cwd = temp_dir("files-cwd");
    let data = temp_dir("files-data");
    write_note(&cwd, None, &[("XDG_DATA_HOME", &data)], "alice");
    let note = data.join("oscova/files/alice/note.txt");
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "milk\n");
    assert!(
        !cwd.join("oscova-files").exists(),
        "nothing lands in the working directory"
    );
}

#[test]
fn the_config_names_the_root_relative_to_itself() {
    let cwd = temp_dir("files-cwd");
    let dir = temp_dir("files-config");
    let config = dir.join("config.toml");
    std::fs::write(&config, "files_root = \"my files\"\n").unwrap();
    write_note(&cwd, Some(&config), &[], "bob");
    let note = dir.join("my files/bob/note.txt");
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "milk\n");
    assert!(!cwd.join("my files").exists());
}

#[test]
fn the_environment_wins_over_the_config() {
    let cwd = temp_dir("files-cwd");
    let dir = temp_dir("files-config");
    let config = dir.join("config.toml");
    std::fs::write(&config, "files_root = \"/nonexistent/never\"\n").unwrap();
    let root = temp_dir("files-env");
    write_note(
        &cwd,
        Some(&config),
        &[("OSCOVA_FILES_ROOT", &root)],
        "carol",
    );
    assert_eq!(
        std::fs::read_to_string(root.join("carol/note.txt")).unwrap(),
        "milk\n"
    );
}
