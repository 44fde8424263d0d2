//! Run with: `cargo run -p oscova-cli -- chat --session demo`, then type `/hello world`
//!
//! The peer runtime's `HelloExtension`, as an Oscova session extension
//! (the `oscova` binary links it with its default `first-party` feature).
//!
//! It registers, in each session:
//!
//! - the `hello` tool ([`HelloToolset`]), greeting a person by name;
//! - the `/hello NAME` command, which asks the model (as a user message)
//!   to greet NAME with that tool; it declares a prompt form too, so
//!   `oscova mcp` serves it as the prompt `hello` (argument `name`:
//!   "Please greet {name} using the hello tool.");
//! - a guard on tool calls: a call whose `command` argument contains
//!   `rm -rf` runs only when the person allows it; with no one to ask
//!   (no UI) it is blocked.
//!
//! A host adds it for every session:
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use std::sync::Arc;
//! # use oscova_agent::session::{MemoryStore, agent::AgentHost};
//! # let plugins = oscova_core::PluginHost::builder().no_linked_plugins().build()?;
//! let agents = AgentHost::builder(plugins, Arc::new(MemoryStore::new()))
//!     .add_extension::<example_hello_extension::HelloExtension>()
//!     .build()?;
//! # let _ = agents;
//! # Ok(())
//! # }
//! ```

use oscova_agent::session::agent::{
    AgentError, Command, Delivery, Extension, PromptForm, PromptFormArg, SessionApi, ToolCallEvent,
};
use oscova_core::toolset;

/// The extension's tools.
pub struct HelloToolset;

#[toolset]
impl HelloToolset {
    /// Greets someone.
    #[tool(read_only)]
    pub fn hello(
        /// Name to greet.
        name: String,
    ) -> String {
        format!("Hello, {name}!")
    }
}

/// The seed's extension (see the crate docs).
#[derive(Debug, Default)]
pub struct HelloExtension;

impl Extension for HelloExtension {
    fn name(&self) -> &str {
        "hello"
    }

    fn activate(&mut self, api: &mut SessionApi) -> Result<(), AgentError> {
        api.register_toolset(HelloToolset);

        let me = api.clone();
        let command = Command::new("Say hello through the model", move |args, _ctx| {
            let me = me.clone();
            async move {
                let name = if args.is_empty() {
                    "world".to_owned()
                } else {
                    args
                };
                me.send_user_message(
                    format!("Please greet {name} using the hello tool."),
                    Vec::new(),
                    Delivery::FollowUp,
                )
            }
        })
        .prompt(
            PromptForm::template(
                "Greet someone with the hello tool",
                "Please greet {name} using the hello tool.",
            )
            .argument(PromptFormArg::required("name").with_description("Who to greet")),
        )
        .with_completion(|prefix| {
            ["world", "team"]
                .iter()
                .filter(|w| w.starts_with(prefix))
                .map(|w| (*w).to_owned())
                .collect()
        });
        api.register_command("hello", command);

        api.on(|mut event: ToolCallEvent, ctx| async move {
            let command = event
                .input
                .get("command")
                .and_then(|c| c.as_str())
                .unwrap_or_default()
                .to_owned();
            if !command.contains("rm -rf") {
                return Ok(event);
            }
            if !ctx.has_ui()? {
                event.block("Dangerous command blocked (no UI to confirm)");
                return Ok(event);
            }
            let choice = ctx
                .choose(format!("Run `{command}`?"), &["Allow", "Block"])
                .await
                .unwrap_or_default();
            if choice != "Allow" {
                event.block("Blocked by user");
            }
            Ok(event)
        });
        Ok(())
    }
}
