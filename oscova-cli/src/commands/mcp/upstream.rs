//! The adapter between the `oscova.mcp` plugin's host API
//! (`oscova_plugin_mcp::McpUpstreams`) and the MCP server's prompt and
//! resource sources (`oscova-mcp` and the plugin know nothing of each
//! other; the host joins them): the `[mcp.servers]` prompts and
//! resources, re-served by the gateway under each server's name.
//!
//! Rules:
//! - **Prompts.** Prompt `P` of server `S` is served as `S'__P`, `S'`
//!   being `S` normalised as a wire-name segment (`notes`, `my-notes` →
//!   `my_notes`): the tools' rule, so `notes__summarize` sits beside
//!   `oscova_mcp__notes__shout_text`. They come after the config's and
//!   the extensions' prompts in one list (`PromptSources`), which keeps
//!   names unique (`NAME:2`). `prompts/get` and completion go back to the
//!   server whose listing has that name, over that user's connection.
//! - **Resources.** Upstream URI `U` of server `S` is served as
//!   `mcp://S/U`, `S` percent-encoded where it holds anything outside
//!   `A-Z a-z 0-9 - . _ ~`, `U` kept as it is (so a template
//!   `notes://note/{id}` stays a template: `mcp://notes/notes://note/{id}`,
//!   and what a client expands from it routes back). `resources/read`
//!   strips the prefix and reads `U` from `S`; the contents come back
//!   under the served URI. The files root's resources (`FilesResources`)
//!   come first and the servers' after, served as one by
//!   `oscova_mcp::resource::ResourceSources` (a URI is the first source's
//!   that knows it); the files root stays the only subscribable source:
//!   subscribing to an `mcp://` URI is accepted but sends no updates.
//!   Names of listed resources and templates are prefixed as prompts
//!   are (`notes__readme`). The resources a served prompt embeds or links
//!   are under their served URIs too.
//! - **Users.** Every request goes through the plugin's API with the
//!   request's user scope: a `per_user` server answers each user over
//!   that user's own connection, never another's (the plugin's rule).
//! - **Failures.** A server whose listing fails (it cannot start, the
//!   user lacks its credential) is left out of that list, so the others
//!   are still listed; getting, reading or completing on it is an error
//!   naming it (invalid params for what the server refused as such, an
//!   unknown prompt or resource for what it does not offer, internal
//!   error otherwise). A server without the capability lists nothing.
//! - **Changes.** A server's `notifications/prompts/list_changed` or
//!   `resources/list_changed` is sent on as the gateway's own
//!   notification: a shared server's to every connected client, a
//!   `per_user` server's only to the sessions of the user whose
//!   connection it came on (so no user learns of another's changes);
//!   the client then lists again and gets its own user's list.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use oscova_core::UserScope;
use oscova_core::wire::normalize_segment;
use oscova_mcp::prompt::{PromptArguments, PromptSource};
use oscova_mcp::resource::ResourceSource;
use oscova_mcp::rmcp::model::{
    GetPromptResult, Prompt, Resource, ResourceContents, ResourceTemplate,
};
use oscova_mcp::{BoxFuture, ListChangeNotifier, ListChanges, SourceError, list_changes};
use oscova_plugin_mcp::{ChangedList, McpUpstreams, UpstreamError};

/// The scheme of served upstream URIs.
const SCHEME: &str = "mcp://";

/// The list-changed signals of the upstream prompts and resources, raised
/// by the plugin's callback.
pub(crate) fn changes(upstreams: &McpUpstreams) -> (UserSignals, UserSignals) {
    let (prompts, resources) = (UserSignals::new(), UserSignals::new());
    let (p, r) = (prompts.clone(), resources.clone());
    upstreams.on_list_changed(move |change| match change.list {
        ChangedList::Prompts => p.raise(change.user.as_deref()),
        ChangedList::Resources => r.raise(change.user.as_deref()),
        _ => {}
    });
    (prompts, resources)
}

/// One list's change signals: one for every session (a shared server's
/// changes) and one per user (a `per_user` server's, which only that
/// user's sessions are told of).
#[derive(Clone)]
pub(crate) struct UserSignals {
    all: (ListChangeNotifier, ListChanges),
    users: Arc<Mutex<HashMap<String, (ListChangeNotifier, ListChanges)>>>,
}

