//! From response bytes to text: what the body is, which charset, and the
//! readable text of HTML.
//!
//! Rules: the `Content-Type` decides the kind when it is specific
//! (`text/html` is HTML, other `text/*` and the JSON/XML/JavaScript
//! family are text, `image/*`, `audio/*`, `video/*`, `font/*`, PDF and
//! archives are binary); when it is absent or generic
//! (`application/octet-stream`), the first bytes decide (a NUL byte is
//! binary, a leading `<!doctype html` or `<html` is HTML). The charset is,
//! in order: a byte-order mark, the header's `charset`, for HTML a
//! `<meta charset>` in the first 1024 bytes; without one, UTF-8 if the
//! bytes are valid UTF-8, else windows-1252 for HTML (the HTML standard's
//! fallback) or lossy UTF-8 for text, with a note either way. A body cut
//! at the size cap is decoded without its incomplete last character.
//! HTML nested deeper than [`MAX_NESTING`] elements is refused before it
//! is rendered (found by one linear scan): the renderer's time grows with
//! the square of the depth, and it cannot be stopped once it runs.

use encoding_rs::{CoderResult, Encoding, UTF_8, WINDOWS_1252};

/// What a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyKind {
    Html,
    Text,
    Binary,
}

/// The kind the header alone gives, if it is specific enough.
pub(crate) fn kind_from_header(content_type: Option<&str>) -> Option<BodyKind> {
    let essence = essence(content_type?);
    let (top, sub) = essence.split_once('/')?;
    let text_like = |s: &str| {
        matches!(
            s,
            "json"
                | "xml"
                | "javascript"
                | "ecmascript"
                | "x-javascript"
                | "yaml"
                | "x-yaml"
                | "toml"
                | "csv"
                | "x-ndjson"
                | "ndjson"
                | "sql"
                | "graphql"
        ) || s.ends_with("+json")
            || s.ends_with("+xml")
    };
    match (top, sub) {
        ("text", "html") | ("application", "xhtml+xml") => Some(BodyKind::Html),
        ("text", _) => Some(BodyKind::Text),
        ("application", s) if text_like(s) => Some(BodyKind::Text),
        ("image" | "audio" | "video" | "font" | "model", _) => Some(BodyKind::Binary),
        (
            "application",
            "pdf" | "zip" | "gzip" | "x-gzip" | "x-tar" | "x-7z-compressed" | "x-rar-compressed"
            | "wasm" | "x-bzip2" | "zstd" | "msword" | "x-msdownload" | "x-executable",
        ) => Some(BodyKind::Binary),
        ("application", s) if s.starts_with("vnd.") && !text_like(s) => Some(BodyKind::Binary),
        _ => None,
    }
}

/// The kind from the first bytes, for bodies the header left open.
pub(crate) fn sniff(bytes: &[u8]) -> BodyKind {
    let head = bytes.get(..1024).unwrap_or(bytes);
    if head.contains(&0) {
        return BodyKind::Binary;
    }
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    let lead: Vec<u8> = head
        .get(start..)
        .unwrap_or_default()
        .iter()
        .take(14)
        .map(u8::to_ascii_lowercase)
        .collect();
    if lead.starts_with(b"<!doctype html") || lead.starts_with(b"<html") {
        BodyKind::Html
    } else {
        BodyKind::Text
    }
}

/// `text/html; charset=utf-8` → `text/html`.
pub(crate) fn essence(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// The `charset` parameter of a content type.
pub(crate) fn header_charset(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (key, value) = param.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(['"', '\'']).to_owned())
            .filter(|v| !v.is_empty())
    })
}

/// A `charset` declared by a `<meta>` tag near the start of an HTML body.
pub(crate) fn meta_charset(bytes: &[u8]) -> Option<String> {
    let head: Vec<u8> = bytes
        .get(..1024)
        .unwrap_or(bytes)
        .iter()
        .map(u8::to_ascii_lowercase)
        .collect();
    let mut from = 0;
    while let Some(at) = find(head.get(from..)?, b"<meta") {
        let tag_start = from + at;
        let tag_end = find(head.get(tag_start..)?, b">").map_or(head.len(), |e| tag_start + e);
        let tag = head.get(tag_start..tag_end)?;
        if let Some(c) = find(tag, b"charset=") {
            let value: String = tag
                .get(c + 8..)?
                .iter()
                .skip_while(|b| matches!(b, b'"' | b'\'' | b' '))
                .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':' | b'.'))
                .map(|b| char::from(*b))
                .collect();
            if !value.is_empty() {
                return Some(value);
            }
        }
        from = tag_end;
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Decoded text, the charset used, and a note when something was guessed
/// or replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decoded {
    pub(crate) text: String,
    pub(crate) charset: &'static str,
    pub(crate) note: Option<String>,
}

