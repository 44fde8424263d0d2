use super::*;

#[test]
fn refusals_usage_and_failures_have_distinct_codes() {
    let denied = CliError::from(InvokeError::Denied {
        tool: "t".into(),
        reason: None,
    });
    assert_eq!(denied.exit_status().code(), 3);
    let blocked = CliError::from(InvokeError::Blocked {
        tool: "t".into(),
        reason: "no".into(),
    });
    assert_eq!(blocked.exit_status().code(), 3);
    assert_eq!(CliError::UnknownTool("t".into()).exit_status().code(), 2);
    let panicked = CliError::from(InvokeError::Panicked {
        tool: "t".into(),
        message: "boom".into(),
    });
    assert_eq!(panicked.exit_status().code(), 1);
    assert_eq!(panicked.kind(), "panicked");
}

#[test]
fn model_errors_map_to_refused_failed_usage_and_interrupted() {
    let refused = CliError::from(ModelError::NotLocal {
        endpoint: "https://api.example.com".into(),
    });
    assert_eq!(
        (refused.exit_status().code(), refused.kind()),
        (3, "not_local")
    );
    let via_chat = CliError::from(ChatError::Model(ModelError::NotLocal {
        endpoint: "x".into(),
    }));
    assert_eq!(via_chat.exit_status().code(), 3);
    let default_endpoint = CliError::from(ModelError::NoLocalEndpoint {
        provider: "openai".into(),
    });
    assert_eq!(
        (
            default_endpoint.exit_status().code(),
            default_endpoint.kind()
        ),
        (3, "no_local_endpoint")
    );
    let unreachable = CliError::from(ModelError::Unreachable {
        url: "http://127.0.0.1:9/api/chat".into(),
        message: "refused".into(),
    });
    assert_eq!(unreachable.exit_status().code(), 1);
    assert!(
        unreachable
            .to_string()
            .contains("http://127.0.0.1:9/api/chat")
    );
    assert_eq!(
        CliError::from(ChatError::Cancelled).exit_status().code(),
        130
    );
    assert_eq!(
        CliError::from(ModelError::Cancelled).exit_status().code(),
        130
    );
    let limit = CliError::from(ChatError::RoundLimit {
        max_rounds: 2,
        pending: vec!["t".into()],
    });
    assert_eq!(
        (limit.exit_status().code(), limit.kind()),
        (1, "round_limit")
    );
    let no_model = CliError::NoModel {
        provider: "ollama".into(),
    };
    assert_eq!(no_model.exit_status().code(), 2);
    let unknown = CliError::UnknownProvider {
        key: "x".into(),
        available: vec!["ollama".into(), "openai".into()],
    };
    assert_eq!(unknown.exit_status().code(), 2);
    assert!(unknown.to_string().contains("ollama, openai"), "{unknown}");
}

#[test]
fn an_agent_host_refusing_its_model_is_a_usage_error_naming_the_provider() {
    use oscova_agent::session::MemoryStore;
    use oscova_agent::session::agent::AgentHost;
    use oscova_core::PluginHost;
    use oscova_core::provider::model::ModelProviderConfig;

    let plugins = PluginHost::builder().no_linked_plugins().build().unwrap();
    let refused = AgentHost::builder(plugins, std::sync::Arc::new(MemoryStore::new()))
        .model(ModelProviderConfig::new("ollama"))
        .build()
        .unwrap_err();
    let error = CliError::from(refused);
    assert_eq!(
        (error.exit_status().code(), error.kind()),
        (2, "unknown_provider")
    );
    assert!(
        error
            .to_string()
            .starts_with("the session agent could not start: model provider `ollama` is"),
        "{error}"
    );
}

#[test]
fn speech_errors_map_to_refused_usage_failed_and_interrupted() {
    let cases = [
        (
            SpeechError::NotLocal {
                what: "endpoint",
                endpoint: "http://192.0.2.1:9".into(),
            },
            3,
            "not_local",
        ),
        (
            SpeechError::NoLocalEndpoint {
                key: "openai".into(),
            },
            3,
            "no_local_endpoint",
        ),
        (
            SpeechError::UnknownProvider {
                key: "x".into(),
                known: vec!["flite".into()],
            },
            2,
            "unknown_provider",
        ),
        (
            SpeechError::InvalidAudio("empty".into()),
            2,
            "invalid_audio",
        ),
        (SpeechError::InvalidText("empty".into()), 2, "invalid_text"),
        (
            SpeechError::UnknownVoice {
                voice: "v".into(),
                known: vec![],
            },
            2,
            "unknown_voice",
        ),
        (SpeechError::Cancelled, 130, "cancelled"),
        (SpeechError::provider("flite crashed"), 1, "provider"),
    ];
    for (error, code, kind) in cases {
        let error = CliError::from(error);
        assert_eq!((error.exit_status().code(), error.kind()), (code, kind));
    }
    let file = CliError::File {
        path: "a.wav".into(),
        reason: "it is empty".into(),
    };
    assert_eq!(file.exit_status().code(), 2);
    assert_eq!(file.to_string(), "cannot use a.wav: it is empty");
}

#[test]
fn the_json_kind_of_a_model_or_speech_error_is_its_own_kind() {
    let models = [
        ModelError::NotLocal {
            endpoint: "e".into(),
        },
        ModelError::NoLocalEndpoint {
            provider: "p".into(),
        },
        ModelError::Refused {
            url: "u".into(),
            reason: "r".into(),
        },
        ModelError::Unreachable {
            url: "u".into(),
            message: "m".into(),
        },
        ModelError::Unauthorized { url: "u".into() },
        ModelError::ModelNotFound {
            model: "m".into(),
            available: vec![],
        },
        ModelError::Malformed {
            message: "m".into(),
            line: "l".into(),
        },
        ModelError::Status {
            status: 500,
            body: "b".into(),
        },
        ModelError::Cancelled,
        ModelError::Unsupported {
            provider: "p".into(),
            operation: "list models",
        },
        ModelError::Other("x".into()),
    ];
    for error in models {
        let kind = error.kind();
        assert_eq!(CliError::from(error).kind(), kind);
    }
    let via_chat = ChatError::Model(ModelError::Status {
        status: 502,
        body: "b".into(),
    });
    assert_eq!(CliError::from(via_chat).kind(), "http_status");
    let speech = [
        SpeechError::NotLocal {
            what: "endpoint",
            endpoint: "e".into(),
        },
        SpeechError::NoLocalEndpoint { key: "k".into() },
        SpeechError::UnknownProvider {
            key: "k".into(),
            known: vec![],
        },
        SpeechError::InvalidAudio("a".into()),
        SpeechError::InvalidText("t".into()),
        SpeechError::UnknownVoice {
            voice: "v".into(),
            known: vec![],
        },
        SpeechError::Cancelled,
        SpeechError::NotInstalled {
            provider: "p".into(),
            missing: "m".into(),
            install: "i".into(),
        },
        SpeechError::provider("failed"),
    ];
    for error in speech {
        let kind = error.kind();
        assert_eq!(CliError::from(error).kind(), kind);
    }
}

#[test]
fn redaction_covers_server_text() {
    let redactor = oscova_core::redact::Redactor::new();
    redactor.add("sk-secret-123");
    let error = CliError::from(ModelError::Status {
        status: 500,
        body: "bad key sk-secret-123".into(),
    })
    .redacted(&[&redactor]);
    assert!(!error.to_string().contains("sk-secret-123"), "{error}");
}
