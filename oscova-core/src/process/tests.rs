//! Unit tests of the spawn policy: deny-list rules, environment building
//! (read back through a real `env`) and hooks. Running programs is tested
//! beside `run.rs`, with the fixtures here.

use super::*;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio_util::sync::CancellationToken;

const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// A policy with a base environment full of secrets to filter.
pub(super) fn policy() -> ProcessSpawnPolicy {
    ProcessSpawnPolicy::with_base_env([
        ("PATH", PATH),
        ("HOME", "/home/tester"),
        ("LANG", "C.UTF-8"),
        ("OPENAI_API_KEY", "sk-base-openai"),
        ("GITHUB_TOKEN", "ghp_base"),
        ("DB_PASSWORD", "hunter22"),
        ("AWS_SECRET", "aws-base"),
        ("OpenAI__ApiKey", "sk-base-dotnet"),
        ("Telegram__BotToken", "tg-base"),
        ("INTERNAL_CRED", "internal-base"),
    ])
}

/// A path in the temporary directory no other test uses.
pub(super) fn temp_path(tag: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("oscova-process-{}-{tag}-{n}", std::process::id()))
}

fn env_of(output: &ProcessOutput) -> BTreeMap<String, String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}

async fn run_env(
    policy: &ProcessSpawnPolicy,
    request: ProcessSpawnRequest,
) -> BTreeMap<String, String> {
    let output = policy
        .run(request, None, &CancellationToken::new())
        .await
        .expect("env runs");
    env_of(&output)
}

#[tokio::test]
async fn spawned_env_has_no_denied_variables() {
    let policy = policy().deny("INTERNAL_CRED");
    let env = run_env(&policy, ProcessSpawnRequest::new("env")).await;
    for name in [
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "AWS_SECRET",
        "OpenAI__ApiKey",
        "Telegram__BotToken",
        "INTERNAL_CRED",
    ] {
        assert!(!env.contains_key(name), "{name} leaked: {env:?}");
    }
    assert_eq!(env.get("PATH").map(String::as_str), Some(PATH));
    assert_eq!(env.get("HOME").map(String::as_str), Some("/home/tester"));
    assert_eq!(env.get("LANG").map(String::as_str), Some("C.UTF-8"));
}

#[tokio::test]
async fn host_environment_is_filtered_too() {
    let policy = ProcessSpawnPolicy::new();
    let context = policy
        .prepare(ProcessSpawnRequest::new("env"))
        .expect("prepares");
    for name in context.env.keys() {
        assert!(!policy.is_denied_os(name), "{name:?} leaked");
    }
    let host_path = std::env::var_os("PATH");
    assert_eq!(context.env.get(OsStr::new("PATH")), host_path.as_ref());
}

#[tokio::test]
async fn explicit_token_reaches_only_its_process() {
    let policy = policy();
    let cancel = CancellationToken::new();
    let (with_token, without_token) = tokio::join!(
        policy.run(
            ProcessSpawnRequest::new("env").env("GITHUB_TOKEN", "ghp_given"),
            None,
            &cancel
        ),
        policy.run(ProcessSpawnRequest::new("env"), None, &cancel),
    );
    let with_token = env_of(&with_token.expect("first runs"));
    let without_token = env_of(&without_token.expect("second runs"));
    assert_eq!(
        with_token.get("GITHUB_TOKEN").map(String::as_str),
        Some("ghp_given")
    );
    assert!(!without_token.contains_key("GITHUB_TOKEN"));
}

#[tokio::test]
async fn none_removes_and_later_calls_win() {
    let policy = policy();
    let env = run_env(
        &policy,
        ProcessSpawnRequest::new("env")
            .env_remove("HOME")
            .env("EXTRA", "1")
            .env_remove("EXTRA")
            .env("AGAIN", "old")
            .env_remove("AGAIN")
            .env("AGAIN", "new"),
    )
    .await;
    assert!(!env.contains_key("HOME"));
    assert!(!env.contains_key("EXTRA"));
    assert_eq!(env.get("AGAIN").map(String::as_str), Some("new"));
    assert!(env.contains_key("PATH"));
}

#[tokio::test]
async fn time_zone_sets_tz() {
    let output = policy()
        .run(
            ProcessSpawnRequest::new("env")
                .env("TZ", "America/New_York")
                .time_zone("Europe/Berlin"),
            None,
            &CancellationToken::new(),
        )
        .await
        .expect("env runs");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.lines().any(|line| line == "TZ=Europe/Berlin"),
        "{text}"
    );
    assert!(!text.contains("America/New_York"));
}

#[test]
fn invalid_time_zone_is_refused() {
    for tz in [
        "",
        "../../etc/passwd",
        "/etc/localtime",
        "Europe//Berlin",
        "Europe/Berlin/",
    ] {
        let error = policy()
            .prepare(ProcessSpawnRequest::new("env").time_zone(tz))
            .expect_err("refused");
        assert!(matches!(error, SpawnError::InvalidTimeZone { .. }), "{tz}");
    }
    for tz in [
        "UTC",
        "Etc/GMT+5",
        "America/Argentina/Buenos_Aires",
        "EST5EDT",
    ] {
        assert!(
            policy()
                .prepare(ProcessSpawnRequest::new("env").time_zone(tz))
                .is_ok(),
            "{tz}"
        );
    }
}

