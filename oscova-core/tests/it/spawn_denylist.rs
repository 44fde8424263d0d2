//! The deny-list against the secret-looking variables of issue 13, through a real
//! host's spawn policy and a real child (`env`): of 23 planted variables, 14 used to
//! reach the child. A value the host's redactor knows, and a URL with a password, are
//! removed whatever the variable is called; ordinary variables still pass.

#![allow(missing_docs)]

use std::collections::BTreeMap;

use oscova_core::{
    CancellationToken, PluginHost, process::ProcessSpawnPolicy, process::ProcessSpawnRequest,
};

/// The 23 planted variables: the 14 that reached `flite`, then 9 the old list caught.
const PLANTED: [&str; 23] = [
    "PGPASSWORD",
    "MYSQL_PWD",
    "SECRET_KEY",
    "STRIPE_SECRET_KEY",
    "AZURE_OPENAI_KEY",
    "GITHUB_PAT",
    "OPENAI_APIKEY",
    "PRIVATE_KEY",
    "CREDENTIALS",
    "PASSWD",
    "NPM_AUTH",
    "SLACK_WEBHOOK_URL",
    "AWS_SECRET_ACCESS_KEY",
    "DATABASE_URL",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GITHUB_TOKEN",
    "HF_TOKEN",
    "DB_PASSWORD",
    "AWS_SECRET",
    "OpenAI__ApiKey",
    "Telegram__BotToken",
    "Auth__ClientSecret",
];

const ORDINARY: [(&str, &str); 5] = [
    ("PATH", "/usr/local/bin:/usr/bin:/bin"),
    ("HOME", "/home/host"),
    ("LANG", "C.UTF-8"),
    ("PWD", "/home/host/work"),
    ("TERM", "xterm-256color"),
];

/// A value the host learns to be secret after it is built.
const KNOWN: &str = "sk-known-to-the-host-4242";

async fn child_env(host: &PluginHost) -> BTreeMap<String, String> {
    let output = host
        .spawn_policy()
        .run(
            ProcessSpawnRequest::new("env"),
            None,
            &CancellationToken::new(),
        )
        .await
        .expect("env runs");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}

#[tokio::test]
async fn no_planted_secret_reaches_a_child() {
    let mut base: Vec<(String, String)> = PLANTED
        .iter()
        .enumerate()
        .map(|(i, name)| ((*name).to_owned(), format!("planted-value-{i:02}")))
        .collect();
    base.extend(ORDINARY.map(|(n, v)| (n.to_owned(), v.to_owned())));
    base.push((
        "UPSTREAM".into(),
        "https://bob:hunter2@proxy.example/".into(),
    ));
    base.push(("EXTRA_FLAGS".into(), format!("--key={KNOWN} --verbose")));
    base.push((
        "GIT_REMOTE".into(),
        "ssh://git@example.org/acme/repo".into(),
    ));
    let host = PluginHost::builder()
        .no_linked_plugins()
        .spawn_policy(ProcessSpawnPolicy::with_base_env(base))
        .build()
        .unwrap();
    host.redactor().add(KNOWN);

    let env = child_env(&host).await;
    let leaked: Vec<&str> = PLANTED
        .iter()
        .copied()
        .filter(|name| env.contains_key(*name))
        .collect();
    assert_eq!(leaked, Vec::<&str>::new(), "reached the child: {env:?}");
    assert!(
        !env.values()
            .any(|v| v.contains("planted-value") || v.contains(KNOWN)),
        "{env:?}"
    );
    assert!(
        !env.contains_key("UPSTREAM"),
        "a URL with a password passed"
    );
    assert!(!env.contains_key("EXTRA_FLAGS"), "a known secret passed");
    for (name, value) in ORDINARY {
        assert_eq!(env.get(name).map(String::as_str), Some(value), "{name}");
    }
    assert_eq!(
        env.get("GIT_REMOTE").map(String::as_str),
        Some("ssh://git@example.org/acme/repo")
    );
}

#[tokio::test]
async fn an_explicit_variable_still_reaches_its_child() {
    let host = PluginHost::builder()
        .no_linked_plugins()
        .spawn_policy(ProcessSpawnPolicy::with_base_env(ORDINARY))
        .build()
        .unwrap();
    host.redactor().add(KNOWN);
    let output = host
        .spawn_policy()
        .run(
            ProcessSpawnRequest::new("env").env("DATABASE_URL", KNOWN),
            None,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains(&format!("DATABASE_URL={KNOWN}")), "{text}");
}

/// Where agents acting for the user listen: a child that inherits one of these can sign
/// with the user's ssh keys, ask the keyring over D-Bus, or drive the docker daemon.
const AGENTS: [(&str, &str); 6] = [
    ("SSH_AUTH_SOCK", "/tmp/ssh-XXXX/agent.1234"),
    ("GPG_AGENT_INFO", "/run/user/1000/gnupg/S.gpg-agent:0:1"),
    ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
    ("DOCKER_HOST", "unix:///var/run/docker.sock"),
    ("KRB5CCNAME", "FILE:/tmp/krb5cc_1000"),
    ("GPG_AGENT_SOCK", "/run/user/1000/gnupg/S.gpg-agent"),
];

#[tokio::test]
async fn no_agent_socket_reaches_a_child_unless_passed_explicitly() {
    let mut base: Vec<(&str, &str)> = AGENTS.to_vec();
    base.extend(ORDINARY);
    let host = PluginHost::builder()
        .no_linked_plugins()
        .spawn_policy(ProcessSpawnPolicy::with_base_env(base))
        .build()
        .unwrap();
    let env = child_env(&host).await;
    for (name, _) in AGENTS {
        assert!(!env.contains_key(name), "{name} reached the child: {env:?}");
    }
    assert!(
        !env.values().any(|v| v.contains("/run/user/1000")),
        "{env:?}"
    );
    for (name, value) in ORDINARY {
        assert_eq!(env.get(name).map(String::as_str), Some(value), "{name}");
    }
    // Passed on purpose, it reaches the one child it was passed to.
    let output = host
        .spawn_policy()
        .run(
            ProcessSpawnRequest::new("env").env("SSH_AUTH_SOCK", "/tmp/chosen.sock"),
            None,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("SSH_AUTH_SOCK=/tmp/chosen.sock"), "{text}");
}
