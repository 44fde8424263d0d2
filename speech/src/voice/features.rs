//! What Smart Turn v3 reads: Whisper's log-mel spectrogram of the last
//! eight seconds of a turn, 80 bands by 800 frames.
//!
//! Rules, those of `transformers.WhisperFeatureExtractor(chunk_length=8)`
//! as pipecat's `compute_whisper_log_mel_features` vendors them: the
//! audio's last 128,000 samples (16 kHz), zero-padded at the start when
//! shorter; normalised to zero mean and unit variance; reflect-padded by
//! 200 samples each side; 25 ms periodic-Hann frames every 10 ms (801 of
//! them, the last dropped); the power spectrum through Whisper's mel filter
//! bank (the one whisper.cpp reads, librosa's); `log10` with a floor of
//! 1e-10, clamped to 8 below the maximum, then `(x + 4) / 4`.

use std::sync::{Arc, OnceLock};

use rustfft::num_complex::Complex32;
use rustfft::{Fft, FftPlanner};

use crate::providers::whisper::mel::{self, N_BINS, N_FFT};

/// The sample rate the features are made for.
pub(crate) const SAMPLE_RATE: usize = 16_000;
/// Samples in one window of features: eight seconds.
pub(crate) const WINDOW: usize = 8 * SAMPLE_RATE;
/// Mel bands per frame.
pub(crate) const N_MELS: usize = 80;
/// Frames per window.
pub(crate) const N_FRAMES: usize = WINDOW / HOP;

const HOP: usize = 160;
const MEL_FLOOR: f64 = 1e-10;
const VARIANCE_EPS: f64 = 1e-7;

struct Tables {
    window: Vec<f32>,
    filters: Vec<f32>,
    fft: Arc<dyn Fft<f32>>,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| Tables {
        // A periodic Hann window (torch.hann_window, numpy's hanning(N+1)[:-1]).
        window: (0..N_FFT)
            .map(|n| {
                let phase = 2.0 * std::f64::consts::PI * n as f64 / N_FFT as f64;
                (0.5 - 0.5 * phase.cos()) as f32
            })
            .collect(),
        filters: mel::filters(N_MELS),
        fft: FftPlanner::new().plan_fft_forward(N_FFT),
    })
}

/// The features of `audio` (16 kHz mono, any length; only its last eight
/// seconds count), band-major: `N_MELS` rows of `N_FRAMES` values.
pub(crate) fn log_mel(audio: &[f32]) -> Vec<f32> {
    let tables = tables();
    // The last eight seconds, silence before a shorter turn.
    let mut x = vec![0f32; WINDOW];
    let take = audio.len().min(WINDOW);
    x[WINDOW - take..].copy_from_slice(&audio[audio.len() - take..]);
    normalise(&mut x);

    let pad = N_FFT / 2;
    let padded: Vec<f32> = (0..WINDOW + 2 * pad)
        .map(|i| x[reflect(i as isize - pad as isize, WINDOW)])
        .collect();

    let frames = N_FRAMES; // the 801st frame is dropped
    let mut power = vec![0f32; frames * N_BINS];
    let mut buffer = vec![Complex32::default(); N_FFT];
    let mut scratch = vec![Complex32::default(); tables.fft.get_inplace_scratch_len()];
    for frame in 0..frames {
        let start = frame * HOP;
        for (n, slot) in buffer.iter_mut().enumerate() {
            *slot = Complex32::new(padded[start + n] * tables.window[n], 0.0);
        }
        tables.fft.process_with_scratch(&mut buffer, &mut scratch);
        let row = &mut power[frame * N_BINS..(frame + 1) * N_BINS];
        for (bin, value) in row.iter_mut().enumerate() {
            *value = buffer[bin].norm_sqr();
        }
    }

    let mut features = vec![0f32; N_MELS * frames];
    let mut max = f64::NEG_INFINITY;
    for band in 0..N_MELS {
        let weights = &tables.filters[band * N_BINS..(band + 1) * N_BINS];
        for frame in 0..frames {
            let spectrum = &power[frame * N_BINS..(frame + 1) * N_BINS];
            let energy: f64 = weights
                .iter()
                .zip(spectrum)
                .map(|(w, p)| f64::from(*w) * f64::from(*p))
                .sum();
            let log = energy.max(MEL_FLOOR).log10();
            max = max.max(log);
            features[band * frames + frame] = log as f32;
        }
    }
    let floor = (max - 8.0) as f32;
    for value in &mut features {
        *value = (value.max(floor) + 4.0) / 4.0;
    }
    features
}

