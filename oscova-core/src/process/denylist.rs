//! The deny-list: which inherited environment variables carry secrets.
//!
//! The rule errs wide on purpose. A name denied by mistake costs a caller one explicit
//! `env` call; a secret let through leaks into whatever the child prints. Names compare
//! ignoring ASCII case. A variable is denied when its name
//!
//! - contains `PASSWORD`, `PASSWD`, `SECRET`, `TOKEN`, `CREDENTIAL` or `PRIVATE`
//!   anywhere (`PGPASSWORD`, `MAX_TOKENS` and `Auth__ClientSecret` alike);
//! - ends with `_KEY`, `_APIKEY`, `_PAT`, `_AUTH`, `_PWD`, `_DSN` or `_WEBHOOK_URL`, or
//!   is `KEY`, `APIKEY` or `DSN`. The underscore is what keeps `PWD` (the working
//!   directory), `OLDPWD` and `MONKEY` out, and `_PAT` never matches `_PATH`;
//! - names a connection: it ends with `_URL`, `_URI` or `_CONNECTION_STRING` and one of
//!   its `_`-separated words starts with a data store's name ([`STORE_WORDS`]: `DATABASE_URL`,
//!   `REDIS_URL`, `MONGODB_URI`, `PG_URL`), or it has a `ConnectionStrings__` section;
//! - has the `Section__Key` form (as .NET-style configuration binds nested keys) and its
//!   last part ends with one of [`KEY_ENDINGS`] (`Jwt__SigningKey`, `Sentry__Dsn`): that
//!   part is `PascalCase`, so there is no underscore to anchor on.
//!
//! A variable is also denied by its value: when the value holds a URL with a password in
//! its userinfo (`scheme://user:pass@host`), whatever the name.
//!
//! Apart from secrets, a variable that hands a child the address of an agent or a bus
//! that acts for the user is denied ([`is_agent_socket_name`]): its name is one of
//! [`AGENT_SOCKETS`] (`SSH_AUTH_SOCK`, `GPG_AGENT_INFO`, `DBUS_SESSION_BUS_ADDRESS`,
//! `DOCKER_HOST`, `KRB5CCNAME`, ...) or ends with `_SOCK` or `_SOCKET`. A child that
//! inherited `SSH_AUTH_SOCK` could sign as the user with every key the agent holds; one
//! that inherited the session bus could ask the keyring for passwords. Passing one
//! explicitly still works, for the one child that needs it.

/// Words that make a name secret wherever they appear in it.
const CONTAINED: [&str; 6] = [
    "PASSWORD",
    "PASSWD",
    "SECRET",
    "TOKEN",
    "CREDENTIAL",
    "PRIVATE",
];

/// Endings of `UPPER_SNAKE` names, without their leading underscore: a name ends with
/// `_` plus one of these.
const SUFFIXES: [&str; 7] = ["KEY", "APIKEY", "PAT", "AUTH", "PWD", "DSN", "WEBHOOK_URL"];

/// Names that are secrets on their own (`PWD` is not one: it is the working directory).
const BARE: [&str; 3] = ["KEY", "APIKEY", "DSN"];

/// Endings of a name that holds an address, which is secret when it addresses a store.
const ADDRESS_SUFFIXES: [&str; 3] = ["_URL", "_URI", "_CONNECTION_STRING"];

/// Beginnings of the words that say an address is a data store's (and so usually carries
/// its password): `DATABASE_URL`, `REDIS_URL`, `MONGODB_URI`, `RABBITMQ_URL`.
const STORE_WORDS: [&str; 18] = [
    "DATABASE",
    "DB",
    "REDIS",
    "MONGO",
    "AMQP",
    "RABBIT",
    "POSTGRES",
    "PG",
    "MYSQL",
    "MARIADB",
    "MSSQL",
    "SQL",
    "ELASTIC",
    "OPENSEARCH",
    "CLICKHOUSE",
    "CASSANDRA",
    "KAFKA",
    "MEMCACHE",
];

/// Endings of the last part of a `Section__Key` name (compared ignoring case).
const KEY_ENDINGS: [&str; 7] = [
    "KEY",
    "PAT",
    "AUTH",
    "PWD",
    "DSN",
    "WEBHOOKURL",
    "CONNECTIONSTRING",
];

