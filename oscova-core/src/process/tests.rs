//! Unit tests of the spawn policy: deny-list rules, environment building, hooks, and
//! running real programs (`env`, `cat`, `sh`) with cancellation and capped stderr.

use super::run::{STDERR_CAP, TRUNCATION_MARK};
use super::*;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn policy() -> ProcessSpawnPolicy {
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

fn temp_path(tag: &str) -> PathBuf {
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

fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // A killed but not yet reaped child is a zombie: no longer running.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

async fn wait_for_pid(path: &Path) -> u32 {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("child never wrote its pid");
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

#[tokio::test]
async fn stdin_is_passed() {
    let output = policy()
        .run(
            ProcessSpawnRequest::new("cat"),
            Some(b"hello from stdin".to_vec()),
            &CancellationToken::new(),
        )
        .await
        .expect("cat runs");
    assert_eq!(output.stdout, b"hello from stdin");
    assert!(output.stderr.is_empty());
}

#[tokio::test]
async fn large_stdin_does_not_deadlock() {
    // Far beyond a pipe buffer: cat blocks writing stdout unless it is read meanwhile.
    let input: Vec<u8> = (0..4 * 1024 * 1024).map(|i| (i % 251) as u8).collect();
    let output = tokio::time::timeout(
        Duration::from_secs(20),
        policy().run(
            ProcessSpawnRequest::new("cat"),
            Some(input.clone()),
            &CancellationToken::new(),
        ),
    )
    .await
    .expect("no deadlock")
    .expect("cat runs");
    assert_eq!(output.stdout, input);

    // A child that never reads its stdin.
    let output = tokio::time::timeout(
        Duration::from_secs(20),
        policy().run(
            ProcessSpawnRequest::new("sh").args(["-c", "echo done"]),
            Some(input),
            &CancellationToken::new(),
        ),
    )
    .await
    .expect("no deadlock")
    .expect("sh runs");
    assert_eq!(output.stdout, b"done\n");
}

#[tokio::test]
async fn args_are_not_interpreted_by_a_shell() {
    let output = policy()
        .run(
            ProcessSpawnRequest::new("printf").args(["%s|%s", "$HOME; *", "`id`"]),
            None,
            &CancellationToken::new(),
        )
        .await
        .expect("printf runs");
    assert_eq!(output.stdout, b"$HOME; *|`id`");
}

#[tokio::test]
async fn cwd_is_used() {
    let dir = std::env::temp_dir().canonicalize().expect("temp dir");
    let output = policy()
        .run(
            ProcessSpawnRequest::new("pwd").cwd(&dir),
            None,
            &CancellationToken::new(),
        )
        .await
        .expect("pwd runs");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        dir.to_string_lossy()
    );
}

#[tokio::test]
async fn missing_program_is_not_found() {
    let error = policy()
        .run(
            ProcessSpawnRequest::new("oscova-no-such-program").origin("plugin.x"),
            None,
            &CancellationToken::new(),
        )
        .await
        .expect_err("fails");
    assert!(
        matches!(&error, SpawnError::NotFound { command, .. } if command == "oscova-no-such-program"),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "program `oscova-no-such-program` not found (for plugin.x): is it installed and on PATH?"
    );
    assert!(std::error::Error::source(&error).is_some());
}

#[tokio::test]
async fn missing_working_directory_is_reported_as_such() {
    let error = policy()
        .run(
            ProcessSpawnRequest::new("env").cwd("/nonexistent/oscova/dir"),
            None,
            &CancellationToken::new(),
        )
        .await
        .expect_err("fails");
    assert!(matches!(error, SpawnError::WorkingDir { .. }), "{error:?}");
}

#[tokio::test]
async fn non_zero_exit_carries_stderr() {
    let error = policy()
        .run(
            ProcessSpawnRequest::new("sh")
                .args(["-c", "echo partial; echo '  boom  ' >&2; exit 3"]),
            None,
            &CancellationToken::new(),
        )
        .await
        .expect_err("fails");
    match &error {
        SpawnError::Failed {
            command,
            status,
            stderr,
            ..
        } => {
            assert_eq!(command, "sh");
            assert_eq!(status.code(), Some(3));
            assert_eq!(stderr, "boom");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(error.to_string(), "`sh` failed (exit status: 3): boom");
}

#[tokio::test]
async fn captured_stderr_is_capped_keeping_the_end() {
    let error = policy()
        .run(
            ProcessSpawnRequest::new("sh").args([
                "-c",
                "i=0; while [ $i -lt 2000 ]; do printf 'noise ü ' >&2; i=$((i+1)); done; echo FINAL >&2; exit 1",
            ]),
            None,
            &CancellationToken::new(),
        )
        .await
        .expect_err("fails");
    let SpawnError::Failed { stderr, .. } = error else {
        panic!("unexpected {error:?}");
    };
    assert!(stderr.len() <= STDERR_CAP, "{}", stderr.len());
    assert!(stderr.starts_with(TRUNCATION_MARK));
    assert!(stderr.ends_with("FINAL"));
}

#[tokio::test]
async fn cancellation_kills_the_child() {
    let pid_file = temp_path("pid");
    let cancel = CancellationToken::new();
    let started = Instant::now();
    let request = ProcessSpawnRequest::new("sh").args([
        OsString::from("-c"),
        OsString::from("echo $$ > \"$1\"; exec sleep 30"),
        OsString::from("sh"),
        pid_file.clone().into_os_string(),
    ]);
    let policy = policy();
    let (result, pid) = tokio::join!(policy.run(request, None, &cancel), async {
        let pid = wait_for_pid(&pid_file).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
        pid
    });
    let elapsed = started.elapsed();
    let _ = std::fs::remove_file(&pid_file);
    assert!(
        matches!(result, Err(SpawnError::Cancelled { .. })),
        "{result:?}"
    );
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "child {pid} still exists"
    );
}

#[tokio::test]
async fn already_cancelled_starts_nothing() {
    let marker = temp_path("cancel-marker");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let result = policy()
        .run(
            ProcessSpawnRequest::new("touch").arg(&marker),
            None,
            &cancel,
        )
        .await;
    assert!(matches!(result, Err(SpawnError::Cancelled { .. })));
    assert!(!marker.exists());
}

#[tokio::test]
async fn dropping_the_run_kills_the_child() {
    let pid_file = temp_path("drop-pid");
    let request = ProcessSpawnRequest::new("sh").args([
        OsString::from("-c"),
        OsString::from("echo $$ > \"$1\"; exec sleep 30"),
        OsString::from("sh"),
        pid_file.clone().into_os_string(),
    ]);
    let policy = policy();
    let cancel = CancellationToken::new();
    let (timed_out, pid) = tokio::join!(
        tokio::time::timeout(
            Duration::from_millis(500),
            policy.run(request, None, &cancel)
        ),
        wait_for_pid(&pid_file),
    );
    let _ = std::fs::remove_file(&pid_file);
    assert!(timed_out.is_err());
    let deadline = Instant::now() + Duration::from_secs(2);
    while !process_gone(pid) {
        assert!(Instant::now() < deadline, "child {pid} survived the drop");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
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
