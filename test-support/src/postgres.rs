//! A throwaway Postgres cluster for one test: `initdb` into a temporary
//! folder, a server on a loopback port, stopped and removed on drop.
//!
//! Rules it keeps:
//! - Nothing outside the temporary folder is touched: the data, the log
//!   and the unix socket are inside it; the server listens on 127.0.0.1
//!   only, on a port the operating system picked.
//! - Postgres refuses to run as root, and CI runs as root: then the
//!   cluster runs as the unprivileged user `nobody` (the folder is handed
//!   to it), otherwise as the current user.
//! - The binaries are Debian's (`/usr/lib/postgresql/<version>/bin`, the
//!   newest), or those in `$OSCOVA_PG_BINDIR`. When none is found the test
//!   fails, naming `scripts/ensure-postgres.sh`, which installs them.
//! - Authentication is `trust` for the superuser `postgres`: the cluster
//!   lives as long as the test and is reachable from this machine only.
//!
//! ```no_run
//! let cluster = oscova_test_support::postgres::Cluster::start();
//! let config = cluster.create_database("conformance");
//! // tokio_postgres::connect(&config, NoTls) ...
//! # let _ = config;
//! ```

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A running throwaway cluster; stopped and deleted on drop.
#[derive(Debug)]
pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    run_as: Option<(u32, u32)>,
}

/// Where Postgres's programs are, or a message saying how to get them.
pub fn bin_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("OSCOVA_PG_BINDIR") {
        return Ok(PathBuf::from(dir));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin).ok_or_else(|| {
        "Postgres is not installed: run scripts/ensure-postgres.sh (Debian's postgresql), \
         or set OSCOVA_PG_BINDIR"
            .to_owned()
    })
}

fn nobody() -> (u32, u32) {
    let passwd = std::fs::read_to_string("/etc/passwd").expect("read /etc/passwd");
    passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.first() == Some(&"nobody"))
                .then(|| Some((fields.get(2)?.parse().ok()?, fields.get(3)?.parse().ok()?)))
                .flatten()
        })
        .expect("running as root, the cluster needs the user `nobody`")
}

fn is_root() -> bool {
    // The owner of a file this process just created is its effective user.
    let probe = tempfile::NamedTempFile::new().expect("create a probe file");
    std::os::unix::fs::MetadataExt::uid(&probe.as_file().metadata().expect("stat the probe")) == 0
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("pick a loopback port")
}

impl Cluster {
    /// Creates and starts a cluster (panics with what went wrong).
    pub fn start() -> Self {
        let bin = bin_dir().unwrap_or_else(|message| panic!("{message}"));
        let dir = tempfile::Builder::new()
            .prefix("oscova-pg-")
            .tempdir()
            .expect("create the cluster's folder");
        let run_as = is_root().then(nobody);
        if let Some((uid, gid)) = run_as {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .expect("hand the cluster's folder to `nobody`");
        }
        let mut cluster = Self {
            dir,
            bin,
            port: 0,
            run_as,
        };
        let data = cluster.data();
        cluster.run_ok(
            "initdb",
            &[
                "-D",
                path_str(&data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-sync",
            ],
        );
        // A port picked now may be taken before the server binds it; try
        // a few.
        let mut last = String::new();
        for _ in 0..5 {
            cluster.port = free_port();
            let options = format!(
                "-p {} -k {} -c listen_addresses=127.0.0.1",
                cluster.port,
                path_str(cluster.dir.path())
            );
            let log = cluster.dir.path().join("server.log");
            let out = cluster.run(
                "pg_ctl",
                &[
                    "-D",
                    path_str(&data),
                    "-l",
                    path_str(&log),
                    "-w",
                    "-t",
                    "60",
                    "-o",
                    &options,
                    "start",
                ],
            );
            if out.status.success() {
                return cluster;
            }
            last = format!(
                "{}{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        panic!("the Postgres server did not start:\n{last}");
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn run(&self, program: &str, args: &[&str]) -> Output {
        let mut command = Command::new(self.bin.join(program));
        command
            .args(args)
            .current_dir(self.dir.path())
            .env("LC_ALL", "C");
        if let Some((uid, gid)) = self.run_as {
            command.uid(uid).gid(gid);
        }
        command
            .output()
            .unwrap_or_else(|e| panic!("run {program}: {e}"))
    }

    fn run_ok(&self, program: &str, args: &[&str]) {
        let out = self.run(program, args);
        assert!(
            out.status.success(),
            "{program} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The server's loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A libpq-style connection string for database `dbname`.
    pub fn config(&self, dbname: &str) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname={dbname}",
            self.port
        )
    }

    /// Creates database `name` (letters, digits, `_`) and returns its
    /// connection string.
    pub fn create_database(&self, name: &str) -> String {
        assert!(
            name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
            "a plain database name, not {name:?}"
        );
        let port = self.port.to_string();
        self.run_ok(
            "psql",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-q",
                "-X",
                "-c",
                &format!("CREATE DATABASE {name}"),
            ],
        );
        self.config(name)
    }
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temporary path")
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self.run(
            "pg_ctl",
            &["-D", path_str(&data), "-m", "immediate", "-w", "stop"],
        );
    }
}