impl UserSignals {
    fn new() -> Self {
        Self {
            all: list_changes(),
            users: Arc::default(),
        }
    }

    /// Says the list changed for `user`'s sessions, or for every
    /// session when `None`.
    fn raise(&self, user: Option<&str>) {
        let Some(user) = user else {
            self.all.0.changed();
            return;
        };
        let users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((notifier, _)) = users.get(user) {
            notifier.changed();
        }
    }

    /// The signal every session hears (what the capability is advertised
    /// on).
    fn every(&self) -> ListChanges {
        self.all.1.clone()
    }

    /// The signal `user`'s sessions hear: every session's and their own.
    /// Users whose sessions are all gone are forgotten here (only the
    /// map's own receiver still hears them), so the map holds the users
    /// with a session open, not every user ever served.
    fn of(&self, user: &str) -> ListChanges {
        let mut users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
        users.retain(|id, (notifier, _)| id == user || notifier.listeners() > 1);
        let own = users.entry(user.to_owned()).or_insert_with(list_changes);
        ListChanges::any([self.all.1.clone(), own.1.clone()]).unwrap_or_else(|| self.every())
    }
}

/// The prefix of server `server`'s prompt and resource names.
fn prefix(server: &str) -> String {
    format!("{}__", normalize_segment(server))
}

/// `uri` of server `server` as served.
pub(crate) fn served_uri(server: &str, uri: &str) -> String {
    let mut out = String::from(SCHEME);
    for byte in server.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out.push('/');
    out.push_str(uri);
    out
}

/// The server and upstream URI a served URI names, if it is one.
pub(crate) fn upstream_uri(uri: &str) -> Option<(String, &str)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let (server, upstream) = rest.split_once('/')?;
    if upstream.is_empty() {
        return None;
    }
    let bytes = server.as_bytes();
    let mut name = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte == b'%' {
            let hex = std::str::from_utf8(bytes.get(at + 1..at + 3)?).ok()?;
            name.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            name.push(byte);
            at += 1;
        }
    }
    Some((String::from_utf8(name).ok()?, upstream))
}

/// `got` with the URIs of its embedded resources and resource links
/// served (`mcp://S/U`), so a client reads them back through the gateway.
fn served_resources(server: &str, got: GetPromptResult) -> Result<GetPromptResult, SourceError> {
    let failed = |e: serde_json::Error| SourceError::Failed(format!("MCP server `{server}`: {e}"));
    let mut json = serde_json::to_value(got).map_err(failed)?;
    if let Some(messages) = json.get_mut("messages").and_then(|m| m.as_array_mut()) {
        for content in messages.iter_mut().filter_map(|m| m.get_mut("content")) {
            let uri = match content.get("type").and_then(|t| t.as_str()) {
                Some("resource") => content.get_mut("resource").and_then(|r| r.get_mut("uri")),
                Some("resource_link") => content.get_mut("uri"),
                _ => None,
            };
            if let Some(uri) = uri
                && let Some(text) = uri.as_str()
            {
                *uri = served_uri(server, text).into();
            }
        }
    }
    serde_json::from_value(json).map_err(failed)
}

/// A refusal of the plugin's API as the client gets it.
fn source_error(error: UpstreamError, unknown: impl FnOnce() -> SourceError) -> SourceError {
    match error {
        UpstreamError::UnknownServer(_) | UpstreamError::NotOffered { .. } => unknown(),
        UpstreamError::Refused { code: -32002, .. } => unknown(),
        UpstreamError::Refused { code: -32602, .. } => SourceError::Invalid(error.to_string()),
        other => SourceError::Failed(other.to_string()),
    }
}

/// The `[mcp.servers]` prompts (see the module rules).
pub(crate) struct UpstreamPrompts {
    upstreams: McpUpstreams,
    changes: UserSignals,
}

impl UpstreamPrompts {
    pub(crate) fn new(upstreams: McpUpstreams, changes: UserSignals) -> Self {
        Self { upstreams, changes }
    }

