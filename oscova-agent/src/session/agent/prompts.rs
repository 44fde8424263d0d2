//! Prompt forms: a command that declares one is also a prompt a host can
//! serve (MCP `prompts/list` and `prompts/get`) without running a model.
//!
//! Rules: a [`PromptForm`] has a description, declared arguments (each
//! `required` or not) and a renderer: a template whose `{argument}`
//! placeholders are replaced by the values given (`{{` and `}}` are
//! literal braces; a placeholder naming no given argument renders empty),
//! or a function from the arguments to the messages. The prompt's name is
//! the command's registered name (`hello`, or `hello:2` when taken), so
//! names are unique the way commands are. [`AgentHost::prompt_forms`] and
//! [`AgentHost::render_prompt`] activate the host's extensions on a
//! throwaway in-memory session of the user: activation only registers
//! (the extension contract), no `SessionStartEvent` is dispatched, nothing
//! is written to the host's store, and the throwaway session is marked
//! stale afterwards, so an API an extension kept from it is
//! [`AgentError::Stale`]. Rendering ([`ExtensionPrompt::render`]) checks the arguments first: one not
//! declared, or a required one missing, is an error naming it and nothing
//! is rendered. Every rendered message is a user message.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use oscova_core::UserScope;

use super::error::AgentError;
use super::host::{AgentHost, AgentSessionOptions, activate};
use crate::session::{MemoryStore, Session};

/// The arguments a prompt form is rendered with: name to text.
pub type PromptFormArguments = BTreeMap<String, String>;

type Renderer = Arc<dyn Fn(&PromptFormArguments) -> Result<Vec<String>, AgentError> + Send + Sync>;

/// A declared argument of a [`PromptForm`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptFormArg {
    /// Its name (the placeholder `{name}`).
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// Whether rendering needs it.
    pub required: bool,
}

impl PromptFormArg {
    /// A required argument named `name`.
    pub fn required(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: None,
            required: true,
        }
    }

    /// An optional argument named `name`.
    pub fn optional(name: impl Into<String>) -> Self {
        Self {
            required: false,
            ..Self::required(name)
        }
    }

    /// Sets what it is for.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// How a command is offered as a prompt (see the module rules).
///
/// ```
/// use oscova_agent::session::agent::{Command, PromptForm, PromptFormArg};
///
/// let form = PromptForm::template("Greets someone", "Please greet {name} using the hello tool.")
///     .argument(PromptFormArg::required("name").with_description("Who to greet"));
/// let command = Command::new("Say hello", |_, _| async { Ok(()) }).prompt(form);
/// assert_eq!(command.prompt_form().map(|f| f.arguments().len()), Some(1));
/// ```
#[derive(Clone)]
pub struct PromptForm {
    description: String,
    arguments: Vec<PromptFormArg>,
    renderer: Renderer,
}