/// Variables that name an agent's or a bus's socket, or a credential cache: a child that
/// has one can act as the user (sign with the ssh agent's keys, ask the keyring over the
/// session bus, drive the docker daemon).
pub(super) const AGENT_SOCKETS: [&str; 13] = [
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DBUS_STARTER_ADDRESS",
    "GNOME_KEYRING_CONTROL",
    "GNOME_KEYRING_PID",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "KRB5CCNAME",
    "KRB5_KTNAME",
    "SYSTEMD_NOTIFY_SOCKET",
];

/// Endings of names that hold a socket's address (`SSH_AUTH_SOCK`, `NOTIFY_SOCKET`).
const SOCKET_SUFFIXES: [&str; 2] = ["_SOCK", "_SOCKET"];

/// Whether the name hands a child an agent's or a bus's socket (the module docs).
pub(super) fn is_agent_socket_name(name: &str) -> bool {
    AGENT_SOCKETS
        .iter()
        .any(|agent| name.eq_ignore_ascii_case(agent))
        || SOCKET_SUFFIXES
            .iter()
            .any(|suffix| ends_with_ignore_ascii_case(name, suffix))
}

fn ends_with_ignore_ascii_case(name: &str, suffix: &str) -> bool {
    name.len()
        .checked_sub(suffix.len())
        .and_then(|start| name.as_bytes().get(start..))
        .is_some_and(|tail| tail.eq_ignore_ascii_case(suffix.as_bytes()))
}

fn contains_ignore_ascii_case(name: &str, word: &str) -> bool {
    name.as_bytes()
        .windows(word.len())
        .any(|window| window.eq_ignore_ascii_case(word.as_bytes()))
}

/// `name` ends with `_` and `word`.
fn ends_with_word(name: &str, word: &str) -> bool {
    let Some(start) = name.len().checked_sub(word.len() + 1) else {
        return false;
    };
    name.as_bytes().get(start) == Some(&b'_') && ends_with_ignore_ascii_case(name, word)
}

