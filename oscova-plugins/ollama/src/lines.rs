//! Newline-delimited JSON, decoded from bytes that arrive split anywhere.
//!
//! Rules: bytes are buffered until a whole line is there, and only then
//! decoded as UTF-8, so a split inside a character or a JSON value is
//! invisible. Lines end in `\n` or `\r\n`; a last line without its newline
//! still counts. A line longer than [`MAX_LINE`] is an error rather than
//! unbounded memory.

use oscova_core::CancellationToken;
use oscova_core::provider::model::ModelError;

use crate::http::{Body, Scrub, excerpt};

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
    let mut lines = LineBuffer::default();
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

/// The longest line accepted, in bytes.
pub(crate) const MAX_LINE: usize = 8 * 1024 * 1024;

/// Collects bytes into lines.
#[derive(Debug, Default)]
pub(crate) struct LineBuffer {
    buf: Vec<u8>,
    /// Bytes before this index hold no newline.
    scanned: usize,
}

impl LineBuffer {
    /// Adds bytes and hands every completed line to `each`.
    pub(crate) fn push(
        &mut self,
        bytes: &[u8],
        each: &mut dyn FnMut(&str) -> Result<(), ModelError>,
    ) -> Result<(), ModelError> {
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        let mut result = Ok(());
        while let Some(offset) = self
            .buf
            .get(self.scanned..)
            .and_then(|rest| rest.iter().position(|b| *b == b'\n'))
        {
            let end = self.scanned + offset;
            self.scanned = end + 1;
            let line = self.buf.get(start..end).unwrap_or_default();
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            start = end + 1;
            result = decode(line).and_then(&mut *each);
            if result.is_err() {
                break;
            }
        }
        self.buf.drain(..start);
        self.scanned = self.buf.len();
        if result.is_ok() && self.buf.len() > MAX_LINE {
            return Err(ModelError::Malformed {
                message: format!("a line is longer than {MAX_LINE} bytes"),
                line: excerpt(&String::from_utf8_lossy(&self.buf)),
            });
        }
        result
    }

    /// Hands a last line without a newline to `each`.
    pub(crate) fn finish(
        &mut self,
        each: &mut dyn FnMut(&str) -> Result<(), ModelError>,
    ) -> Result<(), ModelError> {
        let rest = std::mem::take(&mut self.buf);
        self.scanned = 0;
        let line = rest.strip_suffix(b"\r").unwrap_or(&rest);
        if line.is_empty() {
            return Ok(());
        }
        each(decode(line)?)
    }
}

fn decode(line: &[u8]) -> Result<&str, ModelError> {
    std::str::from_utf8(line).map_err(|e| ModelError::Malformed {
        message: format!("a line is not UTF-8 ({e})"),
        line: excerpt(&String::from_utf8_lossy(line)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(pieces: &[&[u8]]) -> Result<Vec<String>, ModelError> {
        let mut buffer = LineBuffer::default();
        let mut out = Vec::new();
        for piece in pieces {
            buffer.push(piece, &mut |l| {
                out.push(l.to_owned());
                Ok(())
            })?;
        }
        buffer.finish(&mut |l| {
            out.push(l.to_owned());
            Ok(())
        })?;
        Ok(out)
    }

    const STREAM: &str = "{\"status\":\"pulling \u{e9}\u{1f600}\"}\r\n\n{\"done\":true}";

    #[test]
    fn every_split_point_gives_the_same_lines() {
        let bytes = STREAM.as_bytes();
        let whole = lines(&[bytes]).unwrap();
        assert_eq!(
            whole,
            [
                "{\"status\":\"pulling \u{e9}\u{1f600}\"}",
                "",
                "{\"done\":true}"
            ]
        );
        for cut in 0..=bytes.len() {
            for cut2 in cut..=bytes.len() {
                let (a, rest) = bytes.split_at(cut);
                let (b, c) = rest.split_at(cut2 - cut);
                assert_eq!(lines(&[a, b, c]).unwrap(), whole, "cuts at {cut}, {cut2}");
            }
        }
    }

    #[test]
    fn invalid_utf8_is_malformed_with_the_line() {
        let err = lines(&[b"{\"a\":\"\xff\"}\n"]).unwrap_err();
        assert!(matches!(err, ModelError::Malformed { .. }), "{err:?}");
    }
}