impl std::fmt::Debug for PromptForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptForm")
            .field("description", &self.description)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl PromptForm {
    /// A form rendering one user message from `template`.
    pub fn template(description: impl Into<String>, template: impl Into<String>) -> Self {
        let template = template.into();
        Self::render_with(description, move |args| Ok(vec![fill(&template, args)]))
    }

    /// A form whose messages `render` makes from the arguments (checked
    /// against the declared ones first).
    pub fn render_with(
        description: impl Into<String>,
        render: impl Fn(&PromptFormArguments) -> Result<Vec<String>, AgentError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            description: description.into(),
            arguments: Vec::new(),
            renderer: Arc::new(render),
        }
    }

    /// Declares an argument.
    pub fn argument(mut self, argument: PromptFormArg) -> Self {
        self.arguments.push(argument);
        self
    }

    /// What the prompt is for.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The declared arguments, in order.
    pub fn arguments(&self) -> &[PromptFormArg] {
        &self.arguments
    }

    /// Checks `args` against the declared arguments and renders the user
    /// messages of the prompt `name`.
    fn render(&self, name: &str, args: &PromptFormArguments) -> Result<Vec<String>, AgentError> {
        if let Some(given) = args
            .keys()
            .find(|given| !self.arguments.iter().any(|a| &a.name == *given))
        {
            return Err(AgentError::UnknownPromptArgument {
                prompt: name.to_owned(),
                argument: given.clone(),
                known: self
                    .arguments
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        if let Some(missing) = self
            .arguments
            .iter()
            .find(|a| a.required && !args.contains_key(&a.name))
        {
            return Err(AgentError::MissingPromptArgument {
                prompt: name.to_owned(),
                argument: missing.name.clone(),
            });
        }
        (self.renderer)(args)
    }
}

/// `{name}` replaced by `args[name]` (empty when absent); `{{`, `}}` are
/// literal braces; an unclosed `{` is kept as written.
fn fill(template: &str, args: &PromptFormArguments) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(at) = rest.find(['{', '}']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
        } else if let Some(name) = placeholder(tail) {
            if let Some(value) = args.get(name) {
                out.push_str(value);
            }
            rest = &tail[name.len() + 2..];
        } else {
            out.push_str(&tail[..1]);
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// The name in `{name}…` at the start of `tail`: non-empty, no
/// whitespace, no brace.
fn placeholder(tail: &str) -> Option<&str> {
    let (name, _) = tail.strip_prefix('{')?.split_once('}')?;
    let plain = !name.is_empty() && !name.contains(|c: char| c.is_whitespace() || c == '{');
    plain.then_some(name)
}

/// A command's prompt form as a host lists it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExtensionPrompt {
    /// The prompt's name: the command's registered name.
    pub name: String,
    /// The extension that registered the command.
    pub extension: String,
    /// The form.
    pub form: PromptForm,
}

impl ExtensionPrompt {
    /// Checks `args` against the declared arguments (one not declared, or
    /// a required one missing, is an error naming it) and renders the
    /// user messages.
    pub fn render(&self, args: &PromptFormArguments) -> Result<Vec<String>, AgentError> {
        self.form.render(&self.name, args)
    }
}

impl AgentHost {
    /// The prompt forms of the commands the host's extensions register,
    /// for `scope`'s user, in registration order (see the module rules).
    /// `scope` is one of this host's plugin host
    /// ([`plugins`](AgentHost::plugins)`().user_scope(user)`, or one a
    /// server caches): the extensions activate over it, so no scope is
    /// built per call.
    pub async fn prompt_forms(
        &self,
        scope: &UserScope,
    ) -> Result<Vec<ExtensionPrompt>, AgentError> {
        let store = Arc::new(MemoryStore::new());
        let session = Session::create(store, scope.user().clone(), "prompt-forms").await?;
        let options = AgentSessionOptions::new();
        let (shared, _extensions) = activate(self, session, &options, Some(scope.clone())).await;
        shared.stale.store(true, Ordering::Release);
        let state = shared.state();
        Ok(state.commands.prompt_forms(&state.names))
    }

    /// The prompt form `name` rendered with `args` for `scope`'s user.
    pub async fn render_prompt(
        &self,
        scope: &UserScope,
        name: &str,
        args: &PromptFormArguments,
    ) -> Result<Vec<String>, AgentError> {
        let forms = self.prompt_forms(scope).await?;
        let prompt = forms
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| AgentError::UnknownPrompt(name.to_owned()))?;
        prompt.render(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_replaces_placeholders_and_keeps_escaped_braces() {
        let args: PromptFormArguments = [("name".to_owned(), "Ada".to_owned())].into();
        assert_eq!(fill("Hi {name}! {{x}} {other}.", &args), "Hi Ada! {x} .");
        assert_eq!(fill("open { and } alone", &args), "open { and } alone");
    }

    #[test]
    fn render_refuses_undeclared_and_missing_arguments() {
        let form = PromptForm::template("", "{name}").argument(PromptFormArg::required("name"));
        let missing = form.render("p", &PromptFormArguments::new()).unwrap_err();
        assert!(
            matches!(&missing, AgentError::MissingPromptArgument { prompt, argument } if prompt == "p" && argument == "name"),
            "{missing}"
        );
        let extra: PromptFormArguments = [
            ("name".to_owned(), "a".to_owned()),
            ("x".to_owned(), "b".to_owned()),
        ]
        .into();
        let undeclared = form.render("p", &extra).unwrap_err();
        assert!(
            matches!(&undeclared, AgentError::UnknownPromptArgument { argument, known, .. } if argument == "x" && known == "name"),
            "{undeclared}"
        );
        let given: PromptFormArguments = [("name".to_owned(), "Ada".to_owned())].into();
        assert_eq!(form.render("p", &given).unwrap(), ["Ada"]);
    }
}
