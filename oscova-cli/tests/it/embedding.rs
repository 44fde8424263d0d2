//! A host binary's view: `Launcher` in-process, over a plugin defined
//! here, with the config file feeding users, time zones and credentials.
//!
//! Results are observed through an after-tool-call hook added with
//! `Launcher::host_builder`, which sees them as the CLI prints them
//! (redacted). Only paths that never prompt run in-process: a test's
//! stderr may be a developer's terminal.

use crate::support;

use std::sync::{Arc, Mutex};

use oscova_cli::{ExitStatus, Launcher};
use oscova_core::prelude::*;
use oscova_core::{ApprovalRequest, ExposeSecret, SecretString, linked_plugins};

/// Reports what its factory was given.
pub struct ProbeToolset {
    user: String,
    zone: Option<String>,
    token: Option<SecretString>,
}

#[toolset]
impl ProbeToolset {
    /// Says who it runs for, and leaks its credential on purpose.
    pub fn whoami(&self) -> String {
        let token = self.token.as_ref().map(|t| t.expose_secret().to_owned());
        format!("{} {:?} {:?}", self.user, self.zone, token)
    }

    /// Runs only when approved.
    #[tool(approval = Required)]
    pub fn guarded() -> String {
        "ran".to_owned()
    }
}

/// The probe plugin.
#[plugin(id = "test.probe")]
pub struct ProbePlugin;

impl AgentPlugin for ProbePlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|ctx: &AgentPluginContext| ProbeToolset {
            user: ctx.user_id().to_owned(),
            zone: ctx.time_zone().map(str::to_owned),
            token: ctx.credentials().get("probe.token"),
        });
    }
}

const CONFIG: &str = r#"
default_user = "alice"

[credentials]
"probe.token" = "shared-token-123"

[users.alice]
time_zone = "Europe/Berlin"

[users.alice.credentials]
"probe.token" = "alice-token-456"
"#;

type Seen = Arc<Mutex<Vec<(String, bool)>>>;

/// A launcher over the probe plugin only, recording every result.
fn probe_launcher() -> (Launcher, Seen) {
    let seen: Seen = Arc::default();
    let sink = seen.clone();
    let launcher = Launcher::new().host_builder(move |b| {
        b.plugins(linked_plugins![ProbePlugin])
            .after_tool_call(move |event| {
                let r = &event.result;
                sink.lock().unwrap().push((r.content.clone(), r.is_error));
            })
    });
    (launcher, seen)
}

fn config() -> String {
    let path = support::temp_dir("embedding").join("config.toml");
    std::fs::write(&path, CONFIG).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn users_time_zones_and_credentials_come_from_the_config() {
    let config = config();
    let (launcher, seen) = probe_launcher();
    let status = launcher.run_from([
        "oscova",
        "--json",
        "--config",
        &config,
        "tools",
        "call",
        "test_probe__probe__whoami",
    ]);
    assert_eq!(status, ExitStatus::Success);
    let (content, is_error) = seen.lock().unwrap().pop().unwrap();
    assert!(!is_error);
    assert_eq!(
        content, r#"alice Some("Europe/Berlin") Some("[REDACTED]")"#,
        "the user's own credential, redacted"
    );

    let (launcher, seen) = probe_launcher();
    let status = launcher.run_from([
        "oscova",
        "--json",
        "--config",
        &config,
        "tools",
        "call",
        "test_probe__probe__whoami",
        "--user",
        "bob",
    ]);
    assert_eq!(status, ExitStatus::Success);
    let (content, _) = seen.lock().unwrap().pop().unwrap();
    assert_eq!(content, r#"bob None Some("[REDACTED]")"#);
}

#[test]
fn the_embedding_hosts_approval_handler_can_approve() {
    let config = config();
    let (launcher, seen) = probe_launcher();
    let status = launcher
        .approval_handler(|r: &ApprovalRequest<'_>| r.wire_name == "test_probe__probe__guarded")
        .run_from([
            "oscova",
            "--json",
            "--config",
            &config,
            "tools",
            "call",
            "test_probe__probe__guarded",
        ]);
    assert_eq!(status, ExitStatus::Success);
    assert_eq!(
        seen.lock().unwrap().pop().unwrap(),
        ("ran".to_owned(), false)
    );
}

#[test]
fn parse_errors_keep_clap_codes() {
    let (launcher, _) = probe_launcher();
    assert_eq!(launcher.run_from(["oscova", "--bogus"]), ExitStatus::Usage);
    let (launcher, _) = probe_launcher();
    assert_eq!(
        launcher.run_from(["oscova", "--version"]),
        ExitStatus::Success
    );
}

#[test]
fn the_launcher_names_the_program_and_its_version() {
    let command = Launcher::new()
        .name("acme-agent")
        .version("1.2.3")
        .command();
    assert_eq!(command.get_name(), "acme-agent");
    assert_eq!(command.render_version().trim(), "acme-agent 1.2.3");
    let default = Launcher::new().command();
    assert_eq!(
        default.render_version().trim(),
        format!("oscova {}", env!("CARGO_PKG_VERSION"))
    );
}
