//! The A2A 1.0 methods: one enum that the JSON-RPC binding, the HTTP+JSON
//! binding and the streams all name, on the server's side and the
//! client's.
//!
//! Rules: a method's JSON-RPC name is its variant's name
//! (`SendMessage`); its HTTP+JSON request is [`Method::http`], the
//! specification's verb and path with each id one percent-encoded path
//! segment ([`path_segment`]), so an id names one task and nothing else on
//! the agent's server. A new method is one line in the list below; the
//! compiler then asks for its HTTP+JSON request here and for its handler
//! wherever methods are answered.

/// Defines [`Method`] and its name table from one list, so a variant and
/// its JSON-RPC name cannot drift apart.
macro_rules! methods {
    ($($(#[$doc:meta])* $variant:ident,)*) => {
        /// An A2A 1.0 method.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Method {
            $($(#[$doc])* $variant,)*
        }

        impl Method {
            /// Every method, in the specification's order.
            pub const ALL: &'static [Method] = &[$(Method::$variant,)*];

            /// The method's JSON-RPC name (`SendMessage`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Method::$variant => stringify!($variant),)*
                }
            }
        }
    };
}

methods! {
    /// Sends a message: a new task, or the next message of one.
    SendMessage,
    /// [`SendMessage`](Method::SendMessage), answered as a stream of the
    /// task's events.
    SendStreamingMessage,
    /// A task, with at most `historyLength` of its messages.
    GetTask,
    /// A page of the caller's tasks.
    ListTasks,
    /// Cancels a task.
    CancelTask,
    /// The events of a running task, as a stream.
    SubscribeToTask,
    /// Adds (or replaces) a webhook of a task.
    CreateTaskPushNotificationConfig,
    /// One webhook of a task.
    GetTaskPushNotificationConfig,
    /// The webhooks of a task.
    ListTaskPushNotificationConfigs,
    /// Deletes a webhook of a task.
    DeleteTaskPushNotificationConfig,
    /// The card for callers with a token.
    GetExtendedAgentCard,
}

/// The verb of an HTTP+JSON request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verb {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
    /// `DELETE`.
    Delete,
}

impl Verb {
    /// The verb as HTTP spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Delete => "DELETE",
        }
    }
}

impl Method {
    /// The method named `name` over JSON-RPC, if it is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|m| m.name() == name)
    }

    /// Whether the method is answered with a stream of events.
    pub fn streams(self) -> bool {
        matches!(self, Self::SendStreamingMessage | Self::SubscribeToTask)
    }

    /// The method's HTTP+JSON request: its verb and its path under the
    /// interface's URL, `task` (the task's id) and `config` (a webhook's
    /// id) in it where the path names them, each one path segment.
    ///
    /// ```
    /// use oscova_a2a::model::{Method, Verb};
    ///
    /// assert_eq!(Method::GetTask.http("t/1", ""), (Verb::Get, "/tasks/t%2F1".to_owned()));
    /// assert_eq!(Method::SendMessage.http("", ""), (Verb::Post, "/message:send".to_owned()));
    /// ```
    pub fn http(self, task: &str, config: &str) -> (Verb, String) {
        let (task, config) = (path_segment(task), path_segment(config));
        match self {
            Self::SendMessage => (Verb::Post, "/message:send".to_owned()),
            Self::SendStreamingMessage => (Verb::Post, "/message:stream".to_owned()),
            Self::GetTask => (Verb::Get, format!("/tasks/{task}")),
            Self::ListTasks => (Verb::Get, "/tasks".to_owned()),
            Self::CancelTask => (Verb::Post, format!("/tasks/{task}:cancel")),
            Self::SubscribeToTask => (Verb::Post, format!("/tasks/{task}:subscribe")),
            Self::CreateTaskPushNotificationConfig => {
                (Verb::Post, format!("/tasks/{task}/pushNotificationConfigs"))
            }
            Self::GetTaskPushNotificationConfig => (
                Verb::Get,
                format!("/tasks/{task}/pushNotificationConfigs/{config}"),
            ),
            Self::ListTaskPushNotificationConfigs => {
                (Verb::Get, format!("/tasks/{task}/pushNotificationConfigs"))
            }
            Self::DeleteTaskPushNotificationConfig => (
                Verb::Delete,
                format!("/tasks/{task}/pushNotificationConfigs/{config}"),
            ),
            Self::GetExtendedAgentCard => (Verb::Get, "/extendedAgentCard".to_owned()),
        }
    }
}

/// `text` as one path segment: every byte but RFC 3986's unreserved ones
/// percent-encoded, so `/`, `?`, `#`, `..` and `:` stay inside it.
pub fn path_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_reads_back_from_its_name() {
        for method in Method::ALL {
            assert_eq!(Method::from_name(method.name()), Some(*method));
        }
        assert_eq!(Method::from_name("tasks/get"), None);
    }

    #[test]
    fn a_task_id_stays_one_path_segment() {
        assert_eq!(path_segment("abc-1_2~"), "abc-1_2~");
        assert_eq!(path_segment("../x"), "%2E%2E%2Fx");
        assert_eq!(path_segment("a:cancel?b#c"), "a%3Acancel%3Fb%23c");
    }
}
