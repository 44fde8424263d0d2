//! WebSocket upgrades (RFC 6455) on the listener's HTTP/1.1 connections,
//! and the bearer token a browser can send with one.
//!
//! Rules:
//!
//! - **The handshake is checked here, once.** A `GET` with `Upgrade:
//!   websocket`, `Connection: upgrade`, `Sec-WebSocket-Version: 13` and a
//!   key of 16 bytes in base64, offering the front end's subprotocol
//!   (`oscova.voice` for the voice route); anything else is a
//!   [`HandshakeRefusal`] with its status (400, or 426 for another
//!   version). The answer selects that subprotocol and nothing else.
//! - **The token.** A browser's `WebSocket` cannot set `Authorization`,
//!   so a bearer token may come as one more offered subprotocol,
//!   [`BEARER_PROTOCOL_PREFIX`] followed by the token in base64url
//!   without padding (a subprotocol must be an HTTP token; a bearer
//!   token may hold characters that are not). Not a query parameter:
//!   request lines are what access logs, proxies and browser history
//!   keep, headers are not; and the subprotocol is sent with the
//!   handshake only. The answer never echoes it. An `Authorization`
//!   header, as other clients send, counts too and wins.
//!   [`WebSocketUpgrade::auth_headers`] gives the headers to hand to
//!   [`Authenticator::authenticate`](crate::Authenticator::authenticate),
//!   so the port's users are the WebSocket's, with the same rules.
//! - **Origin.** The listener's Origin and Host policy has already run
//!   (a browser always sends `Origin` with a handshake), so a foreign
//!   page cannot open one; tokens are not cookies, so nothing ambient
//!   would go with it anyway.
//! - **After the 101** the connection is the front end's: the listener
//!   no longer counts it against its connection bounds, so a front end
//!   that upgrades bounds its upgraded streams itself, and ends them at
//!   shutdown (its cancellation token).

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::upgrade::{OnUpgrade, Upgraded};
use hyper_util::rt::TokioIo;
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message as Frame;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

/// What an offered subprotocol that carries a bearer token starts with;
/// the rest is the token in base64url without padding.
pub const BEARER_PROTOCOL_PREFIX: &str = "oscova.bearer.";

/// RFC 6455's GUID, appended to the client's key for the accept value.
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// One message of a WebSocket, either way (pings, pongs and closing are
/// answered by the connection's task).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Message {
    /// A text message.
    Text(String),
    /// A binary message.
    Binary(Bytes),
}

/// An upgraded connection as two queues, served by a task of its own:
/// `received` ends when the client closes, fails or breaks the bounds;
/// dropping `send` closes the connection (normal closure) once what was
/// queued has gone out.
#[derive(Debug)]
#[non_exhaustive]
pub struct WebSocket {
    /// What the client sends, in order.
    pub received: mpsc::Receiver<Message>,
    /// What to send the client, in order.
    pub send: mpsc::Sender<Message>,
}

/// Bounds on what a client may send: one message (and one frame) at most
/// this many bytes; past it the connection fails and closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WebSocketLimits {
    /// The largest message, in bytes (64 KiB unless set).
    pub max_message_bytes: usize,
    /// How many messages wait in each queue before the other side waits
    /// (64 unless set).
    pub queue: usize,
}

impl Default for WebSocketLimits {
    fn default() -> Self {
        Self {
            max_message_bytes: 64 * 1024,
            queue: 64,
        }
    }
}

/// Why a request is not a WebSocket handshake the front end takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HandshakeRefusal {
    /// Not a `GET` with `Upgrade: websocket` and `Connection: upgrade`.
    #[error("not a WebSocket handshake (GET with Upgrade: websocket)")]
    NotWebSocket,
    /// Another version than 13.
    #[error("only WebSocket version 13 is served")]
    Version,
    /// No key, or not 16 bytes in base64.
    #[error("the Sec-WebSocket-Key is missing or malformed")]
    Key,
    /// The front end's subprotocol was not offered.
    #[error("the subprotocol {0:?} was not offered")]
    Protocol(String),
    /// A bearer subprotocol whose token is not base64url text.
    #[error("the bearer subprotocol is not base64url text")]
    Bearer,
    /// The connection cannot be upgraded (the server was not asked to).
    #[error("this connection cannot be upgraded")]
    NoUpgrade,
}

