//! Shared pieces of the speech plugin tests: a host fixture on a temporary
//! base directory, word error counting, and a loopback OpenAI-compatible
//! server that counts every connection it accepts.

#![allow(dead_code, unreachable_pub)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use oscova_core::prelude::*;
use oscova_core::{ApprovalRequest, SecretString, UserScope};
use oscova_plugin_speech::SpeechPlugin;
use oscova_speech::{Pcm16kMono, encode_wav};
use serde_json::Value;
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

pub const SPEAK: &str = "oscova_speech__speech__speak";
pub const TRANSCRIBE: &str = "oscova_speech__speech__transcribe";

/// The API key the fixture's credential resolver hands out as `openai.api_key`.
pub const KEY: &str = "sk-test-0123456789abcdef";

pub struct Fixture {
    pub base: TempDir,
    pub host: PluginHost,
    pub scope: UserScope,
}

impl Fixture {
    /// Default settings, approvals granted.
    pub fn new() -> Self {
        Self::with(|base| SpeechPlugin::per_user(base), true)
    }

    /// `make` gets the base directory; `approve` is the approval handler's answer.
    pub fn with(make: impl FnOnce(&Path) -> SpeechPlugin, approve: bool) -> Self {
        let base = tempfile::tempdir().unwrap();
        let host = PluginHost::builder()
            .plugins(oscova_core::linked_plugins![SpeechPlugin])
            .plugin_instance(make(base.path()))
            .approval_handler(move |_: &ApprovalRequest<'_>| approve)
            .credentials(|_: &UserInfo, key: &str| {
                (key == "openai.api_key").then(|| SecretString::from(KEY))
            })
            .strict(true)
            .build()
            .unwrap();
        let scope = host.user_scope(UserInfo::new("alice")).unwrap();
        Self { base, host, scope }
    }

    /// Alice's root, created.
    pub fn root(&self) -> PathBuf {
        let root = self.base.path().join("alice");
        fs::create_dir_all(&root).unwrap();
        root
    }

    pub async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.scope.invoke(tool, args).await
    }

    pub async fn ok(&self, tool: &str, args: Value) -> ToolResult {
        let r = self.call(tool, args).await;
        assert!(!r.is_error, "{tool}: {}", r.content);
        r
    }

    /// An error result whose content contains `needle`.
    pub async fn refused(&self, tool: &str, args: Value, needle: &str) -> ToolResult {
        let r = self.call(tool, args).await;
        assert!(r.is_error, "{tool} should fail: {}", r.content);
        assert!(
            r.content.contains(needle),
            "{tool}: {:?} lacks {needle:?}",
            r.content
        );
        r
    }
}

/// Half a second of a quiet tone, as WAV.
pub fn tone_wav() -> Vec<u8> {
    let samples = (0..8_000)
        .map(|i| ((i as f64 * 0.05).sin() * 3_000.0) as i16)
        .collect();
    encode_wav(&Pcm16kMono { samples })
}

/// Lowercase words without punctuation.
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric() || *c == '\'')
                .collect::<String>()
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Word-level edit distance.
pub fn word_errors(reference: &[String], hypothesis: &[String]) -> usize {
    let mut row: Vec<usize> = (0..=hypothesis.len()).collect();
    for (i, r) in reference.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, h) in hypothesis.iter().enumerate() {
            let next = (diagonal + usize::from(r != h))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[hypothesis.len()]
}

/// One request the loopback server read.
#[derive(Debug, Clone)]
pub struct Seen {
    pub target: String,
    pub authorization: Option<String>,
}

/// An OpenAI-compatible server on 127.0.0.1 that counts connections:
/// `/v1/audio/transcriptions` answers `{"text": ...}`, `/v1/audio/speech`
/// answers half a second of WAV.
pub struct Loopback {
    pub port: u16,
    connections: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Loopback {
    pub async fn start(transcript: &'static str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (count, log) = (connections.clone(), seen.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                count.fetch_add(1, Ordering::SeqCst);
                let log = log.clone();
                tokio::spawn(async move {
                    let Some(seen) = read_request(&mut socket).await else {
                        return;
                    };
                    let (content_type, body) = if seen.target.ends_with("/transcriptions") {
                        (
                            "application/json",
                            serde_json::json!({ "text": transcript })
                                .to_string()
                                .into_bytes(),
                        )
                    } else {
                        ("audio/wav", tone_wav())
                    };
                    log.lock().unwrap().push(seen);
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = socket.write_all(head.as_bytes()).await;
                    let _ = socket.write_all(&body).await;
                    let _ = socket.shutdown().await;
                });
            }
        });
        Self {
            port,
            connections,
            seen,
        }
    }

    /// `http://{host}:{port}` for this server's port.
    pub fn url(&self, host: &str) -> String {
        format!("http://{host}:{}", self.port)
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// Reads one request's head and body; `None` if the client went away.
async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let header = |name: &str| {
        head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    };
    let length: usize = header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let target = head
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    Some(Seen {
        target,
        authorization: header("authorization"),
    })
}
