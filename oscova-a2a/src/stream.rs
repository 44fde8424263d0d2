//! Streams: `SendStreamingMessage` and `SubscribeToTask` as server-sent
//! events, over both bindings.
//!
//! Rules: a stream's first event is the task (`{"task": ...}`), then each
//! `statusUpdate` and `artifactUpdate` (the model's text, as chunks of the
//! artifact `response`) as the run makes them, and it closes after the
//! event of a terminal state. Over JSON-RPC each event is a JSON-RPC
//! response with the request's id; over HTTP+JSON, the `StreamResponse`
//! itself. Subscribing to a task in a terminal state is
//! `UnsupportedOperation`. A task whose run is on another process (a
//! fleet on one store) is read from the store each second, so
//! its status updates arrive; when the store relays the run's events
//! (Postgres: see `store/relay.rs`), the model's text arrives too, as the
//! running instance publishes it, and the states the relay brings first
//! are not sent twice (a state the store shows before the relay brought
//! it waits up to five seconds for the relay's, so the text before it is
//! sent first; then the store's is sent). A reader that falls
//! behind by more than 256 events skips the oldest; the terminal event is
//! the newest, never skipped. With nothing to send for 15 seconds, a
//! comment line is sent, so a client that went away is noticed and its
//! stream ends; a stream with no event for `stream_idle_timeout` (300
//! seconds by default, as MCP's idle timeout) is closed; a user has at most `max_streams_per_user` streams open
//! (one more is `UnsupportedOperation`).

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::{Body, Frame};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use crate::body::A2aBody;
use crate::limits::StreamSlot;
use crate::model::A2aError;
use crate::model::{Message, Method, Task, TaskStatus};
use crate::push::is_final;
use crate::store::Relayed;
use crate::tasks::{Runner, status_update};

/// How long a stream stays silent before a keep-alive comment.
const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// How often a task run elsewhere is read from the store.
const POLL: Duration = Duration::from_secs(1);
/// How long a final state read from the store waits for the relay's.
const RELAY_GRACE: Duration = Duration::from_secs(5);

/// How events are framed.
#[derive(Clone)]
pub(crate) enum Framing {
    /// JSON-RPC responses with this id.
    JsonRpc(Value),
    /// `StreamResponse` objects.
    Rest,
}

/// Where a stream's events after the first come from.
enum Source {
    Live(broadcast::Receiver<Value>),
    /// The task as last told, and the store's relay of its run's events.
    Poll(Box<Task>, Option<Relayed>),
}

/// An open stream: its first event and where the rest come from.
pub(crate) struct EventStream {
    first: Task,
    source: Source,
    /// Released when the stream ends.
    slot: StreamSlot,
}

/// Opens a stream for `method`, one that [streams](Method::streams):
/// `SendStreamingMessage`, else `SubscribeToTask`.
pub(crate) async fn open(
    runner: &Arc<Runner>,
    user: &str,
    method: Method,
    params: Value,
) -> Result<EventStream, A2aError> {
    let slot = runner.stream_slot(user)?;
    if !method.streams() {
        return Err(A2aError::Internal(format!(
            "{} reached the streams, and does not stream",
            method.name()
        )));
    }
    if method == Method::SendStreamingMessage {
        #[derive(serde::Deserialize)]
        struct Params {
            message: Message,
        }
        let p: Params =
            serde_json::from_value(params).map_err(|e| A2aError::InvalidParams(e.to_string()))?;
        let (task, receiver) = runner.send_streamed(user, p.message, false, None).await?;
        return Ok(EventStream {
            first: task,
            source: Source::Live(receiver),
            slot,
        });
    }
    let id = params
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| A2aError::InvalidParams("id: the task's id".into()))?
        .to_owned();
    let live = runner.subscribe(user, &id);
    // Followed before the task is read, so no event after it is missed.
    let relay = match live {
        Some(_) => None,
        None => runner
            .store
            .listen(&id)
            .await
            .map_err(|e| A2aError::Internal(e.to_string()))?,
    };
    let task = runner.get(user, &id).await?;
    if task.status.state.is_terminal() {
        return Err(A2aError::UnsupportedOperation(format!(
            "task {id} is {}: a task in a terminal state has no stream",
            task.status.state.as_str()
        )));
    }
    let source = match live {
        Some(receiver) => Source::Live(receiver),
        None => Source::Poll(Box::new(task.clone()), relay),
    };
    Ok(EventStream {
        first: task,
        source,
        slot,
    })
}

/// A body whose frames come from a channel.
struct ChannelBody(mpsc::Receiver<Bytes>);

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

fn frame(framing: &Framing, event: &Value) -> Bytes {
    let data = match framing {
        Framing::JsonRpc(id) => json!({"jsonrpc": "2.0", "id": id, "result": event}),
        Framing::Rest => event.clone(),
    };
    Bytes::from(format!("data: {data}\n\n"))
}

