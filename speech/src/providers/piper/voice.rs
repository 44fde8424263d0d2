//! A Piper voice's configuration (`NAME.onnx.json`) and the phoneme-to-id
//! mapping, as Piper's own runtime does them.
//!
//! Rules: the fields are read as Piper's `config.py` reads them, with the
//! same defaults (noise scale 0.667, length scale 1, noise width 0.8, one
//! speaker, espeak phonemes). Ids follow `piper-phonemize`'s
//! `phonemes_to_ids`: the ids of `^`, of `_`, then each phoneme's ids
//! followed by those of `_`, then `$`; a phoneme the map lacks is skipped
//! (and counted). The map's keys are single characters; a voice whose map
//! lacks `^`, `_` or `$`, or whose sample rate is outside 8–48 kHz, is
//! refused when it is loaded, not when it first speaks.

use std::collections::HashMap;

use serde::Deserialize;

/// How a voice turns text into phonemes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PhonemeType {
    /// IPA phonemes from espeak-ng.
    Espeak,
    /// The text's own characters (Unicode NFD).
    Text,
}

/// A voice's configuration.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VoiceConfig {
    pub(crate) sample_rate: u32,
    pub(crate) espeak_voice: String,
    pub(crate) phoneme_type: PhonemeType,
    pub(crate) noise_scale: f32,
    pub(crate) length_scale: f32,
    pub(crate) noise_w: f32,
    pub(crate) num_speakers: u32,
    pub(crate) speakers: HashMap<String, i64>,
    ids: HashMap<char, Vec<i64>>,
}

#[derive(Deserialize)]
struct File {
    audio: Audio,
    #[serde(default)]
    espeak: Option<Espeak>,
    #[serde(default)]
    inference: Inference,
    #[serde(default)]
    phoneme_type: Option<String>,
    phoneme_id_map: HashMap<String, Vec<i64>>,
    #[serde(default)]
    num_speakers: Option<u32>,
    #[serde(default)]
    speaker_id_map: HashMap<String, i64>,
}

#[derive(Deserialize)]
struct Audio {
    sample_rate: u32,
}

#[derive(Deserialize)]
struct Espeak {
    voice: String,
}

#[derive(Deserialize)]
#[serde(default)]
struct Inference {
    noise_scale: f32,
    length_scale: f32,
    noise_w: f32,
}

impl Default for Inference {
    fn default() -> Self {
        Self {
            noise_scale: 0.667,
            length_scale: 1.0,
            noise_w: 0.8,
        }
    }
}

/// Beginning of a sentence.
const BOS: char = '^';
/// End of a sentence.
const EOS: char = '$';
/// Between phonemes.
const PAD: char = '_';

impl VoiceConfig {
    /// Parses a `NAME.onnx.json` file's text.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let file: File =
            serde_json::from_str(text).map_err(|e| format!("its .onnx.json is not valid ({e})"))?;
        if !(8_000..=48_000).contains(&file.audio.sample_rate) {
            return Err(format!(
                "its sample rate {} Hz is outside 8000–48000 Hz",
                file.audio.sample_rate
            ));
        }
        let phoneme_type = match file.phoneme_type.as_deref().unwrap_or("espeak") {
            "espeak" => PhonemeType::Espeak,
            "text" => PhonemeType::Text,
            other => {
                return Err(format!(
                    "its phoneme type `{other}` is not supported (espeak and text are)"
                ));
            }
        };
        let espeak_voice = match (&file.espeak, phoneme_type) {
            (Some(espeak), _) => espeak.voice.clone(),
            (None, PhonemeType::Text) => String::new(),
            (None, PhonemeType::Espeak) => {
                return Err("its .onnx.json has no espeak voice (`espeak.voice`)".to_owned());
            }
        };
        if phoneme_type == PhonemeType::Espeak && !is_espeak_voice_name(&espeak_voice) {
            return Err(format!(
                "its espeak voice `{espeak_voice}` is not a voice name"
            ));
        }
        let mut ids = HashMap::with_capacity(file.phoneme_id_map.len());
        for (key, value) in file.phoneme_id_map {
            let mut chars = key.chars();
            if let (Some(c), None) = (chars.next(), chars.next()) {
                ids.insert(c, value);
            }
        }
        for needed in [BOS, EOS, PAD] {
            if ids.get(&needed).is_none_or(Vec::is_empty) {
                return Err(format!("its phoneme_id_map has no id for `{needed}`"));
            }
        }
        let inference = file.inference;
        Ok(Self {
            sample_rate: file.audio.sample_rate,
            espeak_voice,
            phoneme_type,
            noise_scale: inference.noise_scale,
            length_scale: inference.length_scale,
            noise_w: inference.noise_w,
            num_speakers: file.num_speakers.unwrap_or(1).max(1),
            speakers: file.speaker_id_map,
            ids,
        })
    }

    /// The model input for one sentence's phonemes, and how many phonemes
    /// the map lacked.
    pub(crate) fn ids(&self, phonemes: &[char]) -> (Vec<i64>, usize) {
        let id = |c: char| self.ids.get(&c).map_or(&[][..], Vec::as_slice);
        let (bos, eos, pad) = (id(BOS), id(EOS), id(PAD));
        let mut out = Vec::with_capacity(2 * phonemes.len() + 3);
        out.extend_from_slice(bos);
        out.extend_from_slice(pad);
        let mut missing = 0;
        for phoneme in phonemes {
            match self.ids.get(phoneme) {
                Some(ids) => {
                    out.extend_from_slice(ids);
                    out.extend_from_slice(pad);
                }
                None => missing += 1,
            }
        }
        out.extend_from_slice(eos);
        (out, missing)
    }
}

