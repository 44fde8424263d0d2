//! Download progress, in the form the output can take.
//!
//! Rules: on a terminal (stderr), an indicatif bar with the step, bytes
//! done of the step's total, rate and time left; a step without a size is
//! a spinner with its name. Not on a terminal, plain lines on stderr: one
//! when a step starts, one when a sized step completes, and at most one a
//! second in between, so a log stays short. With `--json`, every update is
//! a JSON line on stdout (`{"event": "progress", "status", "completed",
//! "total"}`), unthrottled. Nothing here fails the download: a display
//! that cannot be drawn is skipped. The server's step names pass
//! `term::one_line`, as all text from elsewhere does.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{HumanBytes, ProgressBar, ProgressDrawTarget, ProgressStyle};
use oscova_core::provider::model::DownloadProgress;
use serde_json::json;

use crate::output::print_json_line;

/// How often a plain line may repeat a step that is still running.
const PLAIN_EVERY: Duration = Duration::from_secs(1);

/// Shows a download's progress.
#[derive(Debug)]
pub(super) enum PullProgress {
    /// A bar on the terminal.
    Bar(Mutex<BarState>),
    /// Lines on stderr.
    Plain(Mutex<PlainState>),
    /// JSON lines on stdout.
    Json,
}

#[derive(Debug)]
pub(super) struct BarState {
    bar: ProgressBar,
    status: String,
    sized: bool,
}

#[derive(Debug, Default)]
pub(super) struct PlainState {
    status: String,
    done: bool,
    last: Option<Instant>,
}

impl PullProgress {
    /// The display for this output: JSON lines with `--json`, else a bar
    /// when stderr is a terminal, else plain lines.
    pub(super) fn new(json: bool) -> Self {
        if json {
            return Self::Json;
        }
        if !std::io::stderr().is_terminal() {
            return Self::Plain(Mutex::new(PlainState::default()));
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(spinner_style());
        bar.enable_steady_tick(Duration::from_millis(120));
        Self::Bar(Mutex::new(BarState {
            bar,
            status: String::new(),
            sized: false,
        }))
    }

    /// Shows one update.
    pub(super) fn update(&self, progress: &DownloadProgress) {
        // The status is server text, shown wherever it goes.
        let progress = &DownloadProgress {
            status: crate::output::redacted(&progress.status),
            ..progress.clone()
        };
        match self {
            Self::Json => {
                let _ = print_json_line(&json!({
                    "event": "progress",
                    "status": progress.status,
                    "completed": progress.completed,
                    "total": progress.total,
                }));
            }
            Self::Plain(state) => {
                if let Ok(mut state) = state.lock()
                    && let Some(line) = state.line(progress, Instant::now())
                {
                    let line = crate::term::one_line(&line);
                    let _ = writeln!(std::io::stderr().lock(), "{line}");
                }
            }
            Self::Bar(state) => {
                if let Ok(mut state) = state.lock() {
                    state.update(progress);
                }
            }
        }
    }

    /// Removes the bar, if there is one.
    pub(super) fn finish(&self) {
        if let Self::Bar(state) = self
            && let Ok(state) = state.lock()
        {
            state.bar.finish_and_clear();
        }
    }
}

impl BarState {
    fn update(&mut self, p: &DownloadProgress) {
        let sized = p.total.is_some_and(|t| t > 0);
        if p.status != self.status || sized != self.sized {
            self.status.clone_from(&p.status);
            self.sized = sized;
            // A new step: its own length, rate and time left. The style
            // changes before anything is drawn in it.
            if sized {
                self.bar.set_length(p.total.unwrap_or(0));
                self.bar.set_position(0);
                self.bar.reset();
                self.bar.set_style(bytes_style());
            } else {
                self.bar.set_style(spinner_style());
                self.bar.reset();
            }
            self.bar.set_message(crate::term::one_line(&p.status));
        }
        if let Some(total) = p.total {
            self.bar.set_length(total);
        }
        if let Some(done) = p.completed {
            self.bar.set_position(done);
        }
    }
}

impl PlainState {
    /// The line to print for this update, if any.
    fn line(&mut self, p: &DownloadProgress, now: Instant) -> Option<String> {
        let sizes = match (p.completed, p.total) {
            (Some(done), Some(total)) => {
                format!(": {} of {}", HumanBytes(done), HumanBytes(total))
            }
            (None, Some(total)) => format!(": {}", HumanBytes(total)),
            _ => String::new(),
        };
        if p.status != self.status {
            self.status.clone_from(&p.status);
            self.done = false;
            self.last = Some(now);
            return Some(format!("{}{sizes}", p.status));
        }
        let finished = matches!((p.completed, p.total), (Some(d), Some(t)) if t > 0 && d >= t);
        if finished && !self.done {
            self.done = true;
            self.last = Some(now);
            return Some(format!("{}{sizes}, done", p.status));
        }
        let due = self
            .last
            .is_none_or(|last| now.duration_since(last) >= PLAIN_EVERY);
        if !finished && due && p.completed.is_some() {
            self.last = Some(now);
            return Some(format!("{}{sizes}", p.status));
        }
        None
    }
}

fn bytes_style() -> ProgressStyle {
    ProgressStyle::with_template(
        "{spinner} {msg} [{wide_bar}] {bytes}/{total_bytes} {binary_bytes_per_sec} {eta}",
    )
    .map(|s| s.progress_chars("=> "))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(status: &str, completed: Option<u64>, total: Option<u64>) -> DownloadProgress {
        DownloadProgress {
            status: status.into(),
            completed,
            total,
        }
    }

    #[test]
    fn plain_lines_mark_steps_and_completions_only() {
        let mut state = PlainState::default();
        let t0 = Instant::now();
        let lines: Vec<Option<String>> = [
            step("pulling manifest", None, None),
            step("pulling abc", None, Some(2048)),
            step("pulling abc", Some(512), Some(2048)),
            step("pulling abc", Some(2048), Some(2048)),
            step("pulling abc", Some(2048), Some(2048)),
            step("success", None, None),
        ]
        .iter()
        .map(|p| state.line(p, t0))
        .collect();
        assert_eq!(
            lines,
            [
                Some("pulling manifest".to_owned()),
                Some("pulling abc: 2.00 KiB".to_owned()),
                None,
                Some("pulling abc: 2.00 KiB of 2.00 KiB, done".to_owned()),
                None,
                Some("success".to_owned()),
            ]
        );
        let later = t0 + PLAIN_EVERY;
        let mut state = PlainState::default();
        state.line(&step("pulling abc", Some(0), Some(4096)), t0);
        assert_eq!(
            state.line(&step("pulling abc", Some(1024), Some(4096)), later),
            Some("pulling abc: 1.00 KiB of 4.00 KiB".to_owned())
        );
    }
}
