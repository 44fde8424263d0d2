//! What a toolset factory sees of its user, and what a provider factory
//! does not see.

#![allow(missing_docs)] // test fixtures, not API

use std::sync::Mutex;

use oscova_core::prelude::*;
use oscova_core::{ExposeSecret, SecretString, UserInfo as User, linked_plugins};
use serde_json::json;

pub struct WhoToolset {
    user: String,
    zone: Option<String>,
    key_len: Option<usize>,
}

#[toolset]
impl WhoToolset {
    /// Describes the caller.
    pub fn who(&self, invocation: &ToolInvocation) -> serde_json::Value {
        json!({
            "factory_user": self.user,
            "call_user": invocation.user_id(),
            "zone": self.zone,
            "key_len": self.key_len,
        })
    }
}

static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[plugin(id = "ctx.probe")]
pub struct ProbePlugin;
impl AgentPlugin for ProbePlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|ctx: &AgentPluginContext| {
            let key = ctx.credentials().get("probe.key");
            let debug = format!("{ctx:?} {:?} {key:?}", ctx.credentials());
            SEEN.lock().unwrap().push(debug);
            // The span is named after plugin and user.
            let _entered = ctx.span().entered();
            WhoToolset {
                user: ctx.user_id().to_owned(),
                zone: ctx.time_zone().map(str::to_owned),
                key_len: key.map(|k| k.expose_secret().len()),
            }
        });
    }
}

#[tokio::test]
async fn each_user_gets_their_own_context_and_secrets_stay_hidden() {
    let resolver = |user: &User, key: &str| -> Option<SecretString> {
        (key == "probe.key" && user.id() == "alice")
            .then(|| SecretString::from("alice-very-secret-value"))
    };
    let host = PluginHost::builder()
        .plugins(linked_plugins![ProbePlugin])
        .credentials(resolver)
        .build()
        .unwrap();
    let alice = host.user_scope(User::new("alice").with_time_zone("Europe/Berlin"));
    let bob = host.user_scope(User::new("bob"));

    let a = alice.invoke("ctx_probe__who__who", json!({})).await;
    assert_eq!(
        a.details,
        json!({"factory_user": "alice", "call_user": "alice", "zone": "Europe/Berlin", "key_len": 23})
    );
    let b = bob.invoke("ctx_probe__who__who", json!({})).await;
    assert_eq!(
        b.details,
        json!({"factory_user": "bob", "call_user": "bob", "zone": null, "key_len": null})
    );

    for debug in SEEN.lock().unwrap().iter() {
        assert!(!debug.contains("alice-very-secret-value"), "{debug}");
    }
    // The resolved secret is known to alice's scope.
    assert_eq!(
        alice.redactor().redact("x alice-very-secret-value y"),
        "x [REDACTED] y"
    );
}