impl HandshakeRefusal {
    /// The HTTP status of the answer: 426 for a version, else 400.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Version => StatusCode::UPGRADE_REQUIRED,
            _ => StatusCode::BAD_REQUEST,
        }
    }

    /// The answer: the status, the reason as text, the connection closed
    /// (no user is known yet), and `Sec-WebSocket-Version: 13` for a
    /// version refusal.
    pub fn response(&self) -> Response<Full<Bytes>> {
        let mut response = Response::new(Full::new(Bytes::from(self.to_string())));
        *response.status_mut() = self.status();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        if *self == Self::Version {
            headers.insert(
                header::SEC_WEBSOCKET_VERSION,
                HeaderValue::from_static("13"),
            );
        }
        response
    }
}

/// A checked handshake, not yet answered (see [the module](self)).
///
/// ```
/// use http::Request;
/// use oscova_serve::websocket::{HandshakeRefusal, WebSocketUpgrade};
///
/// let request = || {
///     Request::get("/voice")
///         .header("upgrade", "websocket")
///         .header("connection", "Upgrade")
///         .header("sec-websocket-version", "13")
///         .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
///         // "a-secret" in base64url, offered beside the protocol.
///         .header("sec-websocket-protocol", "oscova.voice, oscova.bearer.YS1zZWNyZXQ")
///         .body(())
///         .unwrap()
/// };
/// // Outside a server, the connection cannot be upgraded...
/// assert_eq!(
///     WebSocketUpgrade::from_request(&mut request(), "oscova.voice").unwrap_err(),
///     HandshakeRefusal::NoUpgrade
/// );
/// // ...but the checks and the token come first.
/// let (protocol, bearer) = WebSocketUpgrade::check(request().headers(), "oscova.voice").unwrap();
/// assert_eq!(protocol, "oscova.voice");
/// assert_eq!(bearer.as_deref(), Some("a-secret"));
/// assert_eq!(
///     WebSocketUpgrade::check(request().headers(), "oscova.chat").unwrap_err(),
///     HandshakeRefusal::Protocol("oscova.chat".into())
/// );
/// ```
#[derive(Debug)]
pub struct WebSocketUpgrade {
    accept: HeaderValue,
    protocol: HeaderValue,
    auth: HeaderMap,
    on_upgrade: OnUpgrade,
}

