//! `oscova serve`'s voice route: a spoken conversation with the session
//! agent over a WebSocket, and the page that holds one from a browser's
//! microphone (feature `voice`).
//!
//! Rules:
//!
//! - **Paths.** `GET /voice/` is the page (`assets/voice/index.html`, its
//!   script `GET /voice/voice.js` and the AudioWorklet that captures the
//!   microphone on the audio thread, `GET /voice/capture.js`; no build
//!   step, nothing from elsewhere, a Content-Security-Policy that allows
//!   this origin only). `GET
//!   /voice?session=NAME` upgraded to a WebSocket (subprotocol
//!   `oscova.voice`) is the conversation; `/voice` without an upgrade
//!   goes to the page.
//! - **Users.** The port's: the same [`Authenticator`] as MCP and A2A
//!   (static tokens, OAuth access tokens; none configured: loopback only
//!   and the default user). A browser cannot set `Authorization` on a
//!   WebSocket, so the token comes as the subprotocol
//!   `oscova.bearer.<base64url of the token>` (see
//!   [`oscova_serve::websocket`] for why not a query parameter); a
//!   refusal is answered before the upgrade, 401 with the challenge.
//! - **The session** is the user's session NAME in the `[sessions]`
//!   store `oscova serve` already serves, created when missing, on the
//!   served agent's provider and model with the launcher's extensions, as
//!   `oscova voice --session NAME` would run it: recognition and
//!   synthesis are `[speech.hear]` and `[speech.say]`, offline when
//!   `[speech] offline` says so (the routers refuse a provider that leaves
//!   the machine before calling it). The turn ends after
//!   `silence_ms` of silence when the query gives it (100 to 10000),
//!   else when Smart Turn hears it complete; `min_speech_ms` (0 to 5000,
//!   250 unless given) is the shortest speech that starts a turn or
//!   interrupts.
//! - **Frames.** In: binary messages of 16 kHz mono signed 16-bit
//!   little-endian PCM, at the pace it is spoken (text messages are
//!   ignored), sent once `ready` came. Out: first, once the conversation
//!   listens, a text message `{"type":"ready","sampleRate":16000,
//!   "session":NAME,"user":ID}`; then binary messages of the agent's voice in the same
//!   format, 20 ms each, at the pace it is played; and text messages of
//!   JSON events ([`event_json`]: `speech_started`, `speech_stopped`,
//!   `partial` (`committed`, `tentative`: the turn under way as the
//!   recognizer's stream hears it), `turn_ended`, `transcript`, `reply_finished`, `interrupted`, and the
//!   failures), in order with the audio. A page stops its playback at
//!   `interrupted`: the server has already stopped sending.
//!   A conversation that cannot start says why in `{"type":"error"}` and
//!   closes.
//! - **Bounds.** At most [`MAX_CONVERSATIONS`] at once on the port (each
//!   runs its own voice activity detection and recognition on the
//!   server's cores; past it, 503 before the upgrade); a message at most
//!   64 KiB. When the client closes, its input ends and the reply being
//!   spoken finishes into the closed connection, as `oscova voice`'s would
//!   into its file. At shutdown every conversation is cancelled.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use oscova_agent::session::agent::{AgentHost, AgentSessionOptions};
use oscova_agent::session::voice::{VoiceConversation, VoiceEvent, VoiceOptions, VoiceOutput};
use oscova_core::{CancellationToken, UserInfo};
use oscova_serve::Authenticator;
use oscova_serve::websocket::{
    HandshakeRefusal, Message, WebSocket, WebSocketLimits, WebSocketUpgrade,
};
use oscova_speech::SpeechRouters;
use oscova_speech::voice::{TurnEnd, TurnOptions, VoiceModels};
use serde_json::{Value, json};
use tokio::sync::{OnceCell, Semaphore, mpsc};

