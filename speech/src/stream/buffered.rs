//! The buffering default: how a provider without a streaming form
//! streams. The audio is collected as it comes and, at its end,
//! recognized whole through the provider's `recognize`; there are no
//! partials.
//!
//! Rules: the provider is entered once, after the audio ends, with a
//! [`RecognitionRequest`] carrying everything the stream request did (API
//! key, download URL, offline flag, cancellation); a stream cancelled
//! before its end never enters it.

use std::sync::Arc;

use oscova_core::provider::speech::{RecognitionRequest, SpeechError, SpeechRecognitionProvider};

use super::{RecognitionStream, StreamInput, StreamRequest};
use crate::wav::{Pcm16kMono, encode_wav};

/// Opens a buffering stream over `provider` (which the router resolved
/// and checked for `request`). Must be called inside a tokio runtime.
pub(crate) fn open_buffered(
    provider: Arc<dyn SpeechRecognitionProvider>,
    request: StreamRequest,
) -> RecognitionStream {
    let (stream, mut feed) = RecognitionStream::channel(&request);
    tokio::spawn(async move {
        let mut samples = Vec::new();
        loop {
            match feed.recv().await {
                StreamInput::Audio(more) => samples.extend_from_slice(&more),
                StreamInput::End => break,
                StreamInput::Cancelled => {
                    feed.finish(Err(SpeechError::Cancelled));
                    return;
                }
            }
        }
        if samples.is_empty() {
            feed.finish(Err(SpeechError::InvalidAudio(
                "the stream ended with no audio; push some speech before finishing".into(),
            )));
            return;
        }
        let wav = encode_wav(&Pcm16kMono { samples });
        let recognize = RecognitionRequest::new(&request.config, &wav)
            .api_key(request.api_key.as_ref())
            .download_url(request.download_url.as_deref())
            .offline(request.offline)
            .cancel(request.cancel.clone());
        let result = tokio::select! {
            biased;
            () = request.cancel.cancelled() => Err(SpeechError::Cancelled),
            result = provider.recognize(recognize) => result,
        };
        feed.finish(result);
    });
    stream
}
