//! Lines from bytes that arrive split anywhere: the layer under NDJSON and
//! server-sent events.
//!
//! Rules: bytes are buffered until a whole line is there, and only then
//! decoded as UTF-8, so a chunk boundary inside a character, a JSON value
//! or an SSE field is invisible. Lines end in `\n` or `\r\n` (the `\r` is
//! dropped); a last line without its newline is handed over by
//! [`LineSplitter::finish`], unless it is empty. A line that is not UTF-8
//! is [`BackendError::Malformed`] with an excerpt of it, and so is a line
//! longer than the limit ([`MAX_LINE`] unless set), rather than unbounded
//! memory; either reaches the caller as its own error type, through
//! `From<BackendError>`. What a line means (a JSON object, an SSE field, a
//! blank line ending an event) is the caller's business.

use super::error::BackendError;
use super::scrub::excerpt;

/// The longest line a [`LineSplitter`] accepts by default, in bytes.
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// Collects bytes into lines, UTF-8 safe across chunk boundaries.
///
/// Feed it every chunk of a body with [`push`](Self::push), then call
/// [`finish`](Self::finish) once at the end of the body.
///
/// ```
/// use oscova_core::http::backend::{BackendError, LineSplitter};
///
/// let mut lines = LineSplitter::default();
/// let mut seen = Vec::new();
/// // "é" is two bytes; the chunk boundary falls between them.
/// for chunk in [&b"{\"a\":\"\xc3"[..], b"\xa9\"}\r\n{\"done\":", b"true}"] {
///     lines.push(chunk, &mut |line| {
///         seen.push(line.to_owned());
///         Ok::<(), BackendError>(())
///     })?;
/// }
/// lines.finish(&mut |line| {
///     seen.push(line.to_owned());
///     Ok::<(), BackendError>(())
/// })?;
/// assert_eq!(seen, ["{\"a\":\"é\"}", "{\"done\":true}"]);
/// # Ok::<(), BackendError>(())
/// ```
#[derive(Debug)]
pub struct LineSplitter {
    buf: Vec<u8>,
    /// Bytes before this index hold no newline.
    scanned: usize,
    max_line: usize,
}

impl Default for LineSplitter {
    /// A splitter accepting lines up to [`MAX_LINE`] bytes.
    fn default() -> Self {
        Self::with_max_line(MAX_LINE)
    }
}

impl LineSplitter {
    /// A splitter accepting lines up to `max_line` bytes.
    ///
    /// ```
    /// use oscova_core::http::backend::{BackendError, LineSplitter};
    ///
    /// let mut lines = LineSplitter::with_max_line(4);
    /// let err: BackendError = lines.push(b"12345", &mut |_| Ok(())).unwrap_err();
    /// assert!(matches!(err, BackendError::Malformed { .. }), "{err}");
    /// ```
    pub fn with_max_line(max_line: usize) -> Self {
        Self {
            buf: Vec::new(),
            scanned: 0,
            max_line,
        }
    }

    /// Adds bytes and hands every line they complete to `each`, in order.
    ///
    /// The first error, from decoding or from `each`, stops the chunk and
    /// is returned; the lines after it in this chunk are dropped.
    pub fn push<E: From<BackendError>>(
        &mut self,
        bytes: &[u8],
        each: &mut dyn FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
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
            result = decode(line).map_err(E::from).and_then(&mut *each);
            if result.is_err() {
                break;
            }
        }
        self.buf.drain(..start);
        self.scanned = self.buf.len();
        if result.is_ok() && self.buf.len() > self.max_line {
            return Err(E::from(BackendError::Malformed {
                message: format!("a line is longer than {} bytes", self.max_line),
                line: excerpt(&String::from_utf8_lossy(&self.buf)),
            }));
        }
        result
    }

    /// Ends the body: hands a last line left without its newline to
    /// `each`, if it is not empty, and leaves the splitter empty.
    pub fn finish<E: From<BackendError>>(
        &mut self,
        each: &mut dyn FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        let rest = std::mem::take(&mut self.buf);
        self.scanned = 0;
        let line = rest.strip_suffix(b"\r").unwrap_or(&rest);
        if line.is_empty() {
            return Ok(());
        }
        each(decode(line)?)
    }
}

fn decode(line: &[u8]) -> Result<&str, BackendError> {
    std::str::from_utf8(line).map_err(|e| BackendError::Malformed {
        message: format!("a line is not UTF-8 ({e})"),
        line: excerpt(&String::from_utf8_lossy(line)),
    })
}

#[cfg(test)]
mod tests {
    use crate::provider::model::ModelError;

    use super::*;

    fn lines(pieces: &[&[u8]]) -> Result<Vec<String>, ModelError> {
        let mut buffer = LineSplitter::default();
        let mut out = Vec::new();
        for piece in pieces {
            buffer.push::<ModelError>(piece, &mut |l| {
                out.push(l.to_owned());
                Ok(())
            })?;
        }
        buffer.finish::<ModelError>(&mut |l| {
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
        assert!(
            matches!(&err, ModelError::Malformed { line, .. } if line.starts_with("{\"a\":")),
            "{err:?}"
        );
    }

    #[test]
    fn a_line_past_the_limit_is_malformed_but_one_at_it_is_not() {
        let mut at = LineSplitter::with_max_line(4);
        let mut seen = Vec::new();
        at.push::<ModelError>(b"1234", &mut |_| Ok(())).unwrap();
        at.push::<ModelError>(b"\n5678\n", &mut |l| {
            seen.push(l.to_owned());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, ["1234", "5678"]);

        let err = LineSplitter::with_max_line(4)
            .push(b"12345", &mut |_| Ok(()))
            .unwrap_err();
        assert!(
            matches!(&err, ModelError::Malformed { message, line }
                if message == "a line is longer than 4 bytes" && line == "12345"),
            "{err:?}"
        );
    }

    #[test]
    fn an_error_from_the_callback_stops_the_chunk() {
        let mut splitter = LineSplitter::default();
        let mut seen = 0;
        let err = splitter
            .push(b"a\nb\nc\n", &mut |_| {
                seen += 1;
                Err(ModelError::Cancelled)
            })
            .unwrap_err();
        assert!(matches!(err, ModelError::Cancelled));
        assert_eq!(seen, 1);
    }

    #[test]
    fn finish_drops_a_lone_carriage_return_and_empties_the_splitter() {
        let mut splitter = LineSplitter::default();
        splitter.push::<ModelError>(b"\r", &mut |_| Ok(())).unwrap();
        let mut seen = Vec::new();
        splitter
            .finish::<ModelError>(&mut |l| {
                seen.push(l.to_owned());
                Ok(())
            })
            .unwrap();
        assert!(seen.is_empty());
        splitter.push::<ModelError>(b"x", &mut |_| Ok(())).unwrap();
        splitter
            .finish::<ModelError>(&mut |l| {
                seen.push(l.to_owned());
                Ok(())
            })
            .unwrap();
        assert_eq!(seen, ["x"]);
    }
}
