//! Discovery (RFC 9728 protected-resource metadata, RFC 8414 / OpenID
//! authorization-server metadata) and the client-credentials token
//! request, with the checks the module header lists: origins, schemes,
//! the server's network scope, the configured issuer, the `resource`.
//! Both grants discover through [`discover`]; the authorization-code one
//! (`user/`) hands what it found to rmcp's authorization manager.

use std::time::Duration;

use http::Uri;
use oscova_core::{ExposeSecret, NetworkScope};
use serde_json::Value;

use super::{Flow, MAX_BODY, OAuthError, Token};
use crate::config::ClientAuth;

/// What every OAuth request of one server goes through: its URL, scope,
/// bound, HTTP client, and the trusted issuer and scopes of its `oauth`.
#[derive(Clone)]
pub(crate) struct Reach {
    /// The MCP server's URL.
    pub(crate) url: String,
    pub(crate) network: NetworkScope,
    /// The bound on each request.
    pub(crate) timeout: Duration,
    /// The server's HTTP client (its TLS, no proxy, no redirects).
    pub(crate) http: reqwest_rmcp::Client,
    /// `oauth.issuer`.
    pub(crate) issuer: Option<String>,
    /// `oauth.scopes`.
    pub(crate) scopes: Vec<String>,
}

/// What discovery found: where to get a token, for which resource.
#[derive(Clone)]
pub(crate) struct Found {
    /// The authorization server (its issuer identifier).
    pub(crate) issuer: String,
    pub(crate) token_endpoint: String,
    /// The resource indicator: the metadata's `resource`.
    pub(crate) resource: String,
    /// The `scope` parameter, if any.
    pub(crate) scope: Option<String>,
    /// The authorization server's metadata, as it was read.
    pub(crate) metadata: Value,
}

/// `url` as a URL the flow may use: `https://`, or `http://` on a
/// loopback address (decided without DNS, as the offline rule does).
pub(crate) fn check_endpoint(url: &str) -> Result<Uri, String> {
    let uri: Uri = url.parse().map_err(|_| format!("`{url}` is not a URL"))?;
    match uri.scheme_str() {
        Some("https") if uri.host().is_some() => Ok(uri),
        Some("http") if uri.host().is_some() && oscova_core::locality::is_local_endpoint(url) => {
            Ok(uri)
        }
        _ => Err(format!(
            "`{url}` is neither an `https://` URL nor an `http://` one on this machine"
        )),
    }
}

/// `url` checked as [`check_endpoint`] and against the server's scope.
pub(crate) fn allowed(url: &str, network: NetworkScope, what: &str) -> Result<Uri, OAuthError> {
    let uri = check_endpoint(url).map_err(|e| OAuthError::Refused(format!("{what}: {e}")))?;
    crate::connect::in_scope(network, url)
        .map_err(|e| OAuthError::Refused(format!("{what}: {e}")))?;
    Ok(uri)
}

/// Scheme, host and port (the default one when absent), lower case.
fn origin(uri: &Uri) -> (String, String, u16) {
    let scheme = uri.scheme_str().unwrap_or_default().to_ascii_lowercase();
    let port = uri
        .port_u16()
        .unwrap_or(if scheme == "https" { 443 } else { 80 });
    let host = uri.host().unwrap_or_default().to_ascii_lowercase();
    (scheme, host, port)
}

/// `url` without its trailing slashes, for comparing identifiers.
fn trimmed(url: &str) -> &str {
    url.trim_end_matches('/')
}

/// The parameters of a `Bearer` challenge, names in lower case.
pub(super) fn challenge_params(header: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let header = header.trim();
    let rest = match header.split_once(char::is_whitespace) {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => rest,
        _ => return out,
    };
    let mut chars = rest.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace() || *c == ',').is_some() {}
        let mut name = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && *c != ',' && !c.is_whitespace()) {
            name.push(c);
        }
        if name.is_empty() {
            return out;
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next_if_eq(&'=').is_none() {
            continue;
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'"').is_some() {
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '"' => break,
                    c => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',' && !c.is_whitespace()) {
                value.push(c);
            }
        }
        out.push((name.to_ascii_lowercase(), value));
    }
}

