//! The agent card (A2A 1.0, `/.well-known/agent-card.json`, read as
//! `oscova_a2a::model::AgentCard`, the type the server writes) and the
//! interface this client talks to.
//!
//! Rules: the card's A2A 1.0 JSON names (`supportedInterfaces`,
//! `protocolBinding`, `protocolVersion`, `skills`) are checked against the
//! a2a-sdk 1.3.0 server's cards in the tests; unknown fields are ignored,
//! missing ones read as empty. The interface
//! is the first in the card's order whose binding this client speaks
//! (`JSONRPC` or `HTTP+JSON`) and whose version is 1.0 (or unstated). A
//! card is a remote text: its interface URL must have the configured URL's
//! scheme, host and port, so a card cannot send this client, with the
//! user's credential, to another machine or to an internal address.

use oscova_a2a::model::{AgentCard, CARD_PATH, PROTOCOL_VERSION};

/// The two HTTP bindings of A2A 1.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    /// JSON-RPC 2.0 over `POST URL` (`SendMessage`, `GetTask`, `CancelTask`).
    JsonRpc,
    /// HTTP+JSON (`POST URL/message:send`, `GET URL/tasks/ID`,
    /// `POST URL/tasks/ID:cancel`).
    HttpJson,
}

impl Binding {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::JsonRpc => "JSONRPC",
            Self::HttpJson => "HTTP+JSON",
        }
    }
}

/// Why no interface of a card can be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NoInterface {
    /// None in a binding and version this client speaks.
    Unsupported(Vec<String>),
    /// The one it would use is elsewhere than the configured URL.
    Elsewhere(String),
}

/// The URL of the card of the agent at `url`.
pub(crate) fn card_url(url: &str) -> String {
    format!("{}{CARD_PATH}", url.trim().trim_end_matches('/'))
}

/// The interface of `card` to use, checked against `configured` (the
/// agent's URL in the configuration).
pub(crate) fn interface(
    card: &AgentCard,
    configured: &str,
) -> Result<(Binding, String), NoInterface> {
    let chosen = card.supported_interfaces.iter().find_map(|i| {
        let version_ok = i.protocol_version.is_empty()
            || i.protocol_version == PROTOCOL_VERSION
            || i.protocol_version.starts_with("1.0.");
        let binding = match i.protocol_binding.as_str() {
            "JSONRPC" => Binding::JsonRpc,
            "HTTP+JSON" => Binding::HttpJson,
            _ => return None,
        };
        version_ok.then(|| (binding, i.url.trim().trim_end_matches('/').to_owned()))
    });
    let Some((binding, url)) = chosen else {
        return Err(NoInterface::Unsupported(
            card.supported_interfaces
                .iter()
                .map(|i| format!("{} {}", i.protocol_binding, i.protocol_version))
                .collect(),
        ));
    };
    if same_origin(&url, configured) {
        Ok((binding, url))
    } else {
        Err(NoInterface::Elsewhere(url))
    }
}

/// Whether `a` and `b` are http(s) URLs with one scheme, host and port.
pub(crate) fn same_origin(a: &str, b: &str) -> bool {
    let (Ok(a), Ok(b)) = (reqwest::Url::parse(a), reqwest::Url::parse(b.trim())) else {
        return false;
    };
    matches!(a.scheme(), "http" | "https")
        && a.scheme() == b.scheme()
        && a.host().is_some()
        && a.host() == b.host()
        && a.port_or_known_default() == b.port_or_known_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(interfaces: serde_json::Value) -> AgentCard {
        serde_json::from_value(serde_json::json!({
            "name": "x", "supportedInterfaces": interfaces
        }))
        .unwrap()
    }

    #[test]
    fn the_first_spoken_interface_on_the_configured_origin_is_used() {
        let c = card(serde_json::json!([
            {"url": "http://127.0.0.1:5/a", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "http://127.0.0.1:5/a/", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": "http://127.0.0.1:5/a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        ]));
        assert_eq!(
            interface(&c, "http://127.0.0.1:5/a"),
            Ok((Binding::HttpJson, "http://127.0.0.1:5/a".to_owned()))
        );
    }

    #[test]
    fn an_interface_on_another_origin_is_refused() {
        for elsewhere in [
            "http://169.254.169.254/latest",
            "http://127.0.0.1:6/a",
            "https://127.0.0.1:5/a",
            "http://localhost:5/a",
        ] {
            let c = card(serde_json::json!([
                {"url": elsewhere, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            ]));
            assert_eq!(
                interface(&c, "http://127.0.0.1:5"),
                Err(NoInterface::Elsewhere(elsewhere.to_owned())),
                "{elsewhere}"
            );
        }
    }

    #[test]
    fn only_versions_and_bindings_spoken_here_count() {
        let c = card(serde_json::json!([
            {"url": "http://127.0.0.1:5", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "http://127.0.0.1:5", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        ]));
        assert!(matches!(
            interface(&c, "http://127.0.0.1:5"),
            Err(NoInterface::Unsupported(_))
        ));
    }
}
