//! The process spawn policy as tools meet it: a tool runs `env` through
//! `invocation.spawn_policy()` and `invocation.process(..)`, called through a
//! real `PluginHost` and `UserScope` whose host gave the policy a fixed base
//! environment full of secrets. The child sees no deny-listed variable, an
//! explicit variable reaches only the process it was given to, `TZ` is the
//! user's zone, and a failing host hook fails the spawn with its message.

#![allow(missing_docs)]

use std::collections::BTreeMap;

use oscova_core::prelude::*;
use oscova_core::{
    ExposeSecret, SecretString, UserScope, context::Credentials, process::ProcessSpawnPolicy,
    redact::REDACTED,
};
use serde_json::{Value, json};

/// The base environment the host hands the policy: every secret here must
/// stay out of children.
const BASE: [(&str, &str); 13] = [
    ("PATH", "/usr/local/bin:/usr/bin:/bin"),
    ("HOME", "/home/host"),
    ("LANG", "C.UTF-8"),
    ("TZ", "America/New_York"),
    ("OPENAI_API_KEY", "sk-base-openai-0001"),
    ("GITHUB_TOKEN", "ghp-base-0002"),
    ("DB_PASSWORD", "hunter2-base-0003"),
    ("AWS_SECRET", "aws-base-0004"),
    ("Section__ApiKey", "section-base-0005"),
    ("OpenAI__ApiKey", "sk-dotnet-base-0006"),
    ("Telegram__BotToken", "tg-base-0007"),
    ("Auth__ClientSecret", "client-base-0008"),
    ("INTERNAL_CRED", "internal-base-0009"),
];

/// Names the policy must remove (the last one through the host's `deny`).
const DENIED: [&str; 9] = [
    "OPENAI_API_KEY",
    "GITHUB_TOKEN",
    "DB_PASSWORD",
    "AWS_SECRET",
    "Section__ApiKey",
    "OpenAI__ApiKey",
    "Telegram__BotToken",
    "Auth__ClientSecret",
    "INTERNAL_CRED",
];

const GH_CREDENTIAL: &str = "ghp-user-credential-7777";

// ---------------------------------------------------------------- fixtures

pub struct ShellToolset {
    credentials: Credentials,
}

/// Runs `env` with the call's policy and request; the output, or the spawn
/// error as an error result.
async fn run_env(
    invocation: &ToolInvocation<'_>,
    extra: &[(&str, &str)],
) -> Result<String, String> {
    let mut request = invocation.process("env");
    for (name, value) in extra {
        request = request.env(*name, *value);
    }
    invocation
        .spawn_policy()
        .run(request, None, invocation.cancellation_token())
        .await
        .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
        .map_err(|e| e.to_string())
}

#[toolset]
impl ShellToolset {
    /// Prints the environment a child gets.
    pub async fn env(&self, invocation: &ToolInvocation) -> Result<String, String> {
        run_env(invocation, &[]).await
    }

    /// Prints the environment of a child given one explicit variable.
    pub async fn env_with(
        &self,
        name: String,
        value: String,
        invocation: &ToolInvocation,
    ) -> Result<String, String> {
        run_env(invocation, &[(&name, &value)]).await
    }

    /// Hands the user's GitHub credential to one child as `GH_TOKEN`.
    pub async fn env_with_credential(&self, invocation: &ToolInvocation) -> Result<String, String> {
        let token = self
            .credentials
            .get("gh.token")
            .ok_or("no gh.token credential")?;
        run_env(invocation, &[("GH_TOKEN", token.expose_secret())]).await
    }
}

#[plugin(id = "test.spawn")]
pub struct ShellPlugin;

impl AgentPlugin for ShellPlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|ctx: &AgentPluginContext| ShellToolset {
            credentials: ctx.credentials().clone(),
        });
    }
}

fn policy() -> ProcessSpawnPolicy {
    ProcessSpawnPolicy::with_base_env(BASE).deny("INTERNAL_CRED")
}

fn host(policy: ProcessSpawnPolicy) -> PluginHost {
    PluginHost::builder()
        .plugins(oscova_core::linked_plugins![ShellPlugin])
        .spawn_policy(policy)
        .credentials(|_: &UserInfo, key: &str| {
            (key == "gh.token").then(|| SecretString::from(GH_CREDENTIAL))
        })
        .strict(true)
        .build()
        .unwrap()
}

fn scope(host: &PluginHost, user: UserInfo) -> UserScope {
    let scope = host.user_scope(user);
    assert!(scope.diagnostics().is_empty(), "{:?}", scope.diagnostics());
    scope
}

fn wire(tool: &str) -> String {
    format!("test_spawn__shell__{tool}")
}

/// The `NAME=value` lines of `env` output.
fn parse_env(result: &ToolResult) -> BTreeMap<String, String> {
    assert!(!result.is_error, "{result:?}");
    result
        .content
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}

fn assert_no_denied(env: &BTreeMap<String, String>, text: &str) {
    for name in DENIED {
        assert!(!env.contains_key(name), "{name} leaked: {env:?}");
    }
    for (name, value) in BASE {
        if DENIED.contains(&name) {
            assert!(!text.contains(value), "the value of {name} leaked: {text}");
        }
    }
}