impl WebSocketUpgrade {
    /// Checks `request`'s handshake for `protocol` and takes its upgrade.
    ///
    /// # Errors
    ///
    /// A [`HandshakeRefusal`]; answer it with
    /// [`HandshakeRefusal::response`].
    pub fn from_request<B>(
        request: &mut Request<B>,
        protocol: &str,
    ) -> Result<Self, HandshakeRefusal> {
        if request.method() != Method::GET {
            return Err(HandshakeRefusal::NotWebSocket);
        }
        let (protocol, bearer) = Self::check(request.headers(), protocol)?;
        let key = request
            .headers()
            .get(header::SEC_WEBSOCKET_KEY)
            .ok_or(HandshakeRefusal::Key)?;
        let accept = HeaderValue::from_str(&accept_key(key.as_bytes()))
            .map_err(|_| HandshakeRefusal::Key)?;
        let protocol =
            HeaderValue::from_str(&protocol).map_err(|_| HandshakeRefusal::NotWebSocket)?;
        let mut auth = HeaderMap::new();
        if let Some(value) = request.headers().get(header::AUTHORIZATION) {
            auth.insert(header::AUTHORIZATION, value.clone());
        } else if let Some(token) = bearer {
            let value = HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| HandshakeRefusal::Bearer)?;
            auth.insert(header::AUTHORIZATION, value);
        }
        let on_upgrade = request
            .extensions_mut()
            .remove::<OnUpgrade>()
            .ok_or(HandshakeRefusal::NoUpgrade)?;
        Ok(Self {
            accept,
            protocol,
            auth,
            on_upgrade,
        })
    }

    /// The checks of [`from_request`](Self::from_request) on headers
    /// alone (method and upgrade aside): the subprotocol to select, and
    /// the bearer token offered as a subprotocol, if any.
    ///
    /// # Errors
    ///
    /// A [`HandshakeRefusal`].
    pub fn check(
        headers: &HeaderMap,
        protocol: &str,
    ) -> Result<(String, Option<String>), HandshakeRefusal> {
        let has = |name: header::HeaderName, wanted: &str| {
            headers.get_all(name).iter().any(|value| {
                value.to_str().is_ok_and(|v| {
                    v.split(',')
                        .any(|part| part.trim().eq_ignore_ascii_case(wanted))
                })
            })
        };
        if !has(header::UPGRADE, "websocket") || !has(header::CONNECTION, "upgrade") {
            return Err(HandshakeRefusal::NotWebSocket);
        }
        if headers
            .get(header::SEC_WEBSOCKET_VERSION)
            .map(HeaderValue::as_bytes)
            != Some(b"13")
        {
            return Err(HandshakeRefusal::Version);
        }
        let key = headers
            .get(header::SEC_WEBSOCKET_KEY)
            .ok_or(HandshakeRefusal::Key)?;
        if !STANDARD
            .decode(key.as_bytes())
            .is_ok_and(|bytes| bytes.len() == 16)
        {
            return Err(HandshakeRefusal::Key);
        }
        let mut offered = false;
        let mut bearer = None;
        for value in headers.get_all(header::SEC_WEBSOCKET_PROTOCOL) {
            let Ok(value) = value.to_str() else {
                continue;
            };
            for part in value.split(',').map(str::trim) {
                if part == protocol {
                    offered = true;
                } else if let Some(encoded) = part.strip_prefix(BEARER_PROTOCOL_PREFIX) {
                    let token = URL_SAFE_NO_PAD
                        .decode(encoded)
                        .ok()
                        .and_then(|bytes| String::from_utf8(bytes).ok())
                        .ok_or(HandshakeRefusal::Bearer)?;
                    bearer = Some(token);
                }
            }
        }
        if !offered {
            return Err(HandshakeRefusal::Protocol(protocol.to_owned()));
        }
        Ok((protocol.to_owned(), bearer))
    }

    /// The headers to authenticate the handshake with: its
    /// `Authorization`, else one made of the bearer subprotocol's token,
    /// else none.
    pub fn auth_headers(&self) -> &HeaderMap {
        &self.auth
    }

    /// The answer that completes the handshake (101, the accept key, the
    /// front end's subprotocol) and the connection it becomes once sent,
    /// within `limits`.
    pub fn accept(
        self,
        limits: WebSocketLimits,
    ) -> (
        Response<Full<Bytes>>,
        impl Future<Output = Result<WebSocket, hyper::Error>> + Send + 'static,
    ) {
        let mut response = Response::new(Full::new(Bytes::new()));
        *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let headers = response.headers_mut();
        headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, self.accept);
        headers.insert(header::SEC_WEBSOCKET_PROTOCOL, self.protocol);
        let on_upgrade = self.on_upgrade;
        let upgraded = async move {
            let upgraded = on_upgrade.await?;
            let config = WebSocketConfig::default()
                .max_message_size(Some(limits.max_message_bytes))
                .max_frame_size(Some(limits.max_message_bytes));
            let stream = WebSocketStream::from_raw_socket(
                TokioIo::new(upgraded),
                Role::Server,
                Some(config),
            )
            .await;
            let queue = limits.queue.max(1);
            let (received_tx, received) = mpsc::channel(queue);
            let (send, send_rx) = mpsc::channel(queue);
            tokio::spawn(pump(stream, received_tx, send_rx));
            Ok(WebSocket { received, send })
        };
        (response, upgraded)
    }
}