    /// The server that lists `name` (as served) for `scope`'s user, and
    /// its own name for it.
    async fn route(&self, scope: &UserScope, name: &str) -> Result<(String, String), SourceError> {
        for server in self.upstreams.servers() {
            let Some(own) = name.strip_prefix(&prefix(server)) else {
                continue;
            };
            let Ok(listed) = self.upstreams.list_prompts(scope, server).await else {
                continue;
            };
            if listed.iter().any(|p| p.name == own) {
                return Ok((server.to_owned(), own.to_owned()));
            }
        }
        Err(SourceError::UnknownPrompt {
            name: name.to_owned(),
        })
    }
}

impl PromptSource for UpstreamPrompts {
    fn list<'a>(&'a self, scope: &'a UserScope) -> BoxFuture<'a, Result<Vec<Prompt>, SourceError>> {
        Box::pin(async move {
            let mut out = Vec::new();
            for server in self.upstreams.servers() {
                let Ok(prompts) = self.upstreams.list_prompts(scope, server).await else {
                    continue;
                };
                let prefix = prefix(server);
                out.extend(prompts.into_iter().map(|mut p| {
                    p.name = format!("{prefix}{}", p.name);
                    p
                }));
            }
            Ok(out)
        })
    }

    fn get<'a>(
        &'a self,
        scope: &'a UserScope,
        name: &'a str,
        arguments: &'a PromptArguments,
    ) -> BoxFuture<'a, Result<GetPromptResult, SourceError>> {
        Box::pin(async move {
            let (server, own) = self.route(scope, name).await?;
            let got = self
                .upstreams
                .get_prompt(scope, &server, &own, arguments)
                .await
                .map_err(|e| {
                    source_error(e, || SourceError::UnknownPrompt {
                        name: name.to_owned(),
                    })
                })?;
            served_resources(&server, got)
        })
    }

    fn complete<'a>(
        &'a self,
        scope: &'a UserScope,
        name: &'a str,
        argument: &'a str,
        value: &'a str,
        context: &'a PromptArguments,
    ) -> BoxFuture<'a, Result<Vec<String>, SourceError>> {
        Box::pin(async move {
            let (server, own) = self.route(scope, name).await?;
            self.upstreams
                .complete_prompt_argument(scope, &server, &own, argument, value, context)
                .await
                .map_err(|e| {
                    source_error(e, || SourceError::UnknownPrompt {
                        name: name.to_owned(),
                    })
                })
        })
    }

    fn list_changes(&self) -> Option<ListChanges> {
        Some(self.changes.every())
    }

    fn list_changes_for(&self, scope: &UserScope) -> Option<ListChanges> {
        Some(self.changes.of(scope.user().id()))
    }
}

/// The `[mcp.servers]` resources, under their served URIs (see the module
/// rules); served after the files root's through `ResourceSources`.
pub(crate) struct UpstreamResources {
    upstreams: McpUpstreams,
    changes: UserSignals,
}

impl UpstreamResources {
    /// The servers' resources through the plugin's API, with their
    /// resources' change signal.
    pub(crate) fn new(upstreams: McpUpstreams, changes: UserSignals) -> Self {
        Self { upstreams, changes }
    }

    /// Every server's listing of one kind, each item renamed and under
    /// its served URI.
    async fn each<T>(
        &self,
        scope: &UserScope,
        list: impl AsyncListing<T>,
        mut serve: impl FnMut(&str, T) -> T,
    ) -> Vec<T> {
        let mut out = Vec::new();
        for server in self.upstreams.servers() {
            if let Ok(items) = list.list(&self.upstreams, scope, server).await {
                out.extend(items.into_iter().map(|item| serve(server, item)));
            }
        }
        out
    }
}

/// One of the plugin API's listings, by kind.
trait AsyncListing<T> {
    fn list<'a>(
        &'a self,
        upstreams: &'a McpUpstreams,
        scope: &'a UserScope,
        server: &'a str,
    ) -> BoxFuture<'a, Result<Vec<T>, UpstreamError>>;
}

struct Resources;
struct Templates;

impl AsyncListing<Resource> for Resources {
    fn list<'a>(
        &'a self,
        upstreams: &'a McpUpstreams,
        scope: &'a UserScope,
        server: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Resource>, UpstreamError>> {
        Box::pin(upstreams.list_resources(scope, server))
    }
}

