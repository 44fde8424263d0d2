//! A login link carried to the person: a tool's missing-credential
//! result whose `details.login_url` holds a login link (the `oscova.mcp`
//! plugin's, when its host serves logins by link, as `oscova serve` does:
//! the host's own start page, `{public_url}/oauth/mcp/login?id=…`, which
//! checks that the person opening it is the user it was made for before
//! sending their browser to the authorization server) becomes, for a
//! client that declared URL-mode
//! elicitation, the `-32042` URL-elicitation-required error (MCP
//! 2025-11-25) naming that URL, so the client shows the person the link
//! and retries the call once they have logged in.
//!
//! Rules: the link is only ever in the answer to the call of the user it
//! was made for (it is that call's result). A client that did not
//! declare URL-mode elicitation gets the missing-credential result as
//! before, the link taken out of it (`structuredContent` without
//! `login_url`): the contract's rule, guidance inside the call's result.
//! The error's `data` is `{"elicitations": [{"mode": "url",
//! "elicitationId", "url", "message"}]}`.

use rmcp::model::{CallToolResponse, CallToolResult, ErrorCode, ErrorData};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;

/// MCP's URL-elicitation-required error code (2025-11-25).
pub const URL_ELICITATION_REQUIRED: i32 = -32042;

/// Whether the request's client declared URL-mode elicitation.
fn takes_urls(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|caps| caps.elicitation)
        .is_some_and(|e| e.url.is_some())
}

/// The link a missing-credential result carries, taken out of it.
fn take_link(result: &mut CallToolResult) -> Option<String> {
    let details = result.structured_content.as_mut()?.as_object_mut()?;
    if details.get("error").and_then(|e| e.as_str()) != Some("missing_credential") {
        return None;
    }
    match details.remove("login_url")? {
        serde_json::Value::String(url) => Some(url),
        _ => None,
    }
}

/// The text of `result`'s first text block.
fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .find_map(|block| block.as_text().map(|t| t.text.clone()))
        .unwrap_or_default()
}

/// `response` with its login link carried as the client can take it.
pub(crate) fn carry(
    response: Result<CallToolResponse, ErrorData>,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let Ok(CallToolResponse::Complete(mut result)) = response else {
        return response;
    };
    let Some(url) = take_link(&mut result) else {
        return Ok(CallToolResponse::Complete(result));
    };
    if !takes_urls(context) {
        return Ok(CallToolResponse::Complete(result));
    }
    let mut id = [0u8; 16];
    if getrandom::fill(&mut id).is_err() {
        return Ok(CallToolResponse::Complete(result));
    }
    let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let message = format!(
        "{} Open the link to log in, then call the tool again.",
        text_of(&result)
    );
    Err(ErrorData::new(
        ErrorCode(URL_ELICITATION_REQUIRED),
        message.clone(),
        Some(json!({
            "elicitations": [{
                "mode": "url",
                "elicitationId": id,
                "url": url,
                "message": message,
            }]
        })),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    fn result(details: serde_json::Value) -> CallToolResult {
        let mut result = CallToolResult::error(vec![ContentBlock::text("log in first")]);
        result.structured_content = Some(details);
        result
    }

    #[test]
    fn only_a_missing_credential_result_gives_up_its_link() {
        let mut missing = result(json!({
            "error": "missing_credential",
            "login": "oscova mcp login up --user alice",
            "login_url": "https://gw.example.com/oauth/mcp/login?id=s",
        }));
        assert_eq!(
            take_link(&mut missing).as_deref(),
            Some("https://gw.example.com/oauth/mcp/login?id=s")
        );
        assert_eq!(
            missing.structured_content,
            Some(
                json!({"error": "missing_credential", "login": "oscova mcp login up --user alice"})
            ),
            "the link is taken out of what any client sees"
        );
        assert_eq!(text_of(&missing), "log in first");
        // Another error's `login_url` is the tool's own detail, left alone.
        let mut other = result(json!({"error": "other", "login_url": "https://x.example"}));
        assert_eq!(take_link(&mut other), None);
        assert_eq!(
            other.structured_content,
            Some(json!({"error": "other", "login_url": "https://x.example"}))
        );
        // Not a string: no link.
        let mut odd = result(json!({"error": "missing_credential", "login_url": 7}));
        assert_eq!(take_link(&mut odd), None);
    }
}
