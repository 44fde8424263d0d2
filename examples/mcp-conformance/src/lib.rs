//! The conformance plugin: the fixture tools the official MCP conformance
//! suite (npm package `@modelcontextprotocol/conformance`) calls, each
//! doing what the suite's scenario description asks, built only on the
//! public API. Served with short names, so each tool's wire-name tool
//! segment is the fixture's name. The fixture prompts and resources are
//! in [`offer`].

pub mod offer;

use std::time::Duration;

use oscova_core::interaction::{Answer, Form, FormField, Question};
use oscova_core::prelude::*;
use oscova_core::tool::{LogLevel, decode_base64};

/// A 1x1 red pixel, PNG.
const RED_PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

pub(crate) fn red_pixel() -> Vec<u8> {
    decode_base64(RED_PIXEL_PNG).unwrap_or_default()
}

/// A tenth of a second of silence: 16-bit mono PCM at 8 kHz, WAV.
fn silence_wav() -> Vec<u8> {
    const RATE: u32 = 8_000;
    let samples = RATE / 10;
    let data_len = samples * 2;
    let mut wav = Vec::with_capacity(44 + data_len as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data_len).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&RATE.to_le_bytes());
    wav.extend_from_slice(&(RATE * 2).to_le_bytes()); // bytes per second
    wav.extend_from_slice(&2u16.to_le_bytes()); // block align
    wav.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&data_len.to_le_bytes());
    wav.resize(44 + data_len as usize, 0);
    wav
}

/// How an answer reads in the fixtures' replies.
fn describe(answer: &Answer) -> (&'static str, String) {
    match answer {
        Answer::Accept(values) => (
            "accept",
            oscova_core::serde_json::Value::Object(values.clone()).to_string(),
        ),
        Answer::Decline => ("decline", "{}".to_owned()),
        Answer::Cancel => ("cancel", "{}".to_owned()),
    }
}

/// Asks `form` and reports the answer as the SEP-1034 and SEP-1330
/// scenarios expect: `Elicitation completed: action=…, content=…`.
async fn completed(
    invocation: &ToolInvocation<'_>,
    message: &str,
    form: Form,
) -> Result<String, String> {
    let answer = invocation
        .ask(Question::Form {
            message: message.to_owned(),
            form,
        })
        .await
        .map_err(|e| e.to_string())?;
    let (action, content) = describe(&answer);
    Ok(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

/// The fixture tools.
pub struct ConformanceToolset;

#[toolset]
impl ConformanceToolset {
    /// Returns a simple text response.
    pub fn test_simple_text() -> String {
        "This is a simple text response for testing.".to_owned()
    }

    /// Always fails, with a message.
    pub fn test_error_handling() -> Result<String, String> {
        Err("This tool intentionally returns an error for testing".to_owned())
    }

    /// Returns a 1x1 PNG image.
    pub fn test_image_content() -> ToolResult {
        ToolResult::text(String::new()).with_image(red_pixel(), "image/png")
    }

    /// Returns a short WAV sound.
    pub fn test_audio_content() -> ToolResult {
        ToolResult::text(String::new()).with_audio(silence_wav(), "audio/wav")
    }

    /// Returns an embedded text resource.
    pub fn test_embedded_resource() -> ToolResult {
        ToolResult::text(String::new()).with_resource_text(
            "test://embedded-resource",
            Some("text/plain"),
            "This is an embedded resource content.",
        )
    }

    /// Returns text, an image and an embedded resource.
    pub fn test_multiple_content_types() -> ToolResult {
        ToolResult::text("Multiple content types test:")
            .with_image(red_pixel(), "image/png")
            .with_resource_text(
                "test://mixed-content-resource",
                Some("application/json"),
                r#"{"test":"data","value":123}"#,
            )
    }

    /// Logs three messages at info level, about 50 ms apart.
    pub async fn test_tool_with_logging(invocation: &ToolInvocation) -> String {
        invocation.log(LogLevel::Info, "Tool execution started");
        tokio::time::sleep(Duration::from_millis(50)).await;
        invocation.log(LogLevel::Info, "Tool processing data");
        tokio::time::sleep(Duration::from_millis(50)).await;
        invocation.log(LogLevel::Info, "Tool execution completed");
        "Logging test completed".to_owned()
    }

    /// Asks the person for a user name and an email address.
    pub async fn test_elicitation(
        /// The message to show the user.
        message: String,
        invocation: &ToolInvocation,
    ) -> Result<String, String> {
        let form = Form::new()
            .required_text("username", "User's response")
            .required_text("email", "User's email address");
        let answer = invocation
            .ask(Question::Form { message, form })
            .await
            .map_err(|e| e.to_string())?;
        let (action, content) = describe(&answer);
        Ok(format!("User response: action={action}, content={content}"))
    }

    /// Asks for a form whose every field has a default (SEP-1034).
    pub async fn test_elicitation_sep1034_defaults(
        invocation: &ToolInvocation,
    ) -> Result<String, String> {
        let form = Form::new()
            .field(FormField::text("name", "Name").with_default("John Doe"))
            .field(FormField::integer("age", "Age").with_default(30))
            .field(FormField::number("score", "Score").with_default(95.5))
            .field(
                FormField::choice("status", "Status", ["active", "inactive", "pending"])
                    .with_default("active"),
            )
            .field(FormField::boolean("verified", "Verified").with_default(true));
        let message = "Please review and update the form fields with defaults";
        completed(invocation, message, form).await
    }

    /// Asks for each of SEP-1330's five kinds of choice: untitled and
    /// titled single select, the legacy `enumNames` labels, and untitled
    /// and titled multiple select.
    pub async fn test_elicitation_sep1330_enums(
        invocation: &ToolInvocation,
    ) -> Result<String, String> {
        let form = Form::new()
            .optional_choice(
                "untitledSingle",
                "Untitled single",
                ["option1", "option2", "option3"],
            )
            .optional_choice(
                "titledSingle",
                "Titled single",
                [
                    ("value1", "First Option"),
                    ("value2", "Second Option"),
                    ("value3", "Third Option"),
                ],
            )
            .field(
                FormField::choice(
                    "legacyEnum",
                    "Legacy titled",
                    [
                        ("opt1", "Option One"),
                        ("opt2", "Option Two"),
                        ("opt3", "Option Three"),
                    ],
                )
                .legacy_titles(),
            )
            .optional_multi_choice(
                "untitledMulti",
                "Untitled multiple",
                ["option1", "option2", "option3"],
            )
            .optional_multi_choice(
                "titledMulti",
                "Titled multiple",
                [
                    ("value1", "First Choice"),
                    ("value2", "Second Choice"),
                    ("value3", "Third Choice"),
                ],
            );
        completed(
            invocation,
            "Please select options from the enum fields",
            form,
        )
        .await
    }

    /// Reports progress 0, 50 and 100 of 100, about 50 ms apart.
    pub async fn test_tool_with_progress(invocation: &ToolInvocation) -> String {
        for (step, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            if step > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            invocation.report(ToolProgress::ratio(
                format!("{progress}/100"),
                progress,
                Some(100.0),
            ));
        }
        "Progress test completed".to_owned()
    }
}

/// The plugin that contributes [`ConformanceToolset`].
#[plugin(
    id = "mcp.conformance",
    name = "MCP conformance fixtures",
    framework = ">=0.1"
)]
pub struct ConformancePlugin;

impl AgentPlugin for ConformancePlugin {
    fn configure(&self, builder: &mut AgentPluginBuilder) {
        builder.add_toolset(|_: &AgentPluginContext| ConformanceToolset);
    }
}
