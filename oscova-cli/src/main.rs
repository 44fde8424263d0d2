//! Run with: `cargo run -p oscova-cli -- tools list`
//!
//! The `oscova` binary: the command line of [`oscova_cli`] over the plugins
//! this binary links.

use std::process::ExitCode;

fn main() -> ExitCode {
    // Reserved: the first-party plugins (`oscova-plugin-time`, `-files`,
    // `-web`) join this list once they build.
    oscova_cli::run_with(oscova_core::linked_plugins![
        example_hello_plugin::ExampleAgentPlugin,
    ])
}