/// An espeak-ng voice name such as `en-us` or `pt-br`: never an option.
fn is_espeak_voice_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = r#"{
        "audio": {"sample_rate": 22050},
        "espeak": {"voice": "en-us"},
        "inference": {"noise_scale": 0.5, "length_scale": 1.1, "noise_w": 0.7},
        "phoneme_id_map": {"_": [0], "^": [1], "$": [2], " ": [3], "a": [14], "ˈ": [120]},
        "num_speakers": 1
    }"#;

    #[test]
    fn ids_are_bos_pad_then_each_phoneme_and_pad_then_eos() {
        let voice = VoiceConfig::parse(CONFIG).unwrap();
        assert_eq!(voice.sample_rate, 22050);
        assert_eq!(voice.espeak_voice, "en-us");
        assert_eq!(
            (voice.noise_scale, voice.length_scale, voice.noise_w),
            (0.5, 1.1, 0.7)
        );
        let (ids, missing) = voice.ids(&['ˈ', 'a', ' ', 'x', 'a']);
        assert_eq!(ids, [1, 0, 120, 0, 14, 0, 3, 0, 14, 0, 2]);
        assert_eq!(missing, 1);
        assert_eq!(voice.ids(&[]).0, [1, 0, 2]);
    }

    #[test]
    fn defaults_are_pipers() {
        let voice = VoiceConfig::parse(
            r#"{"audio": {"sample_rate": 16000}, "espeak": {"voice": "de"},
                "phoneme_id_map": {"_": [0], "^": [1], "$": [2]}}"#,
        )
        .unwrap();
        assert_eq!(
            (voice.noise_scale, voice.length_scale, voice.noise_w),
            (0.667, 1.0, 0.8)
        );
        assert_eq!(voice.num_speakers, 1);
        assert_eq!(voice.phoneme_type, PhonemeType::Espeak);
    }

    #[test]
    fn unusable_configs_are_refused_with_the_reason() {
        for (text, reason) in [
            ("{", "not valid"),
            (
                r#"{"audio": {"sample_rate": 22050}, "espeak": {"voice": "en-us"}, "phoneme_id_map": {"_": [0], "^": [1]}}"#,
                "`$`",
            ),
            (
                r#"{"audio": {"sample_rate": 100}, "espeak": {"voice": "en-us"}, "phoneme_id_map": {}}"#,
                "sample rate",
            ),
            (
                r#"{"audio": {"sample_rate": 22050}, "espeak": {"voice": "--path=/x"}, "phoneme_id_map": {"_": [0], "^": [1], "$": [2]}}"#,
                "not a voice name",
            ),
            (
                r#"{"audio": {"sample_rate": 22050}, "phoneme_type": "pinyin", "phoneme_id_map": {}}"#,
                "pinyin",
            ),
        ] {
            let err = VoiceConfig::parse(text).unwrap_err();
            assert!(err.contains(reason), "{text}: {err}");
        }
    }
}
