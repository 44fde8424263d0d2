//! The two ends of a recognition stream: the caller's
//! ([`RecognitionStream`], or its halves [`StreamAudio`] and
//! [`StreamEvents`]) and the provider's ([`StreamFeed`]).
//!
//! Rules: audio goes through an unbounded channel, so a push never
//! blocks; the stream's cap ([`MAX_SECONDS`]) bounds it, checked on the
//! caller's side for every provider. Partials go through a `watch`
//! channel, so a reader that falls behind gets the newest and the
//! provider never waits for it. The final transcript (or the error) goes
//! through a one-shot channel; a provider end dropped without one is an
//! error, never a hang. The audio end dropped without
//! [`finish`](StreamAudio::finish) reads as a cancellation on the
//! provider's end.

use std::sync::atomic::{AtomicUsize, Ordering};

use oscova_core::CancellationToken;
use oscova_core::provider::speech::{SpeechError, Transcript};
use tokio::sync::{mpsc, oneshot, watch};

use super::{MAX_SECONDS, PartialTranscript, RecognitionEvent, SAMPLE_RATE, StreamRequest};

/// What travels from the caller's end to the provider's.
#[derive(Debug)]
enum Message {
    Audio(Vec<i16>),
    End,
}

/// The caller's end of a recognition stream: push audio, read events.
/// See the [module](super) for the rules and an example.
#[derive(Debug)]
pub struct RecognitionStream {
    audio: StreamAudio,
    events: StreamEvents,
}

/// The audio half of a [`RecognitionStream`]: push 16 kHz mono 16-bit
/// frames, then [`finish`](Self::finish). Dropping it without `finish`
/// cancels the stream.
#[derive(Debug)]
pub struct StreamAudio {
    tx: Option<mpsc::UnboundedSender<Message>>,
    pushed: AtomicUsize,
}

/// The event half of a [`RecognitionStream`]: partial transcripts, then
/// the final one.
#[derive(Debug)]
pub struct StreamEvents {
    partial: watch::Receiver<Option<PartialTranscript>>,
    partials_open: bool,
    done: Option<oneshot::Receiver<Result<Transcript, SpeechError>>>,
}

/// The provider's end of a recognition stream: the caller's audio in,
/// partial transcripts and the final one out.
#[derive(Debug)]
pub struct StreamFeed {
    rx: mpsc::UnboundedReceiver<Message>,
    partial: watch::Sender<Option<PartialTranscript>>,
    done: Option<oneshot::Sender<Result<Transcript, SpeechError>>>,
    cancel: CancellationToken,
    ended: bool,
}

/// What a provider reads from its [`StreamFeed`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamInput {
    /// More samples, 16 kHz mono.
    Audio(Vec<i16>),
    /// The caller finished the audio: give the final transcript.
    End,
    /// The caller cancelled the stream (its token, or its audio end
    /// dropped without finishing): stop; the final event is
    /// [`SpeechError::Cancelled`] whatever the provider sends.
    Cancelled,
}

impl RecognitionStream {
    /// The two ends of a stream for `request`: the caller's, and the
    /// provider's [`StreamFeed`], which shares the request's cancellation
    /// token. For providers implementing
    /// [`StreamingRecognizer`](super::StreamingRecognizer).
    pub fn channel(request: &StreamRequest) -> (Self, StreamFeed) {
        let (tx, rx) = mpsc::unbounded_channel();
        let (partial_tx, partial_rx) = watch::channel(None);
        let (done_tx, done_rx) = oneshot::channel();
        let stream = Self {
            audio: StreamAudio {
                tx: Some(tx),
                pushed: AtomicUsize::new(0),
            },
            events: StreamEvents {
                partial: partial_rx,
                partials_open: true,
                done: Some(done_rx),
            },
        };
        let feed = StreamFeed {
            rx,
            partial: partial_tx,
            done: Some(done_tx),
            cancel: request.cancel.clone(),
            ended: false,
        };
        (stream, feed)
    }

