//! What a server offers beside tools: its prompt and resource sources, and
//! the one error type they answer with.
//!
//! Rules: a source is asked per request, for the user scope the request
//! is served from, so each user sees what their scope gives them and
//! nothing is computed for all users at once. A capability is advertised
//! only when a source for it is there (`prompts` with a prompt source,
//! `resources` with a resource source, `completions` with either), and a
//! method without its source is -32601, as before. A source's refusal is
//! a [`SourceError`]: what the client got wrong (an unknown prompt, a
//! missing required argument, a value outside the declared choices, a
//! path the files boundary refuses, what a gateway's upstream server
//! refused as such: [`SourceError::Invalid`]) is -32602 invalid params, an unknown
//! resource -32002 (rmcp turns it into -32602 on 2026-07-28), and only a
//! source that failed on its own side is -32603. A source whose list can
//! change gives [`ListChanges`]; then `listChanged` is advertised and each
//! session (or `subscriptions/listen` request that asks for it) is sent
//! `notifications/prompts/list_changed` or
//! `notifications/resources/list_changed` once per [`ListChangeNotifier::changed`]
//! of the signal the source gives for the session's user
//! ([`PromptSource::list_changes_for`]; the same for every user by default)
//! (changes made while one is being sent fold into the next), for as long
//! as the session lasts.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::ErrorData;
use serde_json::json;

use super::prompt::PromptSource;
use super::resource::ResourceSource;

/// A boxed future a source returns, borrowing what it was asked with.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a prompt or resource source refused a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// No prompt of that name is served to this user.
    #[error("unknown prompt `{name}`")]
    UnknownPrompt {
        /// The name asked for.
        name: String,
    },
    /// A required argument of the prompt was not given.
    #[error("prompt `{prompt}` needs the argument `{argument}`")]
    MissingArgument {
        /// The prompt.
        prompt: String,
        /// The missing argument.
        argument: String,
    },
    /// An argument the prompt does not declare.
    #[error("prompt `{prompt}` has no argument `{argument}`; it takes: {known}")]
    UnknownArgument {
        /// The prompt.
        prompt: String,
        /// The argument given.
        argument: String,
        /// The arguments it takes, comma-separated (or `none`).
        known: String,
    },
    /// A value outside the choices the argument declares.
    #[error(
        "`{value}` is not a choice of `{argument}` in prompt `{prompt}`; choose one of: {choices}"
    )]
    NotAChoice {
        /// The prompt.
        prompt: String,
        /// The argument.
        argument: String,
        /// The value given.
        value: String,
        /// The declared choices, comma-separated.
        choices: String,
    },
    /// No resource at that URI is served to this user.
    #[error("no resource `{uri}`")]
    UnknownResource {
        /// The URI asked for.
        uri: String,
    },
    /// The URI names something the source will not serve (a path the
    /// files boundary refuses: `..`, a link out of the root, a file over
    /// the size cap, not a regular file).
    #[error("resource `{uri}` refused: {reason}")]
    Refused {
        /// The URI asked for.
        uri: String,
        /// Why, in words the client can act on.
        reason: String,
    },
    /// A request the source (or the server behind it, for a gateway's
    /// upstream prompts and resources) refused as invalid, in its words.
    #[error("{0}")]
    Invalid(String),
    /// The source failed on its own side.
    #[error("{0}")]
    Failed(String),
}

impl SourceError {
    /// The JSON-RPC error the client gets.
    pub fn to_mcp(&self) -> ErrorData {
        let message = self.to_string();
        match self {
            Self::UnknownResource { uri } => {
                ErrorData::resource_not_found(message, Some(json!({ "uri": uri })))
            }
            Self::Failed(_) => ErrorData::internal_error(message, None),
            _ => ErrorData::invalid_params(message, None),
        }
    }
}

impl From<SourceError> for ErrorData {
    fn from(error: SourceError) -> Self {
        error.to_mcp()
    }
}

/// Raises a source's list-changed signal: see [`list_changes`].
#[derive(Debug, Clone)]
pub struct ListChangeNotifier {
    tx: Arc<tokio::sync::watch::Sender<u64>>,
}