/// Zero mean, unit variance (the variance with a small epsilon).
fn normalise(x: &mut [f32]) {
    let n = x.len() as f64;
    let mean = x.iter().map(|v| f64::from(*v)).sum::<f64>() / n;
    let variance = x
        .iter()
        .map(|v| (f64::from(*v) - mean).powi(2))
        .sum::<f64>()
        / n;
    let scale = 1.0 / (variance + VARIANCE_EPS).sqrt();
    for v in x {
        *v = ((f64::from(*v) - mean) * scale) as f32;
    }
}

/// numpy's `reflect` padding: index `i` of a signal of `len` samples
/// mirrored at both ends without repeating the edge.
fn reflect(i: isize, len: usize) -> usize {
    let last = len as isize - 1;
    let mut i = i;
    while i < 0 || i > last {
        i = if i < 0 { -i } else { 2 * last - i };
    }
    i as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflection_mirrors_without_repeating_the_edge() {
        // numpy.pad([0, 1, 2, 3], 2, mode="reflect") == [2, 1, 0, 1, 2, 3, 2, 1]
        let got: Vec<usize> = (-2..6).map(|i| reflect(i, 4)).collect();
        assert_eq!(got, [2, 1, 0, 1, 2, 3, 2, 1]);
    }

    #[test]
    fn a_window_has_80_by_800_values_in_the_reference_range() {
        // A 440 Hz tone for one second, after seven of silence.
        let tone: Vec<f32> = (0..SAMPLE_RATE)
            .map(|n| (2.0 * std::f32::consts::PI * 440.0 * n as f32 / 16_000.0).sin() * 0.3)
            .collect();
        let features = log_mel(&tone);
        assert_eq!(features.len(), N_MELS * N_FRAMES);
        let (min, max) = features
            .iter()
            .fold((f32::MAX, f32::MIN), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
        // (max - 8 + 4) / 4 at the floor, (max + 4) / 4 at the top.
        assert!((max - min - 2.0).abs() < 1e-4, "{min}..{max}");
        // The tone's band is loudest in the last second, and the silent
        // start sits at the floor.
        let band = (0..N_MELS)
            .max_by(|a, b| features[a * N_FRAMES + 790].total_cmp(&features[b * N_FRAMES + 790]))
            .unwrap();
        let hz = mel::mel_to_hz(
            mel::hz_to_mel(0.0)
                + (mel::hz_to_mel(8000.0) - mel::hz_to_mel(0.0)) * (band + 1) as f64
                    / (N_MELS + 1) as f64,
        );
        assert!(
            (300.0..600.0).contains(&hz),
            "band {band} centred at {hz} Hz"
        );
        assert_eq!(features[band * N_FRAMES + 10], min);
    }

    #[test]
    fn only_the_last_eight_seconds_count() {
        let short: Vec<f32> = (0..16_000)
            .map(|n| ((n % 97) as f32 / 97.0) - 0.5)
            .collect();
        let mut long = vec![0.25f32; 5 * SAMPLE_RATE];
        long.extend(std::iter::repeat_n(0.0, 7 * SAMPLE_RATE));
        long.extend(&short);
        let mut padded = vec![0f32; 7 * SAMPLE_RATE];
        padded.extend(&short);
        assert_eq!(log_mel(&long), log_mel(&padded));
    }
}
