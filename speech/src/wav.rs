//! WAV audio: decoding to 16 kHz mono 16-bit PCM ([`decode_wav`]), encoding
//! back to WAV ([`encode_wav`]), and reading a header without decoding
//! ([`check_wav_header`], [`sniff_audio`]). The recognizers take
//! [`Pcm16kMono`]; a provider author encodes what it speaks with
//! [`encode_wav`].
//!
//! Rules: [`decode_wav`] never panics on any input; every rejection is a
//! [`SpeechError::InvalidAudio`] that says what to send instead. The length
//! limit ([`MAX_AUDIO_SECONDS`]) is checked from the header before any sample
//! is decoded, so an over-long upload costs microseconds. A file whose data
//! chunk is shorter than its header declares (a recording that was cut off)
//! is decoded as far as whole frames go; the missing tail is not an error,
//! because recognizing what is there is more useful than refusing it.
//! Resampling is linear interpolation; when the rate goes down the signal is
//! first low-passed with a Hann-windowed sinc filter (cutoff 7 kHz), so
//! speech bands are kept and the part above 8 kHz does not alias into them.
//! Upsampling (8 kHz, 11.025 kHz) interpolates directly: the input has nothing
//! above its own Nyquist frequency to alias.

use std::io::Cursor;
use std::ops::RangeInclusive;
use std::time::Duration;

use oscova_core::provider::speech::SpeechError;

use crate::error::EngineError;

mod header;

pub use header::{AudioKind, WavHeader, WavHeaderError, check_wav_header, sniff_audio};

/// The sample rate of [`Pcm16kMono`], in Hz.
const SAMPLE_RATE: u32 = Pcm16kMono::SAMPLE_RATE;

/// The longest audio [`decode_wav`] accepts, in seconds.
pub const MAX_AUDIO_SECONDS: u32 = 300;

/// The largest WAV file hosts read for recognition by default (64 MiB: five
/// minutes of 48 kHz 16-bit stereo with room to spare).
pub const DEFAULT_MAX_AUDIO_BYTES: u64 = 64 * 1024 * 1024;

/// The input sample rates [`decode_wav`] accepts, in Hz: below 4 kHz is
/// no usable speech.
pub const INPUT_RATES: RangeInclusive<u32> = 4_000..=192_000;

/// The downsampling low-pass cutoff, in Hz: below the 8 kHz Nyquist frequency
/// of the output, leaving room for the filter's transition band.
const CUTOFF_HZ: f64 = 7_000.0;

/// Half-width of the low-pass filter in output-rate periods; more is sharper
/// and slower (12 gives about 2 kHz of transition band).
const FILTER_HALF_WIDTH: f64 = 12.0;

/// Audio as the recognizers want it: 16 kHz, one channel, signed 16-bit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pcm16kMono {
    /// The samples, at [`SAMPLE_RATE`](Self::SAMPLE_RATE).
    pub samples: Vec<i16>,
}

impl Pcm16kMono {
    /// The sample rate, in Hz.
    pub const SAMPLE_RATE: u32 = 16_000;

    /// How long the audio plays.
    pub fn duration(&self) -> Duration {
        // 1 / 16 000 s = 62 500 ns exactly.
        Duration::from_nanos(self.samples.len() as u64 * 62_500)
    }
}

/// Decodes a WAV file of any common PCM layout into [`Pcm16kMono`].
///
/// Accepts 8, 16, 24 and 32-bit integer and 32-bit float samples, any number
/// of channels (averaged to one), and sample rates in [`INPUT_RATES`] (resampled to 16 kHz).
///
/// ```
/// use oscova_speech::SpeechError;
/// use oscova_speech::wav::{Pcm16kMono, decode_wav, encode_wav};
///
/// let wav = encode_wav(&Pcm16kMono { samples: vec![0, 100, -100] });
/// assert_eq!(decode_wav(&wav)?.samples, [0, 100, -100]);
/// assert!(matches!(decode_wav(b"not audio"), Err(SpeechError::InvalidAudio(_))));
/// # Ok::<(), SpeechError>(())
/// ```
///
/// # Errors
///
/// [`SpeechError::InvalidAudio`] saying what is wrong: no bytes, not a WAV
/// file, a truncated header, an unsupported encoding or rate, no samples, or
/// audio longer than [`MAX_AUDIO_SECONDS`].
pub fn decode_wav(bytes: &[u8]) -> Result<Pcm16kMono, SpeechError> {
    decode(bytes).map_err(SpeechError::from)
}

