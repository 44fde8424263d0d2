//! The HTTP+JSON binding: the specification's routes, each one [`Method`]
//! ([`Method::http`] spells each method's request; [`rest_route`] reads
//! it back).
//!
//! Rules: ids in the path are percent-decoded; query parameters become
//! params (numbers and booleans read as such), and a POST's JSON object
//! body is merged over them; a task id the path names is put in after the
//! body, so the path's wins. An error is the HTTP status of
//! [`A2aError::http_status`] with the specification's error body.

use http::{Method as Verb, Request, Response, StatusCode};
use oscova_serve::RequestBody;
use serde_json::{Map, Value};

use super::{State, check_version, json_response, read_json, too_large};
use crate::body::A2aBody;
use crate::model::{A2aError, Method};
use crate::stream;

fn rest_error(error: &A2aError) -> Response<A2aBody> {
    let status = StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
    json_response(status, &error.to_rest())
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
    /// Answers an HTTP+JSON request of `user` at `path`.
    pub(super) async fn rest(
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
