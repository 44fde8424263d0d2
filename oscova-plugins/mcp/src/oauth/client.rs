//! The HTTP client of a url server with `oauth`: rmcp's reqwest client,
//! each request sent with the (server, user)'s current token and, on a
//! 401, once more with a new one (see the module header for the rules).
//!
//! Every method of rmcp's `StreamableHttpClient` is delegated to the same
//! method of the inner client, so its response limits and SSE bounds
//! hold unchanged. Only POSTs (the messages) answer a 401 with a new
//! token: the SSE stream's GET and the session's DELETE send the current
//! token and take a 401 (or a failed token request) as rmcp's
//! `AuthRequired`, on which rmcp stops reconnecting the stream, so a
//! refusing server never has tokens requested in a reconnect loop. A failure of the token flow reaches rmcp as an
//! `io::Error` wrapping the [`OAuthError`] (rmcp's error type is the
//! inner client's), found again by [`OAuthError::find`].

use std::collections::HashMap;
use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use oscova_core::{ExposeSecret, SecretString};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};

use super::{OAuthError, TokenSource};

type Failure = StreamableHttpError<reqwest_rmcp::Error>;
type Headers = HashMap<HeaderName, HeaderValue>;
type Events = std::pin::Pin<
    Box<dyn futures_core::Stream<Item = Result<sse_stream::Sse, SseError>> + Send + 'static>,
>;

/// rmcp's reqwest client with the token flow of one (server, user).
#[derive(Clone)]
pub(crate) struct OAuthHttp {
    /// The server's HTTP client.
    pub(crate) http: reqwest_rmcp::Client,
    pub(crate) flow: Arc<dyn TokenSource>,
}

fn failure(error: OAuthError) -> Failure {
    StreamableHttpError::Io(std::io::Error::other(error))
}

fn bearer(token: &SecretString) -> String {
    token.expose_secret().to_owned()
}

impl OAuthHttp {
    fn http(&self) -> &reqwest_rmcp::Client {
        &self.http
    }

    /// `send` with the current token; on a 401, with a new one, once.
    async fn authorized<T, F, Fut>(&self, send: F) -> Result<T, Failure>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        let sent = self.flow.current().await.map_err(failure)?;
        let challenge = match send(sent.as_ref().map(bearer)).await {
            Err(StreamableHttpError::AuthRequired(refused)) => refused.www_authenticate_header,
            other => return other,
        };
        let (fresh, issuer) = self
            .flow
            .refused(&challenge, sent.as_ref())
            .await
            .map_err(failure)?;
        match send(Some(bearer(&fresh))).await {
            // Kept: the next request sends it, and on a 401 drops it and
            // gets one more, so each attempt costs at most one token.
            Err(StreamableHttpError::AuthRequired(_)) => {
                Err(failure(OAuthError::Rejected { issuer }))
            }
            other => other,
        }
    }
}

impl OAuthHttp {
    /// The current token for a GET or DELETE: no second try, and a failed
    /// token request is `AuthRequired` (see the module header).
    async fn current(&self) -> Result<Option<String>, Failure> {
        match self.flow.current().await {
            Ok(token) => Ok(token.as_ref().map(bearer)),
            Err(e) => Err(StreamableHttpError::AuthRequired(AuthRequiredError::new(
                e.to_string(),
            ))),
        }
    }
}

impl StreamableHttpClient for OAuthHttp {
    type Error = reqwest_rmcp::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.authorized(|token| {
            self.http().post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.authorized(|token| {
            self.http().post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.authorized(|token| {
            self.http().post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), Failure> {
        let token = self.current().await?;
        self.http()
            .delete_session(uri, session_id, token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<Events, Failure> {
        let token = self.current().await?;
        self.http()
            .get_stream(uri, session_id, last_event_id, token, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<Events, Failure> {
        let token = self.current().await?;
        self.http()
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                token,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
