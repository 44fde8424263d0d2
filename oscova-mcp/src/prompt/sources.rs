//! Several prompt sources served as one.
//!
//! Rules: [`PromptSources`] lists every source's prompts, sources in the
//! order they were added, each source's in its own order. A name is the
//! first lister's: a later prompt of a name listed already is served as
//! `name:2`, then `name:3` (as session commands are), so names are unique
//! across sources whatever each source lists for a user. `prompts/get`
//! and completion are routed to the source that listed the name, under
//! the name that source gave it; to find it the sources are listed again
//! for the request's user, so a source's list decides its names, and a
//! name no source lists is unknown. A source whose list fails fails the
//! whole `prompts/list` (a partial list would rename what follows it);
//! `get` and completion fail likewise. The list-changed signal is raised
//! when any source's is ([`ListChanges::any`]), for a user's sessions
//! when any source's signal for that user is.

use std::sync::Arc;

use oscova_core::UserScope;
use rmcp::model::{GetPromptResult, Prompt};

use super::{PromptArguments, PromptSource};
use crate::offer::{BoxFuture, ListChanges, SourceError};

/// Prompt sources served together (see the module rules).
///
/// ```
/// use oscova_mcp::prompt::{PromptArg, PromptRole, PromptSources, PromptTemplate, PromptTemplates};
///
/// let one = PromptTemplates::new([PromptTemplate::new("review", "Reviews")
///     .text(PromptRole::User, "Review it.")])?;
/// let two = PromptTemplates::new([PromptTemplate::new("review", "Reviews again")
///     .text(PromptRole::User, "Review it again.")])?;
/// // Served as `review` and `review:2`.
/// let prompts = PromptSources::new().with(one).with(two);
/// assert_eq!(prompts.len(), 2);
/// # Ok::<(), oscova_mcp::prompt::PromptDefError>(())
/// ```
#[derive(Clone, Default)]
pub struct PromptSources {
    sources: Vec<Arc<dyn PromptSource>>,
}

impl std::fmt::Debug for PromptSources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptSources")
            .field("sources", &self.sources.len())
            .finish()
    }
}

/// Who serves a listed name: the source and the name it gave.
struct Route {
    served: String,
    source: usize,
    own: String,
}

impl PromptSources {
    /// No source yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `source` after the others.
    pub fn with(mut self, source: impl PromptSource) -> Self {
        self.sources.push(Arc::new(source));
        self
    }

    /// Adds a shared `source` after the others.
    pub fn with_shared(mut self, source: Arc<dyn PromptSource>) -> Self {
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

    /// Every source's prompts, renamed where taken, with their routes.
    async fn listed(&self, scope: &UserScope) -> Result<Vec<(Prompt, Route)>, SourceError> {
        let mut out: Vec<(Prompt, Route)> = Vec::new();
        for (index, source) in self.sources.iter().enumerate() {
            for mut prompt in source.list(scope).await? {
                let own = prompt.name.clone();
                let mut served = own.clone();
                let mut n = 1;
                while out.iter().any(|(_, r)| r.served == served) {
                    n += 1;
                    served = format!("{own}:{n}");
                }
                prompt.name.clone_from(&served);
                out.push((
                    prompt,
                    Route {
                        served,
                        source: index,
                        own,
                    },
                ));
            }
        }
        Ok(out)
    }

    /// The source serving `name` and the name it knows it by.
    async fn route(
        &self,
        scope: &UserScope,
        name: &str,
    ) -> Result<(&Arc<dyn PromptSource>, String), SourceError> {
        let listed = self.listed(scope).await?;
        listed
            .into_iter()
            .find(|(_, r)| r.served == name)
            .and_then(|(_, r)| Some((self.sources.get(r.source)?, r.own)))
            .ok_or_else(|| SourceError::UnknownPrompt {
                name: name.to_owned(),
            })
    }
}

impl PromptSource for PromptSources {
    fn list<'a>(&'a self, scope: &'a UserScope) -> BoxFuture<'a, Result<Vec<Prompt>, SourceError>> {
        Box::pin(async move {
            Ok(self
                .listed(scope)
                .await?
                .into_iter()
                .map(|(p, _)| p)
                .collect())
        })
    }

    fn get<'a>(
        &'a self,
        scope: &'a UserScope,
        name: &'a str,
        arguments: &'a PromptArguments,
    ) -> BoxFuture<'a, Result<GetPromptResult, SourceError>> {
        Box::pin(async move {
            let (source, own) = self.route(scope, name).await?;
            source.get(scope, &own, arguments).await
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
            let (source, own) = self.route(scope, name).await?;
            source.complete(scope, &own, argument, value, context).await
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
