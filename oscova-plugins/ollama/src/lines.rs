//! Newline-delimited JSON, read line by line from a body that arrives
//! split anywhere.
//!
//! Rules: the bytes become lines through `oscova_core::http::backend`'s
//! [`LineSplitter`], which buffers until a whole line is there and only
//! then decodes it, so a split inside a character or a JSON value is
//! invisible; lines end in `\n` or `\r\n`, a last line without its newline
//! still counts, and a line longer than
//! [`MAX_LINE`](oscova_core::http::backend::MAX_LINE) is an error rather than
//! unbounded memory. What a line means is the caller's
//! business; this loop only runs until the caller says stop.

use oscova_core::CancellationToken;
use oscova_core::http::backend::{Body, LineSplitter, Scrub};
use oscova_core::provider::model::ModelError;

/// Whether to keep reading after a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Read on.
    Continue,
    /// The answer is complete; stop (the body is dropped).
    Stop,
}

/// Receives lines; says whether to read on.
pub(crate) type LineSink<'a> = &'a mut (dyn FnMut(&str) -> Result<Flow, ModelError> + Send);

/// Hands every line of `body` to `each` until the body ends or `each`
/// says stop. The body is dropped on return, so stopping early, an error
/// or a cancel closes the connection.
pub(crate) async fn read_lines(
    mut body: Body,
    cancel: &CancellationToken,
    scrub: &Scrub,
    each: LineSink<'_>,
) -> Result<(), ModelError> {
    let mut lines = LineSplitter::default();
    let mut stopped = false;
    while let Some(chunk) = body.next(cancel, scrub).await? {
        lines.push(chunk.as_ref(), &mut |line| {
            step(line, &mut stopped, cancel, &mut *each)
        })?;
        if stopped {
            return Ok(());
        }
    }
    lines.finish(&mut |line| step(line, &mut stopped, cancel, &mut *each))
}

fn step(
    line: &str,
    stopped: &mut bool,
    cancel: &CancellationToken,
    each: LineSink<'_>,
) -> Result<(), ModelError> {
    // A callback may cancel mid-chunk; the lines after it are not read.
    if cancel.is_cancelled() {
        return Err(ModelError::Cancelled);
    }
    if !*stopped && each(line)? == Flow::Stop {
        *stopped = true;
    }
    Ok(())
}