#[test]
fn invalid_env_names_are_refused() {
    for name in ["", "A=B", "NUL\0"] {
        let error = policy()
            .prepare(ProcessSpawnRequest::new("env").env(name, "x"))
            .expect_err("refused");
        assert!(matches!(error, SpawnError::InvalidEnv { .. }), "{name:?}");
    }
    let error = policy()
        .prepare(ProcessSpawnRequest::new("env").env("OK", "bad\0value"))
        .expect_err("refused");
    assert!(matches!(error, SpawnError::InvalidEnv { ref name, .. } if name == "OK"));
}

#[tokio::test]
async fn failing_hook_fails_spawn_and_starts_nothing() {
    let marker = temp_path("hook-marker");
    let policy = policy().hook(|_| Err("vault is locked".to_owned()));
    let error = policy
        .run(
            ProcessSpawnRequest::new("touch")
                .arg(&marker)
                .origin("plugin.vault"),
            None,
            &CancellationToken::new(),
        )
        .await
        .expect_err("hook fails the spawn");
    assert!(
        matches!(&error, SpawnError::Hook { message, origin }
            if message == "vault is locked" && origin.as_deref() == Some("plugin.vault")),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "process environment hook failed: vault is locked"
    );
    assert!(!marker.exists(), "the process must not have started");
}

#[tokio::test]
async fn hooks_run_in_order_after_everything_else() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (first, second) = (Arc::clone(&seen), Arc::clone(&seen));
    let policy = policy()
        .hook(move |context| {
            first.lock().expect("lock").push("first");
            // Runs after the request's values and TZ were applied.
            let tz = context
                .env
                .get(OsStr::new("TZ"))
                .cloned()
                .unwrap_or_default();
            let given = context
                .env
                .get(OsStr::new("GIVEN"))
                .cloned()
                .unwrap_or_default();
            let mut order = OsString::from("a");
            order.push(":");
            order.push(tz);
            order.push(":");
            order.push(given);
            context.env.insert("ORDER".into(), order);
            Ok(())
        })
        .hook(move |context| {
            second.lock().expect("lock").push("second");
            let mut order = context
                .env
                .get(OsStr::new("ORDER"))
                .cloned()
                .unwrap_or_default();
            order.push(":b");
            context.env.insert("ORDER".into(), order);
            Ok(())
        });
    let env = run_env(
        &policy,
        ProcessSpawnRequest::new("env")
            .env("GIVEN", "yes")
            .time_zone("UTC"),
    )
    .await;
    assert_eq!(env.get("ORDER").map(String::as_str), Some("a:UTC:yes:b"));
    assert_eq!(*seen.lock().expect("lock"), ["first", "second"]);
}

#[tokio::test]
async fn hook_error_stops_later_hooks() {
    let later_ran = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&later_ran);
    let policy = policy().hook(|_| Err("no".to_owned())).hook(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    assert!(policy.prepare(ProcessSpawnRequest::new("env")).is_err());
    assert_eq!(later_ran.load(Ordering::SeqCst), 0);
}

#[test]
fn debug_shows_no_environment_values() {
    let request = ProcessSpawnRequest::new("env").env("GITHUB_TOKEN", "ghp_secret_value");
    let text = format!("{request:?}");
    assert!(text.contains("GITHUB_TOKEN") && !text.contains("ghp_secret_value"));

    let policy = policy();
    let context = policy.prepare(request).expect("prepares");
    let text = format!("{context:?}");
    assert!(text.contains("GITHUB_TOKEN") && !text.contains("ghp_secret_value"));
    assert!(!text.contains(PATH));

    let text = format!("{policy:?}");
    assert!(!text.contains("sk-base-openai") && !text.contains(PATH));
}

#[test]
fn policy_clones_share_configuration() {
    let base = policy();
    let denying = base.clone().deny("HOME");
    assert!(denying.is_denied("home"));
    assert!(
        !base.is_denied("HOME"),
        "builder calls must not affect other clones"
    );
    let copy = denying.clone();
    assert!(Arc::ptr_eq(&copy.inner, &denying.inner));
}

#[test]
fn to_command_clears_the_environment() {
    let context = ProcessSpawnContext {
        command: "env".into(),
        args: vec!["-0".into()],
        cwd: None,
        env: BTreeMap::from([(OsString::from("ONLY"), OsString::from("this"))]),
        origin: None,
    };
    let command = context.to_command();
    let std_command = command.as_std();
    let envs: Vec<_> = std_command.get_envs().collect();
    assert_eq!(envs, [(OsStr::new("ONLY"), Some(OsStr::new("this")))]);
    assert_eq!(std_command.get_args().collect::<Vec<_>>(), ["-0"]);
}