// ------------------------------------------------------------------- tests

#[tokio::test]
async fn a_spawned_env_shows_no_denied_variable() {
    let host = host(policy());
    let scope = scope(&host, UserInfo::new("a"));
    let result = scope.invoke(&wire("env"), Value::Null).await;
    let env = parse_env(&result);
    assert_no_denied(&env, &result.content);
    // What is not a secret passes through.
    assert_eq!(env["PATH"], "/usr/local/bin:/usr/bin:/bin");
    assert_eq!(env["HOME"], "/home/host");
    assert_eq!(env["LANG"], "C.UTF-8");
    // A user without a zone keeps the host's `TZ`.
    assert_eq!(env["TZ"], "America/New_York");
}

#[tokio::test]
async fn an_explicit_variable_reaches_only_its_process() {
    let host = host(policy());
    let scope = scope(&host, UserInfo::new("a"));

    let given = scope
        .invoke(
            &wire("env_with"),
            json!({"name": "GH_TOKEN", "value": "explicit-token-1234"}),
        )
        .await;
    let env = parse_env(&given);
    assert_eq!(env["GH_TOKEN"], "explicit-token-1234");
    assert_no_denied(&env, &given.content);

    // A deny-listed name passed explicitly is the caller's decision.
    let given = scope
        .invoke(
            &wire("env_with"),
            json!({"name": "GITHUB_TOKEN", "value": "explicit-github-5678"}),
        )
        .await;
    assert_eq!(parse_env(&given)["GITHUB_TOKEN"], "explicit-github-5678");

    // The next process, and the same call in parallel, see neither.
    let (env, env_with) = (wire("env"), wire("env_with"));
    let (plain, with) = tokio::join!(
        scope.invoke(&env, Value::Null),
        scope.invoke(
            &env_with,
            json!({"name": "GH_TOKEN", "value": "explicit-token-9999"}),
        ),
    );
    let plain_env = parse_env(&plain);
    assert!(!plain_env.contains_key("GH_TOKEN"), "{plain_env:?}");
    assert!(!plain.content.contains("explicit-"), "{}", plain.content);
    assert_eq!(parse_env(&with)["GH_TOKEN"], "explicit-token-9999");
}

#[tokio::test]
async fn a_credential_handed_to_a_child_is_redacted_in_what_it_prints() {
    let host = host(policy());
    let scope = scope(&host, UserInfo::new("a"));
    let result = scope
        .invoke(&wire("env_with_credential"), Value::Null)
        .await;
    let env = parse_env(&result);
    // It reached the child (the line is there) and did not reach the model.
    assert_eq!(env["GH_TOKEN"], REDACTED);
    assert!(!result.content.contains(GH_CREDENTIAL));
}

#[tokio::test]
async fn tz_is_the_users_zone() {
    let host = host(policy());
    let berlin = scope(&host, UserInfo::new("a").with_time_zone("Europe/Berlin"));
    let tokyo = scope(&host, UserInfo::new("b").with_time_zone("Asia/Tokyo"));
    let env = wire("env");
    let (berlin, tokyo) = tokio::join!(
        berlin.invoke(&env, Value::Null),
        tokyo.invoke(&env, Value::Null),
    );
    assert_eq!(parse_env(&berlin)["TZ"], "Europe/Berlin");
    assert_eq!(parse_env(&tokyo)["TZ"], "Asia/Tokyo");
    // An explicit `TZ` loses to the user's zone.
    let scope2 = scope(&host, UserInfo::new("c").with_time_zone("Europe/Berlin"));
    let result = scope2
        .invoke(
            &wire("env_with"),
            json!({"name": "TZ", "value": "Pacific/Auckland"}),
        )
        .await;
    assert_eq!(parse_env(&result)["TZ"], "Europe/Berlin");
}

#[tokio::test]
async fn a_failing_host_hook_fails_the_spawn_with_its_message() {
    let host = host(policy().hook(|_| Err("vault is locked".to_owned())));
    let scope = scope(&host, UserInfo::new("a"));
    let result = scope.invoke(&wire("env"), Value::Null).await;
    assert!(result.is_error, "{result:?}");
    assert_eq!(
        result.content,
        "process environment hook failed: vault is locked"
    );
}

#[tokio::test]
async fn host_hooks_see_and_rewrite_the_final_environment() {
    let host = host(policy().hook(|ctx| {
        // The deny-list already ran; the hook sees the user's `TZ`.
        if ctx.env.keys().any(|k| k == "OPENAI_API_KEY") {
            return Err("a denied variable reached the hook".to_owned());
        }
        ctx.env.insert("FROM_HOOK".into(), "1".into());
        Ok(())
    }));
    let scope = scope(&host, UserInfo::new("a").with_time_zone("UTC"));
    let env = parse_env(&scope.invoke(&wire("env"), Value::Null).await);
    assert_eq!(env["FROM_HOOK"], "1");
    assert_eq!(env["TZ"], "UTC");
}

#[test]
fn the_invocation_policy_is_the_hosts() {
    let host = host(policy());
    assert!(host.spawn_policy().is_denied("internal_cred"));
    assert!(host.spawn_policy().is_denied("Section__ApiKey"));
    assert!(!host.spawn_policy().is_denied("PATH"));
}
