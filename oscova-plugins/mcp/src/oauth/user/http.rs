//! The HTTP client rmcp's authorization manager sends every request of
//! the authorization-code grant through (client registration, the code
//! exchange, refreshes): the server's own client, so its rules hold.
//!
//! Rules: each URL must be `https://` (or `http://` on a loopback
//! address) and inside the server's `network` scope, or nothing is sent;
//! no redirect is followed (the server's client follows none, whatever
//! rmcp's request asks); each request is bounded by the server's
//! `timeout_secs`; a body is read up to [`MAX_BODY`](super::super::MAX_BODY).

use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRequest,
};

use crate::oauth::Reach;
use crate::oauth::discover::{allowed, read_capped};

/// The server's HTTP client, as rmcp's OAuth client.
pub(crate) struct ScopedHttp {
    pub(crate) reach: Reach,
}

/// Why a request was not sent or its answer not read.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Refused(String);

fn refused(reason: impl Into<String>) -> OAuthHttpClientError {
    Box::new(Refused(reason.into()))
}

impl OAuthHttpClient for ScopedHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let OAuthHttpRequest { request, .. } = request;
            let url = request.uri().to_string();
            allowed(&url, self.reach.network, "an OAuth request")
                .map_err(|e| refused(e.to_string()))?;
            let (parts, body) = request.into_parts();
            let response = self
                .reach
                .http
                .request(parts.method, &url)
                .headers(parts.headers)
                .body(body)
                .timeout(self.reach.timeout)
                .send()
                .await
                .map_err(|e| refused(crate::tls::reason(&e)))?;
            let mut answer = http::Response::builder().status(response.status());
            for (name, value) in response.headers() {
                answer = answer.header(name, value);
            }
            let body = read_capped(response).await.map_err(refused)?;
            answer.body(body).map_err(|e| refused(e.to_string()))
        })
    }
}
