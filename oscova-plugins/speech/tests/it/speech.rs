//! `speak` and `transcribe` through a real host and user scope, with the
//! real local providers (flite and pocketsphinx), on temporary roots.

use crate::support;

use std::fs;
use std::os::unix::fs::symlink;

use oscova_core::prelude::*;
use oscova_plugin_speech::{SpeechLimits, SpeechPlugin};
use oscova_test_support::text::{word_errors, words};
use serde_json::json;
use support::{Fixture, SPEAK, TRANSCRIBE, tone_wav};

#[test]
fn catalog_has_both_tools_with_their_approval_and_scope() {
    let f = Fixture::new();
    let tools: Vec<_> = f
        .scope
        .tools()
        .map(|t| {
            (
                t.wire_name().to_owned(),
                t.info().approval(),
                t.info().network_scope(),
            )
        })
        .collect();
    assert_eq!(
        tools,
        [
            (
                SPEAK.to_owned(),
                ToolApprovalMode::Required,
                NetworkScope::Internet
            ),
            (
                TRANSCRIBE.to_owned(),
                ToolApprovalMode::NotRequired,
                NetworkScope::Internet
            ),
        ]
    );
    let speak = f.host.tool(SPEAK).unwrap().info().input_schema().clone();
    assert_eq!(speak["required"], json!(["text", "path"]));
    for optional in ["voice", "provider", "overwrite", "create_dirs"] {
        assert!(speak["properties"][optional].is_object(), "{optional}");
    }
    let transcribe = f.host.tool(TRANSCRIBE).unwrap().info().input_schema();
    assert_eq!(transcribe["required"], json!(["path"]));
}

#[tokio::test]
async fn speak_then_transcribe_round_trips_a_sentence() {
    let f = Fixture::new();
    let sentence = "open the door and turn on the light";
    let spoken = f
        .ok(
            SPEAK,
            json!({"text": sentence, "path": "audio/door.wav", "create_dirs": true}),
        )
        .await;
    let d = &spoken.details;
    assert_eq!(d["path"], "audio/door.wav");
    assert_eq!(d["provider"], "flite");
    assert_eq!(d["voice"], "kal16");
    assert_eq!(d["sample_rate"], 16_000);
    assert_eq!(d["offline"], true);
    assert_eq!(d["replaced"], false);
    let seconds = d["duration_seconds"].as_f64().unwrap();
    assert!((1.0..10.0).contains(&seconds), "{seconds}");
    assert!(
        spoken.content.contains("`audio/door.wav`"),
        "{}",
        spoken.content
    );
    let wav = fs::read(f.root().join("audio/door.wav")).unwrap();
    assert_eq!(&wav[..4], b"RIFF");
    assert_eq!(d["bytes"], wav.len());
    // The same audio is the result's audio block.
    assert_eq!(spoken.blocks.len(), 1);
    assert_eq!(spoken.blocks[0].kind(), "audio");
    assert_eq!(spoken.blocks[0].mime_type(), Some("audio/wav"));
    assert_eq!(spoken.blocks[0].bytes(), Some(&wav[..]));

    let heard = f.ok(TRANSCRIBE, json!({"path": "audio/door.wav"})).await;
    // Whisper when this build has it and its model is installed.
    assert_eq!(
        heard.details["provider"],
        oscova_speech::providers::default_offline_recognizer()
    );
    assert_eq!(heard.details["path"], "audio/door.wav");
    assert_eq!(heard.details["text"], heard.content);
    println!("said {sentence:?}, heard {:?}", heard.content);
    let (reference, hypothesis) = (words(sentence), words(&heard.content));
    let errors = word_errors(&reference, &hypothesis);
    assert!(
        errors * 4 <= reference.len(),
        "{errors} word errors: said {sentence:?}, heard {:?}",
        heard.content
    );
}

#[tokio::test]
async fn other_voices_and_an_explicit_local_provider_work() {
    let f = Fixture::new();
    let r = f
        .ok(
            SPEAK,
            json!({"text": "hello", "path": "slt.wav", "voice": "slt", "provider": "flite"}),
        )
        .await;
    assert_eq!(r.details["voice"], "slt");
    assert_eq!(r.details["provider"], "flite");
    let heard = f
        .ok(
            TRANSCRIBE,
            json!({"path": "slt.wav", "provider": "pocketsphinx"}),
        )
        .await;
    assert_eq!(heard.details["provider"], "pocketsphinx");
}

/// The speech plugin's `transcribe` tool reaches the built-in whisper
/// recognizer through the routers: a local provider the user may pick.
/// Needs `scripts/ensure-whisper-model.sh` (scripts/test.sh runs it).
#[cfg(feature = "whisper")]
#[tokio::test]
async fn transcribe_can_pick_whisper() {
    let f = Fixture::new();
    let sentence = "please open the door and turn on the light";
    f.ok(SPEAK, json!({"text": sentence, "path": "door.wav"}))
        .await;
    let heard = f
        .ok(
            TRANSCRIBE,
            json!({"path": "door.wav", "provider": "whisper"}),
        )
        .await;
    assert_eq!(heard.details["provider"], "whisper");
    println!("said {sentence:?}, whisper heard {:?}", heard.content);
    let errors = word_errors(&words(sentence), &words(&heard.content));
    assert!(
        errors <= 2,
        "{errors} word errors: heard {:?}",
        heard.content
    );
}

