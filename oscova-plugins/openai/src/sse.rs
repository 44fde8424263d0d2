//! Server-sent events, decoded from bytes that arrive split anywhere.
//!
//! Rules: the bytes become lines through `oscova_core::http::backend`'s
//! [`LineSplitter`], which buffers until a whole line is there and only
//! then decodes it, so a split inside a character or inside `data:` is
//! invisible; lines end in `\n` or `\r\n`. Following the SSE format, a line
//! starting with `:` is a comment, `field: value` sets a field (one space
//! after the colon dropped), several `data` lines of one event are joined
//! with `\n`, and a blank line dispatches the event. Only `data` matters
//! to chat completions; other fields are ignored. A line longer than
//! [`MAX_LINE`](oscova_core::http::backend::MAX_LINE) is an error rather
//! than unbounded memory.

use oscova_core::http::backend::LineSplitter;
use oscova_core::provider::model::ModelError;

/// Turns lines into the `data` of each event.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    lines: LineSplitter,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// Adds bytes and hands the data of every completed event to `each`.
    pub(crate) fn push(
        &mut self,
        bytes: &[u8],
        each: &mut dyn FnMut(&str) -> Result<(), ModelError>,
    ) -> Result<(), ModelError> {
        let Self {
            lines,
            data,
            has_data,
        } = self;
        lines.push(bytes, &mut |line| on_line(line, data, has_data, each))
    }

    /// Ends the stream, dispatching an event left without its blank line.
    pub(crate) fn finish(
        &mut self,
        each: &mut dyn FnMut(&str) -> Result<(), ModelError>,
    ) -> Result<(), ModelError> {
        let Self {
            lines,
            data,
            has_data,
        } = self;
        lines.finish(&mut |line| on_line(line, data, has_data, each))?;
        on_line("", data, has_data, each)
    }
}

fn on_line(
    line: &str,
    data: &mut String,
    has_data: &mut bool,
    each: &mut dyn FnMut(&str) -> Result<(), ModelError>,
) -> Result<(), ModelError> {
    if line.is_empty() {
        if !*has_data {
            return Ok(());
        }
        *has_data = false;
        let event = std::mem::take(data);
        return each(&event);
    }
    if line.starts_with(':') {
        return Ok(());
    }
    let (field, value) = match line.split_once(':') {
        Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
        None => (line, ""),
    };
    if field == "data" {
        if *has_data {
            data.push('\n');
        }
        data.push_str(value);
        *has_data = true;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(pieces: &[&[u8]]) -> Result<Vec<String>, ModelError> {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for piece in pieces {
            parser.push(piece, &mut |d| {
                out.push(d.to_owned());
                Ok(())
            })?;
        }
        parser.finish(&mut |d| {
            out.push(d.to_owned());
            Ok(())
        })?;
        Ok(out)
    }

    const STREAM: &str = ": keep-alive\r\n\r\nevent: message\ndata: {\"t\":\"h\u{e9}llo \u{1f600}\"}\n\ndata: first\ndata:second\nid: 7\n\ndata: [DONE]\n\n";

    #[test]
    fn every_split_point_gives_the_same_events() {
        let bytes = STREAM.as_bytes();
        let whole = events(&[bytes]).unwrap();
        assert_eq!(
            whole,
            [
                "{\"t\":\"h\u{e9}llo \u{1f600}\"}",
                "first\nsecond",
                "[DONE]"
            ]
        );
        for cut in 0..=bytes.len() {
            for cut2 in cut..=bytes.len() {
                let (a, rest) = bytes.split_at(cut);
                let (b, c) = rest.split_at(cut2 - cut);
                assert_eq!(events(&[a, b, c]).unwrap(), whole, "cuts at {cut}, {cut2}");
            }
        }
    }

    #[test]
    fn one_byte_at_a_time() {
        let pieces: Vec<&[u8]> = STREAM.as_bytes().chunks(1).collect();
        assert_eq!(events(&pieces).unwrap().len(), 3);
    }

    #[test]
    fn a_last_event_without_its_blank_line_still_counts() {
        assert_eq!(events(&[b"data: x"]).unwrap(), ["x"]);
    }

    #[test]
    fn invalid_utf8_is_malformed_with_the_line() {
        let err = events(&[b"data: \xff\xfe\n\n"]).unwrap_err();
        assert!(
            matches!(&err, ModelError::Malformed { line, .. } if line.starts_with("data: ")),
            "{err:?}"
        );
    }
}
