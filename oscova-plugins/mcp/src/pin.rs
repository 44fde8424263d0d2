//! Catalogs and pins: what a server's tools are, and the lock file that
//! records what was reviewed.
//!
//! Rules: a catalog is the server's tools in name order, each with its
//! name, title, description, input and output schema and annotations; its
//! hash is SHA-256 over that list as JSON (object keys sorted), so the same
//! definitions always hash the same. The lock file holds one pinned
//! catalog per server, with its hash; a pin whose tools do not hash to its
//! recorded hash was edited by hand and is refused. Writing a pin keeps
//! every other server's, and replaces the file in one rename; the file is
//! created with mode 0644 (less the umask), writable by its owner only.
//!
//! What a pin protects against: a server whose tools change after they
//! were reviewed (a new tool, a reworded description, a wider schema),
//! and a lock file damaged or edited by mistake. The hash is plain
//! SHA-256, not keyed: anyone who can write the lock file can write a
//! matching hash, just as they could edit the configuration beside it.
//! So it is not a defence against a local attacker; the file's
//! permissions are. The lock file is read as the configuration is, with
//! `oscova_core::fs::read_trusted`: a regular file (a FIFO or a link to
//! `/dev/zero` is refused at once), at most [`MAX_LOCK_BYTES`], owned by
//! this user or root and, with every directory on its way, writable by
//! nobody else. A lock file that fails these checks loads no server.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use oscova_core::fs::FileError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The lock file's format version.
const LOCK_VERSION: u32 = 1;

/// The largest lock file read, in bytes: thousands of pinned tools.
pub const MAX_LOCK_BYTES: u64 = 16 * 1024 * 1024;

/// One tool as a server defines it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogTool {
    /// The server's name for it.
    pub name: String,
    /// Its title, if the server gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its description.
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of its arguments.
    pub input_schema: Value,
    /// The JSON Schema of its structured output, if declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Its annotations (hints), as the server sent them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

impl CatalogTool {
    /// The definition an rmcp client listed.
    pub fn from_mcp(tool: &rmcp::model::Tool) -> Self {
        Self {
            name: tool.name.to_string(),
            title: tool.title.clone(),
            description: tool.description.as_deref().unwrap_or_default().to_owned(),
            input_schema: Value::Object((*tool.input_schema).clone()),
            output_schema: tool
                .output_schema
                .as_ref()
                .map(|s| Value::Object((**s).clone())),
            annotations: tool
                .annotations
                .as_ref()
                .and_then(|a| serde_json::to_value(a).ok()),
        }
    }
}

/// A server's tools, in name order.
pub fn sorted(mut tools: Vec<CatalogTool>) -> Vec<CatalogTool> {
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    tools
}