#[tokio::test]
async fn an_existing_file_is_replaced_only_with_overwrite() {
    let f = Fixture::new();
    fs::write(f.root().join("keep.wav"), "precious").unwrap();
    f.refused(
        SPEAK,
        json!({"text": "hello", "path": "keep.wav"}),
        "`keep.wav` already exists; pass `overwrite: true`",
    )
    .await;
    assert_eq!(fs::read(f.root().join("keep.wav")).unwrap(), b"precious");
    let r = f
        .ok(
            SPEAK,
            json!({"text": "hello", "path": "keep.wav", "overwrite": true}),
        )
        .await;
    assert_eq!(r.details["replaced"], true);
    assert!(r.content.contains("replaced"), "{}", r.content);
    assert_eq!(&fs::read(f.root().join("keep.wav")).unwrap()[..4], b"RIFF");
}

#[tokio::test]
async fn speak_refuses_paths_that_leave_the_root() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("victim.wav"), "untouched").unwrap();
    let root = f.root();
    symlink(outside.path(), root.join("out")).unwrap();
    symlink(outside.path().join("victim.wav"), root.join("victim.wav")).unwrap();
    symlink(
        outside.path().join("missing.wav"),
        root.join("dangling.wav"),
    )
    .unwrap();
    symlink("missing.wav", root.join("dangling-inside.wav")).unwrap();
    let absolute = outside.path().join("abs.wav");
    let cases = [
        ("../escape.wav", "contains `..`"),
        ("audio/../../escape.wav", "contains `..`"),
        (absolute.to_str().unwrap(), "is an absolute path"),
        ("out/new.wav", "leads outside your files root"),
        ("out/sub/new.wav", "leads outside your files root"),
        ("victim.wav", "leads outside your files root"),
        ("dangling.wav", "leads outside your files root"),
        (
            "dangling-inside.wav",
            "symbolic link to something that does not exist",
        ),
        ("", "names no file"),
        ("nested/dir/a.wav", "the directory `nested` does not exist"),
    ];
    for (path, needle) in cases {
        for overwrite in [false, true] {
            f.refused(
                SPEAK,
                json!({"text": "hello", "path": path, "overwrite": overwrite}),
                needle,
            )
            .await;
        }
    }
    // Through a link, even with create_dirs, nothing is created outside.
    f.refused(
        SPEAK,
        json!({"text": "hello", "path": "out/deep/new.wav", "create_dirs": true}),
        "leads outside your files root",
    )
    .await;
    let mut names: Vec<_> = fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["victim.wav"]);
    assert_eq!(
        fs::read(outside.path().join("victim.wav")).unwrap(),
        b"untouched"
    );
    assert!(!root.join("nested").exists());
}

#[tokio::test]
async fn transcribe_refuses_paths_that_leave_the_root() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.wav");
    fs::write(&secret, tone_wav()).unwrap();
    let root = f.root();
    symlink(outside.path(), root.join("out")).unwrap();
    symlink(&secret, root.join("linked.wav")).unwrap();
    symlink(
        outside.path().join("missing.wav"),
        root.join("dangling.wav"),
    )
    .unwrap();
    symlink("missing.wav", root.join("dangling-inside.wav")).unwrap();
    let cases = [
        ("../secret.wav", "contains `..`"),
        (secret.to_str().unwrap(), "is an absolute path"),
        ("out/secret.wav", "leads outside your files root"),
        ("linked.wav", "leads outside your files root"),
        ("dangling.wav", "leads outside your files root"),
        (
            "dangling-inside.wav",
            "symbolic link to something that does not exist",
        ),
        ("nowhere.wav", "`nowhere.wav` does not exist"),
    ];
    for (path, needle) in cases {
        let r = f.refused(TRANSCRIBE, json!({"path": path}), needle).await;
        assert!(!r.content.contains(outside.path().to_str().unwrap()) || path.starts_with('/'));
    }
}

#[tokio::test]
async fn a_symlink_inside_the_root_is_followed() {
    let f = Fixture::new();
    let root = f.root();
    fs::create_dir(root.join("real")).unwrap();
    symlink(root.join("real"), root.join("alias")).unwrap();
    f.ok(SPEAK, json!({"text": "hello", "path": "alias/hi.wav"}))
        .await;
    assert!(root.join("real/hi.wav").is_file());
    f.ok(TRANSCRIBE, json!({"path": "alias/hi.wav"})).await;
}

