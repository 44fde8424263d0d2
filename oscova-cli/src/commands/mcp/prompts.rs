//! The adapter between the session agent's prompt forms and the MCP
//! server's prompts (`oscova-mcp` and `oscova-agent` know nothing of each
//! other; the host joins them).
//!
//! Rules: [`ExtensionPrompts`] is a `PromptSource` over an `AgentHost`
//! that has the launcher's extensions and no model: for the user a
//! request is served to, it lists the prompt forms of the commands those
//! extensions register and renders one as user messages, the
//! extensions activating over the request's scope (the server's, cached
//! per user over HTTP)
//! (`AgentHost::prompt_forms`, `render_prompt`: a throwaway in-memory
//! activation, no session start, nothing stored). An argument not
//! declared or a required one missing is invalid params naming it, as
//! for `[prompts.NAME]`. Forms declare no choices, so completion offers
//! nothing; a name no form has is an unknown prompt. The config's prompts
//! come first in `oscova mcp`'s list (`PromptSources`), so a form named
//! like one of them is served as `NAME:2`.

use std::sync::Arc;

use oscova_agent::session::MemoryStore;
use oscova_agent::session::agent::{AgentError, AgentHost, AgentHostError, ExtensionFactory};
use oscova_core::{PluginHost, UserScope};
use oscova_mcp::prompt::{PromptArguments, PromptSource};
use oscova_mcp::rmcp::model::{
    ContentBlock, GetPromptResult, Prompt, PromptArgument, PromptMessage, Role,
};
use oscova_mcp::{BoxFuture, SourceError};

/// The extensions' prompt forms as MCP prompts (see the module rules).
pub(crate) struct ExtensionPrompts {
    agents: AgentHost,
}

impl ExtensionPrompts {
    /// Over `plugins` (the tools extensions may see while activating) and
    /// the launcher's `extensions`; refused as `AgentHostBuilder::build`
    /// refuses (with no model configured, it builds).
    pub(crate) fn new(
        plugins: PluginHost,
        extensions: &[ExtensionFactory],
    ) -> Result<Self, AgentHostError> {
        // The store is never written: prompt forms activate on their own
        // throwaway session.
        let mut agents = AgentHost::builder(plugins, Arc::new(MemoryStore::new()));
        for extension in extensions {
            agents = agents.add_extension_factory(extension.clone());
        }
        Ok(Self {
            agents: agents.build()?,
        })
    }
}

fn source_error(error: AgentError) -> SourceError {
    match error {
        AgentError::UnknownPrompt(name) => SourceError::UnknownPrompt { name },
        AgentError::MissingPromptArgument { prompt, argument } => {
            SourceError::MissingArgument { prompt, argument }
        }
        AgentError::UnknownPromptArgument {
            prompt,
            argument,
            known,
        } => SourceError::UnknownArgument {
            prompt,
            argument,
            known: if known.is_empty() {
                "none".to_owned()
            } else {
                known
            },
        },
        other => SourceError::Failed(other.to_string()),
    }
}

impl PromptSource for ExtensionPrompts {
    fn list<'a>(&'a self, scope: &'a UserScope) -> BoxFuture<'a, Result<Vec<Prompt>, SourceError>> {
        Box::pin(async move {
            let forms = self
                .agents
                .prompt_forms(scope)
                .await
                .map_err(source_error)?;
            Ok(forms
                .iter()
                .map(|p| {
                    let arguments: Vec<PromptArgument> = p
                        .form
                        .arguments()
                        .iter()
                        .map(|a| {
                            let out = PromptArgument::new(&a.name).with_required(a.required);
                            match &a.description {
                                Some(description) => out.with_description(description),
                                None => out,
                            }
                        })
                        .collect();
                    Prompt::new(
                        &p.name,
                        Some(p.form.description()),
                        (!arguments.is_empty()).then_some(arguments),
                    )
                })
                .collect())
        })
    }

    fn get<'a>(
        &'a self,
        scope: &'a UserScope,
        name: &'a str,
        arguments: &'a PromptArguments,
    ) -> BoxFuture<'a, Result<GetPromptResult, SourceError>> {
        Box::pin(async move {
            let forms = self
                .agents
                .prompt_forms(scope)
                .await
                .map_err(source_error)?;
            let prompt = forms.iter().find(|p| p.name == name).ok_or_else(|| {
                SourceError::UnknownPrompt {
                    name: name.to_owned(),
                }
            })?;
            let texts = prompt.render(arguments).map_err(source_error)?;
            let messages = texts
                .into_iter()
                .map(|text| PromptMessage::new(Role::User, ContentBlock::text(text)))
                .collect();
            Ok(GetPromptResult::new(messages).with_description(prompt.form.description()))
        })
    }

    fn complete<'a>(
        &'a self,
        scope: &'a UserScope,
        name: &'a str,
        argument: &'a str,
        _value: &'a str,
        _context: &'a PromptArguments,
    ) -> BoxFuture<'a, Result<Vec<String>, SourceError>> {
        Box::pin(async move {
            let forms = self
                .agents
                .prompt_forms(scope)
                .await
                .map_err(source_error)?;
            let prompt = forms.iter().find(|p| p.name == name).ok_or_else(|| {
                SourceError::UnknownPrompt {
                    name: name.to_owned(),
                }
            })?;
            if prompt.form.arguments().iter().any(|a| a.name == argument) {
                Ok(Vec::new())
            } else {
                Err(source_error(AgentError::UnknownPromptArgument {
                    prompt: prompt.name.clone(),
                    argument: argument.to_owned(),
                    known: prompt
                        .form
                        .arguments()
                        .iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                }))
            }
        })
    }
}