fn starts_with_ignore_ascii_case(name: &str, prefix: &str) -> bool {
    name.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// Whether the name alone marks a secret (the rules of the module docs).
pub(super) fn is_secret_name(name: &str) -> bool {
    if CONTAINED
        .iter()
        .any(|word| contains_ignore_ascii_case(name, word))
    {
        return true;
    }
    if BARE.iter().any(|bare| name.eq_ignore_ascii_case(bare))
        || SUFFIXES.iter().any(|suffix| ends_with_word(name, suffix))
    {
        return true;
    }
    if names_a_store(name) {
        return true;
    }
    match name.rsplit_once("__") {
        None => false,
        Some((_, key)) => {
            KEY_ENDINGS
                .iter()
                .any(|ending| ends_with_ignore_ascii_case(key, ending))
                || name
                    .split("__")
                    .any(|part| part.eq_ignore_ascii_case("ConnectionStrings"))
        }
    }
}

/// `DATABASE_URL`, `REDIS_URL`, `MONGODB_URI`, `ORDERS_DB_CONNECTION_STRING`.
fn names_a_store(name: &str) -> bool {
    let Some(suffix) = ADDRESS_SUFFIXES
        .iter()
        .find(|suffix| ends_with_ignore_ascii_case(name, suffix))
    else {
        return false;
    };
    let stem = name.get(..name.len() - suffix.len()).unwrap_or_default();
    stem.split('_').any(|word| {
        STORE_WORDS
            .iter()
            .any(|store| starts_with_ignore_ascii_case(word, store))
    })
}

/// Whether the value holds a URL whose userinfo has a password
/// (`postgres://app:hunter2@db/app`), wherever in the value it appears.
pub(super) fn has_url_password(value: &str) -> bool {
    let mut rest = value;
    while let Some(at) = rest.find("://") {
        let after = rest.get(at + 3..).unwrap_or_default();
        let authority_end = after
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(after.len());
        let authority = after.get(..authority_end).unwrap_or_default();
        if let Some((userinfo, _host)) = authority.rsplit_once('@')
            && userinfo.contains(':')
        {
            return true;
        }
        rest = after;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_denied() {
        for name in [
            "PGPASSWORD",
            "MYSQL_PWD",
            "SECRET_KEY",
            "STRIPE_SECRET_KEY",
            "AZURE_OPENAI_KEY",
            "GITHUB_PAT",
            "OPENAI_APIKEY",
            "PRIVATE_KEY",
            "CREDENTIALS",
            "PASSWD",
            "NPM_AUTH",
            "SLACK_WEBHOOK_URL",
            "AWS_SECRET_ACCESS_KEY",
            "DATABASE_URL",
            "REDIS_URL",
            "MONGODB_URI",
            "ORDERS_DB_URL",
            "PG_URL",
            "SENTRY_DSN",
            "DSN",
            "KEY",
            "API_KEY",
            "MAX_TOKENS",
            "ConnectionStrings__Default",
            "Jwt__SigningKey",
            "Sentry__Dsn",
            "Slack__WebhookUrl",
            "App__Db__ConnectionString",
            "database_url",
        ] {
            assert!(is_secret_name(name), "{name} should be denied");
        }
    }

    #[test]
    fn ordinary_names_pass() {
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "PWD",
            "OLDPWD",
            "TERM",
            "TZ",
            "USER",
            "SHELL",
            "LD_LIBRARY_PATH",
            "XDG_DATA_PATH",
            "MONKEY",
            "KEYBOARD",
            "HOMEPAGE_URL",
            "FEEDBACK_URL",
            "Logging__LogLevel__Default",
            "Section__",
            "",
        ] {
            assert!(!is_secret_name(name), "{name} should pass");
        }
    }

    #[test]
    fn agent_sockets_are_denied_and_ordinary_names_are_not() {
        for name in [
            "SSH_AUTH_SOCK",
            "ssh_auth_sock",
            "GPG_AGENT_INFO",
            "DBUS_SESSION_BUS_ADDRESS",
            "DBUS_SYSTEM_BUS_ADDRESS",
            "DOCKER_HOST",
            "KRB5CCNAME",
            "NOTIFY_SOCKET",
            "GPG_AGENT_SOCK",
            "PODMAN_SOCKET",
        ] {
            assert!(is_agent_socket_name(name), "{name} should be denied");
        }
        for name in [
            "PATH",
            "HOME",
            "DISPLAY",
            "XDG_RUNTIME_DIR",
            "SOCKS_VERSION",
            "",
        ] {
            assert!(!is_agent_socket_name(name), "{name} should pass");
        }
    }

    #[test]
    fn passwords_in_urls_are_found_by_value() {
        for value in [
            "postgres://app:hunter2@db.internal/app",
            "primary=redis://:pw@cache:6379/0, replica=redis://cache2",
            "amqp://guest:guest@localhost",
        ] {
            assert!(has_url_password(value), "{value}");
        }
        for value in [
            "https://example.org/a:b@c",
            "ssh://git@github.com/acme/repo",
            "/usr/bin:/bin",
            "user:pass@host",
            "",
        ] {
            assert!(!has_url_password(value), "{value}");
        }
    }

    #[test]
    fn the_policy_applies_the_list_and_its_own_names() {
        let policy = super::super::ProcessSpawnPolicy::with_base_env::<_, &str, &str>([])
            .deny("internal_cred");
        for name in [
            "OPENAI_API_KEY",
            "openai_api_key",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "AWS_SECRET",
            "API_KEY",
            "token",
            "Secret",
            "PASSWORD",
            "OpenAI__ApiKey",
            "OPENAI__APIKEY",
            "Telegram__BotToken",
            "Auth__ClientSecret",
            "Db__Password",
            "Smtp__Mail__SmtpPassword",
            "Legacy__OPENAI_API_KEY",
            "Section__Api_Key",
            "INTERNAL_CRED",
            "Internal_Cred",
            // Names that merely contain a secret word are denied too: the rule errs wide.
            "MAX_TOKENS",
            "TOKENIZER_PATH",
            "SECRETS_DIR",
            "PASSWORD_MIN_LENGTH",
            "Logging__MaxTokens",
        ] {
            assert!(policy.is_denied(name), "{name} should be denied");
        }
        for name in [
            "SSH_AUTH_SOCK",
            "GPG_AGENT_INFO",
            "DBUS_SESSION_BUS_ADDRESS",
        ] {
            assert!(policy.is_denied(name), "{name} should be denied");
        }
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "PWD",
            "TERM",
            "TZ",
            "Section__",
            "INTERNAL_CRED_PATH",
            "",
        ] {
            assert!(!policy.is_denied(name), "{name} should be kept");
        }
    }
}
