//! Hand-written bindings to libpocketsphinx and libsphinxbase 0.8+5prealpha,
//! and the small safe wrapper [`Decoder`] that the rest of the crate uses.
//!
//! Rules: this is the only module with `unsafe` code; every `unsafe` block
//! says why it is sound. The declarations match the 5prealpha headers
//! (`pocketsphinx.h`, `sphinxbase/cmd_ln.h`, `sphinxbase/err.h`), not
//! pocketsphinx 5.x. Raw pointers never leave this module. Decoders are
//! created one at a time under [`INIT_LOCK`], because initialisation touches
//! sphinxbase globals (log and debug settings); a finished decoder is used by
//! one thread at a time (the caller holds it in a `Mutex`). sphinxbase logging
//! is switched off once, process-wide, with `err_set_logfp(NULL)` rather than
//! `-logfn /dev/null`: every `-logfn` swaps and `fclose`s the global log file,
//! which would race with a decoder logging in another thread, and a failing
//! `-logfn` makes sphinxbase call `exit()`.

use std::ffi::{CStr, CString, OsString, c_char, c_int, c_void};
use std::marker::{PhantomData, PhantomPinned};
use std::os::unix::ffi::OsStrExt;
use std::ptr::NonNull;
use std::sync::{Mutex, Once, PoisonError};

use crate::error::EngineError;

/// Opaque `ps_decoder_t`.
#[repr(C)]
struct PsDecoder {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// Opaque `cmd_ln_t`.
#[repr(C)]
struct CmdLn {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// Opaque `arg_t` (only ever passed through by pointer).
#[repr(C)]
struct ArgT {
    _data: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

// SAFETY: the signatures are copied from the 5prealpha headers installed by
// libpocketsphinx-dev and libsphinxbase-dev (int32 = i32, int16 = i16,
// size_t = usize, FILE* passed as an untyped pointer).
unsafe extern "C" {
    fn ps_args() -> *const ArgT;
    fn cmd_ln_parse_r(
        inout_cmdln: *mut CmdLn,
        defn: *const ArgT,
        argc: i32,
        argv: *mut *mut c_char,
        strict: i32,
    ) -> *mut CmdLn;
    fn cmd_ln_free_r(cmdln: *mut CmdLn) -> c_int;
    fn ps_init(config: *mut CmdLn) -> *mut PsDecoder;
    fn ps_free(ps: *mut PsDecoder) -> c_int;
    fn ps_start_utt(ps: *mut PsDecoder) -> c_int;
    fn ps_process_raw(
        ps: *mut PsDecoder,
        data: *const i16,
        n_samples: usize,
        no_search: c_int,
        full_utt: c_int,
    ) -> c_int;
    fn ps_end_utt(ps: *mut PsDecoder) -> c_int;
    fn ps_get_hyp(ps: *mut PsDecoder, out_best_score: *mut i32) -> *const c_char;
    fn err_set_logfp(stream: *mut c_void);
}

/// Serialises decoder creation (see the module rules).
static INIT_LOCK: Mutex<()> = Mutex::new(());

/// Switches sphinxbase logging off once per process.
static SILENCE_LOG: Once = Once::new();

/// A loaded pocketsphinx decoder with its configuration.
pub(super) struct Decoder {
    ps: NonNull<PsDecoder>,
    config: NonNull<CmdLn>,
    /// The option strings. sphinxbase keeps pointers to the option *names*
    /// as hash keys in `config`, so they must outlive it; they are dropped
    /// after `Drop::drop` has freed the decoder and the configuration.
    _argv: Vec<CString>,
}

// SAFETY: a pocketsphinx decoder has no thread affinity (no thread-locals,
// no callbacks into the creating thread); it only must not be used by two
// threads at once, which `&mut self` on every method guarantees.
unsafe impl Send for Decoder {}

impl Decoder {
    /// Parses `options` (name, value pairs such as `-hmm`, path) and loads
    /// the decoder. Loading reads the model files and takes about a second.
    pub(super) fn new(options: &[(&str, OsString)]) -> Result<Self, EngineError> {
        let mut argv = Vec::with_capacity(options.len() * 2);
        for (name, value) in options {
            argv.push(c_string(name.as_bytes())?);
            argv.push(c_string(value.as_bytes())?);
        }
        let mut argv_ptrs: Vec<*mut c_char> = argv.iter().map(|s| s.as_ptr().cast_mut()).collect();
        let argc = i32::try_from(argv_ptrs.len()).map_err(|_| init_error("too many options"))?;

        let _guard = INIT_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
        SILENCE_LOG.call_once(|| {
            // SAFETY: NULL is the documented "disable logging" value; this
            // runs before any decoder exists, so no one is logging yet.
            unsafe { err_set_logfp(std::ptr::null_mut()) };
        });

        // SAFETY: `ps_args()` returns a pointer to a static definition table.
        // `argv_ptrs` holds `argc` valid NUL-terminated strings; sphinxbase
        // only reads them (the `char *` is historical) and keeps pointers to
        // them, which stay valid because `argv` moves into the returned
        // `Decoder` (moving a Vec does not move its CString heap buffers).
        // strict = 1 rejects unknown option names.
        let config = unsafe {
            cmd_ln_parse_r(
                std::ptr::null_mut(),
                ps_args(),
                argc,
                argv_ptrs.as_mut_ptr(),
                1,
            )
        };
        let config =
            NonNull::new(config).ok_or_else(|| init_error("the decoder options were rejected"))?;

        // SAFETY: `config` is a live configuration from `cmd_ln_parse_r`;
        // `ps_init` takes its own reference (`cmd_ln_retain`).
        let ps = unsafe { ps_init(config.as_ptr()) };
        let Some(ps) = NonNull::new(ps) else {
            // SAFETY: `config` is live and ours; nothing else refers to it.
            unsafe { cmd_ln_free_r(config.as_ptr()) };
            return Err(init_error(
                "the model files could not be loaded (wrong format, or a dictionary and language model that do not match)",
            ));
        };
        Ok(Self {
            ps,
            config,
            _argv: argv,
        })
    }

