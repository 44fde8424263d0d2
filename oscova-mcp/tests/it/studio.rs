//! The fixture host's tools for the MCP tests: every kind of content,
//! output schemas (object and wrapped), annotations, questions, logging,
//! progress and a tool that needs approval.

// Shared by two test modules: `pub` for the macros' sake, and
// not every module uses every item.
#![allow(unreachable_pub, dead_code)]

use oscova_core::interaction::{Form, FormField};
use oscova_core::prelude::*;
use oscova_core::tool::LogLevel;
use serde::Serialize;

/// A value the host redacts.
pub const SECRET: &str = "s3cret-token-value";

/// A row.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Row {
    /// Its id.
    pub id: u32,
}

/// A summary.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Summary {
    /// How many.
    pub count: u32,
}

/// Tools with every kind of result.
pub struct StudioToolset;

#[toolset]
impl StudioToolset {
    /// A picture, a sound and a note.
    #[tool(title = "Make media", read_only, network = Internet)]
    pub fn media() -> ToolResult {
        ToolResult::text(format!("made with {SECRET}"))
            .with_image(vec![0x89, b'P', b'N', b'G'], "image/png")
            .with_audio(b"RIFF".to_vec(), "audio/wav")
            .with_resource_text("file:///note.txt", Some("text/plain"), "a note")
    }

    /// Rows, wrapped as `{"result": [...]}` in MCP.
    #[tool(idempotent)]
    pub fn rows(n: u32) -> Vec<Row> {
        (0..n).map(|id| Row { id }).collect()
    }

    /// A summary object.
    #[tool(destructive = false)]
    pub fn summary() -> Result<Summary, String> {
        Ok(Summary { count: 2 })
    }

    /// Asks the person three things, logging along the way.
    pub async fn survey(invocation: &ToolInvocation) -> Result<String, String> {
        invocation.log(LogLevel::Debug, "starting");
        invocation.log(LogLevel::Warning, format!("careful with {SECRET}"));
        let go = invocation
            .confirm("Go on?")
            .await
            .map_err(|e| e.to_string())?;
        if !go {
            return Ok("stopped".into());
        }
        let colour = invocation
            .choose("Colour?", ["red", "blue"])
            .await
            .map_err(|e| e.to_string())?;
        let form = invocation
            .fill(
                "Details",
                Form::new()
                    .required_text("name", "Name")
                    .field(FormField::boolean("loud", "Loud").with_default(true)),
            )
            .await
            .map_err(|e| e.to_string())?;
        Ok(format!("{colour} {} {}", form["name"], form["loud"]))
    }

    /// Books a table: a form with a bounded whole number, a titled choice
    /// and a multiple choice.
    pub async fn book(invocation: &ToolInvocation) -> Result<String, String> {
        let guests = FormField::integer("guests", "Guests")
            .with_default(2)
            .minimum(1)
            .maximum(8)
            .required();
        let form = Form::new()
            .field(guests)
            .field(
                FormField::choice(
                    "room",
                    "Room",
                    [("main", "Main hall"), ("garden", "Garden")],
                )
                .with_default("main"),
            )
            .optional_multi_choice("diet", "Diet", ["vegan", "halal", "kosher"]);
        let answer = invocation
            .fill("Booking", form)
            .await
            .map_err(|e| e.to_string())?;
        Ok(format!(
            "{} in {} {}",
            answer["guests"], answer["room"], answer["diet"]
        ))
    }

    /// Counts to `to`, reporting progress at each step.
    pub async fn count(to: u32, invocation: &ToolInvocation) -> u32 {
        for step in 1..=to {
            invocation.report(ToolProgress::ratio(
                format!("step {step}"),
                f64::from(step),
                Some(f64::from(to)),
            ));
            tokio::task::yield_now().await;
        }
        to
    }

    /// Clears the studio.
    #[tool(approval = Required, destructive)]
    pub fn clear(room: String) -> String {
        format!("cleared {room}")
    }
}

/// The plugin.
#[plugin(id = "test.studio")]
pub struct StudioPlugin;

impl AgentPlugin for StudioPlugin {
    fn configure(&self, b: &mut AgentPluginBuilder) {
        b.add_toolset(|_: &AgentPluginContext| StudioToolset);
    }
}

/// The wire name of one of the studio's tools.
pub fn tool(name: &str) -> String {
    format!("test_studio__studio__{name}")
}

/// The plugin's host, with [`SECRET`] redacted.
pub fn host() -> PluginHost {
    let host = PluginHost::builder()
        .plugins(oscova_core::linked_plugins![StudioPlugin])
        .build()
        .unwrap();
    host.redactor().add(SECRET);
    host
}
