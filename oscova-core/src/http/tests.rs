//! Unit tests of the client: scopes, refusal mapping, endpoint clients.

use super::*;
use crate::http::scoped;

use reqwest::dns::{Name, Resolving};

#[tokio::test]
async fn outside_a_tool_the_toolset_client_refuses() {
    let client = HttpClient::new();
    assert_eq!(client.effective_scope(), NetworkScope::None);
    let err = client.get("http://127.0.0.1:9/").send().await.unwrap_err();
    assert!(matches!(err, HttpError::ScopeDenied { .. }), "{err}");
}

#[tokio::test]
async fn local_scope_refuses_remote_literals_before_connecting() {
    let client = HttpClient::new();
    let err = scoped(NetworkScope::Local, client.get("http://10.0.0.5/").send())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            HttpError::ScopeDenied {
                scope: NetworkScope::Local,
                ..
            }
        ),
        "{err}"
    );
}

/// A refusal from the resolver travels through hyper's connector errors;
/// it must still come out as a scope error, not a generic request error.
#[tokio::test]
async fn resolver_refusals_map_to_scope_denied() {
    #[derive(Debug)]
    struct Refuse;
    impl Resolve for Refuse {
        fn resolve(&self, name: Name) -> Resolving {
            let target = name.as_str().to_owned();
            Box::pin(async move {
                let refusal = Refusal {
                    scope: NetworkScope::Internet,
                    target,
                    reason: "test".into(),
                };
                Err(Box::new(refusal) as Box<dyn std::error::Error + Send + Sync>)
            })
        }
    }
    let client = reqwest::Client::builder()
        .no_proxy()
        .dns_resolver(Arc::new(Refuse))
        .build()
        .unwrap();
    let err = client
        .get("http://refused.localhost/")
        .send()
        .await
        .unwrap_err();
    let err = HttpError::from(err);
    assert!(
        matches!(
            &err,
            HttpError::ScopeDenied { scope: NetworkScope::Internet, target, .. }
                if target == "refused.localhost"
        ),
        "{err:?}"
    );
}

#[test]
fn bad_allow_entries_are_named() {
    let err = HttpClient::builder()
        .allow_internal(["10.0.0.5:8080", "http://intranet/"])
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, HttpError::InvalidDestination { entry, .. } if entry == "http://intranet/"),
        "{err}"
    );
    assert!(err.to_string().contains("not a URL"), "{err}");
}

#[test]
fn endpoint_clients_follow_the_text_and_the_saved_scope() {
    let http = HttpClient::new();
    let scope = |endpoint: &str, saved| http.for_endpoint(endpoint, saved).effective_scope();
    assert_eq!(scope("http://localhost:11434", None), NetworkScope::Local);
    assert_eq!(scope("http://evil.localhost:1", None), NetworkScope::Local);
    assert_eq!(
        scope("http://10.0.0.5:11434", Some(EndpointScope::Local)),
        NetworkScope::Local
    );
    assert_eq!(scope("http://10.0.0.5:11434", None), NetworkScope::Internet);
    assert_eq!(
        scope("https://api.example.com", Some(EndpointScope::Remote)),
        NetworkScope::Internet
    );
    assert!(matches!(
        http.for_endpoint("https://api.example.com", None).mode,
        Mode::Unrestricted
    ));
}