/// Decodes a body; `complete` is false when it was cut at the size cap.
pub(crate) fn decode(
    bytes: &[u8],
    content_type: Option<&str>,
    kind: BodyKind,
    complete: bool,
) -> Decoded {
    let declared = content_type.and_then(header_charset).or_else(|| {
        (kind == BodyKind::Html)
            .then(|| meta_charset(bytes))
            .flatten()
    });
    let mut note = None;
    let encoding = match Encoding::for_bom(bytes) {
        Some((bom, _)) => bom,
        None => match declared.as_deref() {
            Some(label) => Encoding::for_label(label.as_bytes()).unwrap_or_else(|| {
                note = Some(format!("unknown charset `{label}`; decoded as UTF-8"));
                UTF_8
            }),
            None if valid_utf8_prefix(bytes, complete) => UTF_8,
            None if kind == BodyKind::Html => {
                note = Some(
                    "no charset declared and the body is not UTF-8; decoded as windows-1252"
                        .to_owned(),
                );
                WINDOWS_1252
            }
            None => UTF_8,
        },
    };
    let (text, had_errors) = run_decoder(encoding, bytes, complete);
    if had_errors && note.is_none() {
        note = Some(format!(
            "some bytes are not valid {}; they are shown as U+FFFD",
            encoding.name()
        ));
    }
    Decoded {
        text,
        charset: encoding.name(),
        note,
    }
}

/// Valid UTF-8, allowing a character cut at the end of an incomplete body.
fn valid_utf8_prefix(bytes: &[u8], complete: bool) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(e) => !complete && e.error_len().is_none(),
    }
}

fn run_decoder(encoding: &'static Encoding, bytes: &[u8], last: bool) -> (String, bool) {
    let mut decoder = encoding.new_decoder();
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 2 + 16);
    let mut input = bytes;
    let mut had_errors = false;
    loop {
        let (result, read, errors) = decoder.decode_to_string(input, &mut out, last);
        had_errors |= errors;
        input = input.get(read..).unwrap_or_default();
        match result {
            CoderResult::InputEmpty => return (out, had_errors),
            CoderResult::OutputFull => out.reserve(input.len() * 3 + 16),
        }
    }
}

/// The deepest element nesting [`html_to_text`] renders. The renderer's
/// time grows with the square of the depth (4,000 nested `<div>`s: 0.7 s
/// in a debug build; the 200,000 of a 1 MB page: half an hour), so a
/// deeper page is refused before it is rendered.
pub(crate) const MAX_NESTING: usize = 1_000;

/// The readable text of an HTML document, links listed as footnotes; a
/// document nested deeper than [`MAX_NESTING`] is refused.
pub(crate) fn html_to_text(html: &str, width: usize) -> Result<String, String> {
    if nesting_over(html.as_bytes(), MAX_NESTING) {
        return Err(format!(
            "its elements nest more than {MAX_NESTING} levels deep, deeper than this tool renders"
        ));
    }
    html2text::config::plain()
        .link_footnotes(true)
        .no_table_borders()
        .allow_width_overflow()
        .string_from_read(html.as_bytes(), width)
        .map_err(|e| e.to_string())
}

/// Elements without an end tag.
const VOID: [&[u8]; 14] = [
    b"area", b"base", b"br", b"col", b"embed", b"hr", b"img", b"input", b"link", b"meta", b"param",
    b"source", b"track", b"wbr",
];

/// Elements whose content is text up to their own end tag.
const RAW_TEXT: [&[u8]; 5] = [b"script", b"style", b"textarea", b"title", b"xmp"];

