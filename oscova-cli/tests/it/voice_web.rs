//! `oscova serve`'s voice page end to end, in Debian's Chromium: the real
//! binary on 127.0.0.1 (a port the system picks, a token for its one
//! user), the page opened headless with a fake microphone that plays a
//! recorded conversation (two LibriVox sentences with pauses, the second
//! spoken over the agent's long first answer), Silero VAD and a 700 ms
//! silence ending each turn, whisper hearing, an OpenAI-compatible model
//! on 127.0.0.1, flite answering; the session in SQLite. The page is
//! read through the DevTools protocol (`window.oscovaVoice`), the session
//! through `oscova sessions show`, what the model was sent from its
//! recorded requests. Chromium loops the file: the recording ends on
//! three minutes of silence and the test stops once the two turns are
//! answered, so only the first pass counts. Without Chromium the test fails, naming
//! `scripts/ensure-chromium.sh`.

use std::process::Child;
use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use oscova_speech::wav::{Pcm16kMono, decode_wav, encode_wav};
use oscova_test_support::chromium::{self, Chromium, Page, fake_microphone};
use oscova_test_support::http::{Request, TestServer};
use oscova_test_support::librivox::{clips, score};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

use crate::sessions::{json_of, sent, text_reply};
use crate::support;

const TOKEN: &str = "alice-token";
/// `printf %s alice-token | sha256sum`
const TOKEN_SHA256: &str = "9c220f200955d76c0a38d308225e0ef10c5f971acaf2f8d1d8f732affa5bd1dc";
/// `printf %s alice-token | base64`, without the padding.
const TOKEN_BASE64URL: &str = "YWxpY2UtdG9rZW4";
const KEY: &str = "sk-voice-web-test-0123456789abcdef";

/// The first answer: long enough (over a minute of flite) that the
/// second turn, 25 s after the first, comes while it is being spoken,
/// even on a busy machine where hearing the first turn took 20 s.
const LONG: &str = "Thank you for telling me about that. \
    Let me think about it for a while before I answer you properly. \
    There are many things to consider in a question like this one. \
    First there is the matter of time, which nobody ever has enough of. \
    Then there is the matter of place, which changes everything we do. \
    And finally there is the matter of the people who are involved in it. \
    I could go on talking about each of these for a very long time indeed. \
    Time is the first of them, so let me begin with it. \
    Every plan we make depends on the hours we can give to it. \
    Some days are long and some are short, but none of them come back. \
    Place comes next, and it matters more than people like to admit. \
    A house, a street or a town can make the same choice easy or hard. \
    And then there are the people, who make every question harder still. \
    Each of them wants something a little different from the others. \
    Putting all of that together takes patience and a little luck. \
    So please stop me whenever you would like to say something yourself.";

/// The model: the long answer to the first turn, a short one after.
fn model(request: &Request) -> oscova_test_support::http::Reply {
    let messages = sent(request);
    let users = messages.iter().filter(|(role, _)| role == "user").count();
    if users <= 1 {
        return text_reply(LONG);
    }
    let said = messages.last().cloned().unwrap_or_default().1;
    text_reply(&format!(
        "You said {} words.",
        said.split_whitespace().count()
    ))
}

fn write_config(dir: &std::path::Path, model_url: &str) -> String {
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[[mcp.tokens]]\nuser = \"alice\"\nsha256 = \"{TOKEN_SHA256}\"\n\n\
             [providers.openai]\nendpoint = \"{model_url}\"\nmodel = \"gpt-test\"\n\n\
             [sessions]\npath = \"{}\"\n\n\
             [a2a]\nprovider = \"openai\"\n\n\
             [speech.hear]\nprovider = \"whisper\"\n\n\
             [speech.say]\nprovider = \"flite\"\nvoice = \"kal16\"\n",
            dir.join("sessions.db").display()
        ),
    )
    .unwrap();
    config.to_str().unwrap().to_owned()
}

/// `oscova serve` on an ephemeral loopback port, with its base URL.
fn serve(config: &str) -> (Child, String) {
    let mut cmd = support::oscova(&["--config", config, "serve", "--listen", "127.0.0.1:0"]);
    cmd.env("OSCOVA_CREDENTIAL_OPENAI_API_KEY", KEY);
    let (child, base) = support::listening(&mut cmd, "serve");
    (child, base)
}

