//! Shared pieces of the speech plugin tests: a host fixture on a temporary
//! base directory, and a loopback OpenAI-compatible server (the shared
//! `oscova_test_kit::http` one) that counts every connection it accepts.

#![allow(dead_code, unreachable_pub)]

use std::fs;
use std::path::{Path, PathBuf};

use oscova_core::prelude::*;
use oscova_core::{ApprovalRequest, SecretString, UserScope};
use oscova_plugin_speech::{SpeechPlugin, SpeechSettings};
use oscova_speech::{SpeechProviderConfig, wav::Pcm16kMono, wav::encode_wav};
use oscova_test_kit::http::{Reply, TestServer};
use serde_json::{Value, json};
use tempfile::TempDir;

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
    /// Default settings with flite (`kal16`) speaking, approvals granted:
    /// the default synthesizer is kokoro where it is installed, and these
    /// tests check flite's voices, rate and errors.
    pub fn new() -> Self {
        Self::with(
            |base| {
                SpeechPlugin::per_user(base).settings(|_| {
                    SpeechSettings::default()
                        .synthesis(SpeechProviderConfig::new("flite").voice("kal16"))
                })
            },
            true,
        )
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
        let scope = host.user_scope(UserInfo::new("alice"));
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

/// An OpenAI-compatible server on 127.0.0.1 that counts connections:
/// `/v1/audio/transcriptions` answers `{"text": transcript}`, anything else
/// (`/v1/audio/speech`) half a second of WAV; each answer closes its
/// connection, so every call shows as one.
pub async fn loopback(transcript: &'static str) -> TestServer {
    TestServer::start(move |request| {
        if request.path.ends_with("/transcriptions") {
            Reply::json(200, json!({ "text": transcript })).closing()
        } else {
            Reply::bytes(200, "audio/wav", tone_wav()).closing()
        }
    })
    .await
}
