//! One CPU-heavy test at a time within a test binary.
//!
//! The speech engines (whisper.cpp's ggml, onnxruntime for kokoro, piper
//! and the voice models, llama.cpp) each start a thread per core and make
//! those threads spin-wait for one another between operations. Two such
//! tests at once on a two-core machine (libtest runs two by default) put
//! four spinning threads on two cores: each engine waits for a thread of
//! its own that the other engine's threads keep off the CPU, and
//! a second of work can take ten. A test that keeps every core busy takes
//! [`cores`] first and holds the guard to its end; tests that mostly wait
//! (servers, processes that sleep) go on beside it.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let _cores = oscova_test_support::cores::cores().await;
//! // ... run whisper, kokoro or llama.cpp ...
//! # });
//! ```

use tokio::sync::{Mutex, MutexGuard};

/// Waits until no other CPU-heavy test of this binary runs, and holds the
/// machine's cores for the caller until the guard is dropped (a failing
/// test drops it too, as it unwinds).
pub async fn cores() -> MutexGuard<'static, ()> {
    CORES.lock().await
}

/// [`cores`] for a test that is not async (it must not be called from
/// inside an async runtime).
pub fn cores_blocking() -> MutexGuard<'static, ()> {
    CORES.blocking_lock()
}

/// Held by the CPU-heavy test running now.
static CORES: Mutex<()> = Mutex::const_new(());