impl AsyncListing<ResourceTemplate> for Templates {
    fn list<'a>(
        &'a self,
        upstreams: &'a McpUpstreams,
        scope: &'a UserScope,
        server: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ResourceTemplate>, UpstreamError>> {
        Box::pin(upstreams.list_resource_templates(scope, server))
    }
}

impl ResourceSource for UpstreamResources {
    fn list<'a>(
        &'a self,
        scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<Resource>, SourceError>> {
        Box::pin(async move {
            Ok(self
                .each(scope, Resources, |server, mut r: Resource| {
                    r.uri = served_uri(server, &r.uri);
                    r.name = format!("{}{}", prefix(server), r.name);
                    r
                })
                .await)
        })
    }

    fn templates<'a>(
        &'a self,
        scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<ResourceTemplate>, SourceError>> {
        Box::pin(async move {
            Ok(self
                .each(scope, Templates, |server, mut t: ResourceTemplate| {
                    t.uri_template = served_uri(server, &t.uri_template);
                    t.name = format!("{}{}", prefix(server), t.name);
                    t
                })
                .await)
        })
    }

    fn read<'a>(
        &'a self,
        scope: &'a UserScope,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ResourceContents>, SourceError>> {
        Box::pin(async move {
            let unknown = || SourceError::UnknownResource {
                uri: uri.to_owned(),
            };
            let (server, upstream) = upstream_uri(uri).ok_or_else(unknown)?;
            let mut contents = self
                .upstreams
                .read_resource(scope, &server, upstream)
                .await
                .map_err(|e| source_error(e, unknown))?;
            for item in &mut contents {
                match item {
                    ResourceContents::TextResourceContents { uri: at, .. }
                    | ResourceContents::BlobResourceContents { uri: at, .. } => {
                        *at = served_uri(&server, at);
                    }
                    _ => {}
                }
            }
            Ok(contents)
        })
    }

    fn complete<'a>(
        &'a self,
        scope: &'a UserScope,
        template: &'a str,
        argument: &'a str,
        value: &'a str,
    ) -> BoxFuture<'a, Result<Vec<String>, SourceError>> {
        Box::pin(async move {
            let unknown = || SourceError::UnknownResource {
                uri: template.to_owned(),
            };
            let (server, upstream) = upstream_uri(template).ok_or_else(unknown)?;
            self.upstreams
                .complete_template_argument(
                    scope,
                    &server,
                    upstream,
                    argument,
                    value,
                    &BTreeMap::new(),
                )
                .await
                .map_err(|e| source_error(e, unknown))
        })
    }

    fn list_changes(&self) -> Option<ListChanges> {
        Some(self.changes.every())
    }

    fn list_changes_for(&self, scope: &UserScope) -> Option<ListChanges> {
        Some(self.changes.of(scope.user().id()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_uris_route_back_to_their_server_and_upstream_uri() {
        let served = served_uri("notes", "notes://note/{id}");
        assert_eq!(served, "mcp://notes/notes://note/{id}");
        assert_eq!(
            upstream_uri(&served),
            Some(("notes".to_owned(), "notes://note/{id}"))
        );
        let odd = served_uri("my notes/é", "file:///a b");
        assert_eq!(odd, "mcp://my%20notes%2F%C3%A9/file:///a b");
        assert_eq!(
            upstream_uri(&odd),
            Some(("my notes/é".to_owned(), "file:///a b"))
        );
        assert_eq!(upstream_uri("file:///x"), None);
        assert_eq!(upstream_uri("mcp://notes"), None);
        assert_eq!(upstream_uri("mcp://notes/"), None);
        assert_eq!(upstream_uri("mcp://no%zz/x"), None);
        assert_eq!(prefix("My-Notes"), "my_notes__");
    }

    #[test]
    fn signals_are_kept_for_users_with_a_session_only() {
        let signals = UserSignals::new();
        let alice = signals.of("alice");
        drop(signals.of("bob"));
        let _carol = signals.of("carol");
        let users = signals.users.lock().unwrap();
        let mut kept: Vec<&str> = users.keys().map(String::as_str).collect();
        kept.sort_unstable();
        assert_eq!(kept, ["alice", "carol"], "bob's session is gone");
        drop(users);
        drop(alice);
    }
}
