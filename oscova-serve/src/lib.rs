//! HTTP serving for protocol front ends, apart from the protocol.
//!
//! A front end (the MCP server in `oscova-mcp`, an A2A server next) serves
//! many users of one [`PluginHost`](oscova_core::PluginHost) over HTTP.
//! What does not depend on its protocol is here, written once:
//!
//! | module | what it keeps | at the root |
//! |---|---|---|
//! | [`auth`] | a request becomes a user, or a refusal with its status and `WWW-Authenticate` challenge; static bearer tokens, only hashes kept, compared in constant time | [`Authenticator`], [`AuthRefusal`], [`Tokens`], [`UserToken`] |
//! | [`oauth`] | an OAuth 2.1 resource server: JWT access tokens from one issuer (RS256, ES256, EdDSA), its RFC 9728 metadata; a token's user is the operator's mapping of its claim, else [`oauth_user_id`](oauth::oauth_user_id) (`oauth.<issuer tag>.<value>`), never a static-token user by name | [`OAuth`], [`OAuthConfig`], [`OAuthError`] |
//! | [`scopes`] | each user's scope (and what the front end derives from it), built on first use, bounded | [`ScopeCache`], [`UserDirectory`] |
//! | [`origin`] | loopback origins plus the operator's; `Host` checked on loopback; enforced by [`Listener`] on every request, before any handler | |
//! | [`limits`] | a listener's bounds as one value with its defaults and one check; calls in flight for the whole server; the range check a front end's own settings use | [`Limits`], [`LimitError`], [`CallBound`] |
//! | [`listen`] | binding, HTTP/1.1 connections (bounded in number, and per peer address), request bodies (bounded in time) | [`Listener`], [`RequestBody`], [`ServeError`] |
//! | [`websocket`] | the WebSocket handshake (RFC 6455) checked once, the answer, the upgraded connection; a bearer token a browser offers as a subprotocol | |
//! | [`shutdown`] | graceful shutdown: the responses still being sent, what is cancelled after the grace | [`Shutdown`], [`Responses`] |
//!
//! Nothing here names a protocol type: a front end turns a request into a
//! user with [`Authenticator::authenticate`], takes the user's entry from its
//! [`ScopeCache`], and answers with whatever body its protocol server
//! gives.
//!
//! # A front end in a few lines
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use bytes::Bytes;
//! use http_body_util::Full;
//! use hyper::{Request, Response, StatusCode};
//! use oscova_core::{PluginHost, UserInfo, UserScope};
//! use oscova_serve::{Listener, Responses, ScopeCache, Shutdown, Tokens, UserToken};
//! use tokio::io::{AsyncReadExt, AsyncWriteExt};
//! use tokio_util::sync::CancellationToken;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let host = PluginHost::builder().no_linked_plugins().build()?;
//! let tokens = Arc::new(Tokens::new([UserToken::from_token("alice", "a-secret")]));
//! let users = Arc::new(|id: &str| UserInfo::new(id));
//! let scopes = Arc::new(ScopeCache::new(host, users, 64, |scope: UserScope| scope));
//!
//! let handle = move |request: Request<oscova_serve::RequestBody>| {
//!     let (tokens, scopes) = (tokens.clone(), scopes.clone());
//!     async move {
//!         let Some(user) = tokens.authenticate(request.headers()) else {
//!             let mut denied = Response::new(Full::new(Bytes::from_static(b"who are you?")));
//!             *denied.status_mut() = StatusCode::UNAUTHORIZED;
//!             return denied;
//!         };
//!         let scope = scopes.get(user);
//!         let text = format!("{} has {} tools", user, scope.tools().count());
//!         Response::new(Full::new(Bytes::from(text)))
//!     }
//! };
//!
//! let listener = Listener::bind("127.0.0.1:0".parse()?).await?;
//! let addr = listener.local_addr();
//! let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! let shutdown = Shutdown::new(CancellationToken::new(), Duration::from_secs(1), Arc::new(Responses::default()));
//! let server = tokio::spawn(listener.serve_until(handle, async { stopped.await.ok(); }, shutdown));
//!
//! let mut socket = tokio::net::TcpStream::connect(addr).await?;
//! socket
//!     .write_all(b"GET / HTTP/1.1\r\nhost: localhost\r\nauthorization: Bearer a-secret\r\nconnection: close\r\n\r\n")
//!     .await?;
//! let mut answer = String::new();
//! socket.read_to_string(&mut answer).await?;
//! assert!(answer.ends_with("alice has 0 tools"), "{answer}");
//!
//! stop.send(()).ok();
//! server.await??;
//! # Ok(())
//! # }
//! ```

#![cfg_attr(
    not(test),
    warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod auth;
pub mod limits;
pub mod listen;
pub mod oauth;
pub mod origin;
pub mod scopes;
pub mod shutdown;
pub mod websocket;

pub use auth::{AuthRefusal, Authenticator, Tokens, UserToken};
pub use limits::{CallBound, LimitError, Limits};
pub use listen::{Listener, RequestBody, ServeError};
pub use oauth::{OAuth, OAuthConfig, OAuthError};
pub use scopes::{ScopeCache, UserDirectory};
pub use shutdown::{Responses, Shutdown};
