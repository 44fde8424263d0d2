//! Slash commands extensions register: `/hello world` runs `hello` with
//! `world`.
//!
//! Rules: a name is taken by the first registration; a later one of the
//! same name gets `name:2`, then `name:3` (the name registering returns
//! the one given). A line runs a command when it starts with `/`: the
//! name is up to the first whitespace, the arguments are the rest,
//! trimmed. Completion: a prefix without a space completes names
//! (`/he` → `/hello`, `/hello:2`); with a space, the command's own
//! completer completes its argument. After the command, the agent runs
//! what its messages asked for, then the switch it asked for
//! ([`ExtensionContext::switch_session`]), else the compaction. A command
//! with a prompt form ([`Command::prompt`]) is also a prompt of its
//! registered name (see `prompts.rs`).

use std::sync::Arc;

use oscova_core::provider::BoxFuture;

use super::context::ExtensionContext;
use super::dispatch::CatchUnwind;
use super::error::AgentError;
use super::host::AgentSession;
use super::prompts::{ExtensionPrompt, PromptForm};
use super::run::RunOutcome;

type CommandHandler = Arc<
    dyn Fn(String, ExtensionContext) -> BoxFuture<'static, Result<(), AgentError>> + Send + Sync,
>;
type Completer = Arc<dyn Fn(&str) -> Vec<String> + Send + Sync>;

/// A command's definition: what it does and how its argument completes.
///
/// ```
/// use oscova_agent::session::agent::Command;
///
/// let command = Command::new("Say hello", |args, _ctx| async move {
///     println!("hello {args}");
///     Ok(())
/// })
/// .with_completion(|prefix| {
///     ["world", "team"].iter().filter(|w| w.starts_with(prefix)).map(|w| w.to_string()).collect()
/// });
/// assert_eq!(command.description(), "Say hello");
/// ```
#[derive(Clone)]
pub struct Command {
    description: String,
    handler: CommandHandler,
    completer: Option<Completer>,
    prompt: Option<PromptForm>,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Command")
            .field("description", &self.description)
            .finish_non_exhaustive()
    }
}

impl Command {
    /// A command described by `description` that runs `handler` with the
    /// arguments' text.
    pub fn new<F, Fut>(description: impl Into<String>, handler: F) -> Self
    where
        F: Fn(String, ExtensionContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<(), AgentError>> + Send + 'static,
    {
        Self {
            description: description.into(),
            handler: Arc::new(move |args, ctx| Box::pin(handler(args, ctx))),
            completer: None,
            prompt: None,
        }
    }

    /// Offers the command as a prompt too (MCP `prompts/list`), under its
    /// registered name; see [`PromptForm`].
    pub fn prompt(mut self, form: PromptForm) -> Self {
        self.prompt = Some(form);
        self
    }

    /// The prompt form it declares, if any.
    pub fn prompt_form(&self) -> Option<&PromptForm> {
        self.prompt.as_ref()
    }

    /// Completes the argument: given what was typed, the candidates.
    pub fn with_completion(
        mut self,
        completer: impl Fn(&str) -> Vec<String> + Send + Sync + 'static,
    ) -> Self {
        self.completer = Some(Arc::new(completer));
        self
    }

    /// What it does.
    pub fn description(&self) -> &str {
        &self.description
    }
}

/// A registered command, as [`SessionApi::commands`](super::SessionApi::commands) lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandInfo {
    /// The name it runs by (`hello`, `hello:2`).
    pub name: String,
    /// What it does.
    pub description: String,
    /// The extension that registered it.
    pub extension: String,
}

#[derive(Default)]
pub(crate) struct Commands {
    entries: Vec<(String, usize, Command)>,
}

impl Commands {
    /// Registers `command` as `name`, or `name:2`, `name:3`, … when taken.
    pub(crate) fn add(&mut self, name: &str, extension: usize, command: Command) -> String {
        let name = name.trim().trim_start_matches('/').to_owned();
        let mut given = name.clone();
        let mut n = 1;
        while self.entries.iter().any(|(taken, _, _)| *taken == given) {
            n += 1;
            given = format!("{name}:{n}");
        }
        self.entries.push((given.clone(), extension, command));
        given
    }

    pub(crate) fn remove_extension(&mut self, extension: usize) {
        self.entries.retain(|(_, x, _)| *x != extension);
    }

    pub(crate) fn list(&self, names: &[String]) -> Vec<CommandInfo> {
        self.entries
            .iter()
            .map(|(name, x, c)| CommandInfo {
                name: name.clone(),
                description: c.description.clone(),
                extension: names.get(*x).cloned().unwrap_or_default(),
            })
            .collect()
    }

