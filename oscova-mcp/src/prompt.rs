//! Prompts: what `prompts/list` and `prompts/get` serve, and the
//! completion of their arguments.
//!
//! Rules: a [`PromptSource`] is asked per request for the user the
//! request is served to. [`PromptTemplates`] is the source a host
//! declares (the CLI's `[prompts.NAME]`): each prompt has a name, a
//! description, arguments (each `required` or not, each with the choices
//! it accepts, if it declares any) and messages whose text (and embedded
//! resources' URIs and text) are templates with `{argument}`
//! placeholders. Everything is checked when the set is made (names
//! unique and non-empty, every placeholder a declared argument, braces
//! balanced, at least one message), so a set that was made renders every
//! time. `prompts/get` checks the arguments before rendering: a required
//! one missing, one not declared, or a value outside the declared choices
//! is an invalid-params error naming it; nothing is rendered then.
//! Completion offers the declared choices that start with what was typed
//! (case-insensitively), in declared order, at most 100. Several sources
//! are served together through [`PromptSources`].

#[cfg(feature = "agent")]
mod extensions;
mod sources;
mod template;

#[cfg(feature = "agent")]
pub use extensions::ExtensionPrompts;
pub use sources::PromptSources;

use std::collections::BTreeMap;

use oscova_core::UserScope;
use oscova_core::tool::encode_base64;
use rmcp::model::{
    self, ContentBlock, GetPromptResult, Prompt, PromptArgument, PromptMessage, Role,
};

use super::offer::{BoxFuture, ListChanges, SourceError};
use template::{Template, TemplateProblem};

/// The arguments of one `prompts/get` or completion, as text.
pub type PromptArguments = BTreeMap<String, String>;

/// The most completion values one answer holds (MCP's limit).
pub const MAX_COMPLETIONS: usize = 100;

/// Where a server's prompts come from.
///
/// Implement it to serve prompts of your own (a host's commands, another
/// server's prompts); [`PromptTemplates`] serves declared ones. Each
/// method gets the scope of the user the request is served to.
pub trait PromptSource: Send + Sync + 'static {
    /// The prompts `scope`'s user is offered (`prompts/list`).
    fn list<'a>(&'a self, scope: &'a UserScope) -> BoxFuture<'a, Result<Vec<Prompt>, SourceError>>;

    /// The prompt `name` rendered with `arguments` (`prompts/get`).
    fn get<'a>(
        &'a self,
        scope: &'a UserScope,
        name: &'a str,
        arguments: &'a PromptArguments,
    ) -> BoxFuture<'a, Result<GetPromptResult, SourceError>>;

    /// Values for the argument `argument` of prompt `name` that fit
    /// `value` (`completion/complete`); `context` holds the arguments
    /// already given. At most [`MAX_COMPLETIONS`] are sent.
    fn complete<'a>(
        &'a self,
        scope: &'a UserScope,
        name: &'a str,
        argument: &'a str,
        value: &'a str,
        context: &'a PromptArguments,
    ) -> BoxFuture<'a, Result<Vec<String>, SourceError>>;

    /// The signal raised when the list of prompts changes, for a source
    /// whose list can (see [`list_changes`](crate::list_changes)); `None`
    /// (the default) for a fixed list.
    fn list_changes(&self) -> Option<ListChanges> {
        None
    }

    /// The signal for the sessions of `scope`'s user: a source whose
    /// changes concern one user only (a gateway's `per_user` upstream)
    /// gives that user's; by default [`list_changes`](Self::list_changes).
    fn list_changes_for(&self, _scope: &UserScope) -> Option<ListChanges> {
        self.list_changes()
    }
}

/// Who a prompt message is from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PromptRole {
    /// The person.
    User,
    /// The model.
    Assistant,
}

impl std::str::FromStr for PromptRole {
    type Err = String;

    /// `user` or `assistant`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "user" => Ok(Self::User),
            "assistant" => Ok(Self::Assistant),
            other => Err(format!(
                "`{other}` is no message role; use `user` or `assistant`"
            )),
        }
    }
}

