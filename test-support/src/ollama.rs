//! What an Ollama server answers, for tests of the code that talks to one
//! (the `ollama` provider and the CLI's `models` commands): one script,
//! not a copy per test crate.

use serde_json::{Value, json};

use crate::http::Reply;

/// `GET /api/tags` with one installed model, `llama3.2:latest`.
pub fn tags() -> Reply {
    Reply::json(
        200,
        json!({"models": [
            {"name": "llama3.2:latest", "model": "llama3.2:latest", "size": 2_019_393_189u64,
             "digest": "a80c4f17acd5", "modified_at": "2025-04-01T10:00:00Z"},
        ]}),
    )
}

/// The three layers [`pull_lines`] pulls by default: digest and size.
pub const LAYERS: [(&str, u64); 3] = [
    ("dde5aa3fc5ff", 2_019_377_376),
    ("966de95ca8a6", 1_429),
    ("fcc5a6bec9da", 7_711),
];

/// A pull of `layers` as Ollama streams it: the manifest, each layer in
/// four steps, then verification and success.
pub fn pull_lines(layers: &[(&str, u64)]) -> Vec<Value> {
    let mut lines = vec![json!({"status": "pulling manifest"})];
    for &(digest, total) in layers {
        let status = format!("pulling {digest}");
        let digest = format!("sha256:{digest}0123456789abcdef");
        lines.push(json!({"status": status, "digest": digest, "total": total}));
        for step in 1..=4u64 {
            lines.push(json!({
                "status": status, "digest": digest, "total": total, "completed": total * step / 4,
            }));
        }
    }
    lines.push(json!({"status": "verifying sha256 digest"}));
    lines.push(json!({"status": "writing manifest"}));
    lines.push(json!({"status": "success"}));
    lines
}

/// `lines` as an NDJSON body.
pub fn ndjson(lines: &[Value]) -> Vec<u8> {
    lines
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .into_bytes()
}
