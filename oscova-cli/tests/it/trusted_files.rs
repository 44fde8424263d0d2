//! Files the CLI trusts, end to end (issue 24): the config file and the
//! MCP lock file are refused when someone other than their owner and root
//! could have written them (ssh's rule, `oscova_core::fs::read_trusted`),
//! and the lock file is read like every other file: a FIFO or a link to
//! `/dev/zero` is refused at once.

use crate::support;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use support::{oscova, run, temp_dir};

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn plugins(config: &Path) -> (i32, String, String) {
    run(&mut oscova(&[
        "--config",
        config.to_str().unwrap(),
        "plugins",
    ]))
}

/// A config that holds credentials and the commands `[mcp.servers]` runs
/// loaded without a word when anyone could write it, or the directory it
/// is in, or the one its link points into.
#[test]
fn a_config_others_can_write_is_refused() {
    let dir = temp_dir("trusted-config");
    chmod(&dir, 0o700);
    let path = dir.join("config.toml");
    std::fs::write(&path, "default_user = \"alice\"\n").unwrap();
    chmod(&path, 0o600);
    let (code, _, err) = plugins(&path);
    assert_eq!(code, 0, "{err}");

    for mode in [0o666, 0o620] {
        chmod(&path, mode);
        let (code, out, err) = plugins(&path);
        assert_eq!(code, 2, "{mode:o}: {out} {err}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains(&format!("{} is writable by", path.display()))
                && err.contains("chmod go-w"),
            "{err}"
        );
    }
    chmod(&path, 0o600);

    // In a directory anyone may write (no sticky bit), where anyone could
    // replace it.
    let open = dir.join("open");
    std::fs::create_dir(&open).unwrap();
    chmod(&open, 0o777);
    let exposed = open.join("config.toml");
    std::fs::write(&exposed, "default_user = \"mallory\"\n").unwrap();
    chmod(&exposed, 0o600);
    let (code, _, err) = plugins(&exposed);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "{} is writable by its group and others",
            open.display()
        )),
        "{err}"
    );

    // Through a link: followed, and where it leads is checked.
    let link = dir.join("linked.toml");
    symlink(&exposed, &link).unwrap();
    let (code, _, err) = plugins(&link);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "{} is writable by its group and others",
            open.display()
        )),
        "{err}"
    );
    let good = dir.join("good-link.toml");
    symlink("config.toml", &good).unwrap();
    let (code, _, err) = plugins(&good);
    assert_eq!(code, 0, "{err}");

    // The same from the environment and with --json.
    let mut cmd = oscova(&["--json", "plugins"]);
    cmd.env("OSCOVA_CONFIG", &exposed);
    let (code, out, _) = run(&mut cmd);
    assert_eq!(code, 2);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["error"]["kind"], "config", "{doc}");
}

/// The lock file beside the config: `read_to_string` hung on a FIFO, ate
/// memory through a link to `/dev/zero`, and trusted a file anyone could
/// write. Each is now refused without contacting any server, which the
/// diagnostic says.
#[test]
fn a_lock_file_that_is_not_to_be_trusted_loads_no_server() {
    let dir = temp_dir("trusted-lock");
    chmod(&dir, 0o700);
    let config = dir.join("oscova.toml");
    std::fs::write(
        &config,
        "[mcp.servers.notes]\ncommand = \"/nonexistent/notes-server\"\n",
    )
    .unwrap();
    chmod(&config, 0o600);
    let lock = dir.join("oscova.mcp.lock");
    let refused = |needle: &str| {
        let (code, out, err) = plugins(&config);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("MCP lock file"), "{out}");
        assert!(out.contains(needle), "{needle}: {out}");
        assert!(out.contains("no MCP server was loaded"), "{out}");
    };

    let made = std::process::Command::new("mkfifo")
        .arg(&lock)
        .status()
        .unwrap();
    assert!(made.success());
    refused("FIFO");
    std::fs::remove_file(&lock).unwrap();

    symlink("/dev/zero", &lock).unwrap();
    refused("character device");
    std::fs::remove_file(&lock).unwrap();

    std::fs::write(&lock, "{\"version\": 1, \"servers\": {}}\n").unwrap();
    chmod(&lock, 0o666);
    refused("writable by its group and others");
    chmod(&lock, 0o644);
    let (code, out, err) = plugins(&config);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("MCP lock file"), "{out}");
}

/// `max_in_flight_total = 18446744073709551615` panicked `oscova mcp
/// --listen` ("a semaphore may not have more than MAX_PERMITS permits");
/// every numeric key now has a range, and a value outside it is a
/// configuration error naming the key and the range, exit 2.
#[tokio::test]
async fn absurd_numbers_are_configuration_errors() {
    let dir = temp_dir("absurd-limits");
    let huge = u64::MAX;
    let cases = [
        (
            format!("[mcp]\nmax_in_flight_total = {huge}"),
            "mcp.max_in_flight_total is 18446744073709551615; it must be 1 to 2305843009213693951",
        ),
        (
            format!("[mcp]\nmax_in_flight = {huge}"),
            "mcp.max_in_flight is 18446744073709551615; it must be 1 to 2305843009213693951",
        ),
        (
            "[mcp]\nmax_in_flight = 0".to_owned(),
            "mcp.max_in_flight is 0; it must be 1 to",
        ),
        (
            format!("[mcp]\nmax_body_bytes = {huge}"),
            "mcp.max_body_bytes is 18446744073709551615; it must be 1 to 1073741824",
        ),
        (
            format!("[mcp]\nidle_timeout_secs = {huge}"),
            "mcp.idle_timeout_secs is 18446744073709551615; it must be 1 to 86400",
        ),
        (
            format!("[mcp]\nshutdown_grace_secs = {huge}"),
            "mcp.shutdown_grace_secs is 18446744073709551615; it must be 0 to 3600",
        ),
        (
            format!("[mcp]\nscope_cache = {huge}"),
            "mcp.scope_cache is 18446744073709551615; it must be 1 to 1000000",
        ),
        (
            "[speech.hear]\nthreads = 4294967295".to_owned(),
            "speech.hear.threads is 4294967295; it must be 1 to 1024",
        ),
        (
            "[mcp.servers.notes]\ncommand = \"x\"\ntimeout_secs = 1e12".to_owned(),
            "mcp.servers.notes.timeout_secs is 1000000000000; it must be more than 0 and at most 86400",
        ),
        (
            "[mcp.servers.notes]\ncommand = \"x\"\ntimeout_secs = -1".to_owned(),
            "mcp.servers.notes.timeout_secs is -1; it must be more than 0",
        ),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let path = dir.join(format!("config-{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let path = path.to_str().unwrap();
        // `mcp --listen` is where the panic was; `plugins` loads the same.
        for args in [
            &["--config", path, "mcp", "--listen", "127.0.0.1:0"][..],
            &["--config", path, "plugins"][..],
        ] {
            let (code, out, err) = support::run_async(oscova(args), None).await;
            assert_eq!(code, 2, "{text}: {out} {err}");
            assert!(err.contains(needle), "{text}: {err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}
