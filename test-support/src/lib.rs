//! Helpers for Oscova's own tests, shared by the workspace's crates so
//! that each test keeps only its assertions and its data.
//!
//! **For tests only.** Use it as a `[dev-dependencies]` entry; it is not
//! published. A helper that finds something wrong panics with a message,
//! because in a test that is the failure to report; that is why this crate,
//! unlike the library crates, asserts and unwraps.
//!
//! It does not depend on `oscova-core`, because `oscova-core`'s own unit
//! tests use it: it speaks JSON, HTTP and plain text only.
//!
//! # A server a test talks to
//!
//! [`http::TestServer`] listens on 127.0.0.1 with an ephemeral port,
//! records every request and answers with what the test's handler returns.
//! It is the published test kit's server (`oscova_test_kit::http`), its
//! source compiled into this crate too so that `oscova-core`'s own tests,
//! which cannot depend on the kit (the kit depends on `oscova-core`), get
//! the same one:
//!
//! ```
//! use oscova_test_support::http::{Framing, Reply, TestServer, awkward};
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = TestServer::start(|request| match request.path.as_str() {
//!     "/api/tags" => Reply::json(200, json!({"models": []})),
//!     // A streamed body, cut at awkward byte boundaries.
//!     _ => Reply::stream("application/x-ndjson", Framing::Chunked, awkward(b"{\"done\":true}\n")),
//! })
//! .await;
//! let url = format!("{}/api/tags", server.url());
//! # let _ = url;
//! // ... point the code under test at `url`, then check what it sent:
//! assert!(server.requests().is_empty());
//! # });
//! ```
//!
//! # Addresses that are not loopback
//!
//! [`netns::run`] runs one test again inside a network namespace of its
//! own, with private, link-local or metadata addresses on its loopback
//! device, so a test can listen there without touching a real network.
//!
//! # A umask of the test's choosing
//!
//! [`umask::run`] runs one test again in a process of its own under a
//! given umask, so a test of the modes files are created with does not
//! depend on the umask it was started under.
//!
//! # One CPU-heavy test at a time
//!
//! [`cores::cores`] serializes, within one test binary, the tests that keep
//! every core busy (whisper, onnxruntime, llama.cpp), whose spinning
//! threads slow each other down many times over when two run at once.
//!
//! # The rules of each model API's schemas
//!
//! [`schema_rules`] lists, for a JSON Schema or a whole exported tool entry,
//! every rule of the OpenAI, Gemini or Anthropic tool format it breaks:
//!
//! ```
//! use oscova_test_support::schema_rules;
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"when": {"type": "string", "format": "date"}},
//!     "required": ["when"],
//!     "additionalProperties": false
//! });
//! assert_eq!(schema_rules::openai_problems(&schema), Vec::<String>::new());
//! assert_eq!(
//!     schema_rules::gemini_problems(&schema),
//!     [
//!         // The root's pointer is the empty string.
//!         ": keyword `additionalProperties` not in the Gemini Schema",
//!         r#"/properties/when: format `date` not documented for Some("string")"#,
//!     ],
//! );
//! ```
//!
//! # Counting a recognizer's mistakes
//!
//! [`text::words`] and [`text::word_errors`] give a word error count:
//!
//! ```
//! use oscova_test_support::text::{word_errors, words};
//!
//! assert_eq!(word_errors(&words("Open the door."), &words("open a door")), 1);
//! ```
//!
//! [`librivox`] has real read speech to score against: five LibriVox clips
//! with their references, and [`librivox::joined`] for a recording longer
//! than one 30-second recognition window.

pub mod a2a_js;
pub mod chromium;
pub mod cores;
// The loopback HTTP server of `oscova-test-kit`: the same source.
#[path = "../../oscova-test-kit/src/http/mod.rs"]
pub mod http;
pub mod librivox;
pub mod netns;
pub mod oidc;
pub mod ollama;
pub mod pi;
pub mod postgres;
pub mod python;
pub mod schema_rules;
pub mod text;
pub mod trace;
pub mod umask;

/// Builds the workspace example `name` and returns its path in
/// `profile_dir` (`target/debug` or `target/release`, the directory above
/// the calling test's `deps/`), building `--release` when `profile_dir`
/// is `release`.
///
/// `cargo test --all-targets` compiles examples as tests, not as programs,
/// so a test that runs one builds it. With `--workspace`, the build
/// resolves features as the test run did and reuses its artifacts: a few
/// seconds, where `-p <package>` resolves them anew and rebuilds much of
/// the tree.
///
/// # Panics
///
/// When cargo cannot run or the build fails.
pub fn build_example(name: &str, profile_dir: &std::path::Path) -> std::path::PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut build = std::process::Command::new(cargo);
    build.args(["build", "-q", "--workspace", "--example", name]);
    if profile_dir.file_name().is_some_and(|d| d == "release") {
        build.arg("--release");
    }
    let status = build.status().expect("cargo runs");
    assert!(status.success(), "building the example `{name}` failed");
    let path = profile_dir.join("examples").join(name);
    assert!(path.is_file(), "no {}", path.display());
    path
}
