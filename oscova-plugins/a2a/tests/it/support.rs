//! The official A2A Python SDK's server (`scripts/a2a/agents.py`), started
//! on a loopback port for one test and killed when dropped, and hosts over
//! the plugin.

use std::path::PathBuf;
use std::process::Stdio;

use oscova_plugin_a2a::{A2aConfig, A2aPlugin, AgentConfig};
use oscova_test_kit::{TestHost, TestScope, TestUser};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The SDK's server with its `echo` and `slow` agents.
pub(crate) struct Agents {
    _child: Child,
    port: u16,
}

impl Agents {
    /// Starts `agents.py` with `args` and waits for its port.
    pub(crate) async fn start(args: &[&str]) -> Self {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/a2a/agents.py");
        let mut child = Command::new(oscova_test_support::python::a2a_python())
            .arg(script)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start scripts/a2a/agents.py");
        let stdout = child.stdout.take().expect("its stdout");
        let mut lines = BufReader::new(stdout).lines();
        let port = tokio::time::timeout(std::time::Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await.expect("read its stdout") {
                if let Some(port) = line.strip_prefix("PORT ") {
                    return port.trim().parse::<u16>().expect("a port number");
                }
            }
            panic!("agents.py ended without printing its port")
        })
        .await
        .expect("agents.py printed its port within 60 s");
        Self {
            _child: child,
            port,
        }
    }

    /// The URL of agent `name` (`echo` or `slow`).
    pub(crate) fn url(&self, name: &str) -> String {
        format!("http://127.0.0.1:{}/{name}", self.port)
    }

    /// A configuration naming both agents, each with `configure` applied.
    pub(crate) fn config(&self, configure: impl Fn(AgentConfig) -> AgentConfig) -> A2aConfig {
        let mut config = A2aConfig::default();
        for name in ["echo", "slow"] {
            config
                .agents
                .insert(name.to_owned(), configure(AgentConfig::new(self.url(name))));
        }
        config
    }
}

/// A scope of `user` on a host with the plugin over `config`.
pub(crate) fn scope(config: A2aConfig, user: TestUser) -> TestScope {
    let plugin = A2aPlugin::new(config).expect("a valid configuration");
    TestHost::for_plugin_instance(plugin).scope_for(user)
}