/// Whether `event` is the status update of a terminal state.
fn is_terminal(event: &Value) -> bool {
    event["statusUpdate"]["status"]["state"]
        .as_str()
        .and_then(crate::model::TaskState::parse)
        .is_some_and(|s| s.is_terminal())
}

/// The next relayed event of `user`'s task; `None` once the relay ended
/// (then it is dropped and the store alone is read); never, without one.
async fn relayed(relay: &mut Option<Relayed>, user: &str) -> Option<Value> {
    let Some(receiver) = relay else {
        return std::future::pending().await;
    };
    loop {
        match receiver.recv().await {
            Ok((from, event)) if from == user => return Some(event),
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(broadcast::error::RecvError::Closed) => {
                *relay = None;
                return None;
            }
        }
    }
}

/// What [`tell`] did.
enum Told {
    Sent,
    Nothing,
    End,
}

/// Sends a relayed `event` unless it is the state `last` has already.
async fn tell(
    tx: &mpsc::Sender<Bytes>,
    framing: &Framing,
    last: &mut Task,
    event: Option<Value>,
) -> Told {
    let Some(event) = event else {
        return Told::Nothing;
    };
    if let Some(status) = event.get("statusUpdate").map(|u| u["status"].clone()) {
        match serde_json::from_value::<TaskStatus>(status) {
            Ok(status) if status == last.status => return Told::Nothing,
            Ok(status) => last.status = status,
            Err(_) => return Told::Nothing,
        }
    }
    if tx.send(frame(framing, &event)).await.is_err() || is_terminal(&event) {
        return Told::End;
    }
    Told::Sent
}

/// The stream as an SSE response; a task writes its events.
pub(crate) fn response(
    stream: EventStream,
    framing: Framing,
    runner: Arc<Runner>,
) -> Response<A2aBody> {
    let (tx, rx) = mpsc::channel::<Bytes>(16);
    tokio::spawn(async move {
        let EventStream {
            first,
            source,
            slot: _slot,
        } = stream;
        let user = _slot.user().to_owned();
        let first_json = json!({"task": serde_json::to_value(&first).unwrap_or(Value::Null)});
        if tx.send(frame(&framing, &first_json)).await.is_err() {
            return;
        }
        if first.status.state.is_terminal() {
            return;
        }
        let mut last_event = tokio::time::Instant::now();
        match source {
            Source::Live(mut receiver) => loop {
                if last_event.elapsed() >= runner.limits.stream_idle_timeout {
                    return;
                }
                let wait = KEEP_ALIVE.min(
                    runner
                        .limits
                        .stream_idle_timeout
                        .saturating_sub(last_event.elapsed()),
                );
                let event = match tokio::time::timeout(wait, receiver.recv()).await {
                    Ok(Ok(event)) => event,
                    Ok(Err(broadcast::error::RecvError::Lagged(_))) => continue,
                    Ok(Err(broadcast::error::RecvError::Closed)) => return,
                    Err(_) => {
                        if tx
                            .send(Bytes::from_static(b": keep-alive\n\n"))
                            .await
                            .is_err()
                        {
                            return;
                        }
                        continue;
                    }
                };
                if tx.send(frame(&framing, &event)).await.is_err() || is_terminal(&event) {
                    return;
                }
                last_event = tokio::time::Instant::now();
            },
            Source::Poll(mut last, mut relay) => loop {
                if last_event.elapsed() >= runner.limits.stream_idle_timeout {
                    return;
                }
                tokio::select! {
                    () = tokio::time::sleep(POLL) => {}
                    () = tx.closed() => return,
                    event = relayed(&mut relay, &user) => {
                        match tell(&tx, &framing, &mut last, event).await {
                            Told::Sent => last_event = tokio::time::Instant::now(),
                            Told::Nothing => {}
                            Told::End => return,
                        }
                        continue;
                    }
                }
                let Ok(task) = runner.get(&user, &last.id).await else {
                    return;
                };
                if task.status == last.status {
                    continue;
                }
                if relay.is_some() && is_final(task.status.state) {
                    // The relay's state comes after the text before it.
                    let deadline = tokio::time::Instant::now() + RELAY_GRACE;
                    while let Ok(event) =
                        tokio::time::timeout_at(deadline, relayed(&mut relay, &user)).await
                    {
                        if let Told::End = tell(&tx, &framing, &mut last, event).await {
                            return;
                        }
                        if last.status == task.status {
                            break;
                        }
                    }
                }
                if task.status != last.status {
                    let event = status_update(&task);
                    if tx.send(frame(&framing, &event)).await.is_err() || is_terminal(&event) {
                        return;
                    }
                    last.status = task.status;
                }
                last_event = tokio::time::Instant::now();
            },
        }
    });
    let mut response = Response::new(ChannelBody(rx).boxed());
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    response
}
