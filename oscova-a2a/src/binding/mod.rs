//! The two HTTP bindings (`jsonrpc.rs`, `rest.rs`: HTTP+JSON) and the
//! card, in front of the methods (`methods.rs`, the streams in
//! `stream.rs`): both bindings turn a request into one
//! [`Method`](crate::model::Method) and its params.
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
//!    `methods.rs` says. Any other path is 404.

use std::sync::Arc;

mod jsonrpc;
mod rest;

use bytes::Bytes;
use http::{Method as Verb, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use oscova_serve::{AuthRefusal, Authenticator, RequestBody};
use serde_json::{Map, Value};

use crate::body::A2aBody;
use crate::methods;
use crate::model::{A2aError, CARD_PATH, FOLLOWUPS_PATH, Method, VERSION_HEADER};
use crate::tasks::Runner;

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

pub(super) fn respond(
    status: StatusCode,
    content_type: &'static str,
    body: Bytes,
) -> Response<A2aBody> {
    let mut response = Response::new(Full::new(body).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    response
}

pub(super) fn json_response(status: StatusCode, value: &Value) -> Response<A2aBody> {
    respond(status, "application/json", Bytes::from(value.to_string()))
}

/// Whether the request's `A2A-Version` is one this server speaks.
pub(super) fn check_version(request: &Request<RequestBody>) -> Result<(), A2aError> {
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
pub(super) async fn read_json(body: RequestBody, max: usize) -> Result<Value, Option<A2aError>> {
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

pub(super) fn too_large() -> Response<A2aBody> {
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

    /// Answers `method` for `user`: the extended card from here, every
    /// other method from `methods.rs`.
    pub(super) async fn call(
        &self,
        user: &str,
        method: Method,
        params: Value,
    ) -> Result<Value, A2aError> {
        match (&self.extended_card, method) {
            (Some(card), Method::GetExtendedAgentCard) => Ok(card.clone()),
            _ => methods::call(&self.runner, user, method, params).await,
        }
    }
}
