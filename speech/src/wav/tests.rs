//! Unit tests of WAV decoding, resampling and encoding.
use super::*;
use crate::error::EngineError;
use std::time::Instant;

fn wav_with(
    spec: hound::WavSpec,
    write: impl FnOnce(&mut hound::WavWriter<&mut Cursor<Vec<u8>>>),
) -> Vec<u8> {
    let mut cursor = Cursor::new(Vec::new());
    let mut writer = hound::WavWriter::new(&mut cursor, spec).unwrap();
    write(&mut writer);
    writer.finalize().unwrap();
    cursor.into_inner()
}

fn spec(channels: u16, sample_rate: u32, bits: u16, format: hound::SampleFormat) -> hound::WavSpec {
    hound::WavSpec {
        channels,
        sample_rate,
        bits_per_sample: bits,
        sample_format: format,
    }
}

fn int16(channels: u16, rate: u32, samples: &[i16]) -> Vec<u8> {
    wav_with(spec(channels, rate, 16, hound::SampleFormat::Int), |w| {
        samples.iter().for_each(|s| w.write_sample(*s).unwrap())
    })
}

fn sine(rate: u32, hz: f64, seconds: f64, amplitude: f64) -> Vec<f64> {
    let n = (f64::from(rate) * seconds) as usize;
    (0..n)
        .map(|i| amplitude * (2.0 * std::f64::consts::PI * hz * i as f64 / f64::from(rate)).sin())
        .collect()
}

fn rms(samples: &[i16]) -> f64 {
    let sum: f64 = samples.iter().map(|&s| f64::from(s) * f64::from(s)).sum();
    (sum / samples.len() as f64).sqrt()
}

/// A canonical 44-byte header with arbitrary field values.
fn raw_header(
    format: u16,
    channels: u16,
    rate: u32,
    block_align: u16,
    bits: u16,
    data_len: u32,
) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(b"RIFF");
    h.extend_from_slice(&(36 + data_len).to_le_bytes());
    h.extend_from_slice(b"WAVEfmt ");
    h.extend_from_slice(&16u32.to_le_bytes());
    h.extend_from_slice(&format.to_le_bytes());
    h.extend_from_slice(&channels.to_le_bytes());
    h.extend_from_slice(&rate.to_le_bytes());
    h.extend_from_slice(&(rate * u32::from(block_align)).to_le_bytes());
    h.extend_from_slice(&block_align.to_le_bytes());
    h.extend_from_slice(&bits.to_le_bytes());
    h.extend_from_slice(b"data");
    h.extend_from_slice(&data_len.to_le_bytes());
    h
}

#[test]
fn sixteen_bit_mono_16k_is_bit_exact_and_round_trips() {
    let samples: Vec<i16> = vec![0, 1, -1, 12_345, -32_768, 32_767, 7];
    let decoded = decode(&int16(1, 16_000, &samples)).unwrap();
    assert_eq!(decoded.samples, samples);
    let encoded = encode_wav(&decoded);
    assert_eq!(
        encoded,
        int16(1, 16_000, &samples),
        "encode_wav matches hound's canonical output"
    );
    assert_eq!(decode(&encoded).unwrap(), decoded);
}

#[test]
fn duration_is_exact() {
    let pcm = Pcm16kMono {
        samples: vec![0; 24_000],
    };
    assert_eq!(pcm.duration(), Duration::from_millis(1_500));
}

#[test]
fn empty_input_is_its_own_error() {
    assert!(matches!(decode(&[]), Err(EngineError::EmptyInput)));
}

#[test]
fn not_a_wav_is_reported_with_what_it_is() {
    for input in [
        &b"hello, this is text"[..],
        b"ID3\x03\x00mp3",
        b"\x89PNG\r\n",
        b"X",
        b"RIFX",
    ] {
        let err = decode(input).unwrap_err();
        assert!(
            matches!(err, EngineError::NotWav { .. }),
            "{input:?}: {err:?}"
        );
    }
    let avi = b"RIFF\x10\x00\x00\x00AVI LIST\x00\x00\x00\x00";
    let err = decode(avi).unwrap_err();
    assert!(err.to_string().contains("no WAVE tag"), "{err}");
}

#[test]
fn truncated_header_is_its_own_error() {
    let wav = int16(1, 16_000, &[1, 2, 3]);
    for cut in [1, 3, 4, 11, 12, 20, 36, 43] {
        let err = decode(&wav[..cut]).unwrap_err();
        assert!(
            matches!(err, EngineError::TruncatedHeader { .. }),
            "cut at {cut}: {err:?}"
        );
    }
}