/// [`decode_wav`] with the engine's own error.
///
/// # Errors
///
/// [`EngineError::EmptyInput`], [`EngineError::NotWav`],
/// [`EngineError::TruncatedHeader`], [`EngineError::UnsupportedWav`] (other
/// encodings, malformed headers, zero channels, rates out of range),
/// [`EngineError::AudioTooLong`] (over [`MAX_AUDIO_SECONDS`]) and
/// [`EngineError::NoSamples`].
pub(crate) fn decode(bytes: &[u8]) -> Result<Pcm16kMono, EngineError> {
    check_magic(bytes)?;
    // hound only exposes the data offset through `into_inner`, so the header
    // is parsed twice; that costs microseconds and avoids copying the input.
    let data_start = hound::WavReader::new(Cursor::new(bytes))
        .map_err(|e| header_error(bytes, e))?
        .into_inner()
        .position();
    let mut reader =
        hound::WavReader::new(Cursor::new(bytes)).map_err(|e| header_error(bytes, e))?;
    let spec = reader.spec();
    if spec.channels == 0 {
        // hound rejects this today; the check keeps the division below safe
        // whatever a future hound does.
        return Err(unsupported("the header declares zero channels"));
    }
    if !INPUT_RATES.contains(&spec.sample_rate) {
        return Err(unsupported(format!(
            "the sample rate {} Hz is outside {}..={} Hz",
            spec.sample_rate,
            INPUT_RATES.start(),
            INPUT_RATES.end()
        )));
    }

    let frames = frames_present(spec, reader.duration(), data_start, bytes.len());
    let seconds = frames as f64 / f64::from(spec.sample_rate);
    if seconds > f64::from(MAX_AUDIO_SECONDS) {
        return Err(EngineError::AudioTooLong {
            seconds,
            limit_seconds: MAX_AUDIO_SECONDS,
        });
    }

    let mono = read_mono(&mut reader, spec, frames)?;
    if mono.is_empty() {
        return Err(EngineError::NoSamples);
    }
    let resampled = resample(&mono, spec.sample_rate, SAMPLE_RATE);
    Ok(Pcm16kMono {
        samples: resampled.iter().map(|&x| to_i16(x)).collect(),
    })
}

/// Encodes audio as a 16-bit mono 16 kHz PCM WAV file (44-byte header).
///
/// ```
/// let wav = oscova_speech::wav::encode_wav(&oscova_speech::wav::Pcm16kMono { samples: vec![0; 16] });
/// assert_eq!(wav.len(), 44 + 32);
/// assert_eq!(&wav[..4], b"RIFF");
/// ```
///
/// Infallible: size fields saturate at 4 GiB, about 37 hours of audio, far
/// beyond anything the engines produce.
pub fn encode_wav(pcm: &Pcm16kMono) -> Vec<u8> {
    let data_len = u32::try_from(pcm.samples.len().saturating_mul(2)).unwrap_or(u32::MAX - 36);
    let mut out = Vec::with_capacity(44 + pcm.samples.len() * 2);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&data_len.saturating_add(36).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // channels
    out.extend_from_slice(&SAMPLE_RATE.to_le_bytes());
    out.extend_from_slice(&(SAMPLE_RATE * 2).to_le_bytes()); // bytes per second
    out.extend_from_slice(&2u16.to_le_bytes()); // block align
    out.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    for s in &pcm.samples {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out
}

/// Tells "not a WAV at all" from "a WAV cut short" before hound runs, since
/// hound reports both as an early end of input.
fn check_magic(bytes: &[u8]) -> Result<(), EngineError> {
    if bytes.is_empty() {
        return Err(EngineError::EmptyInput);
    }
    let riff_prefix = &b"RIFF"[..bytes.len().min(4)];
    if !bytes.starts_with(riff_prefix) {
        return Err(EngineError::NotWav {
            reason: format!("it starts with {}", describe_start(bytes)),
        });
    }
    if bytes.len() >= 12 && &bytes[8..12] != b"WAVE" {
        return Err(EngineError::NotWav {
            reason: "it is a RIFF file of another type (no WAVE tag)".to_owned(),
        });
    }
    Ok(())
}

fn describe_start(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(8)];
    if head.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        format!("{:?}", String::from_utf8_lossy(head))
    } else {
        let hex: Vec<String> = head.iter().map(|b| format!("{b:02x}")).collect();
        format!("bytes {}", hex.join(" "))
    }
}

fn header_error(bytes: &[u8], err: hound::Error) -> EngineError {
    match err {
        // Reading from memory, the only I/O error is running out of input
        // (hound reports it as `UnexpectedEof` or as `Other`).
        hound::Error::IoError(_) => EngineError::TruncatedHeader {
            len: bytes.len(),
            source: err,
        },
        hound::Error::FormatError(msg) => unsupported(format!("malformed WAV header: {msg}")),
        hound::Error::Unsupported => unsupported(
            "the sample encoding is not supported (only integer PCM and 32-bit float are)",
        ),
        other => unsupported(other.to_string()),
    }
}

fn unsupported(reason: impl Into<String>) -> EngineError {
    EngineError::UnsupportedWav {
        reason: reason.into(),
    }
}

/// Frames that are really there: the header's count, or fewer when the data
/// chunk was cut off. The container width is estimated from the bit depth
/// (hound does not expose it); that only matters for the too-long check of a
/// truncated file with padded samples.
fn frames_present(spec: hound::WavSpec, declared: u32, data_start: u64, total_len: usize) -> u64 {
    let available_bytes = (total_len as u64).saturating_sub(data_start);
    let sample_bytes = u64::from(spec.bits_per_sample.div_ceil(8)).max(1);
    let frame_bytes = (u64::from(spec.channels) * sample_bytes).max(1);
    u64::from(declared).min(available_bytes / frame_bytes)
}

