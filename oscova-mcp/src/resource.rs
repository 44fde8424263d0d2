//! Resources: what `resources/list`, `resources/read` and
//! `resources/templates/list` serve, the completion of template
//! arguments, and which resources may be subscribed to.
//!
//! Rules: a [`ResourceSource`] is asked per request for the user the
//! request is served to, and reads only what that user's scope gives
//! them. [`FilesResources`] serves the user's files root through
//! `oscova-core`'s files boundary (see `resource/files.rs`);
//! [`ResourceSources`] serves several sources as one, each URI its first
//! knower's (see `resource/sources.rs`). A source
//! that says a URI may be subscribed to gets asked for its current
//! version ([`ResourceSource::version`]) when the client subscribes and
//! again while the subscription lasts, by the server's one watcher: once
//! per user and URI however many sessions subscribe to it, at most
//! [`MAX_CHECKS_PER_POLL`](crate::MAX_CHECKS_PER_POLL) URIs every
//! [`SUBSCRIPTION_POLL`](crate::SUBSCRIPTION_POLL) for the whole server;
//! a changed version is `notifications/resources/updated` to each
//! subscriber.

mod files;
mod sources;

pub use files::{DEFAULT_MAX_LIST, DEFAULT_MAX_READ_BYTES, FILES_TEMPLATE, FilesResources};
pub use sources::ResourceSources;

use oscova_core::UserScope;
use rmcp::model::{Resource, ResourceContents, ResourceTemplate};

use super::offer::{BoxFuture, ListChanges, SourceError};

/// Where a server's resources come from.
///
/// Implement it to serve resources of your own; [`FilesResources`]
/// serves the user's files root. Each method gets the scope of the user
/// the request is served to.
pub trait ResourceSource: Send + Sync + 'static {
    /// The resources `scope`'s user is offered (`resources/list`).
    fn list<'a>(
        &'a self,
        scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<Resource>, SourceError>>;

    /// The URI templates offered (`resources/templates/list`); none by
    /// default.
    fn templates<'a>(
        &'a self,
        _scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<ResourceTemplate>, SourceError>> {
        Box::pin(std::future::ready(Ok(Vec::new())))
    }

    /// The contents at `uri` (`resources/read`), a listed resource's or
    /// one a template makes.
    fn read<'a>(
        &'a self,
        scope: &'a UserScope,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ResourceContents>, SourceError>>;

    /// Values for the argument `argument` of the template `template`
    /// that fit `value` (`completion/complete`); none by default.
    fn complete<'a>(
        &'a self,
        _scope: &'a UserScope,
        _template: &'a str,
        _argument: &'a str,
        _value: &'a str,
    ) -> BoxFuture<'a, Result<Vec<String>, SourceError>> {
        Box::pin(std::future::ready(Ok(Vec::new())))
    }

    /// Whether clients may subscribe to this source's resources (then the
    /// `subscribe` capability is advertised). No by default.
    fn subscribable(&self) -> bool {
        false
    }

    /// A token that changes whenever the resource at `uri` changes (for
    /// a file, its size and modification time), or `None` when there is
    /// nothing there. Asked for subscribed URIs only, one at a time by the
    /// server's watcher, so it should answer quickly; `None` by default.
    fn version<'a>(
        &'a self,
        _scope: &'a UserScope,
        _uri: &'a str,
    ) -> BoxFuture<'a, Option<String>> {
        Box::pin(std::future::ready(None))
    }

    /// The signal raised when the list of resources changes, for a source
    /// whose list can (see [`list_changes`](crate::list_changes)); `None`
    /// (the default) for a fixed list.
    fn list_changes(&self) -> Option<ListChanges> {
        None
    }

    /// The signal for the sessions of `scope`'s user: a source whose
    /// changes concern one user only (a gateway's `per_user` upstream)
    /// gives that user's; by default [`list_changes`](Self::list_changes).
    fn list_changes_for(&self, _scope: &UserScope) -> Option<ListChanges> {
        self.list_changes()
    }
}
