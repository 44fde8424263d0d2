//! The two HTTP bindings and the card, in front of the methods (`rpc.rs`).
//!
//! Rules, in the order a request meets them:
//!
//! 0. Before this handler, the listener serving the port
//!    (`oscova_serve::Listener`, this crate's own or the one it shares
//!    with MCP in `oscova serve`) holds every request, on every path, to
//!    the port's Origin and Host policy (`oscova_serve::OriginPolicy`):
//!    403 for a foreign browser `Origin`, and, bound to loopback, for a
//!    `Host` that does not name this machine (DNS rebinding).
//! 1. `GET /.well-known/agent-card.json` is the card, to anyone.
//! 2. Any other path of the server needs `Authorization: Bearer <token>`
//!    when tokens or OAuth are configured: a static token, or an OAuth
//!    access token `oscova_serve::Authenticator` accepts (401 with its
//!    `WWW-Authenticate` challenge and `Connection: close` otherwise, 403
//!    `insufficient_scope`, 503 when the issuer's keys cannot be fetched);
//!    without either every request is the default user's (and the server
//!    listens on loopback only).
//! 3. `A2A-Version` must be 1.0 (or 1.0.x); a missing header means 0.3,
//!    as the specification says. Another version is
//!    `VersionNotSupportedError` (-32009 over JSON-RPC, 400 over
//!    HTTP+JSON).
//! 4. A body past `max_body_bytes` is 413; one that is not JSON is a
//!    parse error (-32700, or 400).
//! 5. JSON-RPC: `POST /`, one request object (`jsonrpc` "2.0", a `method`
//!    string, `params` an object); HTTP+JSON: `POST /message:send`,
//!    `GET /tasks/{id}`, `GET /tasks`, `POST /tasks/{id}:cancel` and the
//!    rest of the specification's routes, whose methods answer as
//!    `rpc.rs` says. Any other path is 404.

use std::sync::Arc;