/// Reads up to `frames` whole frames, averaging the channels. Stops quietly
/// at the end of a truncated data chunk.
fn read_mono(
    reader: &mut hound::WavReader<Cursor<&[u8]>>,
    spec: hound::WavSpec,
    frames: u64,
) -> Result<Vec<f32>, EngineError> {
    let channels = usize::from(spec.channels);
    let capacity = usize::try_from(frames).unwrap_or(0);
    let mut mono = Vec::with_capacity(capacity);
    match spec.sample_format {
        hound::SampleFormat::Int => {
            // Full scale of a signed n-bit sample is 2^(n-1); hound hands out
            // 8-bit samples already shifted to signed.
            let bits = u32::from(spec.bits_per_sample).clamp(1, 63);
            let scale = (1.0 / (1u64 << (bits - 1)) as f64) as f32;
            collect_frames(reader.samples::<i32>(), channels, frames, &mut mono, |s| {
                s as f32 * scale
            })?;
        }
        hound::SampleFormat::Float => {
            collect_frames(reader.samples::<f32>(), channels, frames, &mut mono, |s| {
                if s.is_finite() {
                    s.clamp(-1.0, 1.0)
                } else {
                    0.0
                }
            })?;
        }
    }
    Ok(mono)
}

fn collect_frames<S>(
    samples: impl Iterator<Item = Result<S, hound::Error>>,
    channels: usize,
    frames: u64,
    out: &mut Vec<f32>,
    to_f32: impl Fn(S) -> f32,
) -> Result<(), EngineError> {
    let mut sum = 0.0f32;
    let mut in_frame = 0usize;
    for sample in samples {
        let value = match sample {
            Ok(v) => to_f32(v),
            // Out of input: the data chunk was cut off (see `header_error`).
            Err(hound::Error::IoError(_)) => break,
            Err(e) => return Err(unsupported(format!("unreadable sample data: {e}"))),
        };
        sum += value;
        in_frame += 1;
        if in_frame == channels {
            out.push(sum / channels as f32);
            sum = 0.0;
            in_frame = 0;
            if out.len() as u64 >= frames {
                break;
            }
        }
    }
    Ok(())
}

fn to_i16(x: f32) -> i16 {
    (x * 32_768.0).round().clamp(-32_768.0, 32_767.0) as i16
}

/// Linear-interpolation resampler, low-passing first when the rate goes down.
fn resample(input: &[f32], from: u32, to: u32) -> Vec<f32> {
    if from == to || input.is_empty() {
        return input.to_vec();
    }
    let out_len = (input.len() as u64 * u64::from(to) / u64::from(from)).max(1);
    let step = f64::from(from) / f64::from(to);
    let filter = (from > to).then(|| low_pass_taps(from, to));
    let last = input.len() - 1;
    let source = |i: usize| -> f32 {
        let i = i.min(last);
        match &filter {
            Some(taps) => convolve_at(input, taps, i),
            None => input[i],
        }
    };
    let mut out = Vec::with_capacity(usize::try_from(out_len).unwrap_or(0));
    for n in 0..out_len {
        let t = n as f64 * step;
        let i0 = t.floor() as usize;
        let frac = (t - t.floor()) as f32;
        let a = source(i0);
        let value = if frac == 0.0 {
            a
        } else {
            a + (source(i0 + 1) - a) * frac
        };
        out.push(value);
    }
    out
}

/// Hann-windowed sinc low-pass at [`CUTOFF_HZ`], normalised to unit DC gain.
fn low_pass_taps(from: u32, to: u32) -> Vec<f32> {
    let ratio = f64::from(from) / f64::from(to);
    let half = (FILTER_HALF_WIDTH * ratio).ceil() as usize;
    let len = 2 * half + 1;
    let fc = CUTOFF_HZ / f64::from(from); // cycles per input sample
    let mut taps: Vec<f64> = (0..len)
        .map(|n| {
            let x = n as f64 - half as f64;
            let sinc = if x == 0.0 {
                2.0 * fc
            } else {
                (2.0 * std::f64::consts::PI * fc * x).sin() / (std::f64::consts::PI * x)
            };
            let window =
                0.5 - 0.5 * (2.0 * std::f64::consts::PI * n as f64 / (len - 1) as f64).cos();
            sinc * window
        })
        .collect();
    let sum: f64 = taps.iter().sum();
    if sum != 0.0 {
        taps.iter_mut().for_each(|t| *t /= sum);
    }
    taps.into_iter().map(|t| t as f32).collect()
}

/// The filtered value at input index `i`; samples outside the input count as
/// the nearest edge sample, so the ends do not dip towards silence.
fn convolve_at(input: &[f32], taps: &[f32], i: usize) -> f32 {
    let half = taps.len() / 2;
    let last = input.len() - 1;
    taps.iter()
        .enumerate()
        .map(|(k, &h)| {
            let j = (i + k).saturating_sub(half).min(last);
            input[j] * h
        })
        .sum()
}

#[cfg(test)]
mod tests;
