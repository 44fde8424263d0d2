//! The JSON-RPC binding: `POST /`, one request object.
//!
//! Rules: `jsonrpc` is "2.0", `id` a string, a number or null (else the
//! answer's id is null), `method` a string naming a [`Method`] (else
//! `MethodNotFound`), `params` an object (absent: `{}`); every answer is
//! HTTP 200 with a JSON-RPC response, or a stream of them with the
//! request's id.

use bytes::Bytes;
use http::{Method as Verb, Request, Response, StatusCode};
use oscova_serve::RequestBody;
use serde_json::{Map, Value, json};

use super::{State, check_version, json_response, read_json, respond, too_large};
use crate::body::A2aBody;
use crate::model::{A2aError, Method};
use crate::stream;

fn rpc_error(id: Value, error: &A2aError) -> Response<A2aBody> {
    json_response(
        StatusCode::OK,
        &json!({"jsonrpc": "2.0", "id": id, "error": error.to_jsonrpc()}),
    )
}

impl State {
    /// Answers a JSON-RPC request of `user`.
    pub(super) async fn jsonrpc(
        &self,
        user: &str,
        request: Request<RequestBody>,
    ) -> Response<A2aBody> {
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
}