impl ListChangeNotifier {
    /// Says the list changed: every session serving the source is told.
    pub fn changed(&self) {
        self.tx.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// How many [`ListChanges`] (clones included) still hear this
    /// notifier: a host that makes signals on demand can drop those no
    /// session holds any more.
    pub fn listeners(&self) -> usize {
        self.tx.receiver_count()
    }
}

/// What a source gives for its list-changed signal
/// ([`PromptSource::list_changes`], [`ResourceSource::list_changes`]).
#[derive(Debug, Clone)]
pub struct ListChanges {
    // Several when merged by `any`: a change of one is a change.
    rx: Vec<tokio::sync::watch::Receiver<u64>>,
}

impl ListChanges {
    /// One signal raised whenever any of `changes` is (what a source
    /// serving several sources gives); `None` when there is none.
    pub fn any(changes: impl IntoIterator<Item = ListChanges>) -> Option<Self> {
        let rx: Vec<_> = changes.into_iter().flat_map(|c| c.rx).collect();
        (!rx.is_empty()).then_some(Self { rx })
    }

    /// These changes, from now on: a change raised before is not one.
    pub(crate) fn starting_now(mut self) -> Self {
        for rx in &mut self.rx {
            rx.borrow_and_update();
        }
        self
    }

    /// Waits for the next change; `false` when every notifier is gone.
    pub(crate) async fn next(&mut self) -> bool {
        use std::task::Poll;
        loop {
            if self.rx.is_empty() {
                return false;
            }
            let (index, changed) = {
                let mut waits: Vec<_> = self
                    .rx
                    .iter_mut()
                    .map(|rx| Box::pin(rx.changed()))
                    .collect();
                std::future::poll_fn(|cx| {
                    for (index, wait) in waits.iter_mut().enumerate() {
                        if let Poll::Ready(outcome) = wait.as_mut().poll(cx) {
                            return Poll::Ready((index, outcome.is_ok()));
                        }
                    }
                    Poll::Pending
                })
                .await
            };
            if changed {
                return true;
            }
            // That notifier is gone; the others may still change.
            self.rx.remove(index);
        }
    }
}

/// A list-changed signal: the notifier for the source to raise, the
/// changes for it to hand out.
///
/// ```
/// let (notifier, changes) = oscova_mcp::list_changes();
/// notifier.changed();
/// # drop(changes);
/// ```
pub fn list_changes() -> (ListChangeNotifier, ListChanges) {
    let (tx, rx) = tokio::sync::watch::channel(0);
    (
        ListChangeNotifier { tx: Arc::new(tx) },
        ListChanges { rx: vec![rx] },
    )
}

/// The sources a server has beside its tools.
#[derive(Clone, Default)]
pub(crate) struct Offer {
    pub(crate) prompts: Option<Arc<dyn PromptSource>>,
    pub(crate) resources: Option<Arc<dyn ResourceSource>>,
}

impl std::fmt::Debug for Offer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Offer")
            .field("prompts", &self.prompts.is_some())
            .field("resources", &self.resources.is_some())
            .finish()
    }
}

/// The methods a prompt source serves.
pub(crate) const PROMPT_METHODS: [&str; 2] = ["prompts/list", "prompts/get"];

/// The methods a resource source serves.
pub(crate) const RESOURCE_METHODS: [&str; 5] = [
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
];

impl Offer {
    /// Whether `method` is one this offer serves.
    pub(crate) fn serves(&self, method: &str) -> bool {
        (self.prompts.is_some() && PROMPT_METHODS.contains(&method))
            || (self.resources.is_some() && RESOURCE_METHODS.contains(&method))
            || (self.completes() && method == "completion/complete")
    }

    /// Whether `completion/complete` is served.
    pub(crate) fn completes(&self) -> bool {
        self.prompts.is_some() || self.resources.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn merged_changes_outlive_a_dropped_notifier_and_end_with_the_last() {
        let (one, first) = list_changes();
        let (two, second) = list_changes();
        let mut any = ListChanges::any([first, second])
            .map(ListChanges::starting_now)
            .unwrap_or_else(|| unreachable!("two signals"));
        drop(one);
        two.changed();
        assert!(any.next().await, "the live notifier's change is seen");
        drop(two);
        assert!(!any.next().await, "no notifier is left");
        assert!(ListChanges::any([]).is_none());
    }

    #[test]
    fn listeners_count_the_signals_still_held() {
        let (notifier, changes) = list_changes();
        assert_eq!(notifier.listeners(), 1);
        let held = ListChanges::any([changes.clone()]);
        assert_eq!(notifier.listeners(), 2, "a merged clone hears it too");
        drop(held);
        drop(changes);
        assert_eq!(notifier.listeners(), 0);
    }
}