/// The subprotocol a client offers (and the answer selects).
pub(crate) const PROTOCOL: &str = "oscova.voice";
/// Voice conversations at once on one port.
pub(crate) const MAX_CONVERSATIONS: usize = 4;
/// The sample rate of the PCM both ways.
const SAMPLE_RATE: u32 = 16_000;

const PAGE: &str = include_str!("../../../assets/voice/index.html");
const SCRIPT: &str = include_str!("../../../assets/voice/voice.js");
const CAPTURE: &str = include_str!("../../../assets/voice/capture.js");
/// The page loads its script from this origin and talks to it; nothing
/// else (no inline script, no other host).
const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; connect-src 'self'; \
     style-src 'unsafe-inline'; media-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

type Body = BoxBody<Bytes, Infallible>;

/// Looks up a user of the port by id (the config's users).
pub(crate) type Users = Arc<dyn Fn(&str) -> UserInfo + Send + Sync>;

/// The voice route of one `oscova serve` (see [the module](self)).
#[derive(Clone)]
pub(crate) struct VoiceRoute {
    inner: Arc<Inner>,
}

struct Inner {
    agents: AgentHost,
    auth: Authenticator,
    default_user: UserInfo,
    users: Users,
    provider: String,
    model: Option<String>,
    voice: VoiceOptions,
    routers: Arc<SpeechRouters>,
    /// Loaded at the first conversation, so a server whose users never
    /// talk needs no voice models.
    models: OnceCell<VoiceModels>,
    conversations: Arc<Semaphore>,
    cancel: CancellationToken,
}

/// What `oscova serve` hands the route.
pub(crate) struct VoiceSetup {
    pub(crate) agents: AgentHost,
    pub(crate) auth: Authenticator,
    pub(crate) default_user: UserInfo,
    pub(crate) users: Users,
    pub(crate) provider: String,
    pub(crate) model: Option<String>,
    pub(crate) voice: VoiceOptions,
    pub(crate) routers: Arc<SpeechRouters>,
}

/// The query's turn-taking, checked.
#[derive(Debug, PartialEq)]
struct Query {
    session: String,
    turn: TurnOptions,
}

impl VoiceRoute {
    /// The route over `setup`.
    pub(crate) fn new(setup: VoiceSetup) -> Self {
        Self {
            inner: Arc::new(Inner {
                agents: setup.agents,
                auth: setup.auth,
                default_user: setup.default_user,
                users: setup.users,
                provider: setup.provider,
                model: setup.model,
                voice: setup.voice,
                routers: setup.routers,
                models: OnceCell::new(),
                conversations: Arc::new(Semaphore::new(MAX_CONVERSATIONS)),
                cancel: CancellationToken::new(),
            }),
        }
    }

    /// Whether `path` is the route's.
    pub(crate) fn serves(path: &str) -> bool {
        path == "/voice" || path.starts_with("/voice/")
    }

    /// Ends every conversation (shutdown).
    pub(crate) fn cancel(&self) {
        self.inner.cancel.cancel();
    }

    /// Answers one request of the route's paths.
    pub(crate) async fn handle(
        &self,
        mut request: Request<oscova_serve::RequestBody>,
    ) -> Response<Body> {
        let path = request.uri().path().to_owned();
        let get = request.method() == http::Method::GET;
        match path.as_str() {
            "/voice/" | "/voice/index.html" if get => page(PAGE, "text/html; charset=utf-8"),
            "/voice/voice.js" if get => page(SCRIPT, "text/javascript; charset=utf-8"),
            "/voice/capture.js" if get => page(CAPTURE, "text/javascript; charset=utf-8"),
            "/voice" if get && !request.headers().contains_key(header::UPGRADE) => {
                let mut moved = text(StatusCode::PERMANENT_REDIRECT, "the page is at /voice/");
                moved
                    .headers_mut()
                    .insert(header::LOCATION, HeaderValue::from_static("/voice/"));
                moved
            }
            "/voice" => self.upgrade(&mut request).await,
            _ if !get => text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed"),
            _ => text(StatusCode::NOT_FOUND, "Not Found"),
        }
    }