    /// The commands that declare a prompt form, as prompts.
    pub(crate) fn prompt_forms(&self, names: &[String]) -> Vec<ExtensionPrompt> {
        self.entries
            .iter()
            .filter_map(|(name, x, c)| {
                let form = c.prompt.clone()?;
                Some(ExtensionPrompt {
                    name: name.clone(),
                    extension: names.get(*x).cloned().unwrap_or_default(),
                    form,
                })
            })
            .collect()
    }

    /// The command a line names, its extension and the arguments.
    pub(crate) fn find(&self, line: &str) -> Result<(CommandHandler, usize, String), AgentError> {
        let (name, args) = split(line)?;
        self.entries
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, x, c)| (c.handler.clone(), *x, args.to_owned()))
            .ok_or_else(|| AgentError::UnknownCommand(name.to_owned()))
    }

    pub(crate) fn complete(&self, prefix: &str) -> Vec<String> {
        let Some(rest) = prefix.strip_prefix('/') else {
            return Vec::new();
        };
        match rest.split_once(char::is_whitespace) {
            None => self
                .entries
                .iter()
                .filter(|(n, _, _)| n.starts_with(rest))
                .map(|(n, _, _)| format!("/{n}"))
                .collect(),
            Some((name, arg)) => {
                let arg = arg.trim_start();
                self.entries
                    .iter()
                    .find(|(n, _, _)| n == name)
                    .and_then(|(_, _, c)| c.completer.as_ref())
                    .map(|complete| {
                        complete(arg)
                            .into_iter()
                            .map(|a| format!("/{name} {a}"))
                            .collect()
                    })
                    .unwrap_or_default()
            }
        }
    }
}

/// `/name args` → (`name`, `args`).
pub(crate) fn split(line: &str) -> Result<(&str, &str), AgentError> {
    let rest = line
        .trim()
        .strip_prefix('/')
        .ok_or(AgentError::NotACommand)?;
    Ok(match rest.split_once(char::is_whitespace) {
        Some((name, args)) => (name, args.trim()),
        None => (rest, ""),
    })
}

impl AgentSession {
    /// Runs `/name args` (see [`commands`](Self::commands)), then the run
    /// its messages asked for, if any.
    pub async fn run_command(&mut self, line: &str) -> Result<Option<RunOutcome>, AgentError> {
        self.shared.check_fresh()?;
        let (handler, extension, args) = self.shared.state().commands.find(line)?;
        let ctx = ExtensionContext::new(self.shared.clone(), extension);
        match CatchUnwind(handler(args, ctx)).await {
            Ok(outcome) => outcome?,
            Err(panic) => {
                return Err(AgentError::handler(format!(
                    "the command panicked: {panic}"
                )));
            }
        }
        let ran = self.run_pending().await?;
        let switch = self.shared.state().switch_requested.take();
        if let Some(name) = switch {
            self.switch(&name).await?;
            return Ok(ran);
        }
        if ran.is_none() && self.shared.state().compact_requested {
            // Asked for while idle: compact now; the command succeeded
            // whatever comes of it.
            let mut quiet = RunOutcome::default();
            self.compact_after(&mut quiet).await;
            if let Some(error) = quiet.compaction_error {
                tracing::warn!(%error, "the compaction a command asked for failed");
            }
        }
        Ok(ran)
    }

    /// The commands extensions registered, in order.
    pub fn commands(&self) -> Vec<CommandInfo> {
        let state = self.shared.state();
        state.commands.list(&state.names)
    }

    /// Completes a command line: names for `/he`, the command's own
    /// candidates for its argument after a space.
    pub fn complete_command(&self, prefix: &str) -> Vec<String> {
        self.shared.state().commands.complete(prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop() -> Command {
        Command::new("", |_, _| async { Ok(()) })
    }

    #[test]
    fn duplicates_get_numbered_names() {
        let mut commands = Commands::default();
        assert_eq!(commands.add("hello", 0, noop()), "hello");
        assert_eq!(commands.add("/hello", 1, noop()), "hello:2");
        assert_eq!(commands.add("hello", 1, noop()), "hello:3");
        assert_eq!(
            commands.complete("/hel"),
            ["/hello", "/hello:2", "/hello:3"]
        );
        let (_, extension, args) = commands.find("/hello:2  big world ").unwrap();
        assert_eq!((extension, args.as_str()), (1, "big world"));
        assert!(matches!(commands.find("/bye"), Err(AgentError::UnknownCommand(n)) if n == "bye"));
        assert!(matches!(
            commands.find("hello"),
            Err(AgentError::NotACommand)
        ));
    }
}
