//! What the onnxruntime voices (the `kokoro` and `piper` providers) share:
//! onnxruntime, loaded at run time (`runtime`), text cut into clauses and
//! phonemized by the `espeak-ng` program (`phonemes`), float audio as
//! 16-bit WAV, the options both read the same way (`onnxruntime`,
//! `threads`), where their files are installed, and one error for all of
//! it ([`OnnxError`](error::OnnxError)). Built with the feature `piper`.
//!
//! Rules: one cache folder, the one `scripts/ensure-piper.sh` and
//! `scripts/ensure-kokoro.sh` install into: `$XDG_CACHE_HOME/oscova` when
//! `XDG_CACHE_HOME` is an absolute path, else `~/.cache/oscova` (the XDG
//! base directory rule); the library in `onnxruntime/1.32.0/` beneath it,
//! or where `ORT_DYLIB_PATH` says (the variable the `ort` crate itself
//! reads). One library per process serves every provider (see
//! `runtime`). A provider's own files (voices, models) are its own
//! module's business; it asks this one only for the cache folder.

pub(crate) mod error;
pub(crate) mod phonemes;
pub(crate) mod runtime;

use std::path::PathBuf;

/// The onnxruntime release the install scripts fetch.
const ONNXRUNTIME_VERSION: &str = "1.32.0";

/// The variable that names another onnxruntime library (`ort`'s own).
pub(crate) const ORT_DYLIB_ENV: &str = "ORT_DYLIB_PATH";

/// What installs espeak-ng.
pub(crate) const ESPEAK_INSTALL_COMMAND: &str = "apt-get install espeak-ng espeak-ng-data";

/// `$XDG_CACHE_HOME/oscova`, else `~/.cache/oscova`.
pub(crate) fn cache_root() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|home| home.join(".cache"))
    })?;
    Some(base.join("oscova"))
}

/// The onnxruntime library: `ORT_DYLIB_PATH`, else the cache's.
pub(crate) fn default_onnxruntime() -> Option<PathBuf> {
    std::env::var_os(ORT_DYLIB_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            cache_root().map(|root| {
                root.join("onnxruntime")
                    .join(ONNXRUNTIME_VERSION)
                    .join(format!("libonnxruntime.so.{ONNXRUNTIME_VERSION}"))
            })
        })
}
