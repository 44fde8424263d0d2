//! Several resource sources served as one.
//!
//! Rules: [`ResourceSources`] lists every source's resources, then every
//! source's templates, sources in the order they were added; a URI (or a
//! template) listed already by an earlier source is the earlier one's,
//! and a later listing of it is dropped, so each URI has one owner. A
//! read goes to the sources in order and is the first one's that knows
//! the URI: a source answering [`SourceError::UnknownResource`] passes it
//! on, any other answer (contents, a refusal, a failure) is the answer; no
//! source knowing it is `UnknownResource`. A version likewise is the first
//! source's that has one. Completion goes to the first source whose
//! templates list the template for the request's user (the sources'
//! templates are listed again for it). A source whose list fails fails
//! the whole list (a partial list would hand its URIs to a later source).
//! Clients may subscribe when any source allows it; the list-changed
//! signal is raised when any source's is ([`ListChanges::any`]), for a
//! user's sessions when any source's signal for that user is.

use std::collections::HashSet;
use std::sync::Arc;

use oscova_core::UserScope;
use rmcp::model::{Resource, ResourceContents, ResourceTemplate};

use super::ResourceSource;
use crate::offer::{BoxFuture, ListChanges, SourceError};

/// Resource sources served together (see the module rules).
///
/// ```
/// use oscova_mcp::resource::{FilesResources, ResourceSources};
///
/// // The user's files, then a source of your own for its URI scheme.
/// let resources = ResourceSources::new().with(FilesResources::new());
/// assert_eq!(resources.len(), 1);
/// ```
#[derive(Clone, Default)]
pub struct ResourceSources {
    sources: Vec<Arc<dyn ResourceSource>>,
}

impl std::fmt::Debug for ResourceSources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceSources")
            .field("sources", &self.sources.len())
            .finish()
    }
}

impl ResourceSources {
    /// No source yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `source` after the others.
    pub fn with(mut self, source: impl ResourceSource) -> Self {
        self.sources.push(Arc::new(source));
        self
    }

    /// Adds a shared `source` after the others.
    pub fn with_shared(mut self, source: Arc<dyn ResourceSource>) -> Self {
        self.sources.push(source);
        self
    }

    /// How many sources there are.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Whether there is no source.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }
}

impl ResourceSource for ResourceSources {
    fn list<'a>(
        &'a self,
        scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<Resource>, SourceError>> {
        Box::pin(async move {
            let mut seen = HashSet::new();
            let mut out = Vec::new();
            for source in &self.sources {
                for resource in source.list(scope).await? {
                    if seen.insert(resource.uri.clone()) {
                        out.push(resource);
                    }
                }
            }
            Ok(out)
        })
    }

    fn templates<'a>(
        &'a self,
        scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<ResourceTemplate>, SourceError>> {
        Box::pin(async move {
            let mut seen = HashSet::new();
            let mut out = Vec::new();
            for source in &self.sources {
                for template in source.templates(scope).await? {
                    if seen.insert(template.uri_template.clone()) {
                        out.push(template);
                    }
                }
            }
            Ok(out)
        })
    }

    fn read<'a>(
        &'a self,
        scope: &'a UserScope,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ResourceContents>, SourceError>> {
        Box::pin(async move {
            for source in &self.sources {
                match source.read(scope, uri).await {
                    Err(SourceError::UnknownResource { .. }) => continue,
                    answer => return answer,
                }
            }
            Err(SourceError::UnknownResource {
                uri: uri.to_owned(),
            })
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
            for source in &self.sources {
                let templates = source.templates(scope).await?;
                if templates.iter().any(|t| t.uri_template == template) {
                    return source.complete(scope, template, argument, value).await;
                }
            }
            Err(SourceError::UnknownResource {
                uri: template.to_owned(),
            })
        })
    }

    fn subscribable(&self) -> bool {
        self.sources.iter().any(|s| s.subscribable())
    }

    fn version<'a>(&'a self, scope: &'a UserScope, uri: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            for source in &self.sources {
                if let Some(version) = source.version(scope, uri).await {
                    return Some(version);
                }
            }
            None
        })
    }

    fn list_changes(&self) -> Option<ListChanges> {
        ListChanges::any(self.sources.iter().filter_map(|s| s.list_changes()))
    }

    fn list_changes_for(&self, scope: &UserScope) -> Option<ListChanges> {
        ListChanges::any(
            self.sources
                .iter()
                .filter_map(|s| s.list_changes_for(scope)),
        )
    }
}

#[cfg(test)]
mod tests;
