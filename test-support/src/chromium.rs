//! Debian's Chromium, started headless for the browser tests.
//!
//! `scripts/ensure-chromium.sh` installs it (`$OSCOVA_CHROMIUM`, else
//! `/usr/bin/chromium`). [`Chromium::open`] starts it on one page with a
//! fresh profile, no background networking (this machine's closed network
//! would refuse it), and the DevTools protocol on an ephemeral loopback
//! port; dropping the value stops it. A page that needs a microphone gets
//! one fed from a WAV file with [`fake_microphone`].

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
