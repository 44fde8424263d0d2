//! A task's webhook as the protocol spells it
//! (`TaskPushNotificationConfig`).
//!
//! Rules: the secrets (the `token` and the `authentication.credentials`)
//! are never shown by `Debug`, and [`PushConfig::redacted`] is the config
//! as a server answers it, without them.

use serde::{Deserialize, Serialize};

/// How the webhook wants to be called: `Authorization: <scheme>
/// <credentials>`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PushAuthentication {
    /// The HTTP authentication scheme (`Bearer`, `Basic`).
    pub scheme: String,
    /// The credentials: a secret, never answered back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// A webhook of a task (`TaskPushNotificationConfig`), as the client set
/// it and the store keeps it. Its `Debug` shows no secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PushConfig {
    /// Its id (made by the server when the client gave none; left out
    /// when empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The task it is for (the server sets it; left out when empty).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    /// Where events are POSTed (http or https).
    pub url: String,
    /// Sent as `X-A2A-Notification-Token`: a secret, never answered back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Sent as `Authorization`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<PushAuthentication>,
}

impl std::fmt::Debug for PushConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushConfig")
            .field("id", &self.id)
            .field("task_id", &self.task_id)
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| "[REDACTED]"))
            .field(
                "scheme",
                &self.authentication.as_ref().map(|a| a.scheme.as_str()),
            )
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for PushAuthentication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushAuthentication")
            .field("scheme", &self.scheme)
            .finish_non_exhaustive()
    }
}

impl PushConfig {
    /// A webhook at `url`, with no id, task, token or authentication yet
    /// (the server fills the id and the task).
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            id: String::new(),
            task_id: String::new(),
            url: url.into(),
            token: None,
            authentication: None,
        }
    }

    /// With `token`, sent back as `X-A2A-Notification-Token`.
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// The config as it is answered: without the token and credentials.
    pub fn redacted(&self) -> Self {
        let mut config = self.clone();
        config.token = None;
        if let Some(auth) = &mut config.authentication {
            auth.credentials = None;
        }
        config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clients_webhook_sends_only_what_it_set_and_an_answer_no_secret() {
        let config = PushConfig::new("https://hooks.example/a").with_token("t0k");
        assert_eq!(
            serde_json::to_value(&config).unwrap(),
            serde_json::json!({"url": "https://hooks.example/a", "token": "t0k"})
        );
        let mut stored = config;
        stored.id = "h1".into();
        stored.task_id = "task-1".into();
        stored.authentication = Some(PushAuthentication {
            scheme: "Bearer".into(),
            credentials: Some("s3cret".into()),
        });
        let answered = serde_json::to_value(stored.redacted()).unwrap();
        assert_eq!(answered["id"], "h1");
        assert_eq!(answered["taskId"], "task-1");
        assert_eq!(
            answered["authentication"],
            serde_json::json!({"scheme": "Bearer"})
        );
        assert!(answered.get("token").is_none());
        assert!(
            !format!("{stored:?}").contains("s3cret") && !format!("{stored:?}").contains("t0k")
        );
    }
}
