//! `--offline` checks the resolved addresses of every model, download and
//! speech endpoint, through one mechanism (`HttpClient::for_endpoint`):
//! `http://evil.localhost:…` and `http://localhost.:…` pass the offline
//! check on their text, but when a resolver answers with another machine's
//! address the request is refused, and nothing connects there.
//!
//! Those addresses exist only inside a network namespace the test creates
//! (`oscova_test_support::netns`), with a counting server on them; names
//! are answered by the test's own resolver, never by DNS. The same place
//! checks that a saved `endpoint_scope = "local"` for a LAN endpoint wins,
//! for exactly that host and port.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use oscova_core::provider::model::{
    ChatMessage, ChatRequest, EndpointScope, ModelError, ModelProvider, ModelProviderConfig,
    check_offline,
};
use oscova_core::{CancellationToken, HttpClient, NetworkScope, http::HttpError};
use oscova_plugin_ollama::OllamaProvider;
use oscova_plugin_openai::OpenAiProvider;
use oscova_speech::{
    SpeechProviderConfig, SpeechSynthesisRouter, SynthesisRequest, providers::OpenAiSpeech,
};
use oscova_test_support::http::{Reply, TestServer};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use serde_json::json;

/// The LAN address the bad names resolve to.
const LAN: &str = "10.0.0.5";

/// Names the test knows; any other name fails, so DNS is never asked.
struct MapResolver(HashMap<&'static str, IpAddr>);

impl Resolve for MapResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let found = self.0.get(name.as_str()).copied();
        let name = name.as_str().to_owned();
        Box::pin(async move {
            let ip = found.ok_or_else(|| format!("`{name}` is not a test name"))?;
            Ok(Box::new(std::iter::once(SocketAddr::new(ip, 0))) as Addrs)
        })
    }
}

fn http() -> HttpClient {
    let lan: IpAddr = LAN.parse().unwrap();
    let names = HashMap::from([("evil.localhost", lan), ("localhost.", lan)]);
    HttpClient::builder()
        .dns_resolver(Arc::new(MapResolver(names)))
        .build()
        .unwrap()
}

fn chat_request<'a>(
    config: &'a ModelProviderConfig,
    messages: &'a [ChatMessage],
) -> ChatRequest<'a> {
    ChatRequest {
        config,
        api_key: None,
        model: "m1",
        messages,
        tools: &[],
        stream: None,
        cancel: CancellationToken::new(),
    }
}

fn assert_refused(what: &str, result: Result<impl std::fmt::Debug, ModelError>) {
    match result {
        Err(ModelError::Refused { reason, .. }) => assert!(
            reason.contains(&format!(
                "it resolves to {LAN}, which is not a loopback address"
            )),
            "{what}: {reason}"
        ),
        other => panic!("{what}: expected a refusal, got {other:?}"),
    }
}

#[test]
fn offline_endpoints_are_checked_after_resolution() {
    oscova_test_support::netns::run_async(
        "offline_resolution::offline_endpoints_are_checked_after_resolution",
        &[LAN],
        in_a_namespace,
    );
}

async fn in_a_namespace() {
    let lan: IpAddr = LAN.parse().unwrap();
    let server = TestServer::start_on(lan, |_| {
        Reply::json(
            200,
            json!({"model": "m1", "message": {"role": "assistant", "content": "from the LAN"}, "done": true}),
        )
    })
    .await;
    let port = server.port();
    let http = http();
    let ollama = OllamaProvider::new(http.clone());
    let openai = OpenAiProvider::new(http.clone());
    let speech = SpeechSynthesisRouter::builder()
        .builtin(OpenAiSpeech::new(http.clone()))
        .build();
    let messages = [ChatMessage::user("my private prompt")];

    for host in ["evil.localhost", "localhost."] {
        let endpoint = format!("http://{host}:{port}");
        let mut config = ModelProviderConfig::new("ollama");
        config.endpoint = Some(endpoint.clone());
        // The text looks local, so the offline check passes...
        check_offline(&config, &ollama, true).unwrap();
        // ...and the resolved address is what refuses.
        assert_refused(
            &format!("ollama chat {endpoint}"),
            ollama.chat(chat_request(&config, &messages)).await,
        );
        let downloads = ollama.downloads().unwrap();
        assert_refused(
            &format!("ollama catalog {endpoint}"),
            downloads
                .catalog(&config, None, CancellationToken::new())
                .await,
        );
        let pulled = downloads
            .download(&config, None, "m1", &|_| {}, CancellationToken::new())
            .await;
        assert_refused(&format!("ollama pull {endpoint}"), pulled);

        config.provider = "openai".into();
        check_offline(&config, &openai, true).unwrap();
        assert_refused(
            &format!("openai chat {endpoint}"),
            openai.chat(chat_request(&config, &messages)).await,
        );

        let speech_config = SpeechProviderConfig::new("openai").endpoint(endpoint.clone());
        let spoken = speech
            .synthesize(SynthesisRequest::new(&speech_config, "my private text").offline(true))
            .await;
        let err = spoken.map(|_| ()).unwrap_err().to_string();
        assert!(
            err.contains("refused before connecting"),
            "speech {endpoint}: {err}"
        );
    }
    assert_eq!(server.connections(), 0, "nothing may reach {LAN}");

    // A saved `local` for the LAN endpoint is the operator's choice: it
    // passes offline, with a warning naming it, and reaches that server.
    let mut config = ModelProviderConfig::new("ollama");
    config.endpoint = Some(format!("http://{LAN}:{port}"));
    assert!(check_offline(&config, &ollama, true).is_err());
    config.endpoint_scope = Some(EndpointScope::Local);
    check_offline(&config, &ollama, true).unwrap();
    let warning = config.scope_override().unwrap();
    assert!(
        warning.message.contains(&format!("`http://{LAN}:{port}`")),
        "{warning}"
    );
    let answer = ollama.chat(chat_request(&config, &messages)).await.unwrap();
    assert_eq!(answer.message.content, "from the LAN");
    assert_eq!(server.connections(), 1);

    // Exactly that host and port: the same client refuses the LAN
    // address on any other port, before connecting.
    let other = TestServer::start_on(lan, |_| Reply::new(200)).await;
    let endpoint_client =
        http.for_endpoint(&format!("http://{LAN}:{port}"), Some(EndpointScope::Local));
    assert_eq!(endpoint_client.effective_scope(), NetworkScope::Local);
    let err = endpoint_client
        .get(&format!("http://{LAN}:{}/", other.port()))
        .send()
        .await
        .unwrap_err();
    assert!(matches!(err, HttpError::ScopeDenied { .. }), "{err}");
    assert_eq!(other.connections(), 0);
}