/// A declared argument of a [`PromptTemplate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArg {
    name: String,
    description: Option<String>,
    required: bool,
    choices: Vec<String>,
}

impl PromptArg {
    /// An optional argument named `name`, taking any text.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: None,
            required: false,
            choices: Vec::new(),
        }
    }

    /// Sets what the argument is for.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets whether `prompts/get` needs it.
    pub fn with_required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// Accepts only these values (and completes them).
    pub fn with_choices(mut self, choices: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.choices = choices.into_iter().map(Into::into).collect();
        self
    }

    /// The argument's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The content of one message of a [`PromptTemplate`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MessageContent {
    /// Text, a template.
    Text(String),
    /// An image: its bytes and MIME type.
    Image {
        /// The bytes.
        data: Vec<u8>,
        /// The MIME type (`image/png`).
        mime_type: String,
    },
    /// An embedded text resource: its URI and text are templates.
    Resource {
        /// The URI, a template.
        uri: String,
        /// The MIME type, if known.
        mime_type: Option<String>,
        /// The text, a template.
        text: String,
    },
}

/// A message of a [`PromptTemplate`].
#[derive(Debug, Clone, PartialEq, Eq)]
struct MessageTemplate {
    role: PromptRole,
    content: MessageContent,
}

/// A declared prompt: arguments and message templates.
///
/// ```
/// use oscova_mcp::prompt::{PromptArg, PromptRole, PromptTemplate, PromptTemplates};
///
/// let review = PromptTemplate::new("review", "Reviews a file")
///     .argument(PromptArg::new("path").with_required(true))
///     .argument(PromptArg::new("tone").with_choices(["kind", "blunt"]))
///     .text(PromptRole::User, "Review {path}; be {tone}.");
/// let prompts = PromptTemplates::new([review])?;
/// assert_eq!(prompts.names().collect::<Vec<_>>(), ["review"]);
/// # Ok::<(), oscova_mcp::prompt::PromptDefError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    name: String,
    title: Option<String>,
    description: String,
    arguments: Vec<PromptArg>,
    messages: Vec<MessageTemplate>,
}

impl PromptTemplate {
    /// A prompt named `name` with no arguments and no messages yet.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: description.into(),
            arguments: Vec::new(),
            messages: Vec::new(),
        }
    }

    /// Sets the title clients show.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Declares an argument.
    pub fn argument(mut self, argument: PromptArg) -> Self {
        self.arguments.push(argument);
        self
    }

    /// Adds a message.
    pub fn message(mut self, role: PromptRole, content: MessageContent) -> Self {
        self.messages.push(MessageTemplate { role, content });
        self
    }

    /// Adds a text message, a template.
    pub fn text(self, role: PromptRole, text: impl Into<String>) -> Self {
        self.message(role, MessageContent::Text(text.into()))
    }

    /// The prompt's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// What is wrong with a declared prompt; [`PromptTemplates::new`] reports
/// the first.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PromptDefError {
    /// A prompt or argument with an empty name.
    #[error("prompt `{prompt}`: a name is empty")]
    EmptyName {
        /// The prompt (empty when it is the prompt's name).
        prompt: String,
    },
    /// Two prompts of one name.
    #[error("two prompts are named `{0}`")]
    DuplicatePrompt(String),
    /// Two arguments of one name in a prompt.
    #[error("prompt `{prompt}` declares the argument `{argument}` twice")]
    DuplicateArgument {
        /// The prompt.
        prompt: String,
        /// The argument.
        argument: String,
    },
    /// A prompt with no message.
    #[error("prompt `{0}` has no message")]
    NoMessages(String),
    /// A placeholder that names no declared argument.
    #[error(
        "prompt `{prompt}` uses `{{{argument}}}` but declares no argument `{argument}` \
         (write `{{{{` and `}}}}` for a literal brace)"
    )]
    Undeclared {
        /// The prompt.
        prompt: String,
        /// The placeholder's name.
        argument: String,
    },
    /// A brace left open, closed alone, or an empty `{}`.
    #[error(
        "prompt `{prompt}`, message {message}: an unmatched brace at character {at} \
         (write `{{{{` and `}}}}` for a literal brace)"
    )]
    Unbalanced {
        /// The prompt.
        prompt: String,
        /// The message, from 1.
        message: usize,
        /// The character offset in the template.
        at: usize,
    },
}