/// Whether `resource` names the server at `server`: the same origin, and
/// its path the server's or a parent of it (at a `/`).
fn names_server(resource: &str, server: &Uri) -> bool {
    let Ok(resource) = resource.parse::<Uri>() else {
        return false;
    };
    if origin(&resource) != origin(server) || resource.query().is_some() {
        return false;
    }
    let own = trimmed(resource.path());
    let path = trimmed(server.path());
    path == own || path.strip_prefix(own).is_some_and(|r| r.starts_with('/'))
}

/// The JSON object at `url`, read up to [`MAX_BODY`].
async fn get_json(flow: &Reach, url: &str, what: &'static str) -> Result<Value, OAuthError> {
    let fail = |reason: String| OAuthError::Metadata {
        what,
        url: url.to_owned(),
        reason,
    };
    let response = flow
        .http
        .get(url)
        .header(http::header::ACCEPT, "application/json")
        .timeout(flow.timeout)
        .send()
        .await
        .map_err(|e| fail(crate::tls::reason(&e)))?;
    if response.status() != http::StatusCode::OK {
        return Err(fail(format!("HTTP {}", response.status().as_u16())));
    }
    let body = read_capped(response).await.map_err(fail)?;
    match serde_json::from_slice::<Value>(&body) {
        Ok(value) if value.is_object() => Ok(value),
        _ => Err(fail("not a JSON object".to_owned())),
    }
}

