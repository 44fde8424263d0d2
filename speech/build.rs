//! Links libpocketsphinx and libsphinxbase (Debian bookworm: 0.8+5prealpha).
//!
//! Rules: the libraries are found with pkg-config (`pocketsphinx.pc` pulls in
//! `sphinxbase.pc`). The declarations in `src/providers/pocketsphinx/ffi.rs` match the
//! 5prealpha API (`ps_init(cmd_ln_t *)`), not pocketsphinx 5.x. When
//! pkg-config cannot find the libraries the build stops with a message naming
//! the Debian packages to install, never a panic backtrace.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    // Without the `pocketsphinx` feature nothing is linked.
    if std::env::var_os("CARGO_FEATURE_POCKETSPHINX").is_none() {
        return;
    }
    if let Err(err) = pkg_config::Config::new().probe("pocketsphinx") {
        println!(
            "cargo::error=libpocketsphinx was not found by pkg-config ({err}); \
             install the Debian packages: apt-get install libpocketsphinx-dev \
             libsphinxbase-dev pkg-config"
        );
    }
}