/// The hash of a catalog: `sha256:` and 64 hex digits.
pub fn catalog_hash(tools: &[CatalogTool]) -> String {
    // serde_json's maps are sorted by key here (no `preserve_order`), so
    // the text is canonical for the same definitions.
    let bytes = serde_json::to_vec(tools).unwrap_or_default();
    let digest = Sha256::digest(&bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// One server's pinned catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PinnedCatalog {
    /// [`catalog_hash`] of `tools` when it was pinned.
    pub hash: String,
    /// The tools, in name order.
    pub tools: Vec<CatalogTool>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct LockFile {
    version: u32,
    #[serde(default)]
    servers: BTreeMap<String, PinnedCatalog>,
}

/// Reading or writing the lock file failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PinError {
    /// The file could not be read or written, or is not one to trust
    /// (not a regular file, too large, writable by others).
    #[error("MCP lock file `{path}`: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a lock file this version reads.
    #[error("MCP lock file `{path}` is not valid: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// The pins in `path`; none when the file does not exist.
pub fn read_pins(path: &Path) -> Result<BTreeMap<String, PinnedCatalog>, PinError> {
    let bytes = match oscova_core::fs::read_trusted(path, MAX_LOCK_BYTES) {
        Ok(bytes) => bytes,
        Err(FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(BTreeMap::new());
        }
        Err(e) => {
            return Err(PinError::Io {
                path: path.to_owned(),
                source: e.into(),
            });
        }
    };
    let lock: LockFile = serde_json::from_slice(&bytes).map_err(|e| PinError::Invalid {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    if lock.version != LOCK_VERSION {
        return Err(PinError::Invalid {
            path: path.to_owned(),
            reason: format!("version {} (this build reads {LOCK_VERSION})", lock.version),
        });
    }
    Ok(lock.servers)
}

/// Pins `tools` as server `name`'s catalog in `path`, keeping the other
/// servers' pins. Returns the hash.
pub fn write_pin(path: &Path, name: &str, tools: Vec<CatalogTool>) -> Result<String, PinError> {
    let mut servers = read_pins(path)?;
    let tools = sorted(tools);
    let hash = catalog_hash(&tools);
    servers.insert(
        name.to_owned(),
        PinnedCatalog {
            hash: hash.clone(),
            tools,
        },
    );
    let lock = LockFile {
        version: LOCK_VERSION,
        servers,
    };
    let io = |source| PinError::Io {
        path: path.to_owned(),
        source,
    };
    let mut text = serde_json::to_string_pretty(&lock).map_err(|e| PinError::Invalid {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    text.push('\n');
    let tmp = path.with_extension("lock.tmp");
    write_new(&tmp, text.as_bytes()).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)?;
    Ok(hash)
}

/// Writes `bytes` to a new file at `path` (one left by a crash is
/// replaced), mode 0644 less the umask: writable by its owner only, as
/// [`read_pins`] requires, even under a umask of 002.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o644);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> CatalogTool {
        CatalogTool {
            name: name.to_owned(),
            title: None,
            description: description.to_owned(),
            input_schema: serde_json::json!({"type": "object", "b": 1, "a": 2}),
            output_schema: None,
            annotations: None,
        }
    }

    #[test]
    fn pins_round_trip_and_keep_other_servers() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("oscova.mcp.lock");
        assert!(read_pins(&path).expect("missing is empty").is_empty());
        let one = write_pin(&path, "one", vec![tool("b", "B"), tool("a", "A")]).expect("pin");
        write_pin(&path, "two", vec![tool("x", "X")]).expect("pin");
        let pins = read_pins(&path).expect("read");
        assert_eq!(pins["one"].hash, one);
        assert_eq!(pins["one"].tools[0].name, "a", "sorted by name");
        assert_eq!(catalog_hash(&pins["one"].tools), one);
        assert_ne!(
            catalog_hash(&[tool("a", "A changed")]),
            catalog_hash(&[tool("a", "A")])
        );
        assert!(pins.contains_key("two"));
    }
}

#[cfg(all(test, unix))]
mod unix_tests {
    use std::os::unix::fs::{PermissionsExt, symlink};
    use std::time::Duration;

    use super::*;

    fn refused(path: &Path) -> String {
        match read_pins(path) {
            Err(e @ PinError::Io { .. }) => e.to_string(),
            other => panic!("{other:?}"),
        }
    }

    /// Issue 24: the lock file was read with `read_to_string`, so a FIFO
    /// hung start-up and a link to `/dev/zero` ate memory; and one anyone
    /// could write was trusted.
    #[test]
    fn lock_files_are_read_like_every_trusted_file() {
        let dir = tempfile::tempdir().expect("dir");
        let fifo = dir.path().join("fifo.mcp.lock");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .expect("mkfifo")
                .success()
        );
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || tx.send(refused(&path)));
        let message = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("reading a FIFO lock file hung");
        assert!(message.contains("FIFO"), "{message}");

        let zero = dir.path().join("zero.mcp.lock");
        symlink("/dev/zero", &zero).expect("link");
        assert!(refused(&zero).contains("character device"));

        let open = dir.path().join("open.mcp.lock");
        write_pin(&open, "one", vec![]).expect("pin");
        let mode = std::fs::metadata(&open).expect("meta").permissions().mode();
        assert_eq!(mode & 0o022, 0, "written writable by others: {mode:o}");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o666)).expect("chmod");
        let message = refused(&open);
        assert!(
            message.contains("writable by its group and others"),
            "{message}"
        );
        // Writing a pin over a lock file that is refused is refused too.
        assert!(write_pin(&open, "two", vec![]).is_err());
    }
}
