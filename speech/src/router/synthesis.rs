//! [`SpeechSynthesisRouter`]: text in, audio out, through the provider whose
//! type key the configuration names.
//!
//! Rules: see the parent module for routing. Every synthesis, whatever
//! the provider and whoever calls (`oscova speech say`, the speech
//! plugin's `speak` tool, an embedding host), goes through
//! [`synthesize`](Router::synthesize), which holds the two caps of
//! speaking as `decode_wav` holds hearing's 300 s: the text may have at
//! most [`MAX_CHARS`](Router::MAX_CHARS) characters, refused before the provider is
//! entered, and the audio a provider returns may play at most
//! [`MAX_SECONDS`](Router::MAX_SECONDS), refused before a caller sees it (text that
//! expands, such as a long number read digit by digit, passes the first
//! cap and not the second). WAV audio is measured by its header; audio
//! that is not WAV (a plugin provider's MP3, Opus or AAC), whose length
//! is not known without decoding it, is refused above
//! [`MAX_ENCODED_BYTES`](Router::MAX_ENCODED_BYTES): 600 s at 512 kbit/s, which is above
//! the highest bitrate of the lossy formats a speech service returns
//! (Opus tops at 510 kbit/s, MP3 at 320 kbit/s): audio at that bitrate
//! passes only if it plays at most 600 s, audio at a lower bitrate may
//! play proportionally longer (a 64 kbit/s MP3 up to 80 minutes), and
//! lossless FLAC or raw PCM above 512 kbit/s meets the cap before 600 s.
//! All three refusals are [`SpeechError::InvalidText`] saying the limit and
//! to split the text. The caps hold through `synthesize` only: a caller
//! that takes a provider from [`resolve`](Router::resolve) or
//! [`get`](Router::get) and calls it directly bypasses them.
//! The caps bound what one request returns; what one synthesis computes
//! before its length is known is the provider's: piper stops between
//! sentences once its audio passes the cap
//! (`PiperSynthesizer::with_max_seconds`, kokoro likewise), flite runs to the end (5 000
//! characters of digits, 1 240 s of audio, in under a minute).

use oscova_core::PluginHost;
use oscova_core::provider::speech::{
    SpeechError, SpeechSynthesisProvider, SynthesisRequest, SynthesizedAudio,
};

use super::{Builtins, Router};
use crate::error::EngineError;
use crate::wav::{AudioKind, check_wav_header, sniff_audio};

/// Synthesis: text in, audio out, within the caps.
///
/// ```no_run
/// use oscova_speech::{SpeechProviderConfig, SpeechSynthesisRouter, SynthesisRequest};
///
/// # async fn demo(host: &oscova_core::PluginHost) -> Result<(), oscova_speech::SpeechError> {
/// let router = SpeechSynthesisRouter::from_host(host);
/// let config = SpeechProviderConfig::new("flite").voice("slt");
/// let audio = router
///     .synthesize(SynthesisRequest::new(&config, "hello world").offline(true))
///     .await?;
/// assert_eq!(&audio.wav[..4], b"RIFF");
/// # Ok(()) }
/// ```
impl Router<dyn SpeechSynthesisProvider> {
    /// The most characters (Unicode scalar values) of text one synthesis
    /// speaks: about five minutes of prose.
    pub const MAX_CHARS: usize = 5_000;

    /// The longest audio one synthesis returns, in seconds: twice what
    /// [`MAX_CHARS`](Self::MAX_CHARS) of prose makes with flite (5 000
    /// characters, 280 s), so only text that expands meets it.
    pub const MAX_SECONDS: u32 = 600;

    /// The bitrate, in kbit/s, [`MAX_ENCODED_BYTES`](Self::MAX_ENCODED_BYTES)
    /// assumes: just above Opus's highest (510 kbit/s), the highest of the
    /// lossy formats a speech service returns (MP3's is 320 kbit/s).
    const MAX_ENCODED_KBPS: u32 = 512;