/// A message's content, parsed.
#[derive(Debug, Clone)]
enum Parsed {
    Text(Template),
    Image {
        base64: String,
        mime_type: String,
    },
    Resource {
        uri: Template,
        mime_type: Option<String>,
        text: Template,
    },
}

/// A prompt, checked and parsed.
#[derive(Debug, Clone)]
struct Checked {
    declared: PromptTemplate,
    messages: Vec<(PromptRole, Parsed)>,
}

/// Declared prompts, checked once: a [`PromptSource`] serving the same
/// prompts to every user.
#[derive(Debug, Clone, Default)]
pub struct PromptTemplates {
    prompts: Vec<Checked>,
}

impl PromptTemplates {
    /// Checks `prompts` (see the module's rules) and parses their
    /// templates.
    pub fn new(prompts: impl IntoIterator<Item = PromptTemplate>) -> Result<Self, PromptDefError> {
        let mut checked: Vec<Checked> = Vec::new();
        for prompt in prompts {
            if checked.iter().any(|c| c.declared.name == prompt.name) {
                return Err(PromptDefError::DuplicatePrompt(prompt.name));
            }
            checked.push(check(prompt)?);
        }
        Ok(Self { prompts: checked })
    }

    /// Whether there is no prompt.
    pub fn is_empty(&self) -> bool {
        self.prompts.is_empty()
    }

    /// The prompts' names, in declared order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.prompts.iter().map(|c| c.declared.name.as_str())
    }

    fn find(&self, name: &str) -> Result<&Checked, SourceError> {
        self.prompts
            .iter()
            .find(|c| c.declared.name == name)
            .ok_or_else(|| SourceError::UnknownPrompt {
                name: name.to_owned(),
            })
    }
}

fn check(prompt: PromptTemplate) -> Result<Checked, PromptDefError> {
    let name = prompt.name.clone();
    if name.trim().is_empty() {
        return Err(PromptDefError::EmptyName {
            prompt: String::new(),
        });
    }
    let mut names: Vec<&str> = Vec::new();
    for argument in &prompt.arguments {
        if argument.name.trim().is_empty() {
            return Err(PromptDefError::EmptyName { prompt: name });
        }
        if names.contains(&argument.name.as_str()) {
            return Err(PromptDefError::DuplicateArgument {
                prompt: name,
                argument: argument.name.clone(),
            });
        }
        names.push(&argument.name);
    }
    if prompt.messages.is_empty() {
        return Err(PromptDefError::NoMessages(name));
    }
    let parse = |index: usize, text: &str| {
        Template::parse(text, &names).map_err(|problem| match problem {
            TemplateProblem::Undeclared(argument) => PromptDefError::Undeclared {
                prompt: name.clone(),
                argument,
            },
            TemplateProblem::Unbalanced(at) => PromptDefError::Unbalanced {
                prompt: name.clone(),
                message: index + 1,
                at,
            },
        })
    };
    let mut messages = Vec::with_capacity(prompt.messages.len());
    for (index, message) in prompt.messages.iter().enumerate() {
        let parsed = match &message.content {
            MessageContent::Text(text) => Parsed::Text(parse(index, text)?),
            MessageContent::Image { data, mime_type } => Parsed::Image {
                base64: encode_base64(data),
                mime_type: mime_type.clone(),
            },
            MessageContent::Resource {
                uri,
                mime_type,
                text,
            } => Parsed::Resource {
                uri: parse(index, uri)?,
                mime_type: mime_type.clone(),
                text: parse(index, text)?,
            },
        };
        messages.push((message.role, parsed));
    }
    Ok(Checked {
        declared: prompt,
        messages,
    })
}