    /// The handshake: checked, its user known, a slot taken; then the
    /// conversation runs on its own task.
    async fn upgrade(&self, request: &mut Request<oscova_serve::RequestBody>) -> Response<Body> {
        let upgrade = match WebSocketUpgrade::from_request(request, PROTOCOL) {
            Ok(upgrade) => upgrade,
            Err(refusal) => return refused(&refusal),
        };
        let user = match self.inner.auth.authenticate(upgrade.auth_headers()).await {
            Ok(None) => self.inner.default_user.clone(),
            Ok(Some(id)) => (self.inner.users)(&id),
            Err(refusal) => {
                let mut denied = text(refusal.status(), &refusal.to_string());
                let challenge = self.inner.auth.challenge(refusal);
                if let Ok(value) = HeaderValue::from_str(&challenge) {
                    denied.headers_mut().insert(header::WWW_AUTHENTICATE, value);
                }
                close(&mut denied);
                return denied;
            }
        };
        let query = match parse_query(request.uri().query().unwrap_or_default()) {
            Ok(query) => query,
            Err(reason) => return text(StatusCode::BAD_REQUEST, &reason),
        };
        let Ok(slot) = self.inner.conversations.clone().try_acquire_owned() else {
            tracing::warn!(
                max = MAX_CONVERSATIONS,
                "voice conversations at their bound; refused one"
            );
            return text(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many voice conversations at once; try again later",
            );
        };
        let (response, upgraded) = upgrade.accept(WebSocketLimits::default());
        let inner = self.inner.clone();
        tokio::spawn(async move {
            let _slot = slot;
            match upgraded.await {
                Ok(socket) => converse(inner, user, query, socket).await,
                Err(error) => tracing::debug!(%error, "a voice WebSocket was not upgraded"),
            }
        });
        response.map(|body| body.boxed())
    }
}

/// One conversation, from the 101 to its end.
async fn converse(inner: Arc<Inner>, user: UserInfo, query: Query, socket: WebSocket) {
    let WebSocket {
        mut received, send, ..
    } = socket;
    let ready = json!({
        "type": "ready",
        "sampleRate": SAMPLE_RATE,
        "session": query.session,
        "user": user.id(),
    });
    let conversation = tokio::select! {
        opened = open(&inner, user, &query) => opened,
        () = inner.cancel.cancelled() => return,
    };
    let conversation = match conversation {
        Ok(conversation) => conversation,
        Err(error) => {
            let error = json!({"type": "error", "message": crate::output::redacted(&error)});
            let _ = send.send(Message::Text(error.to_string())).await;
            return;
        }
    };
    // Said once the conversation listens, so a page opens its microphone
    // then and nothing said before is lost or heard late.
    if send.send(Message::Text(ready.to_string())).await.is_err() {
        return;
    }
    let (frames, frames_rx) = mpsc::channel::<Vec<f32>>(64);
    let (output, mut out) = mpsc::channel::<VoiceOutput>(64);
    let running = tokio::spawn(conversation.run(frames_rx, output));
    let mut frames = Some(frames);
    let mut odd: Option<u8> = None;
    loop {
        tokio::select! {
            message = received.recv(), if frames.is_some() => match message {
                Some(Message::Binary(bytes)) => {
                    let samples = samples_of(&mut odd, &bytes);
                    if let Some(frames) = &frames
                        && frames.send(samples).await.is_err()
                    {
                        break;
                    }
                }
                Some(_) => {}
                // The client is gone: its input ends; the reply being
                // spoken finishes.
                None => frames = None,
            },
            item = out.recv() => match item {
                Some(VoiceOutput::Audio(frame)) => {
                    let bytes: Vec<u8> = frame.iter().flat_map(|s| s.to_le_bytes()).collect();
                    let _ = send.send(Message::Binary(Bytes::from(bytes))).await;
                }
                Some(VoiceOutput::Event(event)) => {
                    if let Some(value) = event_json(&event) {
                        let _ = send.send(Message::Text(value.to_string())).await;
                    }
                }
                Some(_) => {}
                None => break,
            },
            () = inner.cancel.cancelled() => {
                running.abort();
                return;
            }
        }
    }
    drop(frames);
    match running.await {
        Ok(Ok(_session)) => {}
        Ok(Err(error)) => {
            let message = crate::output::redacted(&error.to_string());
            tracing::warn!(error = %message, "a voice conversation failed");
            let error = json!({"type": "error", "message": message});
            let _ = send.send(Message::Text(error.to_string())).await;
        }
        Err(error) => tracing::warn!(%error, "a voice conversation's task failed"),
    }
}