    /// Pushes `samples` (16 kHz mono 16-bit) onto the stream; never blocks.
    ///
    /// # Errors
    ///
    /// See [`StreamAudio::push`].
    pub fn push(&self, samples: &[i16]) -> Result<(), SpeechError> {
        self.audio.push(samples)
    }

    /// Ends the audio: the provider gives its final transcript. Pushes
    /// after it are refused; calling it again does nothing.
    pub fn end_audio(&mut self) {
        self.audio.end();
    }

    /// The next event: a newer partial transcript, or the final one;
    /// `None` after the final event.
    pub async fn next_event(&mut self) -> Option<Result<RecognitionEvent, SpeechError>> {
        self.events.next().await
    }

    /// The newest partial transcript, if there has been one.
    pub fn latest_partial(&self) -> Option<PartialTranscript> {
        self.events.latest_partial()
    }

    /// Ends the audio and waits for the final transcript, passing over
    /// partials.
    ///
    /// # Errors
    ///
    /// The provider's error, [`SpeechError::Cancelled`] for a cancelled
    /// stream.
    pub async fn finish(mut self) -> Result<Transcript, SpeechError> {
        self.audio.end();
        self.events.final_transcript().await
    }

    /// The two halves, so one task pushes audio while another awaits
    /// events.
    pub fn split(self) -> (StreamAudio, StreamEvents) {
        (self.audio, self.events)
    }

    /// Seconds of audio pushed so far.
    pub fn seconds_pushed(&self) -> f64 {
        self.audio.seconds_pushed()
    }
}

impl StreamAudio {
    /// Pushes `samples` (16 kHz mono 16-bit); never blocks. An empty frame
    /// is taken and does nothing.
    ///
    /// # Errors
    ///
    /// [`SpeechError::InvalidAudio`] once the stream would hold more than
    /// [`MAX_SECONDS`] of audio or after [`finish`](Self::finish);
    /// [`SpeechError::Provider`] when the provider has already stopped (its
    /// final event says why).
    pub fn push(&self, samples: &[i16]) -> Result<(), SpeechError> {
        if samples.is_empty() {
            return Ok(());
        }
        let Some(tx) = &self.tx else {
            return Err(SpeechError::InvalidAudio(
                "the stream's audio was finished; open a new stream for more".into(),
            ));
        };
        let limit = MAX_SECONDS as usize * SAMPLE_RATE as usize;
        let before = self.pushed.fetch_add(samples.len(), Ordering::Relaxed);
        if before + samples.len() > limit {
            self.pushed.fetch_sub(samples.len(), Ordering::Relaxed);
            return Err(SpeechError::InvalidAudio(format!(
                "a recognition stream takes at most {MAX_SECONDS} seconds of audio; finish this \
                 stream and open another"
            )));
        }
        tx.send(Message::Audio(samples.to_vec())).map_err(|_| {
            SpeechError::provider("the recognition stream has stopped; its final event says why")
        })
    }

    /// Ends the audio: the provider gives its final transcript.
    pub fn finish(mut self) {
        self.end();
    }

    fn end(&mut self) {
        if let Some(tx) = self.tx.take() {
            // The provider may have stopped already; its final event says why.
            let _ = tx.send(Message::End);
        }
    }

    /// Seconds of audio pushed so far.
    pub fn seconds_pushed(&self) -> f64 {
        self.pushed.load(Ordering::Relaxed) as f64 / f64::from(SAMPLE_RATE)
    }
}

