use super::*;
use oscova_core::ExposeSecret;
use oscova_core::context::CredentialResolver;

const FILE: &str = r#"
default_user = "alice"
default_approval = "required"

[credentials]
"acme.api_key" = "shared-key"
"acme.region" = "eu"

[users.alice]
time_zone = "Europe/Berlin"

[users.alice.credentials]
"acme.api_key" = "alice-key"

[users.bob]
"#;

fn resolve(config: &Config, user: &str, key: &str) -> Option<String> {
    config
        .credentials()
        .resolve(&UserInfo::new(user), key)
        .map(|s| s.expose_secret().to_owned())
}

#[test]
fn file_values_and_precedence() {
    let none: [(&str, &str); 0] = [];
    let config = Config::from_toml_str(FILE, none).unwrap();
    assert_eq!(config.default_approval(), DefaultApproval::Required);
    let alice = config.user(None);
    assert_eq!(alice.id(), "alice");
    assert_eq!(alice.time_zone(), Some("Europe/Berlin"));
    let bob = config.user(Some("bob"));
    assert_eq!((bob.id(), bob.time_zone()), ("bob", None));
    assert_eq!(
        resolve(&config, "alice", "acme.api_key").unwrap(),
        "alice-key"
    );
    assert_eq!(
        resolve(&config, "bob", "acme.api_key").unwrap(),
        "shared-key"
    );
    assert_eq!(resolve(&config, "alice", "acme.region").unwrap(), "eu");
    assert_eq!(resolve(&config, "alice", "missing"), None);
    assert_eq!(config.secret_values().count(), 3);
}

#[test]
fn the_environment_wins() {
    let env = [
        ("OSCOVA_USER", "carol"),
        ("OSCOVA_TIME_ZONE", "Asia/Tokyo"),
        ("OSCOVA_CREDENTIAL_ACME_API_KEY", "env-key"),
        ("OSCOVA_CREDENTIAL_EMPTY", ""),
        ("UNRELATED", "x"),
    ];
    let config = Config::from_toml_str(FILE, env).unwrap();
    let user = config.user(None);
    assert_eq!((user.id(), user.time_zone()), ("carol", Some("Asia/Tokyo")));
    assert_eq!(config.user(Some("dave")).id(), "dave");
    assert_eq!(
        resolve(&config, "alice", "acme.api_key").unwrap(),
        "env-key"
    );
    assert_eq!(
        resolve(&config, "alice", "ACME-API-KEY").unwrap(),
        "env-key"
    );
    assert_eq!(resolve(&config, "alice", "empty"), None);
    assert_eq!(
        config.credential_env_names(),
        ["OSCOVA_CREDENTIAL_ACME_API_KEY", "OSCOVA_CREDENTIAL_EMPTY"]
    );
}

#[test]
fn defaults_with_no_file() {
    let none: [(&str, &str); 0] = [];
    let config = Config::from_toml_str("", none).unwrap();
    let user = config.user(None);
    assert_eq!((user.id(), user.time_zone()), (DEFAULT_USER, None));
    assert_eq!(config.default_approval(), DefaultApproval::NotRequired);
}

#[test]
fn mistakes_are_errors_naming_the_problem() {
    let none: [(&str, &str); 0] = [];
    let err = Config::from_toml_str("defualt_user = \"x\"", none).unwrap_err();
    assert!(err.to_string().contains("defualt_user"), "{err}");
    let err = Config::from_toml_str("default_approval = \"sometimes\"", none).unwrap_err();
    assert!(err.to_string().contains("sometimes"), "{err}");
    let err = Config::from_toml_str("[users.a]\ntimezone = \"UTC\"", none).unwrap_err();
    assert!(err.to_string().contains("timezone"), "{err}");
}

#[test]
fn provider_tables_and_the_files_root() {
    let none: [(&str, &str); 0] = [];
    let text = "files_root = \"/srv/f\"\n[providers.ollama]\nmodel = \"m\"\n";
    let config = Config::from_toml_str(text, none).unwrap();
    assert_eq!(config.files_root(), Some(Path::new("/srv/f")));
    assert_eq!(config.model_provider("ollama").model.as_deref(), Some("m"));
    assert_eq!(config.model_provider("openai").model, None);
    let config = Config::from_toml_str(text, [(FILES_ROOT_ENV, "/env")]).unwrap();
    assert_eq!(config.files_root(), Some(Path::new("/env")));
    let err = Config::from_toml_str("[providers.ollama]\nmodle = \"m\"", none).unwrap_err();
    assert!(err.to_string().contains("modle"), "{err}");
}

#[test]
fn debug_shows_no_secret() {
    let none: [(&str, &str); 0] = [];
    let config = Config::from_toml_str(FILE, none).unwrap();
    let text = format!("{config:?} {:?}", config.credentials());
    assert!(
        !text.contains("alice-key") && !text.contains("shared-key"),
        "{text}"
    );
}

#[test]
fn an_explicit_file_must_exist() {
    let none: [(&str, &str); 0] = [];
    let missing = Path::new("/nonexistent/oscova/config.toml");
    let err = Config::load_from(Some(missing), none).unwrap_err();
    assert!(matches!(err, CliError::ConfigRead { .. }), "{err}");
    let err = Config::load_from(None, [(CONFIG_ENV, missing.to_str().unwrap())]).unwrap_err();
    assert!(matches!(err, CliError::ConfigRead { .. }), "{err}");
}

#[test]
fn mcp_waits_are_kept_in_the_sessions_store_unless_memory_is_asked() {
    let none: [(&str, &str); 0] = [];
    let config = Config::from_toml_str("", none).unwrap();
    assert!(config.mcp().waits_in_sessions());
    let config = Config::from_toml_str("[mcp]\nwaits = \"memory\"", none).unwrap();
    assert!(!config.mcp().waits_in_sessions());
    let err = Config::from_toml_str("[mcp]\nwaits = \"disk\"", none).unwrap_err();
    let err = err.to_string();
    assert!(err.contains("disk") && err.contains("`sessions`"), "{err}");
}