/// Opens the user's session for the conversation, loading the voice
/// models the first time.
async fn open(inner: &Inner, user: UserInfo, query: &Query) -> Result<VoiceConversation, String> {
    let models = inner
        .models
        .get_or_try_init(|| async {
            tokio::task::spawn_blocking(VoiceModels::load)
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())
        })
        .await?
        .clone();
    let options = AgentSessionOptions::new().model(inner.provider.clone(), inner.model.clone());
    let voice = inner.voice.clone().with_turn(query.turn);
    VoiceConversation::open(
        &inner.agents,
        user,
        &query.session,
        options,
        voice,
        models,
        inner.routers.clone(),
    )
    .await
    .map_err(|e| e.to_string())
}

/// Little-endian 16-bit samples as floats, a byte left over from the
/// previous message first (a client may cut a sample in two).
fn samples_of(odd: &mut Option<u8>, bytes: &[u8]) -> Vec<f32> {
    let mut joined;
    let bytes = match odd.take() {
        Some(first) => {
            joined = Vec::with_capacity(bytes.len() + 1);
            joined.push(first);
            joined.extend_from_slice(bytes);
            &joined[..]
        }
        None => bytes,
    };
    let pairs = bytes.chunks_exact(2);
    if let [last] = pairs.remainder() {
        *odd = Some(*last);
    }
    pairs
        .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
        .collect()
}

/// The query: `session` (required), `silence_ms`, `min_speech_ms`.
fn parse_query(query: &str) -> Result<Query, String> {
    let mut session = None;
    let mut turn = TurnOptions::default().with_min_speech(Duration::from_millis(250));
    let number = |name: &str, value: &str, range: std::ops::RangeInclusive<u64>| {
        value
            .parse::<u64>()
            .ok()
            .filter(|n| range.contains(n))
            .ok_or_else(|| {
                format!(
                    "{name} must be a whole number from {} to {}",
                    range.start(),
                    range.end()
                )
            })
    };
    for (name, value) in reqwest::Url::parse(&format!("http://query/?{query}"))
        .map_err(|e| e.to_string())?
        .query_pairs()
    {
        match name.as_ref() {
            "session" => session = Some(value.trim().to_owned()).filter(|s| !s.is_empty()),
            "silence_ms" => {
                let ms = number("silence_ms", &value, 100..=10_000)?;
                turn = turn.with_end(TurnEnd::Silence(Duration::from_millis(ms)));
            }
            "min_speech_ms" => {
                let ms = number("min_speech_ms", &value, 0..=5_000)?;
                turn = turn.with_min_speech(Duration::from_millis(ms));
            }
            // The page's own parameters may come along; the token never
            // should (it travels as a subprotocol), and is not read here.
            _ => {}
        }
    }
    let session = session.ok_or("the query names no session (?session=NAME)")?;
    Ok(Query { session, turn })
}