use bytes::Bytes;
use http::{Method as Verb, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use oscova_serve::{AuthRefusal, Authenticator, RequestBody};
use serde_json::{Map, Value, json};

use crate::body::A2aBody;
use crate::model::{A2aError, CARD_PATH, FOLLOWUPS_PATH, Method, VERSION_HEADER};
use crate::tasks::Runner;
use crate::{methods, stream};

/// What every request reads.
pub(crate) struct State {
    pub(crate) runner: Arc<Runner>,
    pub(crate) auth: Authenticator,
    pub(crate) default_user: String,
    pub(crate) card: Bytes,
    /// The extended card, when configured.
    pub(crate) extended_card: Option<Value>,
    pub(crate) max_body_bytes: usize,
    pub(crate) followups: Option<FollowUpHook>,
}

/// The header a pushing agent sends its token in.
const NOTIFICATION_TOKEN: &str = "x-a2a-notification-token";

/// Says whether a webhook id and token name a task the host follows.
pub type FollowUpHook = Arc<dyn Fn(&str, Option<&str>) -> bool + Send + Sync>;

fn respond(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<A2aBody> {
    let mut response = Response::new(Full::new(body).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    response
}

fn json_response(status: StatusCode, value: &Value) -> Response<A2aBody> {
    respond(status, "application/json", Bytes::from(value.to_string()))
}

fn rest_error(error: &A2aError) -> Response<A2aBody> {
    let status = StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
    json_response(status, &error.to_rest())
}

fn rpc_error(id: Value, error: &A2aError) -> Response<A2aBody> {
    json_response(
        StatusCode::OK,
        &json!({"jsonrpc": "2.0", "id": id, "error": error.to_jsonrpc()}),
    )
}

/// Whether the request's `A2A-Version` is one this server speaks.
fn check_version(request: &Request<RequestBody>) -> Result<(), A2aError> {
    let asked = request
        .headers()
        .get(VERSION_HEADER)
        .map(|v| v.to_str().unwrap_or("").trim().to_owned())
        .unwrap_or_else(|| "0.3".to_owned());
    let mut parts = asked.split('.');
    let speaks = parts.next() == Some("1")
        && parts.next().is_some_and(|m| m == "0")
        && parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if speaks {
        Ok(())
    } else {
        Err(A2aError::VersionNotSupported(asked))
    }
}

/// The JSON of the body, within `max` bytes: `Err(None)` when too large.
async fn read_json(body: RequestBody, max: usize) -> Result<Value, Option<A2aError>> {
    let bytes = match Limited::new(body, max).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => return Err(None),
        Err(error) => return Err(Some(A2aError::InvalidRequest(error.to_string()))),
    };
    if bytes.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_slice(&bytes).map_err(|e| Some(A2aError::Parse(e.to_string())))
}

fn too_large() -> Response<A2aBody> {
    let mut response = respond(
        StatusCode::PAYLOAD_TOO_LARGE,
        "text/plain",
        Bytes::from_static(b"Payload Too Large"),
    );
    response.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    response
}

/// The query string as JSON fields (camelCase names kept, numbers and
/// booleans read as such).
fn query_params(request: &Request<RequestBody>) -> Map<String, Value> {
    let mut fields = Map::new();
    for pair in request.uri().query().unwrap_or("").split('&') {
        let Some((key, value)) = pair.split_once('=') else {
            continue;
        };
        let value = percent_decode(value);
        let value = if let Ok(n) = value.parse::<u64>() {
            Value::from(n)
        } else if value == "true" || value == "false" {
            Value::Bool(value == "true")
        } else {
            Value::String(value)
        };
        fields.insert(key.to_owned(), value);
    }
    fields
}

fn percent_decode(text: &str) -> String {
    fn hex(b: u8) -> Option<u8> {
        (b as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| Some((hex(*bytes.get(i + 1)?)?, hex(*bytes.get(i + 2)?)?)))
            .flatten();
        match (escaped, bytes[i]) {
            (Some((high, low)), _) => {
                out.push(high * 16 + low);
                i += 3;
                continue;
            }
            (None, b'+') => out.push(b' '),
            (None, b) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The method an HTTP+JSON request names, and the task id its path
/// holds (put in the params after the body's, so the path's wins); the
/// push config routes put the path's `taskId` and `id` in `fields` first
/// (the body's may replace them). `None`: no method is served there.
/// Every method's request as [`Method::http`] spells it comes back to
/// that method (a test pins it).
fn rest_route<'p>(
    verb: &Verb,
    path: &'p str,
    fields: &mut Map<String, Value>,
) -> Option<(Method, Option<&'p str>)> {
    let route = match (verb, path) {
        (&Verb::POST, "/message:send") => (Method::SendMessage, None),
        (&Verb::POST, "/message:stream") => (Method::SendStreamingMessage, None),
        (&Verb::GET, "/tasks") => (Method::ListTasks, None),
        (&Verb::GET, "/extendedAgentCard") => (Method::GetExtendedAgentCard, None),
        (_, rest) => {
            let tail = rest.strip_prefix("/tasks/").unwrap_or("");
            if let Some(id) = tail.strip_suffix(":cancel").filter(|_| verb == Verb::POST) {
                (Method::CancelTask, Some(id))
            } else if let Some(id) = tail.strip_suffix(":subscribe") {
                (Method::SubscribeToTask, Some(id))
            } else if let Some((task, rest)) = tail.split_once("/pushNotificationConfigs") {
                fields.insert("taskId".into(), Value::String(percent_decode(task)));
                let config = rest.strip_prefix('/').filter(|c| !c.is_empty());
                if let Some(config) = config {
                    fields.insert("id".into(), Value::String(percent_decode(config)));
                }
                let method = match (verb, config) {
                    (&Verb::POST, None) => Method::CreateTaskPushNotificationConfig,
                    (&Verb::GET, None) => Method::ListTaskPushNotificationConfigs,
                    (&Verb::GET, Some(_)) => Method::GetTaskPushNotificationConfig,
                    (&Verb::DELETE, Some(_)) => Method::DeleteTaskPushNotificationConfig,
                    _ => return None,
                };
                (method, None)
            } else if verb == Verb::GET && !tail.is_empty() && !tail.contains('/') {
                (Method::GetTask, Some(tail))
            } else {
                return None;
            }
        }
    };
    Some(route)
}

impl State {
    /// Whether this server answers `path` (for a front end that serves
    /// other protocols on the same port).
    pub(crate) fn serves(path: &str) -> bool {
        path == "/"
            || path == CARD_PATH
            || path.starts_with("/message:")
            || path == "/tasks"
            || path.starts_with("/tasks/")
            || path == "/extendedAgentCard"
            || path.starts_with(FOLLOWUPS_PATH)
    }

    /// A push webhook: the hook decides by the id and the token; the body
    /// is not read.
    fn followup(&self, request: &Request<RequestBody>, id: &str) -> Response<A2aBody> {
        let Some(hook) = self
            .followups
            .as_ref()
            .filter(|_| request.method() == Verb::POST)
        else {
            return respond(
                StatusCode::NOT_FOUND,
                "text/plain",
                Bytes::from_static(b"Not Found"),
            );
        };
        let token = request
            .headers()
            .get(NOTIFICATION_TOKEN)
            .and_then(|v| v.to_str().ok());
        if !id.contains('/') && hook(id, token) {
            json_response(StatusCode::OK, &Value::Object(Map::new()))
        } else {
            respond(
                StatusCode::UNAUTHORIZED,
                "text/plain",
                Bytes::from_static(b"Unauthorized"),
            )
        }
    }

    pub(crate) async fn handle(&self, request: Request<RequestBody>) -> Response<A2aBody> {
        let path = request.uri().path().to_owned();
        if path == CARD_PATH && request.method() == Verb::GET {
            return respond(StatusCode::OK, "application/json", self.card.clone());
        }
        if let Some(id) = path.strip_prefix(FOLLOWUPS_PATH) {
            return self.followup(&request, id);
        }
        if !Self::serves(&path) {
            return respond(
                StatusCode::NOT_FOUND,
                "text/plain",
                Bytes::from_static(b"Not Found"),
            );
        }
        let user = match self.auth.authenticate(request.headers()).await {
            Ok(None) => self.default_user.clone(),
            Ok(Some(user)) => user,
            Err(refusal) => return self.refusal(refusal),
        };
        if path == "/" {
            self.jsonrpc(&user, request).await
        } else {
            self.rest(&user, &path, request).await
        }
    }

    /// A refused request: its status, the authenticator's challenge, the
    /// connection closed. Without OAuth a missing and an unknown token read
    /// alike.
    fn refusal(&self, refusal: AuthRefusal) -> Response<A2aBody> {
        let text: &'static [u8] = match refusal {
            _ if self.auth.oauth().is_none() => b"Unauthorized: send Authorization: Bearer <token>",
            AuthRefusal::Missing => b"Unauthorized: send Authorization: Bearer <token>",
            AuthRefusal::InsufficientScope => b"Forbidden: the token lacks a required scope",
            AuthRefusal::Unavailable => {
                b"Service Unavailable: the authorization server's keys cannot be fetched"
            }
            _ => b"Unauthorized: the token is not accepted",
        };
        let mut response = respond(refusal.status(), "text/plain", Bytes::from_static(text));
        let headers = response.headers_mut();
        if let Ok(value) = header::HeaderValue::from_str(&self.auth.challenge(refusal)) {
            headers.insert(header::WWW_AUTHENTICATE, value);
        }
        headers.insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
        response
    }

    async fn jsonrpc(&self, user: &str, request: Request<RequestBody>) -> Response<A2aBody> {
        if request.method() != Verb::POST {
            return respond(
                StatusCode::METHOD_NOT_ALLOWED,
                "text/plain",
                Bytes::from_static(b"JSON-RPC takes POST"),
            );
        }
        let version = check_version(&request);
        let body = match read_json(request.into_body(), self.max_body_bytes).await {
            Ok(body) => body,
            Err(None) => return too_large(),
            Err(Some(error)) => return rpc_error(Value::Null, &error),
        };
        let id = body.get("id").cloned().unwrap_or(Value::Null);
        if !matches!(id, Value::Null | Value::String(_) | Value::Number(_)) {
            return rpc_error(
                Value::Null,
                &A2aError::InvalidRequest("id: a string or number".into()),
            );
        }
        if body.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return rpc_error(
                id,
                &A2aError::InvalidRequest("jsonrpc must be \"2.0\"".into()),
            );
        }
        let Some(name) = body.get("method").and_then(Value::as_str) else {
            return rpc_error(id, &A2aError::InvalidRequest("method: a string".into()));
        };
        let params = match body.get("params") {
            None => Value::Object(Map::new()),
            Some(p @ Value::Object(_)) => p.clone(),
            Some(_) => return rpc_error(id, &A2aError::InvalidParams("params: an object".into())),
        };
        if let Err(error) = version {
            return rpc_error(id, &error);
        }
        let Some(method) = Method::from_name(name) else {
            return rpc_error(id, &A2aError::MethodNotFound(name.to_owned()));
        };
        if method.streams() {
            return match stream::open(&self.runner, user, method, params).await {
                Ok(events) => {
                    stream::response(events, stream::Framing::JsonRpc(id), self.runner.clone())
                }
                Err(error) => rpc_error(id, &error),
            };
        }
        match self.call(user, method, params).await {
            Ok(result) => json_response(
                StatusCode::OK,
                &json!({"jsonrpc": "2.0", "id": id, "result": result}),
            ),
            Err(error) => rpc_error(id, &error),
        }
    }

    /// Answers `method` for `user`: the extended card from here, every
    /// other method from `rpc.rs`.
    async fn call(&self, user: &str, method: Method, params: Value) -> Result<Value, A2aError> {
        match (&self.extended_card, method) {
            (Some(card), Method::GetExtendedAgentCard) => Ok(card.clone()),
            _ => methods::call(&self.runner, user, method, params).await,
        }
    }

    async fn rest(
        &self,
        user: &str,
        path: &str,
        request: Request<RequestBody>,
    ) -> Response<A2aBody> {
        if let Err(error) = check_version(&request) {
            return rest_error(&error);
        }
        let verb = request.method().clone();
        let mut fields = query_params(&request);
        let Some((method, id)) = rest_route(&verb, path, &mut fields) else {
            return rest_error(&A2aError::MethodNotFound(format!("{verb} {path}")));
        };
        if verb == Verb::POST {
            match read_json(request.into_body(), self.max_body_bytes).await {
                Ok(Value::Object(body)) => fields.extend(body),
                Ok(_) => return rest_error(&A2aError::InvalidParams("the body: an object".into())),
                Err(None) => return too_large(),
                Err(Some(error)) => return rest_error(&error),
            }
        }
        if let Some(id) = id {
            fields.insert("id".into(), Value::String(percent_decode(id)));
        }
        if method.streams() {
            return match stream::open(&self.runner, user, method, Value::Object(fields)).await {
                Ok(events) => stream::response(events, stream::Framing::Rest, self.runner.clone()),
                Err(error) => rest_error(&error),
            };
        }
        match self.call(user, method, Value::Object(fields)).await {
            Ok(result) => json_response(StatusCode::OK, &result),
            Err(error) => rest_error(&error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_is_served_at_its_http_json_request() {
        for method in Method::ALL {
            let (verb, path) = method.http("t 1", "c/1");
            let verb = Verb::from_bytes(verb.as_str().as_bytes()).unwrap();
            let mut fields = Map::new();
            let (routed, id) = rest_route(&verb, &path, &mut fields)
                .unwrap_or_else(|| panic!("{method:?}: {verb} {path} is not served"));
            assert_eq!(routed, *method, "{verb} {path}");
            let named = id.map(percent_decode).or_else(|| {
                fields
                    .get("taskId")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
            if path.contains("t%201") {
                assert_eq!(named.as_deref(), Some("t 1"), "{verb} {path}");
            }
            if path.contains("c%2F1") {
                assert_eq!(fields["id"], "c/1", "{verb} {path}");
            }
        }
    }

    #[test]
    fn percent_decoding_reads_escapes_and_keeps_broken_ones() {
        assert_eq!(percent_decode("a%20b+c"), "a b c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
