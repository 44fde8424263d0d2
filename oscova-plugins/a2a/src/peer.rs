//! One agent as this client talks to it: the card, then `SendMessage`,
//! `GetTask` and `CancelTask` over the binding the card prefers.
//!
//! Rules: every request carries `A2A-Version: 1.0` and the user's
//! credential headers, is bounded by the agent's `timeout_secs`, ends at
//! once on the call's cancellation, and reads at most [`MAX_ANSWER`]
//! bytes; server text in errors is scrubbed of the credential. Requests go
//! through the host's client for an operator-configured endpoint
//! (`HttpClient::for_endpoint`): an agent URL that names this machine is
//! reached under the loopback rule on its resolved addresses, so an
//! offline check that passed on the text also holds on the wire. A task id
//! in an HTTP+JSON path is percent-encoded, so it names one task and
//! nothing else on the agent's server. An answer that comes from another
//! scheme, host or port than the one asked (the client followed a
//! redirect) is refused unread. The host's client follows redirects before this code sees the
//! answer; reqwest drops `Authorization` on a redirect to another host,
//! but another credential header would go along, so prefer
//! `Authorization` for agents that are not on this machine.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use oscova_a2a::model::{AgentCard, Method, PROTOCOL_VERSION, VERSION_HEADER, Verb};
use oscova_core::http::backend::{BackendError, Body, Scrub, check_status, send};
use oscova_core::{CancellationToken, ExposeSecret, HttpClient, SecretString};
use serde_json::{Value, json};

use crate::ClientError;
use crate::card::{Binding, card_url, same_origin};

/// The most bytes read of one answer (a card, a task).
pub const MAX_ANSWER: usize = 4 * 1024 * 1024;

/// One agent, for one call.
pub(crate) struct Peer<'a> {
    pub(crate) name: &'a str,
    pub(crate) http: HttpClient,
    pub(crate) headers: &'a [(String, SecretString)],
    pub(crate) timeout: Duration,
    pub(crate) cancel: &'a CancellationToken,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A JSON-RPC request id, unique in this process.
pub(crate) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