/// `window.oscovaVoice`, as the page keeps it.
async fn state(page: &mut Page) -> Value {
    let kept = page
        .evaluate("JSON.stringify(window.oscovaVoice || null)")
        .await;
    let kept = kept.as_ref().and_then(Value::as_str).unwrap_or("null");
    serde_json::from_str(kept).unwrap()
}

fn events<'a>(state: &'a Value, kind: &str) -> Vec<&'a Value> {
    state["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["type"] == kind)
        .collect()
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_voice_page_talks_through_chromiums_microphone_and_is_interrupted() {
    let _cores = oscova_test_support::cores::cores().await;
    // Fails here, naming the script, when Chromium is missing.
    chromium::binary();
    let server = TestServer::start(model).await;
    let dir = support::temp_dir("voice-web");
    let config = write_config(&dir, &server.url());

    // Half a second of silence, a sentence, 25 seconds (time to hear it
    // and start answering, on a busy machine too), another sentence over
    // the answer, then three minutes of silence before Chromium plays the
    // file again.
    let all = clips();
    let (first, second) = (&all[1], &all[4]);
    let silence = |seconds: f32| vec![0i16; (seconds * 16_000.0) as usize];
    let mut samples = silence(0.5);
    samples.extend(decode_wav(&first.wav).unwrap().samples);
    samples.extend(silence(25.0));
    samples.extend(decode_wav(&second.wav).unwrap().samples);
    samples.extend(silence(180.0));
    let input = dir.join("conversation.wav");
    std::fs::write(&input, encode_wav(&Pcm16kMono { samples })).unwrap();

    let (mut child, base) = tokio::task::spawn_blocking({
        let config = config.clone();
        move || serve(&config)
    })
    .await
    .unwrap();

    // The page and its script, from the port, with their policy.
    let page = reqwest::get(format!("{base}/voice/")).await.unwrap();
    assert_eq!(page.status(), 200);
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert!(page.text().await.unwrap().contains("voice.js"));
    for script in ["voice.js", "capture.js"] {
        let served = reqwest::get(format!("{base}/voice/{script}"))
            .await
            .unwrap();
        assert_eq!(served.status(), 200, "{script}");
        assert_eq!(
            served.headers()["content-type"],
            "text/javascript; charset=utf-8"
        );
    }

    let url = format!("{base}/voice/?autostart=1&session=talk&silence_ms=700#token={TOKEN}");
    let mut chromium = Chromium::open(&url, &fake_microphone(&input));
    let mut devtools = Page::attach(&mut chromium, |url| url.contains("/voice/")).await;

    // Until the second turn is answered (or four minutes pass).
    let deadline = Instant::now() + Duration::from_secs(240);
    let state = loop {
        let state = state(&mut devtools).await;
        if !state["error"].is_null() {
            panic!("the page failed: {state}");
        }
        let finished = events(&state, "reply_finished").len();
        let heard = events(&state, "transcript")
            .iter()
            .filter(|e| e["text"].as_str().is_some_and(|t| !t.is_empty()))
            .count();
        if heard >= 2 && finished >= 1 {
            break state;
        }
        assert!(chromium.is_running(), "Chromium stopped: {state}");
        assert!(
            Instant::now() < deadline,
            "the two turns were not answered in 240 s: {state}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    drop(devtools);
    drop(chromium);
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = tokio::task::spawn_blocking(move || child.wait()).await;

    // The page: it said `ready`, sent the microphone, played the agent,
    // and stopped the first answer's audio at the interruption.
    assert_eq!(events(&state, "ready").len(), 1, "{state}");
    assert_eq!(events(&state, "ready")[0]["sampleRate"], 16_000);
    assert_eq!(events(&state, "ready")[0]["user"], "alice");
    assert!(state["framesOut"].as_u64().unwrap() > 100, "{state}");
    assert!(state["framesIn"].as_u64().unwrap() > 50, "{state}");
    let interrupted = events(&state, "interrupted");
    assert_eq!(interrupted.len(), 1, "one interruption: {state}");
    let stopped = state["stoppedAtInterruption"].as_array().unwrap();
    assert!(
        stopped.len() == 1 && stopped[0].as_u64().unwrap() > 0,
        "the page had the answer playing and stopped it: {state}"
    );

    // What the person said, heard within 10% word error rate.
    let transcripts: Vec<&str> = events(&state, "transcript")
        .iter()
        .filter_map(|e| e["text"].as_str())
        .filter(|t| !t.is_empty())
        .collect();
    assert_eq!(transcripts.len(), 2, "one transcript per turn: {state}");
    let (mut errors, mut total) = (0, 0);
    for (text, clip) in transcripts.iter().zip([first, second]) {
        let (e, w) = score(&clip.reference, text);
        errors += e;
        total += w;
    }
    assert!(
        errors * 10 <= total,
        "{errors} errors in {total} words: {transcripts:?}"
    );

    // One model call per turn; the second saw what was heard of the first
    // answer, a strict beginning of it, not what the model wrote.
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "one reply per turn");
    let heard = interrupted[0]["heard"].as_str().unwrap();
    let (heard_words, long_words) = (words(heard), words(LONG));
    assert!(
        !heard_words.is_empty() && heard_words.len() < long_words.len(),
        "part of the first answer was heard: {heard:?}"
    );
    assert_eq!(heard_words, long_words[..heard_words.len()], "{heard:?}");
    let context = sent(&requests[1]);
    let answers: Vec<&str> = context
        .iter()
        .filter(|(role, _)| role == "assistant")
        .map(|(_, text)| text.as_str())
        .collect();
    assert_eq!(answers, [heard], "the second turn's context: {context:?}");

    // The session, alice's in the store `oscova serve` uses: two turns,
    // two answers, the first marked interrupted with what was heard.
    let config = std::path::PathBuf::from(config);
    let (code, shown) = json_of(&config, &["sessions", "show", "talk", "--user", "alice"]);
    assert_eq!(code, 0, "{shown}");
    let entries = shown["entries"].as_array().unwrap();
    let roles: Vec<&str> = entries
        .iter()
        .filter_map(|e| e["message"]["role"].as_str())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"], "{shown}");
    let marks: Vec<&Value> = entries
        .iter()
        .filter(|e| e["customType"] == "oscova.voice_interrupted")
        .collect();
    assert_eq!(marks.len(), 1, "{shown}");
    assert_eq!(marks[0]["data"]["heard"], heard, "{shown}");
}

/// Opens `/voice` on `base` with these handshake headers; the status of
/// a refusal, or the selected subprotocol and the first text message.
async fn handshake(
    base: &str,
    query: &str,
    headers: &[(&str, String)],
) -> Result<(String, Value), u16> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    let url = format!("{}/voice?{query}", base.replacen("http://", "ws://", 1));
    let mut request = url.into_client_request().unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((mut socket, response)) => {
            let protocol = response.headers()["sec-websocket-protocol"]
                .to_str()
                .unwrap()
                .to_owned();
            let first = loop {
                match socket.next().await {
                    Some(Ok(Message::Text(text))) => {
                        break serde_json::from_str(text.as_str()).unwrap();
                    }
                    Some(Ok(_)) => continue,
                    other => panic!("the socket ended before its first message: {other:?}"),
                }
            };
            let _ = socket.close(None).await;
            Ok((protocol, first))
        }
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            Err(response.status().as_u16())
        }
        Err(error) => panic!("{error}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_voice_socket_serves_only_the_ports_users() {
    let server = TestServer::start(model).await;
    let dir = support::temp_dir("voice-web-auth");
    let config = write_config(&dir, &server.url());
    let (mut child, base) = tokio::task::spawn_blocking(move || serve(&config))
        .await
        .unwrap();
    // A token offered as the page offers it, in base64url.
    let offer = |encoded: &str| {
        (
            "sec-websocket-protocol",
            format!("oscova.voice, oscova.bearer.{encoded}"),
        )
    };

    // No token, a wrong one, the right one in the query (never read), one
    // in a subprotocol that is no base64url: refused before any upgrade.
    let plain = ("sec-websocket-protocol", "oscova.voice".to_owned());
    assert_eq!(
        handshake(&base, "session=s", std::slice::from_ref(&plain)).await,
        Err(401)
    );
    assert_eq!(
        handshake(&base, "session=s", &[offer("d3Jvbmc")]).await,
        Err(401)
    );
    assert_eq!(
        handshake(
            &base,
            &format!("session=s&token={TOKEN}"),
            std::slice::from_ref(&plain)
        )
        .await,
        Err(401)
    );
    let garbled = (
        "sec-websocket-protocol",
        "oscova.voice, oscova.bearer.%%".to_owned(),
    );
    assert_eq!(handshake(&base, "session=s", &[garbled]).await, Err(400));
    // The right token without the voice subprotocol, and a page of
    // another origin with the right token: refused too.
    let token_only = (
        "sec-websocket-protocol",
        format!("oscova.bearer.{TOKEN_BASE64URL}"),
    );
    assert_eq!(handshake(&base, "session=s", &[token_only]).await, Err(400));
    let foreign = ("origin", "https://evil.example".to_owned());
    assert_eq!(
        handshake(&base, "session=s", &[offer(TOKEN_BASE64URL), foreign]).await,
        Err(403)
    );
    // A bad query, with the right token: 400, before the upgrade.
    assert_eq!(
        handshake(&base, "silence_ms=5", &[offer(TOKEN_BASE64URL)]).await,
        Err(400)
    );
    // An Authorization header, as a client that can set one sends it.
    let bearer = ("authorization", format!("Bearer {TOKEN}"));
    let (protocol, ready) = handshake(&base, "session=s", &[plain.clone(), bearer])
        .await
        .unwrap();
    assert_eq!(protocol, "oscova.voice");
    assert_eq!(ready["user"], "alice", "{ready}");

    // The right token as the page sends it: the voice subprotocol alone
    // is selected (the token is never echoed), the user is alice.
    let (protocol, ready) = handshake(&base, "session=s", &[offer(TOKEN_BASE64URL)])
        .await
        .unwrap();
    assert_eq!(protocol, "oscova.voice");
    assert_eq!(ready["type"], "ready", "{ready}");
    assert_eq!(ready["sampleRate"], 16_000);
    assert_eq!(ready["user"], "alice");

    // Four conversations at once on the port, each in its own session; a
    // fifth is refused before the upgrade (503). The earlier ones may
    // still be ending: a slot is waited for, up to 30 s.
    use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
    let connect = |session: &str| {
        let mut request = format!(
            "{}/voice?session={session}",
            base.replacen("http://", "ws://", 1)
        )
        .into_client_request()
        .unwrap();
        let (name, value) = offer(TOKEN_BASE64URL);
        request.headers_mut().insert(name, value.parse().unwrap());
        tokio_tungstenite::connect_async(request)
    };
    let mut conversations = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while conversations.len() < 4 {
        match connect(&format!("s{}", conversations.len())).await {
            Ok((socket, _)) => conversations.push(socket),
            Err(tokio_tungstenite::tungstenite::Error::Http(refused))
                if refused.status() == 503 && Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(error) => panic!("conversation {}: {error}", conversations.len()),
        }
    }
    assert_eq!(
        handshake(&base, "session=s4", &[offer(TOKEN_BASE64URL)]).await,
        Err(503)
    );

    // Conversations still open do not hold the server up at SIGTERM:
    // they are ended, and the server exits as it would without them.
    let mut open = conversations.pop().unwrap();
    let first = open.next().await;
    assert!(
        matches!(&first, Some(Ok(Message::Text(text))) if text.as_str().contains("ready")),
        "{first:?}"
    );
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        assert!(
            Instant::now() < deadline,
            "the server did not stop on SIGTERM with a conversation open"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(code, Some(0));
    // The client sees its connection end.
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match open.next().await {
                Some(Ok(Message::Binary(_) | Message::Text(_))) => continue,
                other => return other,
            }
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the open conversation's connection did not end"
    );
}
