//! The `web` toolset: one `fetch` tool.
//!
//! Rules: requests go only through the context's [`HttpClient`], so the
//! host's network scope applies (`Internet` for this tool: the public
//! Internet, plus what the host allowed by name); one deadline
//! covers connecting, redirects and the body; the body is streamed chunk
//! by chunk and reading stops at the byte cap (the text is then marked
//! truncated, not refused); progress reports the bytes received; a
//! declared binary type is refused before the body is read. Status, final
//! URL, content type and charset are always in `details`; a non-2xx status
//! is an error result that still carries the page's text.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use oscova_core::prelude::*;
use oscova_core::serde_json::json;
use oscova_core::{HttpClient, http::HttpError};

use crate::WebLimits;
use crate::decode::{self, BodyKind};
use crate::error::{WebError, chain};

/// Web tools for one user.
#[derive(Debug, Clone)]
pub struct WebToolset {
    http: HttpClient,
    limits: WebLimits,
}

impl WebToolset {
    /// A toolset sending through `http` (the context's client) within
    /// `limits`.
    pub fn new(http: HttpClient, limits: WebLimits) -> Self {
        Self { http, limits }
    }
}

/// What the body loop produced.
struct Body {
    bytes: Vec<u8>,
    complete: bool,
}

/// The response head, kept for `details`.
struct Head {
    status: u16,
    reason: String,
    final_url: String,
    content_type: Option<String>,
    content_length: Option<u64>,
}

#[toolset]
impl WebToolset {
    /// Fetches a web page or text resource and returns its readable text
    /// (HTML is converted to plain text with links as footnotes; other
    /// text is returned as is). Follows redirects. Binary content is
    /// refused.
    #[tool(network = Internet)]
    pub async fn fetch(
        &self,
        /// The http(s) URL.
        url: String,
        /// Read at most this many bytes of the body (default and maximum
        /// set by the host); a longer body is cut and marked truncated.
        max_bytes: Option<u64>,
        /// Give up after this many seconds (default and maximum set by the host).
        timeout_secs: Option<f64>,
        invocation: &ToolInvocation,
    ) -> Result<ToolResult, WebError> {
        let trimmed = url.trim();
        let lower = trimmed.to_ascii_lowercase();
        if !(lower.starts_with("http://") || lower.starts_with("https://")) {
            return Err(WebError::BadUrl { url });
        }
        let cap = match max_bytes {
            Some(0) => {
                return Err(WebError::BadArgument(
                    "`max_bytes` must be at least 1".to_owned(),
                ));
            }
            Some(n) => n.min(self.limits.max_bytes),
            None => self.limits.default_max_bytes.min(self.limits.max_bytes),
        };
        let timeout = match timeout_secs {
            Some(s) if !(s.is_finite() && s > 0.0) => {
                return Err(WebError::BadArgument(
                    "`timeout_secs` must be a positive number of seconds".to_owned(),
                ));
            }
            // `from_secs_f64` panics past `u64::MAX` seconds (`1e20`), so the
            // conversion is the checked one and an overflow is the maximum.
            Some(s) => Duration::try_from_secs_f64(s)
                .map_or(self.limits.max_timeout, |d| d.min(self.limits.max_timeout)),
            None => self.limits.default_timeout.min(self.limits.max_timeout),
        };
        let received = AtomicU64::new(0);
        let started = Instant::now();
        let fetched =
            tokio::time::timeout(timeout, self.download(trimmed, cap, &received, invocation)).await;
        let (head, body) = match fetched {
            Ok(result) => result?,
            Err(_) => {
                return Err(WebError::Timeout {
                    url: trimmed.to_owned(),
                    seconds: timeout.as_secs_f64(),
                    received: received.load(Ordering::Relaxed),
                });
            }
        };
        let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        render(trimmed, head, body, cap, elapsed_ms, self.limits.text_width).await
    }
}