impl Peer<'_> {
    pub(crate) fn scrub(&self) -> Scrub {
        Scrub::new(self.headers.first().map(|(_, s)| s))
    }

    pub(crate) fn transport(&self, error: BackendError) -> ClientError {
        match error {
            BackendError::Cancelled => ClientError::Cancelled,
            source => ClientError::Transport {
                agent: self.name.to_owned(),
                source: Box::new(source),
            },
        }
    }

    /// `request` with the version header and, when asked, the user's
    /// credential headers.
    pub(crate) fn prepare(
        &self,
        request: oscova_core::http::HttpRequestBuilder,
        with_credentials: bool,
    ) -> oscova_core::http::HttpRequestBuilder {
        let mut request = request.header(VERSION_HEADER, PROTOCOL_VERSION);
        if with_credentials {
            for (name, secret) in self.headers {
                let value = if name.eq_ignore_ascii_case("authorization") {
                    format!("Bearer {}", secret.expose_secret())
                } else {
                    secret.expose_secret().to_owned()
                };
                request = request.header(name, &value);
            }
        }
        request
    }

    /// Sends a prepared request and returns the response when its status
    /// is a success and it came from where it was sent.
    pub(crate) async fn open(
        &self,
        request: oscova_core::http::HttpRequestBuilder,
        url: &str,
    ) -> Result<reqwest::Response, ClientError> {
        let scrub = self.scrub();
        let response = send(request, url, self.cancel, &scrub)
            .await
            .map_err(|e| self.transport(e))?;
        // An answer from another scheme, host or port (a redirect) is
        // not read, so it never reaches the model; a redirect on the
        // same origin (`/a` to `/a/`) is the agent's own business.
        if !same_origin(response.url().as_str(), url) {
            return Err(ClientError::BadAnswer {
                agent: self.name.to_owned(),
                reason: format!(
                    "`{url}` redirected to `{}`; redirects to another origin are not followed",
                    scrub.text(response.url().as_str())
                ),
            });
        }
        match check_status(response, url, self.cancel, &scrub)
            .await
            .map_err(|e| self.transport(e))?
        {
            Ok(response) => Ok(response),
            Err(failure) if matches!(failure.status, 401 | 403) => Err(ClientError::Unauthorized {
                agent: self.name.to_owned(),
                status: failure.status,
            }),
            Err(failure) => Err(self.http_failure(failure.status, &failure.body, &scrub)),
        }
    }

    /// Reads a whole JSON answer.
    pub(crate) async fn read_json(
        &self,
        response: reqwest::Response,
        url: &str,
    ) -> Result<Value, ClientError> {
        let text = Body::new(response, url)
            .text(MAX_ANSWER, self.cancel, &self.scrub())
            .await
            .map_err(|e| self.transport(e))?;
        serde_json::from_str::<Value>(&text).map_err(|e| ClientError::BadAnswer {
            agent: self.name.to_owned(),
            reason: format!("not JSON ({e})"),
        })
    }

    /// Sends `request` and reads the JSON answer, within the timeout.
    async fn exchange(
        &self,
        request: oscova_core::http::HttpRequestBuilder,
        url: &str,
        with_credentials: bool,
    ) -> Result<Value, ClientError> {
        let request = self.prepare(request, with_credentials);
        let work = async {
            let response = self.open(request, url).await?;
            self.read_json(response, url).await
        };
        match tokio::time::timeout(self.timeout, work).await {
            Ok(result) => result,
            Err(_) => Err(self.timed_out()),
        }
    }

    pub(crate) fn timed_out(&self) -> ClientError {
        ClientError::Timeout {
            agent: self.name.to_owned(),
            seconds: self.timeout.as_secs_f64(),
        }
    }

    /// The error of a JSON-RPC answer, if it is one.
    pub(crate) fn rpc_error(&self, answer: &Value) -> Option<ClientError> {
        let error = answer.get("error")?;
        Some(ClientError::Remote {
            agent: self.name.to_owned(),
            code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: self.scrub().text(
                error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("(no message)"),
            ),
        })
    }

    /// A non-success status: an HTTP+JSON error body (`{"error": {"code",
    /// "message"}}`) when it is one, else the status and the body's start.
    fn http_failure(&self, status: u16, body: &str, scrub: &Scrub) -> ClientError {
        let parsed: Option<Value> = serde_json::from_str(body).ok();
        let error = parsed.as_ref().and_then(|v| v.get("error"));
        match error.and_then(|e| e.get("message")).and_then(Value::as_str) {
            Some(message) => ClientError::Remote {
                agent: self.name.to_owned(),
                code: error
                    .and_then(|e| e.get("code"))
                    .and_then(Value::as_i64)
                    .unwrap_or(i64::from(status)),
                message: scrub.text(message),
            },
            None => ClientError::Status {
                agent: self.name.to_owned(),
                status,
                body: scrub.text(body),
            },
        }
    }

    /// The agent's card, from `url` (its configured URL). Public: sent
    /// without the user's credentials.
    pub(crate) async fn card(&self, url: &str) -> Result<AgentCard, ClientError> {
        let card_url = card_url(url);
        let value = self
            .exchange(self.http.get(&card_url), &card_url, false)
            .await
            .map_err(|e| match e {
                ClientError::Cancelled => ClientError::Cancelled,
                other => ClientError::Card {
                    agent: self.name.to_owned(),
                    reason: other.to_string(),
                },
            })?;
        serde_json::from_value(value).map_err(|e| ClientError::Card {
            agent: self.name.to_owned(),
            reason: format!("not an agent card ({e})"),
        })
    }

    /// Calls `method` with A2A 1.0 `params` over `binding` at `url` (the
    /// interface's), returning the result: a `SendMessageResponse`
    /// (`{"task": ...}` or `{"message": ...}`) or a `Task`.
    pub(crate) async fn call(
        &self,
        binding: Binding,
        url: &str,
        method: Method,
        params: Value,
    ) -> Result<Value, ClientError> {
        match binding {
            Binding::JsonRpc => {
                let id = next_id();
                let body =
                    json!({"jsonrpc": "2.0", "id": id, "method": method.name(), "params": params});
                let answer = self
                    .exchange(self.http.post(url).json(&body), url, true)
                    .await?;
                if let Some(error) = self.rpc_error(&answer) {
                    return Err(error);
                }
                match answer.get("result") {
                    Some(result) => Ok(result.clone()),
                    None => Err(ClientError::BadAnswer {
                        agent: self.name.to_owned(),
                        reason: "a JSON-RPC answer with neither `result` nor `error`".to_owned(),
                    }),
                }
            }
            Binding::HttpJson => {
                let id = params.get("id").and_then(Value::as_str);
                if id.is_none() && method != Method::SendMessage {
                    return Err(ClientError::BadAnswer {
                        agent: self.name.to_owned(),
                        reason: "no task id".to_owned(),
                    });
                }
                let (verb, path) = method.http(id.unwrap_or_default(), "");
                let target = format!("{url}{path}");
                let builder = match (verb, method) {
                    (Verb::Get, _) => self.http.get(&target),
                    (_, Method::SendMessage) => self.http.post(&target).json(&params),
                    _ => self.http.post(&target).json(&json!({})),
                };
                self.exchange(builder, &target, true).await
            }
        }
    }
}