#[test]
fn truncated_data_decodes_the_whole_frames_that_are_there() {
    let samples: Vec<i16> = (0..1_000).collect();
    let wav = int16(1, 16_000, &samples);
    // Cut inside sample 500 (each is 2 bytes after the 44-byte header).
    let decoded = decode(&wav[..44 + 1_001]).unwrap();
    assert_eq!(decoded.samples, samples[..500]);

    // Stereo cut between the channels of a frame drops that frame.
    let stereo: Vec<i16> = (0..200).collect();
    let wav = int16(2, 16_000, &stereo);
    let decoded = decode(&wav[..44 + 4 * 10 + 2]).unwrap();
    assert_eq!(decoded.samples.len(), 10);

    // A header with no data at all.
    assert!(matches!(decode(&wav[..44]), Err(EngineError::NoSamples)));
}

#[test]
fn zero_channels_is_unsupported() {
    let wav = raw_header(1, 0, 16_000, 0, 16, 0);
    let err = decode(&wav).unwrap_err();
    assert!(matches!(err, EngineError::UnsupportedWav { .. }), "{err:?}");
    assert!(err.to_string().contains("zero channels"), "{err}");
}

#[test]
fn absurd_rates_are_unsupported() {
    for rate in [0, 1, 3_999, 192_001, 1_000_000, u32::MAX / 2] {
        let mut wav = raw_header(1, 1, rate, 2, 16, 4);
        wav.extend_from_slice(&[0, 0, 0, 0]);
        let err = decode(&wav).unwrap_err();
        assert!(
            matches!(err, EngineError::UnsupportedWav { .. }),
            "{rate}: {err:?}"
        );
    }
}

#[test]
fn other_encodings_are_unsupported() {
    // A-law (format 6), 8-bit.
    let mut wav = raw_header(6, 1, 8_000, 1, 8, 2);
    wav.extend_from_slice(&[0xd5, 0xd5]);
    let err = decode(&wav).unwrap_err();
    assert!(matches!(err, EngineError::UnsupportedWav { .. }), "{err:?}");
    assert!(err.to_string().contains("16-bit PCM"), "{err}");
}

#[test]
fn too_long_is_rejected_from_the_header_quickly() {
    let samples = vec![0i16; 16_000 * 600];
    let wav = int16(1, 16_000, &samples);
    let started = Instant::now();
    let err = decode(&wav).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "{:?}",
        started.elapsed()
    );
    let EngineError::AudioTooLong {
        seconds,
        limit_seconds,
    } = err
    else {
        panic!("unexpected {err:?}");
    };
    assert_eq!(seconds, 600.0);
    assert_eq!(limit_seconds, MAX_AUDIO_SECONDS);
    assert_eq!(
        err_text(seconds),
        "the audio is 600.0 seconds long, longer than the limit of 300 seconds; split it into shorter parts"
    );

    // Exactly at the limit is fine; the limit counts frames, not samples.
    let stereo_limit = vec![0i16; 2 * 8_000 * 300];
    assert!(decode(&int16(2, 8_000, &stereo_limit)).is_ok());
}

fn err_text(seconds: f64) -> String {
    EngineError::AudioTooLong {
        seconds,
        limit_seconds: MAX_AUDIO_SECONDS,
    }
    .to_string()
}

#[test]
fn a_header_claiming_hours_but_holding_seconds_is_judged_by_its_data() {
    let mut wav = raw_header(1, 1, 16_000, 2, 16, 16_000 * 2 * 3_600);
    wav.extend(std::iter::repeat_n(0u8, 16_000 * 2));
    let pcm = decode(&wav).unwrap();
    assert_eq!(pcm.samples.len(), 16_000);
}