impl WebToolset {
    async fn download(
        &self,
        url: &str,
        cap: u64,
        received: &AtomicU64,
        invocation: &ToolInvocation<'_>,
    ) -> Result<(Head, Body), WebError> {
        let request_failed = |e: &(dyn std::error::Error + 'static)| WebError::Request {
            url: url.to_owned(),
            reason: chain(e),
        };
        let mut response = self
            .http
            .get(url)
            .header(
                "accept",
                "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5",
            )
            .header(
                "user-agent",
                concat!("oscova-web/", env!("CARGO_PKG_VERSION")),
            )
            .send()
            .await
            .map_err(|e| match e {
                HttpError::ScopeDenied { .. } => WebError::Denied {
                    url: url.to_owned(),
                    reason: e.to_string(),
                },
                other => request_failed(&other),
            })?;
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let status = response.status();
        let head = Head {
            status: status.as_u16(),
            reason: status.canonical_reason().unwrap_or_default().to_owned(),
            final_url: response.url().to_string(),
            content_type: header("content-type"),
            content_length: response.content_length(),
        };
        if decode::kind_from_header(head.content_type.as_deref()) == Some(BodyKind::Binary) {
            return Err(WebError::Binary {
                url: head.final_url,
                content_type: head.content_type.unwrap_or_default(),
            });
        }
        let total = head.content_length.map(|n| n.min(cap) as f64);
        let mut bytes = Vec::new();
        let mut complete = true;
        let mut reported = 0u64;
        while let Some(chunk) = response.chunk().await.map_err(|e| request_failed(&e))? {
            let room =
                usize::try_from(cap.saturating_sub(bytes.len() as u64)).unwrap_or(usize::MAX);
            if chunk.len() > room {
                bytes.extend_from_slice(chunk.get(..room).unwrap_or_default());
                complete = false;
            } else {
                bytes.extend_from_slice(&chunk);
            }
            let so_far = bytes.len() as u64;
            received.store(so_far, Ordering::Relaxed);
            if so_far - reported >= PROGRESS_STEP || !complete {
                reported = so_far;
                invocation.report(ToolProgress::ratio(
                    format!("downloaded {so_far} bytes"),
                    so_far as f64,
                    total,
                ));
            }
            if !complete || so_far >= cap {
                // A body exactly at the cap may still have more: the length
                // says so, or else one more read does.
                if complete {
                    complete = match head.content_length {
                        Some(length) => so_far >= length,
                        None => response
                            .chunk()
                            .await
                            .map_err(|e| request_failed(&e))?
                            .is_none_or(|c| c.is_empty()),
                    };
                }
                break;
            }
        }
        let so_far = bytes.len() as u64;
        if so_far != reported {
            invocation.report(ToolProgress::ratio(
                format!("downloaded {so_far} bytes"),
                so_far as f64,
                total,
            ));
        }
        Ok((head, Body { bytes, complete }))
    }
}

/// Report progress about every this many bytes.
const PROGRESS_STEP: u64 = 64 * 1024;

async fn render(
    url: &str,
    head: Head,
    body: Body,
    cap: u64,
    elapsed_ms: u64,
    width: usize,
) -> Result<ToolResult, WebError> {
    let kind = decode::kind_from_header(head.content_type.as_deref())
        .unwrap_or_else(|| decode::sniff(&body.bytes));
    if kind == BodyKind::Binary {
        return Err(WebError::Binary {
            url: head.final_url,
            content_type: head
                .content_type
                .unwrap_or_else(|| "no content type; the body contains NUL bytes".to_owned()),
        });
    }
    let decoded = decode::decode(
        &body.bytes,
        head.content_type.as_deref(),
        kind,
        body.complete,
    );
    let text = match kind {
        BodyKind::Html => {
            let html = decoded.text;
            tokio::task::spawn_blocking(move || decode::html_to_text(&html, width))
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r)
                .map_err(|reason| WebError::Html {
                    url: head.final_url.clone(),
                    reason,
                })?
        }
        _ => decoded.text,
    };
    let mut notes = Vec::new();
    if !body.complete {
        notes.push(format!(
            "truncated: only the first {cap} bytes were read; ask with a larger `max_bytes` for more"
        ));
    }
    if let Some(note) = &decoded.note {
        notes.push(note.clone());
    }
    let ok = (200..300).contains(&head.status);
    let mut content = if ok {
        text.trim_end().to_owned()
    } else {
        format!(
            "`{url}` answered HTTP {} {}. The page says:\n\n{}",
            head.status,
            head.reason,
            text.trim_end()
        )
    };
    if !notes.is_empty() {
        content.push_str(&format!("\n\n[{}]", notes.join("; ")));
    }
    let details = json!({
        "url": url,
        "final_url": head.final_url,
        "redirected": reqwest::Url::parse(url).map_or(true, |u| u.as_str() != head.final_url),
        "status": head.status,
        "content_type": head.content_type,
        "kind": match kind { BodyKind::Html => "html", _ => "text" },
        "charset": decoded.charset,
        "bytes": body.bytes.len(),
        "content_length": head.content_length,
        "truncated": !body.complete,
        "elapsed_ms": elapsed_ms,
        "notes": notes,
    });
    let result = if ok {
        ToolResult::text(content)
    } else {
        ToolResult::error(content)
    };
    Ok(result.with_details(details))
}