    /// Decodes one whole utterance of 16 kHz mono samples and returns the
    /// best hypothesis (empty when nothing was recognized).
    pub(super) fn decode(&mut self, samples: &[i16]) -> Result<String, EngineError> {
        let ps = self.ps.as_ptr();
        // SAFETY: `ps` is a live decoder used only through `&mut self`.
        let rc = unsafe { ps_start_utt(ps) };
        if rc < 0 {
            return Err(EngineError::Decode {
                call: "ps_start_utt",
                code: rc,
            });
        }
        // SAFETY: `samples` is a valid slice of `len` i16 values for the
        // duration of the call; pocketsphinx copies what it needs.
        // no_search = 0, full_utt = 1: the whole utterance is in one buffer.
        let processed = unsafe { ps_process_raw(ps, samples.as_ptr(), samples.len(), 0, 1) };
        // SAFETY: as above; ending the utterance even after a failed
        // `ps_process_raw` leaves the decoder ready for the next one.
        let ended = unsafe { ps_end_utt(ps) };
        if processed < 0 {
            return Err(EngineError::Decode {
                call: "ps_process_raw",
                code: processed,
            });
        }
        if ended < 0 {
            return Err(EngineError::Decode {
                call: "ps_end_utt",
                code: ended,
            });
        }
        let mut score = 0i32;
        // SAFETY: `ps` is live; `score` is a valid out-pointer.
        let hyp = unsafe { ps_get_hyp(ps, &mut score) };
        if hyp.is_null() {
            return Ok(String::new());
        }
        // SAFETY: a non-NULL hypothesis is a NUL-terminated string owned by
        // the decoder and valid until its next call; it is copied at once.
        let text = unsafe { CStr::from_ptr(hyp) }
            .to_string_lossy()
            .into_owned();
        Ok(text)
    }
}

impl Drop for Decoder {
    fn drop(&mut self) {
        // SAFETY: both pointers are live and owned by `self`; the decoder is
        // freed first because it holds a reference to the configuration, and
        // the option strings (`_argv`) are dropped only after this returns.
        unsafe {
            ps_free(self.ps.as_ptr());
            cmd_ln_free_r(self.config.as_ptr());
        }
    }
}

fn c_string(bytes: &[u8]) -> Result<CString, EngineError> {
    CString::new(bytes).map_err(|_| init_error("an option or model path contains a NUL byte"))
}

fn init_error(reason: &str) -> EngineError {
    EngineError::DecoderInit {
        reason: reason.to_owned(),
    }
}
