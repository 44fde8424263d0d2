//! `oscova mcp login` and `logout` (issue 39): an `[mcp.servers.NAME]`
//! whose `oauth` has `grant = "authorization_code"`. The upstream is
//! another `oscova mcp --listen` taking only access tokens of a real
//! authorization server on loopback (npm `oidc-provider`); the person's
//! browser is played by `OidcProvider::consent` (its login and consent
//! forms over HTTP). The grants land in the sessions' SQLite file, sealed
//! with `OSCOVA_TOKEN_KEY`.

mod browser;
mod link;

use crate::support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use oscova_test_support::oidc::{self, OidcProvider, SHORT_USER_CLIENT_ID, USER_CLIENT_ID};

const KEY: &str = "4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b4b";
const ECHO: &str = "oscova_mcp__up__example_echo";

/// `oscova --config CONFIG ARGS` with the token key set.
fn oscova(config: &Path, args: &[&str]) -> Command {
    let mut all = vec!["--config", config.to_str().unwrap()];
    all.extend_from_slice(args);
    let mut command = support::oscova(&all);
    command.env("OSCOVA_TOKEN_KEY", KEY);
    command
}

/// Starts `oscova mcp --listen` with `config`; the process and its URL.
fn upstream(config: &Path) -> (Child, String) {
    let mut child = support::oscova(&[
        "--config",
        config.to_str().unwrap(),
        "mcp",
        "--listen",
        "127.0.0.1:0",
        "--names",
        "short",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        match lines.next() {
            Some(Ok(line)) if line.contains("http://") => {
                let at = line.find("http://").unwrap();
                break line[at..].trim().to_owned();
            }
            Some(Ok(_)) => {}
            _ => panic!("the upstream exited before saying where it listens"),
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    (child, url)
}

/// Runs `oscova mcp login up [--user U] [--paste]`, consenting as
/// `account`; returns its stdout after the URL.
fn login(
    provider: &OidcProvider,
    config: &Path,
    user: Option<&str>,
    account: &str,
    paste: bool,
) -> String {
    let mut args = vec!["mcp", "login", "up"];
    if let Some(user) = user {
        args.extend(["--user", user]);
    }
    if paste {
        args.push("--paste");
    }
    let mut child = oscova(config, &args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut url = String::new();
    stdout.read_line(&mut url).unwrap();
    assert!(url.starts_with(provider.issuer()), "the URL first: {url:?}");
    assert!(url.contains("code_challenge_method=S256"), "{url}");
    let redirected = provider.consent(url.trim(), account);
    if paste {
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{redirected}").unwrap();
    } else {
        assert!(redirected.starts_with("http://127.0.0.1:"), "{redirected}");
        let (status, _, page) = oidc::exchange("GET", &redirected, &BTreeMap::new(), None);
        assert_eq!(status, 200, "{page}");
    }
    let output = child.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{rest}\n{stderr}");
    rest
}

/// `oscova tools call ECHO --user USER`: success, and all it printed.
fn echo(config: &Path, user: &str, text: &str) -> (bool, String) {
    let args = serde_json::json!({ "text": text }).to_string();
    let output = oscova(
        config,
        &["tools", "call", ECHO, "--user", user, "--args", &args],
    )
    .output()
    .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), all)
}

fn terminate(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the upstream did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The upstream (trusting `provider`) and a gateway config whose server
/// `up` takes each user's grant of `client`; the upstream, the config,
/// and the sessions' file.
fn setup(
    provider: &OidcProvider,
    name: &str,
    client: &str,
) -> (Child, std::path::PathBuf, std::path::PathBuf) {
    let dir = support::temp_dir(name);
    let db = dir.join("state").join("sessions.db");
    let sessions = format!("path = \"{}\"", db.display());
    let (up, config) = setup_in(provider, &dir, client, &sessions);
    (up, config, db)
}

/// As [`setup`], in `dir`, the `[sessions]` table's body `sessions`.
fn setup_in(
    provider: &OidcProvider,
    dir: &Path,
    client: &str,
    sessions: &str,
) -> (Child, std::path::PathBuf) {
    let upstream_config = dir.join("upstream.toml");
    std::fs::write(
        &upstream_config,
        format!(
            "[auth.oauth]\nissuer = \"{}\"\nscopes = [\"mcp\"]\n",
            provider.issuer()
        ),
    )
    .unwrap();
    let (up, url) = upstream(&upstream_config);
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[sessions]\n{sessions}\n\n[mcp.servers.up]\nurl = \"{url}\"\nper_user = true\n\
             network = \"local\"\ntimeout_secs = 20\noauth = {{ grant = \"authorization_code\", \
             client_id = \"{client}\", scopes = [\"mcp\"], issuer = \"{}\" }}\n",
            provider.issuer()
        ),
    )
    .unwrap();
    (up, config)
}

#[test]
fn a_person_logs_in_their_calls_go_through_and_logout_forgets_it() {
    let provider = OidcProvider::start();
    let (mut up, config, db) = setup(&provider, "mcp-login", USER_CLIENT_ID);

    // Without the key: told what to set, nothing asked of anyone.
    let output = support::oscova(&["--config", config.to_str().unwrap(), "mcp", "login", "up"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("OSCOVA_TOKEN_KEY"), "{stderr}");

    // The host (its grant lists the tools at start), by pasting; alice,
    // through the loopback redirect.
    let host = login(&provider, &config, None, "account-host", true);
    assert!(
        host.contains("logged the host in to MCP server `up`"),
        "{host}"
    );
    let alice = login(&provider, &config, Some("alice"), "account-alice", false);
    assert!(alice.contains("logged user `alice` in"), "{alice}");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&db).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "the grants' file is private");

    let (ok, out) = echo(&config, "alice", "hello from alice");
    assert!(ok && out.contains("hello from alice"), "{out}");
    // bob has not logged in: the command to run.
    let (ok, out) = echo(&config, "bob", "hello from bob");
    assert!(
        !ok && out.contains("oscova mcp login up --user bob"),
        "{out}"
    );
    assert!(!out.contains("hello from bob"), "{out}");

    let output = oscova(&config, &["mcp", "logout", "up", "--user", "alice"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success()
            && stdout.contains("forgot the grant of user `alice`")
            && stdout.contains(&format!("revoked at `{}`", provider.issuer())),
        "{stdout}"
    );
    let (ok, out) = echo(&config, "alice", "again");
    assert!(
        !ok && out.contains("oscova mcp login up --user alice"),
        "{out}"
    );
    assert_eq!(provider.grants()["authorization_code"], 2);
    terminate(&mut up);
}

#[test]
fn login_and_logout_say_what_they_do_in_help() {
    for (command, words) in [
        ("login", ["--paste", "--user", "OSCOVA_TOKEN_KEY"]),
        ("logout", ["--user", "NAME", "grant"]),
    ] {
        let output = support::oscova(&["mcp", command, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{help}");
        for word in words {
            assert!(help.contains(word), "{command}: {word}: {help}");
        }
    }
}

/// Two processes whose tokens have expired start at once: each refreshes
/// the host's grant (its listing) and alice's (her call) under the
/// store's lease, so each rotating refresh token is used once: two
/// refreshes in all, none refused, and both calls go through.
#[test]
fn two_processes_refreshing_at_once_use_each_refresh_token_once() {
    let provider = OidcProvider::start();
    let (mut up, config, _) = setup(&provider, "mcp-login-race", SHORT_USER_CLIENT_ID);
    race(&provider, &config);
    terminate(&mut up);
}

/// The same with the sessions, and so the grants, on Postgres: the two
/// processes are two instances of a fleet on one database, and the
/// store's lease holds across them.
#[cfg(feature = "sessions-postgres")]
#[test]
fn two_instances_on_postgres_refreshing_at_once_use_each_refresh_token_once() {
    let cluster = oscova_test_support::postgres::Cluster::start();
    cluster.create_database("grants");
    let provider = OidcProvider::start();
    let dir = support::temp_dir("mcp-login-race-postgres");
    let sessions = format!(
        "store = \"postgres\"\nurl = \"postgres://postgres@127.0.0.1:{}/grants\"",
        cluster.port()
    );
    let (mut up, config) = setup_in(&provider, &dir, SHORT_USER_CLIENT_ID, &sessions);
    race(&provider, &config);
    // The grants are in the database, and nothing was written beside
    // the config.
    let rows = std::process::Command::new(
        oscova_test_support::postgres::bin_dir()
            .unwrap()
            .join("psql"),
    )
    .args(["-h", "127.0.0.1", "-p", &cluster.port().to_string()])
    .args(["-U", "postgres", "-d", "grants", "-At", "-c"])
    .arg("SELECT user_id FROM oscova_mcp_oauth_grants WHERE server = 'up' ORDER BY user_id")
    .output()
    .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&rows.stdout)
            .lines()
            .collect::<Vec<_>>(),
        ["", "alice"],
        "the host's grant and alice's: {}",
        String::from_utf8_lossy(&rows.stderr)
    );
    assert!(!dir.join("state").exists());
    terminate(&mut up);
}

/// Logs the host and alice in, lets their 2-second tokens expire, then
/// has two `oscova tools call` processes call as alice at once.
fn race(provider: &OidcProvider, config: &Path) {
    login(provider, config, None, "account-host", true);
    login(provider, config, Some("alice"), "account-alice", true);
    // The 2-second access tokens expire.
    std::thread::sleep(Duration::from_millis(2300));
    let before = provider.grants();
    let args = serde_json::json!({ "text": "raced" }).to_string();
    let children: Vec<Child> = (0..2)
        .map(|_| {
            oscova(
                config,
                &["tools", "call", ECHO, "--user", "alice", "--args", &args],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && stdout.contains("raced"),
            "{stdout}\n{stderr}"
        );
    }
    let after = provider.grants();
    let refreshes =
        after["refresh_token"].as_u64().unwrap() - before["refresh_token"].as_u64().unwrap();
    assert_eq!(
        refreshes, 2,
        "one for the host's grant, one for alice's: {after}"
    );
    assert_eq!(
        after["refresh_errors"], 0,
        "no refresh token was used twice: {after}"
    );
}