impl Checked {
    fn listed(&self) -> Prompt {
        let p = &self.declared;
        let arguments = p
            .arguments
            .iter()
            .map(|a| {
                let mut out = PromptArgument::new(&a.name).with_required(a.required);
                if let Some(description) = &a.description {
                    out = out.with_description(description);
                }
                out
            })
            .collect::<Vec<_>>();
        let mut out = Prompt::new(
            &p.name,
            Some(&p.description),
            (!arguments.is_empty()).then_some(arguments),
        );
        if let Some(title) = &p.title {
            out = out.with_title(title);
        }
        out
    }

    /// Checks `given` against the declared arguments.
    fn check_arguments(&self, given: &PromptArguments) -> Result<(), SourceError> {
        let p = &self.declared;
        for name in given.keys() {
            if !p.arguments.iter().any(|a| &a.name == name) {
                let known: Vec<&str> = p.arguments.iter().map(|a| a.name.as_str()).collect();
                return Err(SourceError::UnknownArgument {
                    prompt: p.name.clone(),
                    argument: name.clone(),
                    known: if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    },
                });
            }
        }
        for argument in &p.arguments {
            match given.get(&argument.name) {
                None if argument.required => {
                    return Err(SourceError::MissingArgument {
                        prompt: p.name.clone(),
                        argument: argument.name.clone(),
                    });
                }
                Some(value)
                    if !argument.choices.is_empty() && !argument.choices.contains(value) =>
                {
                    return Err(SourceError::NotAChoice {
                        prompt: p.name.clone(),
                        argument: argument.name.clone(),
                        value: value.clone(),
                        choices: argument.choices.join(", "),
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn render(&self, given: &PromptArguments) -> Result<GetPromptResult, SourceError> {
        self.check_arguments(given)?;
        let messages = self
            .messages
            .iter()
            .map(|(role, parsed)| {
                let role = match role {
                    PromptRole::User => Role::User,
                    PromptRole::Assistant => Role::Assistant,
                };
                let content = match parsed {
                    Parsed::Text(t) => ContentBlock::text(t.render(given)),
                    Parsed::Image { base64, mime_type } => {
                        ContentBlock::image(base64.clone(), mime_type.clone())
                    }
                    Parsed::Resource {
                        uri,
                        mime_type,
                        text,
                    } => {
                        let mut contents =
                            model::ResourceContents::text(text.render(given), uri.render(given));
                        if let model::ResourceContents::TextResourceContents {
                            mime_type: m, ..
                        } = &mut contents
                        {
                            m.clone_from(mime_type);
                        }
                        ContentBlock::resource(contents)
                    }
                };
                PromptMessage::new(role, content)
            })
            .collect();
        Ok(GetPromptResult::new(messages).with_description(&self.declared.description))
    }

    fn complete(&self, argument: &str, value: &str) -> Result<Vec<String>, SourceError> {
        let p = &self.declared;
        let Some(declared) = p.arguments.iter().find(|a| a.name == argument) else {
            return Err(SourceError::UnknownArgument {
                prompt: p.name.clone(),
                argument: argument.to_owned(),
                known: p
                    .arguments
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let typed = value.to_lowercase();
        Ok(declared
            .choices
            .iter()
            .filter(|c| c.to_lowercase().starts_with(&typed))
            .take(MAX_COMPLETIONS)
            .cloned()
            .collect())
    }
}

impl PromptSource for PromptTemplates {
    fn list<'a>(
        &'a self,
        _scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<Prompt>, SourceError>> {
        Box::pin(std::future::ready(Ok(self
            .prompts
            .iter()
            .map(Checked::listed)
            .collect())))
    }

    fn get<'a>(
        &'a self,
        _scope: &'a UserScope,
        name: &'a str,
        arguments: &'a PromptArguments,
    ) -> BoxFuture<'a, Result<GetPromptResult, SourceError>> {
        Box::pin(std::future::ready(
            self.find(name).and_then(|p| p.render(arguments)),
        ))
    }

    fn complete<'a>(
        &'a self,
        _scope: &'a UserScope,
        name: &'a str,
        argument: &'a str,
        value: &'a str,
        _context: &'a PromptArguments,
    ) -> BoxFuture<'a, Result<Vec<String>, SourceError>> {
        Box::pin(std::future::ready(
            self.find(name).and_then(|p| p.complete(argument, value)),
        ))
    }
}