/// The JSON text message for `event`, or None for one a page has no use
/// for (events added later are left out until named here).
pub(crate) fn event_json(event: &VoiceEvent) -> Option<Value> {
    let ms = |at: &Duration| u64::try_from(at.as_millis()).unwrap_or(u64::MAX);
    let clean = |text: &str| crate::output::redacted(text);
    Some(match event {
        VoiceEvent::SpeechStarted { at } => json!({"type": "speech_started", "atMs": ms(at)}),
        VoiceEvent::SpeechStopped { at } => json!({"type": "speech_stopped", "atMs": ms(at)}),
        VoiceEvent::Partial {
            committed,
            tentative,
        } => json!({"type": "partial", "committed": committed, "tentative": tentative}),
        VoiceEvent::TurnEnded { at } => json!({"type": "turn_ended", "atMs": ms(at)}),
        VoiceEvent::Transcript { text } => json!({"type": "transcript", "text": text}),
        VoiceEvent::ReplyFinished { heard } => json!({"type": "reply_finished", "text": heard}),
        VoiceEvent::Interrupted { heard } => json!({"type": "interrupted", "heard": heard}),
        VoiceEvent::RecognitionFailed { error } => {
            json!({"type": "recognition_failed", "error": clean(error)})
        }
        VoiceEvent::SpeechFailed { sentence, error } => {
            json!({"type": "speech_failed", "sentence": sentence, "error": clean(error)})
        }
        VoiceEvent::RunFailed { error } => json!({"type": "run_failed", "error": clean(error)}),
        _ => return None,
    })
}

fn page(body: &'static str, kind: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(PAGE_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn text(status: StatusCode, body: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_owned())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn refused(refusal: &HandshakeRefusal) -> Response<Body> {
    refusal.response().map(|body| body.boxed())
}

/// No user is known: the client keeps no connection past the answer.
fn close(response: &mut Response<Body>) {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_names_the_session_and_bounds_the_turn() {
        let query = parse_query("session=kitchen%20talk&silence_ms=700&min_speech_ms=300").unwrap();
        assert_eq!(query.session, "kitchen talk");
        assert_eq!(query.turn.end, TurnEnd::Silence(Duration::from_millis(700)));
        assert_eq!(query.turn.min_speech, Duration::from_millis(300));

        assert!(
            parse_query("silence_ms=700")
                .unwrap_err()
                .contains("session")
        );
        assert!(parse_query("session=").is_err());
        for bad in [
            "silence_ms=50",
            "silence_ms=-1",
            "silence_ms=1e9",
            "min_speech_ms=99999",
        ] {
            let error = parse_query(&format!("session=a&{bad}")).unwrap_err();
            assert!(error.contains("must be a whole number"), "{bad}: {error}");
        }
    }

    #[test]
    fn samples_cut_between_messages_are_joined() {
        let mut odd = None;
        let first = samples_of(&mut odd, &[0x00, 0x40, 0xff]);
        assert_eq!(first, [0.5]);
        assert_eq!(odd, Some(0xff));
        let second = samples_of(&mut odd, &[0x7f]);
        assert_eq!(second, [32767.0 / 32768.0]);
        assert_eq!(odd, None);
    }

    #[test]
    fn events_become_the_pages_json() {
        let interrupted = event_json(&VoiceEvent::Interrupted {
            heard: "Hello.".into(),
        })
        .unwrap();
        assert_eq!(
            interrupted,
            json!({"type": "interrupted", "heard": "Hello."})
        );
        let turn = event_json(&VoiceEvent::TurnEnded {
            at: Duration::from_millis(1500),
        })
        .unwrap();
        assert_eq!(turn, json!({"type": "turn_ended", "atMs": 1500}));
        let partial = event_json(&VoiceEvent::Partial {
            committed: "I heard".into(),
            tentative: "you".into(),
        })
        .unwrap();
        assert_eq!(
            partial,
            json!({"type": "partial", "committed": "I heard", "tentative": "you"})
        );
    }
}