#[tokio::test]
async fn a_denied_speak_never_writes() {
    let f = Fixture::with(|base| SpeechPlugin::per_user(base), false);
    let r = f
        .refused(
            SPEAK,
            json!({"text": "hello", "path": "denied.wav", "create_dirs": true}),
            "not approved",
        )
        .await;
    assert!(r.is_error);
    assert!(!f.root().join("denied.wav").exists());

    // No approval handler at all: denied too (fail closed).
    let base = tempfile::tempdir().unwrap();
    let host = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(SpeechPlugin::per_user(base.path()))
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("alice"));
    let r = scope
        .invoke(
            SPEAK,
            json!({"text": "hello", "path": "a/b.wav", "create_dirs": true}),
        )
        .await;
    assert!(
        r.is_error && r.content.contains("not approved"),
        "{}",
        r.content
    );
    assert!(!base.path().join("alice/a").exists());
    // transcribe needs no approval.
    let r = scope.invoke(TRANSCRIBE, json!({"path": "x.wav"})).await;
    assert!(r.content.contains("does not exist"), "{}", r.content);
}

#[tokio::test]
async fn an_unknown_voice_is_an_error_listing_the_voices() {
    let f = Fixture::new();
    let r = f
        .refused(
            SPEAK,
            json!({"text": "hello", "path": "voices/vader.wav", "voice": "vader", "create_dirs": true}),
            "unknown voice `vader`; available voices: kal16, slt, rms, awb, kal",
        )
        .await;
    assert!(r.content.contains("provider `flite`"), "{}", r.content);
    assert!(r.content.contains("leave `voice` out"), "{}", r.content);
    assert!(!f.root().join("voices").exists());
}

#[tokio::test]
async fn transcribing_something_that_is_not_wav_says_so() {
    let f = Fixture::new();
    let root = f.root();
    fs::write(root.join("notes.txt"), "buy milk\n").unwrap();
    fs::write(root.join("fake.wav"), "definitely not audio").unwrap();
    fs::write(root.join("song.mp3"), b"ID3\x04\0\0\0\0\0\0garbage").unwrap();
    fs::write(root.join("empty.wav"), b"").unwrap();
    fs::write(root.join("broken.wav"), b"RIFF\x24\0\0\0WAVEfmt ").unwrap();
    fs::create_dir(root.join("folder")).unwrap();
    let cases = [
        (
            "notes.txt",
            "`notes.txt` is not a WAV file (it looks like text)",
        ),
        (
            "fake.wav",
            "`fake.wav` is not a WAV file (it looks like text)",
        ),
        (
            "song.mp3",
            "`song.mp3` is not a WAV file (it looks like MP3 audio)",
        ),
        ("empty.wav", "`empty.wav` is not a WAV file (it is empty)"),
        ("broken.wav", "its WAV header cannot be read"),
        ("folder", "`folder` is a directory"),
    ];
    for (path, needle) in cases {
        let r = f.refused(TRANSCRIBE, json!({"path": path}), needle).await;
        if needle.contains("not a WAV") {
            assert!(
                r.content.contains("transcribe takes WAV audio"),
                "{}",
                r.content
            );
        }
    }
}

#[tokio::test]
async fn text_and_audio_caps_apply_before_any_work() {
    let limits = SpeechLimits::default()
        .max_text_chars(10)
        .max_audio_bytes(100);
    let f = Fixture::with(|base| SpeechPlugin::per_user(base).limits(limits), true);
    f.refused(
        SPEAK,
        json!({"text": "this is far too long", "path": "long.wav"}),
        "the text has 20 characters; at most 10",
    )
    .await;
    f.refused(
        SPEAK,
        json!({"text": "  \n ", "path": "blank.wav"}),
        "the text is empty",
    )
    .await;
    assert!(!f.root().join("long.wav").exists());
    fs::write(f.root().join("big.wav"), tone_wav()).unwrap();
    f.refused(
        TRANSCRIBE,
        json!({"path": "big.wav"}),
        "`big.wav` has 16044 bytes; at most 100 bytes",
    )
    .await;
}

/// Issue 24: the plugin's own cap could be raised past anything; the
/// synthesis router's 5,000 characters hold for every caller, before
/// any provider runs or file is made.
#[tokio::test]
async fn the_routers_cap_holds_whatever_the_plugins_limit() {
    let limits = SpeechLimits::default().max_text_chars(usize::MAX);
    let f = Fixture::with(|base| SpeechPlugin::per_user(base).limits(limits), true);
    let text = "word ".repeat(1_001);
    f.refused(
        SPEAK,
        json!({"text": text, "path": "long.wav"}),
        "the text has 5005 characters, more than the limit of 5000 characters",
    )
    .await;
    assert!(!f.root().join("long.wav").exists());
}

#[tokio::test]
async fn a_user_without_a_root_gets_no_speech_tools() {
    let host = PluginHost::builder()
        .no_linked_plugins()
        .plugin_instance(SpeechPlugin::with_resolver(|user| {
            (user.id() == "alice").then(|| std::env::temp_dir().join("unused"))
        }))
        .build()
        .unwrap();
    let scope = host.user_scope(UserInfo::new("guest"));
    assert_eq!(scope.tools().count(), 0);
    assert!(
        scope.diagnostics().iter().any(|d| d
            .to_string()
            .contains("no files root is configured for user `guest`")),
        "{:?}",
        scope.diagnostics()
    );
}