/// A response's body, at most [`MAX_BODY`] bytes of it.
pub(crate) async fn read_capped(mut response: reqwest_rmcp::Response) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| crate::tls::reason(&e))? {
        if body.len() + chunk.len() > MAX_BODY {
            return Err(format!("its body is larger than {MAX_BODY} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The strings of `value[key]`, an array.
fn strings(value: &Value, key: &str) -> Vec<String> {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// From a 401's `challenge` to a token endpoint, every check on the way.
pub(crate) async fn discover(flow: &Reach, challenge: &str) -> Result<Found, OAuthError> {
    let server = allowed(&flow.url, flow.network, "the MCP server's URL")?;
    let params = challenge_params(challenge);
    let param = |name: &str| {
        params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let metadata_url = param("resource_metadata").unwrap_or_else(|| {
        format!(
            "{}://{}/.well-known/oauth-protected-resource{}",
            server.scheme_str().unwrap_or("https"),
            server.authority().map(|a| a.as_str()).unwrap_or_default(),
            trimmed(server.path())
        )
    });
    let at = allowed(
        &metadata_url,
        flow.network,
        "the protected-resource metadata",
    )?;
    if origin(&at) != origin(&server) {
        return Err(OAuthError::Refused(format!(
            "the server's challenge points at metadata on another origin (`{metadata_url}`); refused"
        )));
    }
    const PRM: &str = "the protected-resource metadata";
    let metadata = get_json(flow, &metadata_url, PRM).await?;
    let resource = metadata
        .get("resource")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if !names_server(&resource, &server) {
        return Err(OAuthError::Metadata {
            what: PRM,
            url: metadata_url,
            reason: format!(
                "its `resource` (`{resource}`) is not this server (`{}`)",
                flow.url
            ),
        });
    }
    let named = strings(&metadata, "authorization_servers");
    let listed = named
        .iter()
        .map(|a| format!("`{a}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let issuer = match &flow.issuer {
        Some(issuer) => named
            .iter()
            .find(|a| trimmed(a) == trimmed(issuer))
            .ok_or_else(|| {
                OAuthError::Refused(format!(
                    "the server names the authorization server(s) [{listed}], not the configured `oauth.issuer` `{issuer}`; nothing was sent to them"
                ))
            })?,
        None => named
            .iter()
            .find(|a| a.parse::<Uri>().is_ok_and(|u| origin(&u) == origin(&server)))
            .ok_or_else(|| {
                OAuthError::Refused(format!(
                    "the server names the authorization server(s) [{listed}], none on its own origin; set `oauth.issuer` to the one to trust with the client secret (nothing was sent to them)"
                ))
            })?,
    }
    .clone();
    let issuer_uri = allowed(&issuer, flow.network, "the authorization server")?;
    let as_metadata = authorization_server(flow, &issuer, &issuer_uri).await?;
    let token_endpoint = as_metadata
        .get("token_endpoint")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    allowed(&token_endpoint, flow.network, "the token endpoint")?;
    let scope = if flow.scopes.is_empty() {
        param("scope").filter(|s| !s.is_empty())
    } else {
        Some(flow.scopes.join(" "))
    };
    Ok(Found {
        issuer,
        token_endpoint,
        resource,
        scope,
        metadata: as_metadata,
    })
}

/// Whether to use HTTP Basic (else the form), given the methods the
/// metadata lists (none listed: Basic only, RFC 8414's default) and the
/// configured one.
fn client_auth(methods: &[String], configured: Option<ClientAuth>) -> Result<bool, String> {
    let offers = |name: &str| {
        if methods.is_empty() {
            name == "client_secret_basic"
        } else {
            methods.iter().any(|m| m == name)
        }
    };
    match configured {
        Some(ClientAuth::ClientSecretPost) if offers("client_secret_post") => Ok(false),
        Some(ClientAuth::ClientSecretBasic) if offers("client_secret_basic") => Ok(true),
        Some(method) => Err(format!(
            "does not offer the configured `client_auth` ({method:?})"
        )),
        None if offers("client_secret_basic") => Ok(true),
        None if offers("client_secret_post") => Ok(false),
        None => Err("takes neither `client_secret_basic` nor `client_secret_post`".to_owned()),
    }
}

/// The authorization server's metadata: RFC 8414's well-known document,
/// else OpenID's; its `issuer` must be the one asked for.
async fn authorization_server(flow: &Reach, issuer: &str, uri: &Uri) -> Result<Value, OAuthError> {
    let base = format!(
        "{}://{}",
        uri.scheme_str().unwrap_or("https"),
        uri.authority().map(|a| a.as_str()).unwrap_or_default()
    );
    let path = trimmed(uri.path());
    let mut candidates = vec![
        format!("{base}/.well-known/oauth-authorization-server{path}"),
        format!("{}/.well-known/openid-configuration", trimmed(issuer)),
    ];
    let inserted = format!("{base}/.well-known/openid-configuration{path}");
    if !candidates.contains(&inserted) {
        candidates.push(inserted);
    }
    let mut last = None;
    for url in candidates {
        match get_json(flow, &url, "the authorization server's metadata").await {
            Ok(metadata) => {
                let named = metadata.get("issuer").and_then(Value::as_str);
                if named.map(trimmed) != Some(trimmed(issuer)) {
                    return Err(OAuthError::Metadata {
                        what: "the authorization server's metadata",
                        url,
                        reason: format!("its `issuer` ({named:?}) is not `{issuer}`"),
                    });
                }
                return Ok(metadata);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| OAuthError::Refused("no metadata URL".to_owned())))
}

/// `value` percent-encoded for `application/x-www-form-urlencoded`.
pub(crate) fn form(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One line of at most 200 characters of what a server wrote.
pub(crate) fn line(text: &str) -> String {
    let folded: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect();
    folded.trim().to_owned()
}

/// A client-credentials token from `found`'s token endpoint.
pub(super) async fn request_token(flow: &Flow, found: &Found) -> Result<Token, OAuthError> {
    let credentials = &flow.credentials;
    let methods = strings(&found.metadata, "token_endpoint_auth_methods_supported");
    let basic = client_auth(&methods, flow.config.client_auth).map_err(|e| {
        OAuthError::Refused(format!("the authorization server `{}` {e}", found.issuer))
    })?;
    let mut body = vec![
        "grant_type=client_credentials".to_owned(),
        format!("resource={}", form(&found.resource)),
    ];
    if let Some(scope) = &found.scope {
        body.push(format!("scope={}", form(scope)));
    }
    let mut request = flow
        .reach
        .http
        .post(&found.token_endpoint)
        .header(
            http::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(http::header::ACCEPT, "application/json")
        .timeout(flow.reach.timeout);
    if basic {
        // RFC 6749 §2.3.1: both form-encoded before Basic's base64.
        request = request.basic_auth(
            form(credentials.id.expose_secret()),
            Some(form(credentials.secret.expose_secret())),
        );
    } else {
        body.push(format!(
            "client_id={}",
            form(credentials.id.expose_secret())
        ));
        body.push(format!(
            "client_secret={}",
            form(credentials.secret.expose_secret())
        ));
    }
    let answer = |reason: String| OAuthError::TokenAnswer {
        url: found.token_endpoint.clone(),
        reason,
    };
    let response = request
        .body(body.join("&"))
        .send()
        .await
        .map_err(|e| answer(crate::tls::reason(&e)))?;
    let status = response.status();
    let body = read_capped(response).await.map_err(answer)?;
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if !status.is_success() {
        let code = json.get("error").and_then(Value::as_str).map(line);
        let description = json
            .get("error_description")
            .and_then(Value::as_str)
            .map(line);
        let detail = match (code, description) {
            (Some(c), Some(d)) => format!(": {c}: {d}"),
            (Some(c), None) => format!(": {c}"),
            _ => String::new(),
        };
        return Err(OAuthError::TokenRefused {
            issuer: found.issuer.clone(),
            status: status.as_u16(),
            detail,
            id_key: flow.config.client_id_credential.clone(),
            secret_key: flow.config.client_secret_credential.clone(),
        });
    }
    let token = json
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| answer("no `access_token`".to_owned()))?;
    let kind = json.get("token_type").and_then(Value::as_str);
    if !kind.is_some_and(|k| k.eq_ignore_ascii_case("bearer")) {
        return Err(answer(format!("`token_type` is {kind:?}, not `Bearer`")));
    }
    // A number, or (some servers) a number in a string.
    let lifetime = json
        .get("expires_in")
        .and_then(|v| v.as_f64().or_else(|| v.as_str()?.trim().parse().ok()))
        .and_then(|s| Duration::try_from_secs_f64(s).ok());
    Ok(Token::new(token.into(), lifetime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_parsed_quoted_or_not() {
        let params = challenge_params(
            r#"Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp", scope="mcp other",error=invalid_token"#,
        );
        assert_eq!(
            params,
            vec![
                (
                    "resource_metadata".to_owned(),
                    "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp".to_owned()
                ),
                ("scope".to_owned(), "mcp other".to_owned()),
                ("error".to_owned(), "invalid_token".to_owned()),
            ]
        );
        assert!(challenge_params("Basic realm=\"x\"").is_empty());
        assert_eq!(
            challenge_params(r#"bearer  realm="a\"b""#),
            vec![("realm".to_owned(), "a\"b".to_owned())]
        );
        assert!(challenge_params("Bearer").is_empty());
    }

    #[test]
    fn a_resource_names_the_server_or_a_parent_on_its_origin() {
        let server: Uri = "https://notes.example.com/mcp".parse().unwrap();
        for yes in [
            "https://notes.example.com/mcp",
            "https://notes.example.com/mcp/",
            "https://notes.example.com",
            "https://NOTES.example.com:443/",
        ] {
            assert!(names_server(yes, &server), "{yes}");
        }
        for no in [
            "https://notes.example.com/mcp2",
            "https://notes.example.com/other",
            "https://evil.example.com/mcp",
            "http://notes.example.com/mcp",
            "https://notes.example.com:8443/mcp",
            "https://notes.example.com/mcp?x=1",
            "",
        ] {
            assert!(!names_server(no, &server), "{no}");
        }
    }

    #[test]
    fn endpoints_are_https_or_loopback_http() {
        assert!(check_endpoint("https://auth.example.com").is_ok());
        assert!(check_endpoint("http://127.0.0.1:8080/token").is_ok());
        assert!(check_endpoint("http://localhost/token").is_ok());
        for bad in [
            "http://auth.example.com/token",
            "http://10.0.0.1/token",
            "ftp://127.0.0.1/",
            "/token",
            "",
        ] {
            assert!(check_endpoint(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn basic_unless_configured_or_only_post_is_offered() {
        let both = vec![
            "client_secret_post".to_owned(),
            "client_secret_basic".to_owned(),
        ];
        let post = vec![
            "client_secret_post".to_owned(),
            "private_key_jwt".to_owned(),
        ];
        assert_eq!(client_auth(&both, None), Ok(true));
        assert_eq!(client_auth(&[], None), Ok(true), "RFC 8414's default");
        assert_eq!(client_auth(&post, None), Ok(false));
        assert_eq!(
            client_auth(&both, Some(ClientAuth::ClientSecretPost)),
            Ok(false)
        );
        assert!(client_auth(&post, Some(ClientAuth::ClientSecretBasic)).is_err());
        assert!(client_auth(&[], Some(ClientAuth::ClientSecretPost)).is_err());
        assert!(client_auth(&["private_key_jwt".to_owned()], None).is_err());
    }

    #[test]
    fn form_values_are_percent_encoded() {
        assert_eq!(form("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
        assert_eq!(line("a\nb\r\tc"), "a b  c");
    }
}
