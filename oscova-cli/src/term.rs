//! The terminal: what text may reach it, the approval prompt, tools'
//! questions and the progress line.
//!
//! Rules for text: everything the CLI prints that came from elsewhere (a
//! plugin, an MCP server's tool names, descriptions and results, a model's
//! answer, a diagnostic, an error) passes [`for_terminal`], the one
//! function for text bound for a terminal: every control character (C0,
//! DEL, C1: ESC sequences, NUL, a carriage return that would overwrite
//! the line) but newline and tab, and every Unicode bidirectional control
//! (the embeddings, overrides and isolates, and the LRM, RLM and ALM
//! marks, which reorder what a person reads), as well as the line and
//! paragraph separators, becomes U+FFFD, so it shows that something was
//! there and never acts. [`one_line`] also turns newlines and tabs into
//! spaces, for lines that must stay one line. JSON output keeps every
//! character, writing those same ones as `\uXXXX` escapes
//! ([`json_for_terminal`]): the same value to a parser, inert on a
//! terminal. Redaction runs first, on the text as it came, so no secret
//! hides behind a replaced character.
//!
//! Rules for prompts:
//! Rules: both write to stderr only, so stdout carries nothing but the
//! command's output. Neither does anything unless stderr is a terminal: a
//! prompt nobody can see must not wait for an answer, and a progress line
//! in a log file is noise. The prompt reads its answer from stdin when
//! stdin is a terminal, else from `/dev/tty`; with neither, there is no
//! one to ask. Anything but `y` or `yes` is "no".

use std::borrow::Cow;
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::sync::{Arc, Mutex};

use oscova_core::{ToolProgress, tool::ProgressSink};

/// Whether `c` must not reach a terminal as it is: a control character
/// other than newline and tab, a bidirectional control, or a line or
/// paragraph separator.
pub(crate) fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
                | '\u{2028}' | '\u{2029}'
        )
}

/// `text` as it may be shown on a terminal: each [unsafe](is_unsafe)
/// character replaced by U+FFFD.
pub(crate) fn for_terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| if is_unsafe(c) { '\u{fffd}' } else { c })
            .collect(),
    )
}

/// [`for_terminal`], on one line: newlines and tabs become spaces.
pub(crate) fn one_line(text: &str) -> String {
    for_terminal(text)
        .chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .collect()
}

/// JSON text with each [unsafe](is_unsafe) character written as a `\uXXXX`
/// escape. Such a character can only be inside a string (serde_json
/// already escapes C0 controls there; the structure holds only spaces,
/// newlines and ASCII), where the escape means the same character.
pub(crate) fn json_for_terminal(json: &str) -> Cow<'_, str> {
    if !json.chars().any(is_unsafe) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_unsafe(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Asks a yes/no question on the terminal. `None` when there is no
/// terminal to ask on. Blocks; call it off the async threads.
pub(crate) fn ask(question: &str) -> Option<bool> {
    let answer = read_answer(&format!("{question} [y/N] "))?;
    let answer = answer.trim().to_ascii_lowercase();
    Some(answer == "y" || answer == "yes")
}

/// Shows `prompt` on the terminal and reads one line (without its line
/// end). `None` when there is no terminal to ask on. Blocks.
pub(crate) fn read_answer(prompt_text: &str) -> Option<String> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let mut answer = String::new();
    if std::io::stdin().is_terminal() {
        prompt(prompt_text);
        std::io::stdin().lock().read_line(&mut answer).ok()?;
    } else {
        let tty = open_tty()?;
        prompt(prompt_text);
        BufReader::new(tty).read_line(&mut answer).ok()?;
    }
    Some(answer.trim_end_matches(['\r', '\n']).to_owned())
}

/// Writes `text` on the terminal, on its own line, without asking.
pub(crate) fn say(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", for_terminal(text));
}

fn prompt(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{}", for_terminal(text));
    let _ = err.flush();
}

#[cfg(unix)]
fn open_tty() -> Option<std::fs::File> {
    std::fs::File::open("/dev/tty").ok()
}

#[cfg(not(unix))]
fn open_tty() -> Option<std::fs::File> {
    None
}