#[test]
fn sample_formats_convert_to_i16() {
    let int = hound::SampleFormat::Int;
    // 8-bit: hound takes signed values and stores them offset by 128.
    let wav = wav_with(spec(1, 16_000, 8, int), |w| {
        [-128i8, -64, 0, 64, 127]
            .iter()
            .for_each(|s| w.write_sample(*s).unwrap())
    });
    assert_eq!(
        decode(&wav).unwrap().samples,
        [-32_768, -16_384, 0, 16_384, 32_512]
    );

    let wav = wav_with(spec(1, 16_000, 24, int), |w| {
        [-8_388_608i32, 0, 4_194_304, 8_388_607, 100]
            .iter()
            .for_each(|s| w.write_sample(*s).unwrap())
    });
    assert_eq!(
        decode(&wav).unwrap().samples,
        [-32_768, 0, 16_384, 32_767, 0]
    );

    let wav = wav_with(spec(1, 16_000, 32, int), |w| {
        [i32::MIN, 0, 1 << 30, i32::MAX]
            .iter()
            .for_each(|s| w.write_sample(*s).unwrap())
    });
    assert_eq!(decode(&wav).unwrap().samples, [-32_768, 0, 16_384, 32_767]);

    let wav = wav_with(spec(1, 16_000, 32, hound::SampleFormat::Float), |w| {
        [-1.0f32, -0.5, 0.0, 0.5, 1.0, 2.0, f32::NAN]
            .iter()
            .for_each(|s| w.write_sample(*s).unwrap())
    });
    assert_eq!(
        decode(&wav).unwrap().samples,
        [-32_768, -16_384, 0, 16_384, 32_767, 32_767, 0]
    );
}

#[test]
fn channels_are_averaged() {
    let wav = int16(2, 16_000, &[1_000, 3_000, -2_000, 2_000]);
    assert_eq!(decode(&wav).unwrap().samples, [2_000, 0]);
    let six: Vec<i16> = [600i16, 0, 0, 0, 0, 0].repeat(3);
    assert_eq!(
        decode(&int16(6, 16_000, &six)).unwrap().samples,
        [100, 100, 100]
    );
}

#[test]
fn downsampling_keeps_speech_band_tones_and_length() {
    for rate in [22_050, 32_000, 44_100, 48_000, 96_000] {
        let tone: Vec<i16> = sine(rate, 1_000.0, 1.0, 10_000.0)
            .iter()
            .map(|&x| x as i16)
            .collect();
        let pcm = decode(&int16(1, rate, &tone)).unwrap();
        assert!(
            (pcm.samples.len() as i64 - 16_000).abs() <= 1,
            "{rate}: {}",
            pcm.samples.len()
        );
        // A 1 kHz tone keeps its level (10 000 peak → 7 071 RMS)...
        let level = rms(&pcm.samples[500..15_500]);
        assert!((level - 7_071.0).abs() < 150.0, "{rate}: rms {level}");
        // ...and its frequency: 2 zero crossings per cycle.
        let crossings = pcm.samples[..16_000]
            .windows(2)
            .filter(|w| (w[0] < 0) != (w[1] < 0))
            .count();
        assert!((1_995..=2_005).contains(&crossings), "{rate}: {crossings}");
    }
}

#[test]
fn downsampling_suppresses_what_would_alias() {
    // 12 kHz cannot exist at 16 kHz; unfiltered it would fold to 4 kHz.
    for rate in [44_100, 48_000] {
        let tone: Vec<i16> = sine(rate, 12_000.0, 1.0, 10_000.0)
            .iter()
            .map(|&x| x as i16)
            .collect();
        let pcm = decode(&int16(1, rate, &tone)).unwrap();
        let level = rms(&pcm.samples[500..15_500]);
        assert!(level < 150.0, "{rate}: alias rms {level}");
    }
}

#[test]
fn upsampling_interpolates() {
    let tone: Vec<i16> = sine(8_000, 500.0, 1.0, 10_000.0)
        .iter()
        .map(|&x| x as i16)
        .collect();
    let pcm = decode(&int16(1, 8_000, &tone)).unwrap();
    assert_eq!(pcm.samples.len(), 16_000);
    let level = rms(&pcm.samples[100..15_900]);
    assert!((level - 7_071.0).abs() < 150.0, "rms {level}");
    // Every other sample is an original one.
    assert_eq!(pcm.samples[2 * 123], tone[123]);
}

#[test]
fn never_panics_on_damaged_input() {
    let mut wav = int16(
        2,
        44_100,
        &(0..400).map(|i| (i * 97) as i16).collect::<Vec<_>>(),
    );
    for cut in 0..wav.len() {
        let _ = decode(&wav[..cut]);
    }
    // Overwrite each header byte with awkward values.
    for position in 0..44 {
        for value in [0x00, 0x01, 0x7f, 0x80, 0xff] {
            let saved = wav[position];
            wav[position] = value;
            let _ = decode(&wav);
            wav[position] = saved;
        }
    }
}
