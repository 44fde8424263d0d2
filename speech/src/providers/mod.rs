//! The built-in providers, one folder each.
pub(crate) mod flite;
#[cfg(feature = "piper")]
pub(crate) mod kokoro;
pub(crate) mod openai;
#[cfg(feature = "piper")]
pub(crate) mod piper;
#[cfg(feature = "pocketsphinx")]
pub(crate) mod pocketsphinx;
#[cfg(feature = "whisper")]
pub(crate) mod whisper;