    /// The most bytes of audio that is not WAV one synthesis returns:
    /// [`MAX_SECONDS`](Self::MAX_SECONDS) at 512 kbit/s (38 400 000 bytes),
    /// since the length of MP3, Opus or AAC audio is not known without
    /// decoding it.
    pub const MAX_ENCODED_BYTES: usize =
        Self::MAX_SECONDS as usize * Self::MAX_ENCODED_KBPS as usize * 1000 / 8;

    /// The built-in synthesis providers (those
    /// [`providers`](crate::providers) lists for synthesis, on the host's
    /// spawn policy and HTTP client) plus the synthesis providers of the
    /// host's plugins.
    pub fn from_host(host: &PluginHost) -> Self {
        let (_, builder) = Builtins::registered(host.http_client(), host.spawn_policy().clone());
        builder.host_plugins(host).build()
    }

    /// Checks the text's length, resolves the request's provider (see
    /// [`resolve`](Self::resolve)), lets it speak the text and checks how
    /// long the audio plays.
    ///
    /// ```
    /// use oscova_speech::providers::FliteSynthesizer;
    /// use oscova_speech::{SpeechError, SpeechProviderConfig, SpeechSynthesisRouter, SynthesisRequest};
    ///
    /// # tokio::runtime::Runtime::new()?.block_on(async {
    /// let router = SpeechSynthesisRouter::builder().builtin(FliteSynthesizer::new()).build();
    /// let config = SpeechProviderConfig::new("flite");
    /// let text = "word ".repeat(SpeechSynthesisRouter::MAX_CHARS / 5 + 1);
    /// let err = router.synthesize(SynthesisRequest::new(&config, &text)).await.unwrap_err();
    /// assert!(matches!(err, SpeechError::InvalidText(ref m) if m.contains("5000 characters")));
    /// # });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`SpeechError::InvalidText`] for text over [`MAX_CHARS`](Self::MAX_CHARS)
    /// and the routing errors of [`resolve`](Self::resolve), with the
    /// provider never entered; the provider's own error; and
    /// [`SpeechError::InvalidText`] for WAV audio that plays longer than
    /// [`MAX_SECONDS`](Self::MAX_SECONDS) and for audio that is not WAV and is
    /// larger than [`MAX_ENCODED_BYTES`](Self::MAX_ENCODED_BYTES).
    pub async fn synthesize(
        &self,
        request: SynthesisRequest<'_>,
    ) -> Result<SynthesizedAudio, SpeechError> {
        let chars = request.text.chars().count();
        if chars > Self::MAX_CHARS {
            return Err(EngineError::TextTooLong {
                chars,
                limit: Self::MAX_CHARS,
            }
            .into());
        }
        let provider = self.resolve(request.config, request.offline, request.download_url)?;
        let audio = provider.synthesize(request).await?;
        match check_wav_header(&audio.wav) {
            Ok(header) if header.duration_seconds > f64::from(Self::MAX_SECONDS) => {
                return Err(EngineError::SpeechTooLong {
                    seconds: header.duration_seconds,
                    limit_seconds: Self::MAX_SECONDS,
                }
                .into());
            }
            Ok(_) => {}
            // Not WAV (or a WAV header that cannot be read): its length is
            // not known, its size is. What it is otherwise is the caller's
            // to report, with its words.
            Err(_) if audio.wav.len() > Self::MAX_ENCODED_BYTES => {
                return Err(EngineError::EncodedSpeechTooLarge {
                    bytes: audio.wav.len(),
                    kind: match sniff_audio(&audio.wav) {
                        AudioKind::Wav => AudioKind::Unknown,
                        kind => kind,
                    },
                    limit_bytes: Self::MAX_ENCODED_BYTES,
                    limit_seconds: Self::MAX_SECONDS,
                    kbps: Self::MAX_ENCODED_KBPS,
                }
                .into());
            }
            Err(_) => {}
        }
        Ok(audio)
    }
}