/// The connection's task: frames in to `received`, `send` out to frames,
/// until either side ends.
async fn pump(
    mut stream: WebSocketStream<TokioIo<Upgraded>>,
    received: mpsc::Sender<Message>,
    mut send: mpsc::Receiver<Message>,
) {
    loop {
        tokio::select! {
            frame = stream.next() => match frame {
                Some(Ok(Frame::Text(text))) => {
                    if received.send(Message::Text(text.as_str().to_owned())).await.is_err() {
                        break;
                    }
                }
                Some(Ok(Frame::Binary(bytes))) => {
                    if received.send(Message::Binary(bytes)).await.is_err() {
                        break;
                    }
                }
                // Pings are answered by the stream itself; a close ends.
                Some(Ok(Frame::Close(_))) | None => return,
                Some(Ok(_)) => {}
                Some(Err(error)) => {
                    tracing::debug!(%error, "a WebSocket failed");
                    return;
                }
            },
            message = send.recv() => {
                let frame = match message {
                    Some(Message::Text(text)) => Frame::text(text),
                    Some(Message::Binary(bytes)) => Frame::binary(bytes),
                    None => break,
                };
                if let Err(error) = stream.send(frame).await {
                    tracing::debug!(%error, "a WebSocket failed");
                    return;
                }
            }
        }
    }
    let _ = stream.close(None).await;
}

/// RFC 6455's `Sec-WebSocket-Accept` for a client's key.
fn accept_key(key: &[u8]) -> String {
    let mut context = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
    context.update(key);
    context.update(GUID.as_bytes());
    STANDARD.encode(context.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_key_is_rfc_6455s_example() {
        assert_eq!(
            accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    fn handshake(protocols: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        headers.insert(
            header::CONNECTION,
            HeaderValue::from_static("keep-alive, Upgrade"),
        );
        headers.insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        headers.insert(
            header::SEC_WEBSOCKET_KEY,
            HeaderValue::from_static("dGhlIHNhbXBsZSBub25jZQ=="),
        );
        headers.insert(
            header::SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_str(protocols).unwrap(),
        );
        headers
    }

    #[test]
    fn a_token_with_any_characters_travels_in_base64url() {
        let token = "tök/en+with=odd chars";
        let offered = format!(
            "oscova.voice, oscova.bearer.{}",
            URL_SAFE_NO_PAD.encode(token)
        );
        let (protocol, bearer) =
            WebSocketUpgrade::check(&handshake(&offered), "oscova.voice").unwrap();
        assert_eq!(protocol, "oscova.voice");
        assert_eq!(bearer.as_deref(), Some(token));
    }

    #[test]
    fn malformed_handshakes_are_refused_with_their_reason() {
        let ok = handshake("oscova.voice");
        assert!(WebSocketUpgrade::check(&ok, "oscova.voice").is_ok());

        let mut old = ok.clone();
        old.insert(header::SEC_WEBSOCKET_VERSION, HeaderValue::from_static("8"));
        let refused = WebSocketUpgrade::check(&old, "oscova.voice").unwrap_err();
        assert_eq!(refused, HandshakeRefusal::Version);
        assert_eq!(refused.response().status(), StatusCode::UPGRADE_REQUIRED);

        let mut short = ok.clone();
        short.insert(
            header::SEC_WEBSOCKET_KEY,
            HeaderValue::from_static("c2hvcnQ="),
        );
        assert_eq!(
            WebSocketUpgrade::check(&short, "oscova.voice"),
            Err(HandshakeRefusal::Key)
        );

        let mut plain = ok.clone();
        plain.remove(header::UPGRADE);
        assert_eq!(
            WebSocketUpgrade::check(&plain, "oscova.voice"),
            Err(HandshakeRefusal::NotWebSocket)
        );

        // Only the front end's own subprotocol is selected: a client that
        // offers a bearer token alone is refused, not answered with it.
        let token_only = handshake("oscova.bearer.YS1zZWNyZXQ");
        assert_eq!(
            WebSocketUpgrade::check(&token_only, "oscova.voice"),
            Err(HandshakeRefusal::Protocol("oscova.voice".into()))
        );
        let bad_token = handshake("oscova.voice, oscova.bearer.%%%");
        assert_eq!(
            WebSocketUpgrade::check(&bad_token, "oscova.voice"),
            Err(HandshakeRefusal::Bearer)
        );
    }
}
