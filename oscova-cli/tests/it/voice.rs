//! `oscova voice` end to end: the real binary, a recorded conversation
//! (two LibriVox sentences with pauses) played in at its pace, Silero VAD
//! and a fixed silence ending each turn, whisper hearing, an
//! OpenAI-compatible model on 127.0.0.1, flite answering; the session in
//! SQLite. The interruption itself is the library's test
//! (`oscova-agent`'s `voice::`), where the timing is the test's to set.

use oscova_speech::wav::{Pcm16kMono, decode_wav, encode_wav};
use oscova_test_support::http::TestServer;
use oscova_test_support::librivox::{clips, score};

use crate::sessions::{cmd, json_of, sent, sqlite_config, text_reply};
use crate::support::run_async;

const KEY: &str = "sk-voice-test-0123456789abcdef";

/// `oscova voice` in session `talk` on the OpenAI-compatible model at
/// `url`, from `input` to `output`, heard by whisper, with `more` flags.
fn voice(
    config: &std::path::Path,
    url: &str,
    input: &std::path::Path,
    output: &std::path::Path,
    more: &[&str],
) -> std::process::Command {
    let mut args = vec![
        "voice",
        "--provider",
        "openai",
        "--endpoint",
        url,
        "--model",
        "gpt-test",
        "--session",
        "talk",
        "--input",
        input.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
        "--hear",
        "whisper",
    ];
    args.extend(more);
    let mut command = cmd(config, &args);
    command.env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", KEY);
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_conversation_gets_one_spoken_answer_per_turn() {
    let _cores = oscova_test_support::cores::cores().await;
    let config = sqlite_config();
    let dir = config.parent().unwrap().to_owned();
    let server = TestServer::start(|request: &oscova_test_support::http::Request| {
        let said = sent(request).last().cloned().unwrap_or_default().1;
        text_reply(&format!(
            "You said {} words.",
            said.split_whitespace().count()
        ))
    })
    .await;

    // Half a second of silence, a sentence, six seconds (time to hear it
    // and answer, on a busy machine too), another, two.
    let all = clips();
    let (first, second) = (&all[1], &all[4]);
    let silence = |seconds: f32| vec![0i16; (seconds * 16_000.0) as usize];
    let mut samples = silence(0.5);
    samples.extend(decode_wav(&first.wav).unwrap().samples);
    samples.extend(silence(6.0));
    samples.extend(decode_wav(&second.wav).unwrap().samples);
    samples.extend(silence(2.0));
    let input = dir.join("conversation.wav");
    std::fs::write(&input, encode_wav(&Pcm16kMono { samples })).unwrap();
    let output = dir.join("agent.wav");

    let command = voice(
        &config,
        &server.url(),
        &input,
        &output,
        &["--say", "flite", "--voice", "kal16", "--silence-ms", "700"],
    );
    let (code, out, err) = run_async(command, None).await;
    assert_eq!(code, 0, "{out}\n{err}");

    // What the person said, heard within 10% word error rate.
    let heard: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix("oscova: you: "))
        .collect();
    assert_eq!(heard.len(), 2, "one transcript per turn: {err}");
    let (mut errors, mut words) = (0, 0);
    for (text, clip) in heard.iter().zip([first, second]) {
        let (e, w) = score(&clip.reference, text);
        errors += e;
        words += w;
    }
    assert!(
        errors * 10 <= words,
        "{errors} errors in {words} words: {err}"
    );
    // One answer per turn, spoken whole.
    let answers: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix("oscova: agent: "))
        .collect();
    assert_eq!(answers.len(), 2, "{err}");
    assert!(answers.iter().all(|a| a.starts_with("You said ")), "{err}");
    assert_eq!(server.requests().len(), 2);
    // The agent's voice in the output file: two short answers.
    let spoken = decode_wav(&std::fs::read(&output).unwrap()).unwrap();
    let seconds = spoken.samples.len() as f64 / 16_000.0;
    assert!(
        (1.0..10.0).contains(&seconds),
        "{seconds} s of the agent's voice"
    );

    // The session holds the two turns like any chat session.
    let (code, shown) = json_of(&config, &["sessions", "show", "talk"]);
    assert_eq!(code, 0, "{shown}");
    let roles: Vec<&str> = shown["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["message"]["role"].as_str())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"], "{shown}");
}

/// `--language` reaches the recognizer: one whisper does not know is
/// refused before the conversation starts, naming it, and no model is
/// asked anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_language_flag_reaches_the_recognizer() {
    let config = sqlite_config();
    let dir = config.parent().unwrap().to_owned();
    let server = TestServer::start(|_: &oscova_test_support::http::Request| text_reply("no")).await;
    let input = dir.join("silence.wav");
    std::fs::write(
        &input,
        encode_wav(&Pcm16kMono {
            samples: vec![0; 16_000],
        }),
    )
    .unwrap();
    let output = dir.join("out.wav");
    let command = voice(
        &config,
        &server.url(),
        &input,
        &output,
        &["--language", "xx-YY", "--say", "flite"],
    );
    let (code, out, err) = run_async(command, None).await;
    assert_ne!(code, 0, "{out}\n{err}");
    assert!(err.contains("xx"), "the language is named: {err}");
    assert!(server.requests().is_empty());
    assert!(!output.exists());
}
