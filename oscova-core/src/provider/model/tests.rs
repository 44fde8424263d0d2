use super::*;
use crate::diagnostic::DiagnosticKind;

#[test]
fn saved_scope_wins_but_never_makes_remote_local() {
    let mut c = ModelProviderConfig::new("ollama");
    assert!(c.is_local(true));
    assert!(!c.is_local(false));
    c.endpoint_scope = Some(EndpointScope::Remote);
    assert!(!c.is_local(true));
    c.endpoint_scope = Some(EndpointScope::Local);
    assert!(!c.is_local(false), "saved local without an endpoint");
    c.endpoint = Some("http://127.0.0.1:11434".into());
    assert!(c.is_local(false));
    assert!(c.scope_override().is_none(), "the text agrees");
    c.endpoint_scope = None;
    c.endpoint = Some("http://evil.localhost:11434".into());
    assert!(
        c.is_local(false),
        "judged by text; resolution is checked later"
    );
}

/// Issue 12: an operator who saves `local` for a LAN endpoint gets it
/// treated as local, with a warning naming the endpoint.
#[test]
fn a_saved_local_scope_makes_a_lan_endpoint_local_with_a_warning() {
    let mut c = ModelProviderConfig::new("ollama");
    c.endpoint = Some("http://user:pw@10.0.0.5:11434/?token=abc".into());
    assert!(!c.is_local(true));
    assert!(check_offline(&c, &Fixed(true), true).is_err());
    assert!(c.scope_override().is_none());
    c.endpoint_scope = Some(EndpointScope::Local);
    assert!(c.is_local(false));
    assert!(check_offline(&c, &Fixed(false), true).is_ok());
    let warning = c.scope_override().unwrap();
    assert_eq!(warning.severity, crate::diagnostic::Severity::Warning);
    assert_eq!(warning.kind, DiagnosticKind::EndpointScopeOverride);
    assert!(
        warning.message.contains("`http://10.0.0.5:11434`")
            && warning.message.contains("provider `ollama`"),
        "{warning}"
    );
    assert!(
        !warning.message.contains("pw") && !warning.message.contains("abc"),
        "{warning}"
    );
}

struct Fixed(bool);

impl ModelProvider for Fixed {
    fn type_key(&self) -> ProviderTypeKey {
        "fixed".into()
    }
    fn display_name(&self) -> &str {
        "Fixed"
    }
    fn default_is_local_endpoint(&self) -> bool {
        self.0
    }
    fn chat<'a>(
        &'a self,
        _request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        ready(Err(ModelError::Other("not used".into())))
    }
}

#[test]
fn check_offline_names_the_refused_endpoint() {
    let mut c = ModelProviderConfig::new("fixed");
    assert!(check_offline(&c, &Fixed(true), true).is_ok());
    let err = check_offline(&c, &Fixed(false), true).unwrap_err();
    assert!(
        matches!(&err, ModelError::NoLocalEndpoint { provider } if provider == "fixed"),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("provider `fixed` calls a remote service by default")
    );
    assert!(check_offline(&c, &Fixed(false), false).is_ok());
    c.endpoint = Some("https://api.example.com".into());
    let err = check_offline(&c, &Fixed(true), true).unwrap_err();
    assert!(
        matches!(&err, ModelError::NotLocal { endpoint } if endpoint == "https://api.example.com")
    );
    c.endpoint = Some("http://127.0.0.1:11434".into());
    assert!(check_offline(&c, &Fixed(false), true).is_ok());
    c.endpoint_scope = Some(EndpointScope::Remote);
    assert!(check_offline(&c, &Fixed(true), true).is_err());
}

#[test]
fn every_model_error_has_its_stable_kind() {
    let cases = [
        (
            ModelError::NotLocal {
                endpoint: "e".into(),
            },
            "not_local",
        ),
        (
            ModelError::NoLocalEndpoint {
                provider: "p".into(),
            },
            "no_local_endpoint",
        ),
        (
            ModelError::Refused {
                url: "u".into(),
                reason: "r".into(),
            },
            "refused",
        ),
        (
            ModelError::Unreachable {
                url: "u".into(),
                message: "m".into(),
            },
            "unreachable",
        ),
        (ModelError::Unauthorized { url: "u".into() }, "unauthorized"),
        (
            ModelError::ModelNotFound {
                model: "m".into(),
                available: vec![],
            },
            "model_not_found",
        ),
        (
            ModelError::Malformed {
                message: "m".into(),
                line: "l".into(),
            },
            "malformed_response",
        ),
        (
            ModelError::Status {
                status: 500,
                body: "b".into(),
            },
            "http_status",
        ),
        (ModelError::Cancelled, "cancelled"),
        (
            ModelError::Unsupported {
                provider: "p".into(),
                operation: "o",
            },
            "unsupported",
        ),
        (ModelError::Other("x".into()), "other"),
    ];
    for (error, kind) in cases {
        assert_eq!(error.kind(), kind, "{error:?}");
    }
}
