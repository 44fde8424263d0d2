//! Debian's Chromium, started headless for the browser tests.
//!
//! `scripts/ensure-chromium.sh` installs it (`$OSCOVA_CHROMIUM`, else
//! `/usr/bin/chromium`). [`Chromium::open`] starts it on one page with a
//! fresh profile, no background networking (this machine's closed network
//! would refuse it), and the DevTools protocol on an ephemeral loopback
//! port; dropping the value stops it. A page that needs a microphone gets
//! one fed from a WAV file with [`fake_microphone`]. [`Page`] drives a
//! page Chromium shows over the DevTools protocol (`Runtime.evaluate`), as
//! a person's clicks and typing would.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_tungstenite::tungstenite::Message;

/// The Chromium binary `scripts/ensure-chromium.sh` installs.
///
/// # Panics
///
/// When it is not there, naming the script that installs it.
pub fn binary() -> PathBuf {
    let binary = std::env::var_os("OSCOVA_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        binary.is_file(),
        "Chromium is not installed at {}: run scripts/ensure-chromium.sh",
        binary.display()
    );
    binary
}

/// The flags that give a page a microphone which plays `wav` (16-bit PCM),
/// granted without a prompt.
pub fn fake_microphone(wav: &Path) -> Vec<String> {
    vec![
        "--use-fake-ui-for-media-stream".into(),
        "--use-fake-device-for-media-stream".into(),
        format!("--use-file-for-fake-audio-capture={}", wav.display()),
        "--autoplay-policy=no-user-gesture-required".into(),
    ]
}

/// A headless Chromium showing one page; stopped when dropped.
pub struct Chromium {
    child: Child,
    profile: tempfile::TempDir,
}

impl Chromium {
    /// Starts Chromium on `url` with `extra` flags added to the standard
    /// ones (headless, no sandbox since tests run as root, no GPU, no
    /// background networking, a new empty profile, DevTools on an
    /// ephemeral port).
    ///
    /// # Panics
    ///
    /// When Chromium is missing or does not start.
    pub fn open(url: &str, extra: &[String]) -> Chromium {
        let profile = tempfile::Builder::new()
            .prefix("oscova-chromium-")
            .tempdir()
            .expect("create a Chromium profile folder");
        let child = Command::new(binary())
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(extra)
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Chromium");
        Chromium { child, profile }
    }

    /// The DevTools protocol's browser address (`ws://127.0.0.1:PORT/...`),
    /// once Chromium has written it, for a test that drives the page.
    ///
    /// # Panics
    ///
    /// When Chromium exits or does not write it within 30 seconds.
    pub fn devtools_url(&mut self) -> String {
        let file = self.profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(text) = std::fs::read_to_string(&file) {
                let mut lines = text.lines();
                if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                    return format!("ws://127.0.0.1:{port}{path}");
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("Chromium exited before it listened: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "Chromium wrote no DevTools port in 30 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether Chromium is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A DevTools protocol connection to one page Chromium shows.
pub struct Page {
    socket: tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>,
    next: u64,
}

impl Page {
    /// Connects to the first page whose address satisfies `wanted`,
    /// waiting (30 s at most) for Chromium to show one.
    ///
    /// # Panics
    ///
    /// When no such page comes, or the connection fails.
    pub async fn attach(chromium: &mut Chromium, wanted: impl Fn(&str) -> bool) -> Page {
        let browser = chromium.devtools_url();
        let port = browser
            .trim_start_matches("ws://127.0.0.1:")
            .split('/')
            .next()
            .expect("a DevTools address has a port")
            .to_owned();
        let deadline = Instant::now() + Duration::from_secs(30);
        let url = loop {
            let listed = get(&port, "/json/list").await.unwrap_or_default();
            let list: Value = serde_json::from_str(&listed).unwrap_or(Value::Null);
            let page = list
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["type"] == "page" && t["url"].as_str().is_some_and(&wanted));
            if let Some(url) = page.and_then(|p| p["webSocketDebuggerUrl"].as_str()) {
                break url.to_owned();
            }
            assert!(
                Instant::now() < deadline,
                "Chromium shows no such page: {listed}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let address = url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .expect("a page address has a host")
            .to_owned();
        let stream = tokio::net::TcpStream::connect(&address)
            .await
            .expect("connect to Chromium's DevTools port");
        let (socket, _) = tokio_tungstenite::client_async(url.as_str(), stream)
            .await
            .expect("open the page's DevTools connection");
        Page { socket, next: 0 }
    }

    /// The value of `expression` in the page (returned by value), or
    /// `None` when it threw (the page was between two documents, say).
    ///
    /// # Panics
    ///
    /// When the DevTools connection closes.
    pub async fn evaluate(&mut self, expression: &str) -> Option<Value> {
        self.next += 1;
        let id = self.next;
        let call = json!({
            "id": id,
            "method": "Runtime.evaluate",
            "params": {"expression": expression, "returnByValue": true},
        });
        self.socket
            .send(Message::text(call.to_string()))
            .await
            .expect("send to the DevTools connection");
        loop {
            let Some(Ok(message)) = self.socket.next().await else {
                panic!("the DevTools connection closed");
            };
            let Message::Text(text) = message else {
                continue;
            };
            let answer: Value = serde_json::from_str(text.as_str()).expect("DevTools speaks JSON");
            if answer["id"] == id {
                if answer.get("error").is_some()
                    || answer["result"].get("exceptionDetails").is_some()
                {
                    return None;
                }
                return Some(answer["result"]["result"]["value"].clone());
            }
        }
    }
}

/// The body of `GET path` on Chromium's DevTools port, or `None` while it
/// does not answer. Its server speaks HTTP/1.1 only and keeps the
/// connection open, so the body is read to its `Content-Length`.
async fn get(port: &str, path: &str) -> Option<String> {
    let mut stream = tokio::net::TcpStream::connect(format!("127.0.0.1:{port}"))
        .await
        .ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&answer);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            })?;
            if body.len() >= length {
                return Some(body[..length].to_owned());
            }
        }
        let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut chunk))
            .await
            .ok()?
            .ok()?;
        if read == 0 {
            return None;
        }
        answer.extend_from_slice(&chunk[..read]);
    }
}