impl StreamEvents {
    /// The next event: a newer partial transcript, or the final one;
    /// `None` after the final event.
    pub async fn next(&mut self) -> Option<Result<RecognitionEvent, SpeechError>> {
        let done = self.done.as_mut()?;
        loop {
            if self.partials_open {
                tokio::select! {
                    biased;
                    changed = self.partial.changed() => match changed {
                        Ok(()) => {
                            let partial = self.partial.borrow_and_update().clone();
                            if let Some(partial) = partial {
                                return Some(Ok(RecognitionEvent::Partial(partial)));
                            }
                        }
                        Err(_) => self.partials_open = false,
                    },
                    result = &mut *done => {
                        self.done = None;
                        return Some(final_event(result));
                    }
                }
            } else {
                let result = done.await;
                self.done = None;
                return Some(final_event(result));
            }
        }
    }

    /// The newest partial transcript, if there has been one.
    pub fn latest_partial(&self) -> Option<PartialTranscript> {
        self.partial.borrow().clone()
    }

    /// Waits for the final transcript, passing over partials.
    ///
    /// # Errors
    ///
    /// The provider's error, [`SpeechError::Cancelled`] for a cancelled
    /// stream; an error too when the final event was already taken.
    pub async fn final_transcript(mut self) -> Result<Transcript, SpeechError> {
        let Some(done) = self.done.take() else {
            return Err(SpeechError::provider(
                "the stream's final event was already taken",
            ));
        };
        match final_event(done.await) {
            Ok(RecognitionEvent::Final(transcript)) => Ok(transcript),
            Ok(RecognitionEvent::Partial(_)) => Err(SpeechError::provider(
                "the stream ended without a transcript",
            )),
            Err(e) => Err(e),
        }
    }
}

fn final_event(
    result: Result<Result<Transcript, SpeechError>, oneshot::error::RecvError>,
) -> Result<RecognitionEvent, SpeechError> {
    match result {
        Ok(Ok(transcript)) => Ok(RecognitionEvent::Final(transcript)),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(SpeechError::provider(
            "the recognition provider stopped the stream without a transcript",
        )),
    }
}

impl StreamFeed {
    /// The next input, waiting for it: audio, the end of the audio, or the
    /// stream cancelled. After [`StreamInput::End`] it keeps answering
    /// `End`.
    pub async fn recv(&mut self) -> StreamInput {
        if self.ended {
            return StreamInput::End;
        }
        let message = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return StreamInput::Cancelled,
            message = self.rx.recv() => message,
        };
        self.input(message)
    }

    /// The next input if one is waiting, without waiting (`None`: nothing
    /// yet).
    pub fn try_recv(&mut self) -> Option<StreamInput> {
        if self.ended {
            return Some(StreamInput::End);
        }
        if self.cancel.is_cancelled() {
            return Some(StreamInput::Cancelled);
        }
        match self.rx.try_recv() {
            Ok(message) => Some(self.input(Some(message))),
            Err(mpsc::error::TryRecvError::Empty) => None,
            Err(mpsc::error::TryRecvError::Disconnected) => Some(self.input(None)),
        }
    }

    fn input(&mut self, message: Option<Message>) -> StreamInput {
        match message {
            Some(Message::Audio(samples)) => StreamInput::Audio(samples),
            Some(Message::End) => {
                self.ended = true;
                StreamInput::End
            }
            None => StreamInput::Cancelled,
        }
    }

    /// Hands the reader a newer partial transcript (replacing one it has
    /// not read yet).
    pub fn partial(&self, partial: PartialTranscript) {
        self.partial.send_replace(Some(partial));
    }

    /// The stream's cancellation token (the request's): cancelled when the
    /// caller cancels.
    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Gives the final transcript (or why there is none) and closes the
    /// stream. A cancelled stream's final event is
    /// [`SpeechError::Cancelled`] whatever `result` is.
    pub fn finish(mut self, result: Result<Transcript, SpeechError>) {
        let result = if self.cancel.is_cancelled() {
            Err(SpeechError::Cancelled)
        } else {
            result
        };
        if let Some(done) = self.done.take() {
            // The caller may have dropped its end; nobody is left to tell.
            let _ = done.send(result);
        }
    }
}
