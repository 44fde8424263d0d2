//! A2A follow-ups (feature `a2a-agents`): the `oscova.a2a` plugin's
//! follower, run beside the sessions of `oscova chat --session` and
//! `oscova serve`.
//!
//! Rules: with `[a2a]` agents and a pending directory (the default one
//! when the file names none), the command runs one
//! `oscova_plugin_a2a::follow::Follower` over `[a2a]`, the host's HTTP
//! client and the configuration's per-user credentials (the ones the
//! tools use). A task's result goes to the session whose tool call sent
//! it, through `AgentHost::deliver` as a follow-up: a session open in
//! this process sees it in its next turn (`chat` runs that turn as soon
//! as the message arrives), any other gets it on its stored branch. The
//! follower stops when the command ends ([`Following`] dropped); what it
//! had not delivered stays in the pending files for the next command
//! that runs one. Run one such command per pending directory at a time
//! (the files are locked within a process only).

use oscova_agent::session::agent::AgentHost;
use oscova_core::CancellationToken;

use super::Env;

/// The running follower; stops when dropped.
#[cfg_attr(not(feature = "a2a-agents"), allow(dead_code))]
pub(super) struct Following {
    stop: CancellationToken,
    #[cfg(feature = "a2a-agents")]
    follower: oscova_plugin_a2a::follow::Follower,
}

impl Following {
    /// The hook of `oscova serve`'s follow-up route: whether a push
    /// webhook's id and token are a followed task's (it is then polled).
    pub(super) fn webhook_hook(
        &self,
    ) -> impl Fn(&str, Option<&str>) -> bool + Send + Sync + 'static {
        #[cfg(feature = "a2a-agents")]
        {
            let follower = self.follower.clone();
            move |id: &str, token: Option<&str>| follower.webhook(id, token).is_ok()
        }
        #[cfg(not(feature = "a2a-agents"))]
        |_: &str, _: Option<&str>| false
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Starts the follower for `agents`' sessions, when `[a2a]` has agents
/// and a pending directory.
#[cfg(feature = "a2a-agents")]
pub(super) fn start(env: &Env, agents: &AgentHost) -> Option<Following> {
    use std::sync::Arc;

    use oscova_agent::session::agent::{Delivery, ExtensionMessage};
    use oscova_plugin_a2a::follow::{FollowUpMessage, Follower};

    let config = env.config.a2a_agents();
    if config.agents.is_empty() || config.pending_dir.is_none() {
        return None;
    }
    let host = agents.clone();
    let users = env.config.clone();
    let follower = Follower::new(
        config.clone(),
        env.host.http_client(),
        Arc::new(env.config.credentials()),
        move |user: String, session: String, message: FollowUpMessage| {
            let host = host.clone();
            let user = users.user(Some(&user));
            async move {
                let mut custom =
                    ExtensionMessage::new(FollowUpMessage::CUSTOM_TYPE, message.content());
                custom.details = Some(message.details);
                host.deliver(&user, &session, custom, Delivery::FollowUp)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
        },
    )
    .ok()?;
    let stop = CancellationToken::new();
    tokio::spawn(follower.clone().run(stop.clone()));
    Some(Following { stop, follower })
}

/// Without the feature there is nothing to follow.
#[cfg(not(feature = "a2a-agents"))]
pub(super) fn start(_env: &Env, _agents: &AgentHost) -> Option<Following> {
    None
}
