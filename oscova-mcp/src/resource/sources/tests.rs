//! Sources served as one: order, one owner per URI, and each request
//! routed to the source that knows it.

use std::collections::HashMap;

use oscova_core::{PluginHost, UserInfo};

use super::*;

/// A source with fixed resources (URI to text), templates, refusals and
/// versions.
#[derive(Default)]
struct Fixed {
    texts: HashMap<&'static str, &'static str>,
    templates: Vec<&'static str>,
    refused: Vec<&'static str>,
    versions: HashMap<&'static str, &'static str>,
    subscribable: bool,
    completion: Option<&'static str>,
}

impl ResourceSource for Fixed {
    fn list<'a>(
        &'a self,
        _scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<Resource>, SourceError>> {
        let mut uris: Vec<&str> = self.texts.keys().copied().collect();
        uris.sort_unstable();
        let listed = uris
            .into_iter()
            .map(|uri| Resource::new(uri, self.texts[uri]))
            .collect();
        Box::pin(std::future::ready(Ok(listed)))
    }

    fn templates<'a>(
        &'a self,
        _scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<ResourceTemplate>, SourceError>> {
        let listed = self
            .templates
            .iter()
            .map(|t| ResourceTemplate::new(*t, *t))
            .collect();
        Box::pin(std::future::ready(Ok(listed)))
    }

    fn read<'a>(
        &'a self,
        _scope: &'a UserScope,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ResourceContents>, SourceError>> {
        let answer = if self.refused.contains(&uri) {
            Err(SourceError::Refused {
                uri: uri.to_owned(),
                reason: "not here".into(),
            })
        } else {
            match self.texts.get(uri) {
                Some(text) => Ok(vec![ResourceContents::text(*text, uri)]),
                None => Err(SourceError::UnknownResource {
                    uri: uri.to_owned(),
                }),
            }
        };
        Box::pin(std::future::ready(answer))
    }

    fn complete<'a>(
        &'a self,
        _scope: &'a UserScope,
        _template: &'a str,
        _argument: &'a str,
        _value: &'a str,
    ) -> BoxFuture<'a, Result<Vec<String>, SourceError>> {
        let values = self
            .completion
            .map(|c| vec![c.to_owned()])
            .unwrap_or_default();
        Box::pin(std::future::ready(Ok(values)))
    }

    fn subscribable(&self) -> bool {
        self.subscribable
    }

    fn version<'a>(&'a self, _scope: &'a UserScope, uri: &'a str) -> BoxFuture<'a, Option<String>> {
        let version = self.versions.get(uri).map(|v| (*v).to_owned());
        Box::pin(std::future::ready(version))
    }
}

fn scope() -> (PluginHost, UserScope) {
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![])
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    (host, scope)
}

fn text_of(contents: &[ResourceContents]) -> &str {
    match &contents[0] {
        ResourceContents::TextResourceContents { text, .. } => text,
        other => panic!("not text: {other:?}"),
    }
}

fn sources() -> ResourceSources {
    let first = Fixed {
        texts: HashMap::from([("a://one", "first one"), ("a://shared", "first's")]),
        templates: vec!["a://{name}"],
        refused: vec!["b://guarded"],
        versions: HashMap::from([("a://one", "v1")]),
        completion: Some("from first"),
        ..Fixed::default()
    };
    let second = Fixed {
        texts: HashMap::from([
            ("b://two", "second two"),
            ("a://shared", "second's"),
            ("b://guarded", "never read"),
        ]),
        templates: vec!["b://{name}", "a://{name}"],
        versions: HashMap::from([("b://two", "v2"), ("a://one", "second's v1")]),
        subscribable: true,
        completion: Some("from second"),
        ..Fixed::default()
    };
    ResourceSources::new().with(first).with(second)
}

#[tokio::test]
async fn lists_keep_source_order_and_one_owner_per_uri() {
    let (_host, scope) = scope();
    let all = sources();
    let listed = all.list(&scope).await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["a://one", "a://shared", "b://guarded", "b://two"]);
    assert_eq!(
        listed[1].name, "first's",
        "the first lister owns a://shared"
    );
    let templates = all.templates(&scope).await.unwrap();
    let templates: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(templates, ["a://{name}", "b://{name}"]);
    assert!(all.subscribable(), "one source allows subscriptions");
    assert!(!ResourceSources::new().subscribable());
}

#[tokio::test]
async fn a_read_is_the_first_knowing_sources_and_a_refusal_stops_it() {
    let (_host, scope) = scope();
    let all = sources();
    let read = |uri: &'static str| all.read(&scope, uri);
    assert_eq!(text_of(&read("a://one").await.unwrap()), "first one");
    assert_eq!(text_of(&read("b://two").await.unwrap()), "second two");
    assert_eq!(text_of(&read("a://shared").await.unwrap()), "first's");
    assert!(
        matches!(read("b://guarded").await, Err(SourceError::Refused { .. })),
        "a source that refuses a URI answers for it: no later source reads it"
    );
    assert!(matches!(
        read("c://none").await,
        Err(SourceError::UnknownResource { uri }) if uri == "c://none"
    ));
}

#[tokio::test]
async fn completion_and_versions_go_to_the_source_that_knows_them() {
    let (_host, scope) = scope();
    let all = sources();
    assert_eq!(
        all.complete(&scope, "b://{name}", "name", "")
            .await
            .unwrap(),
        ["from second"]
    );
    assert_eq!(
        all.complete(&scope, "a://{name}", "name", "")
            .await
            .unwrap(),
        ["from first"],
        "the first source listing the template completes it"
    );
    assert!(matches!(
        all.complete(&scope, "c://{name}", "name", "").await,
        Err(SourceError::UnknownResource { .. })
    ));
    assert_eq!(all.version(&scope, "a://one").await.as_deref(), Some("v1"));
    assert_eq!(all.version(&scope, "b://two").await.as_deref(), Some("v2"));
    assert_eq!(all.version(&scope, "c://none").await, None);
}