/// The longest progress message shown, so the line never wraps on a
/// normal terminal (a wrapped line cannot be erased with `\r`).
const MAX_MESSAGE: usize = 70;

/// A one-line progress display on stderr, redrawn in place.
#[derive(Debug, Clone)]
pub(crate) struct ProgressLine {
    drawn: Arc<Mutex<bool>>,
}

impl ProgressLine {
    /// A progress line, or `None` when stderr is not a terminal.
    pub(crate) fn on_stderr() -> Option<Self> {
        std::io::stderr().is_terminal().then(|| Self {
            drawn: Arc::new(Mutex::new(false)),
        })
    }

    /// The sink to hand to the call.
    pub(crate) fn sink(&self) -> ProgressSink {
        let drawn = self.drawn.clone();
        Arc::new(move |progress: ToolProgress| {
            let line = crate::output::redacted(&format_progress(&progress));
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K{line}");
            let _ = err.flush();
            if let Ok(mut d) = drawn.lock() {
                *d = true;
            }
        })
    }

    /// Erases the line, if anything was drawn since the last erase (so a
    /// second call cannot wipe text written after the first).
    pub(crate) fn finish(&self) {
        let Ok(mut drawn) = self.drawn.lock() else {
            return;
        };
        if std::mem::take(&mut *drawn) {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}

/// `[3/10] counted to 3`, `[3] step`, or the message alone.
pub(crate) fn format_progress(p: &ToolProgress) -> String {
    let mut message: String = one_line(&p.message).chars().take(MAX_MESSAGE).collect();
    if p.message.chars().count() > MAX_MESSAGE {
        message.push('…');
    }
    let number = |n: f64| {
        if n.fract() == 0.0 && n.abs() < 1e15 {
            format!("{n:.0}")
        } else {
            format!("{n:.1}")
        }
    };
    match (p.progress, p.total) {
        (Some(done), Some(total)) => format!("[{}/{}] {message}", number(done), number(total)),
        (Some(done), None) => format!("[{}] {message}", number(done)),
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines() {
        assert_eq!(
            format_progress(&ToolProgress::ratio("counting", 3.0, Some(10.0))),
            "[3/10] counting"
        );
        assert_eq!(
            format_progress(&ToolProgress::ratio("half", 0.5, None)),
            "[0.5] half"
        );
        assert_eq!(format_progress(&ToolProgress::message("a\nb")), "a b");
        let long = format_progress(&ToolProgress::message("x".repeat(200)));
        assert_eq!(long.chars().count(), MAX_MESSAGE + 1);
        assert_eq!(
            format_progress(&ToolProgress::message("a\x1b[2Jb")),
            "a\u{fffd}[2Jb"
        );
    }

    /// Issue 24: an MCP server's names, descriptions and results reached
    /// the terminal with ESC sequences, NUL and bidi overrides.
    #[test]
    fn nothing_that_acts_on_a_terminal_passes() {
        let hostile =
            "ok\x1b]0;pwned\x07\x1b[2J\0\r\u{9b}31m\u{7f}\u{202e}evil\u{2066}\u{200f}\u{2028}";
        let shown = for_terminal(hostile);
        assert_eq!(
            shown,
            "ok\u{fffd}]0;pwned\u{fffd}\u{fffd}[2J\u{fffd}\u{fffd}\u{fffd}31m\u{fffd}\u{fffd}evil\u{fffd}\u{fffd}\u{fffd}"
        );
        assert!(!shown.chars().any(is_unsafe));
        assert!(matches!(
            for_terminal("plain\ttext\nand é ✓"),
            Cow::Borrowed(_)
        ));
        assert_eq!(one_line("a\nb\tc\x1b"), "a b c\u{fffd}");

        let json = serde_json::to_string(&serde_json::json!({"d": hostile})).unwrap();
        let safe = json_for_terminal(&json);
        assert!(!safe.chars().any(is_unsafe), "{safe}");
        assert!(
            safe.contains("\\u202e") && safe.contains("\\u009b"),
            "{safe}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["d"], hostile, "the same value to a parser");
    }
}
