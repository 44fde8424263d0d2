//! The piper provider's settings from a configuration's `options`.
//!
//! Rules: every key is checked, and an unknown key or a value of the wrong
//! type or range is an error naming the key, so a typo never silently
//! falls back to a default. Scales left out come from the voice's config.
//! `deterministic = true` sets both noise scales to 0, which makes the
//! same text give the same audio (the tests use it).

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::error::PiperError;
use crate::onnx::runtime::runtime_options;

/// The keys `options` may hold.
const KEYS: [&str; 8] = [
    "onnxruntime",
    "threads",
    "noise_scale",
    "length_scale",
    "noise_w",
    "deterministic",
    "speaker",
    "sentence_silence",
];

/// The pause between sentences when `sentence_silence` is not set, as
/// Piper's command line has it.
const DEFAULT_SENTENCE_SILENCE: f32 = 0.2;

/// Which speaker of a multi-speaker voice.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Speaker {
    Id(i64),
    Name(String),
}

/// The settings of one request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    /// The onnxruntime library instead of the provider's.
    pub(crate) onnxruntime: Option<PathBuf>,
    /// Threads per inference instead of the provider's.
    pub(crate) threads: Option<usize>,
    pub(crate) noise_scale: Option<f32>,
    pub(crate) length_scale: Option<f32>,
    pub(crate) noise_w: Option<f32>,
    pub(crate) speaker: Option<Speaker>,
    /// Seconds of silence between sentences.
    pub(crate) sentence_silence: f32,
}

impl Settings {
    /// Reads `options`.
    pub(crate) fn parse(options: &Map<String, Value>) -> Result<Self, PiperError> {
        let (onnxruntime, threads) = runtime_options("piper", &KEYS, options)
            .map_err(|(key, reason)| PiperError::option(key, reason))?;
        let deterministic = match options.get("deterministic") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(on)) => *on,
            Some(_) => return Err(PiperError::option("deterministic", "must be true or false")),
        };
        let zero = deterministic.then_some(0.0);
        let speaker = match options.get("speaker") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => Some(Speaker::Name(name.clone())),
            Some(value) => match value.as_i64() {
                Some(id) if id >= 0 => Some(Speaker::Id(id)),
                _ => {
                    return Err(PiperError::option(
                        "speaker",
                        "must be a speaker's name or number",
                    ));
                }
            },
        };
        Ok(Self {
            onnxruntime,
            threads,
            noise_scale: zero.or(scale(options, "noise_scale", 0.0..=2.0)?),
            length_scale: scale(options, "length_scale", 0.1..=5.0)?,
            noise_w: zero.or(scale(options, "noise_w", 0.0..=2.0)?),
            speaker,
            sentence_silence: scale(options, "sentence_silence", 0.0..=5.0)?
                .unwrap_or(DEFAULT_SENTENCE_SILENCE),
        })
    }
}

/// A number in `range`, if the key is there.
fn scale(
    options: &Map<String, Value>,
    key: &str,
    range: std::ops::RangeInclusive<f32>,
) -> Result<Option<f32>, PiperError> {
    match options.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => {
            #[allow(clippy::cast_possible_truncation)] // the range is small
            let number = value.as_f64().map(|v| v as f32);
            match number {
                Some(v) if range.contains(&v) => Ok(Some(v)),
                _ => Err(PiperError::option(
                    key,
                    format!("must be a number from {} to {}", range.start(), range.end()),
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(value: Value) -> Result<Settings, PiperError> {
        match value {
            Value::Object(map) => Settings::parse(&map),
            _ => unreachable!(),
        }
    }

    #[test]
    fn nothing_set_means_the_voices_own_scales() {
        let s = parse(json!({})).unwrap();
        assert_eq!(
            (s.noise_scale, s.length_scale, s.noise_w, s.threads),
            (None, None, None, None)
        );
        assert_eq!(s.sentence_silence, 0.2);
    }

    #[test]
    fn deterministic_zeroes_both_noise_scales() {
        let s = parse(
            json!({"deterministic": true, "noise_scale": 0.5, "length_scale": 1.2, "threads": 2}),
        )
        .unwrap();
        assert_eq!(
            (s.noise_scale, s.length_scale, s.noise_w, s.threads),
            (Some(0.0), Some(1.2), Some(0.0), Some(2))
        );
    }

    #[test]
    fn mistakes_name_their_key() {
        for (value, key) in [
            (json!({"noise": 1}), "noise"),
            (json!({"threads": 0}), "threads"),
            (json!({"threads": "2"}), "threads"),
            (json!({"length_scale": -1}), "length_scale"),
            (json!({"deterministic": "yes"}), "deterministic"),
            (json!({"onnxruntime": 3}), "onnxruntime"),
            (json!({"speaker": -1}), "speaker"),
        ] {
            let err = parse(value.clone()).unwrap_err();
            assert!(
                err.to_string().contains(&format!("`{key}`")),
                "{value}: {err}"
            );
        }
    }
}
