//! Special files and hard links inside the root (issue 13): a FIFO is
//! refused at once, never opened to block, whether it is spoken into or
//! transcribed; a file with a second name outside the root is refused.

#![cfg(unix)]

use crate::support;

use std::fs;
use std::time::{Duration, Instant};

use oscova_plugin_speech::SpeechPlugin;
use serde_json::json;
use support::{Fixture, SPEAK, TRANSCRIBE, tone_wav};

#[tokio::test]
async fn fifos_are_refused_at_once() {
    let f = Fixture::new();
    let pipe = f.root().join("pipe.wav");
    let status = std::process::Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .unwrap();
    assert!(status.success());
    let started = Instant::now();
    for overwrite in [false, true] {
        f.refused(
            SPEAK,
            json!({"text": "hello", "path": "pipe.wav", "overwrite": overwrite}),
            "not a regular file",
        )
        .await;
    }
    f.refused(
        TRANSCRIBE,
        json!({"path": "pipe.wav"}),
        "not a regular file",
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn hard_links_are_refused_unless_allowed() {
    let outside = tempfile::tempdir().unwrap();
    let audio = outside.path().join("private.wav");
    fs::write(&audio, tone_wav()).unwrap();
    let f = Fixture::new();
    fs::hard_link(&audio, f.root().join("linked.wav")).unwrap();
    f.refused(TRANSCRIBE, json!({"path": "linked.wav"}), "hard link")
        .await;
    f.refused(
        SPEAK,
        json!({"text": "hello", "path": "linked.wav", "overwrite": true}),
        "hard link",
    )
    .await;
    assert_eq!(
        fs::read(&audio).unwrap(),
        tone_wav(),
        "the outside file changed"
    );

    let allowing = Fixture::with(
        |base| SpeechPlugin::per_user(base).allow_hard_links(true),
        true,
    );
    fs::hard_link(&audio, allowing.root().join("linked.wav")).unwrap();
    let r = allowing
        .call(TRANSCRIBE, json!({"path": "linked.wav"}))
        .await;
    assert!(!r.content.contains("hard link"), "{}", r.content);
}
