//! The mel filter bank whisper.cpp reads from a model file: what
//! `librosa.filters.mel(sr=16000, n_fft=400, n_mels=80)` returns, the matrix
//! OpenAI's Whisper ships as `mel_filters.npz`.
//!
//! Rules: the Slaney mel scale (linear below 1 kHz, logarithmic above) and
//! Slaney area normalisation, both librosa's defaults; every step in `f64`
//! and the result stored as `f32` in the order librosa stores it (each
//! triangle rounded to `f32`, then scaled by its normalisation and rounded
//! again), so the matrix matches librosa's to the last bit rather than
//! approximately.

/// Whisper's audio sample rate.
pub(crate) const SAMPLE_RATE: f64 = 16_000.0;
/// Whisper's FFT size (25 ms windows at 16 kHz).
pub(crate) const N_FFT: usize = 400;
/// FFT bins per frame: `1 + N_FFT / 2`.
pub(crate) const N_BINS: usize = 1 + N_FFT / 2;

const F_SP: f64 = 200.0 / 3.0;
const MIN_LOG_HZ: f64 = 1000.0;
const MIN_LOG_MEL: f64 = MIN_LOG_HZ / F_SP;

fn log_step() -> f64 {
    6.4f64.ln() / 27.0
}

/// Hertz to Slaney mels (librosa `hz_to_mel(htk=False)`).
pub(crate) fn hz_to_mel(hz: f64) -> f64 {
    if hz >= MIN_LOG_HZ {
        MIN_LOG_MEL + (hz / MIN_LOG_HZ).ln() / log_step()
    } else {
        hz / F_SP
    }
}

/// Slaney mels to hertz (librosa `mel_to_hz(htk=False)`).
pub(crate) fn mel_to_hz(mel: f64) -> f64 {
    if mel >= MIN_LOG_MEL {
        MIN_LOG_HZ * (log_step() * (mel - MIN_LOG_MEL)).exp()
    } else {
        F_SP * mel
    }
}

/// `numpy.linspace(start, stop, n)`, computed as numpy does (`start + i *
/// step`, the last value exactly `stop`).
fn linspace(start: f64, stop: f64, n: usize) -> Vec<f64> {
    if n == 1 {
        return vec![start];
    }
    let step = (stop - start) / (n - 1) as f64;
    let mut values: Vec<f64> = (0..n).map(|i| start + i as f64 * step).collect();
    values[n - 1] = stop;
    values
}

/// The `n_mels` × [`N_BINS`] filter bank, row-major (one row per mel band).
pub(crate) fn filters(n_mels: usize) -> Vec<f32> {
    let nyquist = SAMPLE_RATE / 2.0;
    // fft_frequencies: rfftfreq(n_fft, 1 / sr).
    let fft_hz: Vec<f64> = (0..N_BINS)
        .map(|k| k as f64 * SAMPLE_RATE / N_FFT as f64)
        .collect();
    let mel_hz: Vec<f64> = linspace(hz_to_mel(0.0), hz_to_mel(nyquist), n_mels + 2)
        .into_iter()
        .map(mel_to_hz)
        .collect();
    let mut weights = vec![0f32; n_mels * N_BINS];
    for band in 0..n_mels {
        let lower_width = mel_hz[band + 1] - mel_hz[band];
        let upper_width = mel_hz[band + 2] - mel_hz[band + 1];
        let enorm = 2.0 / (mel_hz[band + 2] - mel_hz[band]);
        for (bin, hz) in fft_hz.iter().enumerate() {
            let lower = -(mel_hz[band] - hz) / lower_width;
            let upper = (mel_hz[band + 2] - hz) / upper_width;
            // numpy's `maximum(0, x)` keeps x when the two compare equal,
            // so the first bin of the first band is -0.0, as in librosa.
            let v = lower.min(upper);
            let triangle = if v < 0.0 { 0.0 } else { v as f32 };
            weights[band * N_BINS + bin] = (f64::from(triangle) * enorm) as f32;
        }
    }
    weights
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_is_linear_below_1khz_and_inverts() {
        assert_eq!(hz_to_mel(0.0), 0.0);
        assert!((hz_to_mel(200.0) - 3.0).abs() < 1e-12);
        assert!((hz_to_mel(1000.0) - 15.0).abs() < 1e-12);
        assert!((hz_to_mel(6400.0) - 42.0).abs() < 1e-9);
        for hz in [0.0, 50.0, 999.0, 1000.0, 4321.0, 8000.0] {
            assert!((mel_to_hz(hz_to_mel(hz)) - hz).abs() < 1e-9, "{hz}");
        }
    }

    #[test]
    fn the_bank_matches_librosa() {
        let bank = filters(80);
        assert_eq!(bank.len(), 80 * 201);
        // Values of librosa.filters.mel(sr=16000, n_fft=400, n_mels=80)
        // (OpenAI's mel_filters.npz `mel_80`), as f32 bit patterns.
        for (band, bin, bits) in PINNED {
            assert_eq!(
                bank[band * N_BINS + bin].to_bits(),
                bits,
                "band {band}, bin {bin}: {}",
                bank[band * N_BINS + bin]
            );
        }
        // Triangles: every band is non-zero on a contiguous run of bins,
        // the runs move up with the band, and nothing is negative.
        let mut last_start = 0;
        for band in 0..80 {
            let row = &bank[band * N_BINS..(band + 1) * N_BINS];
            assert!(row.iter().all(|w| *w >= 0.0));
            let nonzero: Vec<usize> = (0..N_BINS).filter(|b| row[*b] > 0.0).collect();
            let (first, last) = (nonzero[0], nonzero[nonzero.len() - 1]);
            assert_eq!(nonzero.len(), last - first + 1, "band {band}");
            assert!(first >= last_start, "band {band}");
            last_start = first;
        }
        // The 128-band bank of large-v3 is made the same way.
        assert_eq!(filters(128).len(), 128 * 201);
    }

    /// (band, bin, f32 bits), from `mel_80` in the `mel_filters.npz` that
    /// Whisper's Python packages ship.
    const PINNED: [(usize, usize, u32); 16] = [
        (0, 1, 0x3ccb_aca4),
        (10, 10, 0x3ca3_168f),
        (12, 13, 0x3a7e_fee5),
        (16, 15, 0x3b45_312c),
        (20, 19, 0x3c33_c4be),
        (25, 25, 0x3b84_658c),
        (38, 39, 0x3be4_ee32),
        (46, 56, 0x3aea_ccc9),
        (57, 84, 0x3b99_12f1),
        (60, 96, 0x3a51_26c0),
        (62, 103, 0x3af1_00d5),
        (69, 129, 0x3b3b_c413),
        (70, 139, 0x3b15_f33d),
        (72, 152, 0x3a2c_32b3),
        (75, 169, 0x3ac9_8f72),
        (79, 199, 0x39eb_476a),
    ];

    #[test]
    fn every_value_matches_the_shipped_matrix() {
        // FNV-1a (64 bit) of the little-endian bytes of all 80 x 201 values
        // of that `mel_80` matrix: equal only if every bit is.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in filters(80).iter().flat_map(|w| w.to_le_bytes()) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
        assert_eq!(hash, 0x173a_8442_ad00_0426);
    }
}