/// Whether the elements of `html` nest more than `limit` deep, by one
/// linear scan that counts a start tag (not void, not self-closing) one
/// level in and an end tag one level out, skipping comments and the text
/// of `<script>` and its kind. Implicitly closed elements (`<p>`, `<li>`)
/// can only make it count deeper than the renderer will nest, never less.
fn nesting_over(html: &[u8], limit: usize) -> bool {
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(lt) = html
        .get(at..)
        .and_then(|rest| find(rest, b"<"))
        .map(|i| at + i)
    {
        let rest = html.get(lt + 1..).unwrap_or_default();
        match rest.first() {
            Some(b'/') => {
                depth = depth.saturating_sub(1);
                at = lt + 2;
            }
            Some(b'!') if rest.starts_with(b"!--") => {
                at = find(rest, b"-->").map_or(html.len(), |end| lt + 1 + end + 3);
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let name_len = rest
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
                    .count();
                let name = rest
                    .get(..name_len)
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                let close = find(rest, b">").map_or(html.len(), |end| lt + 1 + end);
                let self_closing = close > 0 && html.get(close - 1) == Some(&b'/');
                at = close + 1;
                if RAW_TEXT.contains(&name.as_slice()) {
                    let mut end_tag = b"</".to_vec();
                    end_tag.extend_from_slice(&name);
                    let lower = |b: &u8| b.to_ascii_lowercase();
                    let tail: Vec<u8> = html
                        .get(at..)
                        .unwrap_or_default()
                        .iter()
                        .map(lower)
                        .collect();
                    at = find(&tail, &end_tag).map_or(html.len(), |end| at + end);
                } else if !self_closing && !VOID.contains(&name.as_slice()) {
                    depth += 1;
                    if depth > limit {
                        return true;
                    }
                }
            }
            _ => at = lt + 1,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_kinds() {
        let k = |ct| kind_from_header(Some(ct));
        assert_eq!(k("text/html; charset=utf-8"), Some(BodyKind::Html));
        assert_eq!(k("TEXT/PLAIN"), Some(BodyKind::Text));
        assert_eq!(k("application/ld+json"), Some(BodyKind::Text));
        assert_eq!(k("image/png"), Some(BodyKind::Binary));
        assert_eq!(k("application/vnd.ms-excel"), Some(BodyKind::Binary));
        assert_eq!(k("application/octet-stream"), None);
        assert_eq!(kind_from_header(None), None);
    }

    #[test]
    fn sniffing() {
        assert_eq!(sniff(b"  <!DOCTYPE html><p>x"), BodyKind::Html);
        assert_eq!(sniff(b"plain words"), BodyKind::Text);
        assert_eq!(sniff(b"PK\x03\x04\0\0"), BodyKind::Binary);
    }

    #[test]
    fn charsets() {
        assert_eq!(
            header_charset("text/html; Charset=\"ISO-8859-1\"").as_deref(),
            Some("ISO-8859-1")
        );
        assert_eq!(
            meta_charset(b"<head><META charset='koi8-r'>").as_deref(),
            Some("koi8-r")
        );
        assert_eq!(
            meta_charset(
                b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=shift_jis\">"
            )
            .as_deref(),
            Some("shift_jis")
        );
        let d = decode(
            b"caf\xe9",
            Some("text/plain; charset=latin1"),
            BodyKind::Text,
            true,
        );
        assert_eq!(
            (d.text.as_str(), d.charset, d.note),
            ("café", "windows-1252", None)
        );
        let d = decode(b"caf\xe9", None, BodyKind::Text, true);
        assert_eq!(d.text, "caf\u{fffd}");
        assert!(d.note.unwrap().contains("not valid UTF-8"));
        let d = decode(b"caf\xe9", None, BodyKind::Html, true);
        assert_eq!(d.text, "café");
        assert!(d.note.unwrap().contains("windows-1252"));
    }

    #[test]
    fn a_cut_character_is_dropped_without_a_note() {
        let bytes = "ab€".as_bytes();
        let d = decode(bytes.get(..4).unwrap(), None, BodyKind::Text, false);
        assert_eq!((d.text.as_str(), d.note), ("ab", None));
    }

    #[test]
    fn nesting_is_counted_linearly_and_capped() {
        let page = b"<p>a<br><img src=x/><div>b</div></p><p>c</p>";
        assert!(!nesting_over(page, 2) && nesting_over(page, 1));
        assert!(nesting_over(b"<div><div>", 1));
        assert!(!nesting_over(
            b"<!-- <div><div> --><script>if (a<b && c<d) {}</script>x",
            0
        ));
        assert!(!nesting_over(&b"<div></div>".repeat(10_000), 1));
        let deep = "<div>".repeat(200_000);
        assert!(nesting_over(deep.as_bytes(), MAX_NESTING));
        let err = html_to_text(&deep, 80).unwrap_err();
        assert!(err.contains("more than 1000 levels"), "{err}");
        let fine = format!("{}text", "<div>".repeat(50));
        assert_eq!(html_to_text(&fine, 80).unwrap().trim(), "text");
    }

    #[test]
    fn html_becomes_text() {
        let text = html_to_text(
            "<html><head><title>T</title><style>p{}</style><script>var x=1;</script></head>\
             <body><h1>Hello</h1><p>A <a href=\"/next\">link</a>.</p></body></html>",
            80,
        )
        .unwrap();
        assert!(text.contains("Hello"), "{text}");
        assert!(text.contains("/next"), "{text}");
        assert!(!text.contains("var x"), "{text}");
    }
}
