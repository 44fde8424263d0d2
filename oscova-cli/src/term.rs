//! The terminal: the approval prompt, tools' questions and the progress
//! line.
//!
//! Rules: both write to stderr only, so stdout carries nothing but the
//! command's output. Neither does anything unless stderr is a terminal: a
//! prompt nobody can see must not wait for an answer, and a progress line
//! in a log file is noise. The prompt reads its answer from stdin when
//! stdin is a terminal, else from `/dev/tty`; with neither, there is no
//! one to ask. Anything but `y` or `yes` is "no".

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::sync::{Arc, Mutex};

use oscova_core::{ToolProgress, tool::ProgressSink};

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
    let _ = writeln!(err, "{text}");
}

fn prompt(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{text}");
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
    let mut message: String = p
        .message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_MESSAGE)
        .collect();
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
    }
}
