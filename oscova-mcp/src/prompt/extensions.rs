//! The session extensions' prompt forms as MCP prompts (feature `agent`).
//!
//! Rules: [`ExtensionPrompts`] is a `PromptSource` over an `AgentHost`
//! that has the host's extensions and no model: for the user a
//! request is served to, it lists the prompt forms of the commands those
//! extensions register and renders one as user messages, the
//! extensions activating over the request's scope (the server's, cached
//! per user over HTTP)
//! (`AgentHost::prompt_forms`, `render_prompt`: a throwaway in-memory
//! activation, no session start, nothing stored). An argument not
//! declared or a required one missing is invalid params naming it, as
//! for declared prompts ([`PromptTemplates`](super::PromptTemplates)).
//! Forms declare no choices, so completion offers nothing; a name no form
//! has is an unknown prompt. Served with other sources through
//! [`PromptSources`](super::PromptSources), a form named like an earlier
//! source's prompt is served as `NAME:2` (`oscova mcp` puts the config's
//! prompts first).

use std::sync::Arc;

use oscova_agent::session::MemoryStore;
use oscova_agent::session::agent::{
    AgentError, AgentHost, AgentHostError, ExtensionFactory, ExtensionPrompt,
};
use oscova_core::{PluginHost, UserScope};
use rmcp::model::{ContentBlock, GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};

use super::{PromptArguments, PromptSource};
use crate::offer::{BoxFuture, SourceError};

/// The session extensions' prompt forms as MCP prompts (see the module
/// rules).
///
/// ```
/// use example_hello_extension::HelloExtension;
/// use oscova_agent::session::agent::extension_factory;
/// use oscova_core::PluginHost;
/// use oscova_mcp::prompt::{ExtensionPrompts, PromptSources};
///
/// let plugins = PluginHost::builder().no_linked_plugins().build()?;
/// let forms = ExtensionPrompts::new(plugins, &[extension_factory::<HelloExtension>()])?;
/// let prompts = PromptSources::new().with(forms); // `hello`, served beside others
/// # let _ = prompts;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ExtensionPrompts {
    agents: AgentHost,
}

impl std::fmt::Debug for ExtensionPrompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtensionPrompts").finish_non_exhaustive()
    }
}

impl ExtensionPrompts {
    /// Over `plugins` (the tools extensions may see while activating) and
    /// `extensions`; refused as `AgentHostBuilder::build` refuses (with no
    /// model configured, it builds).
    pub fn new(
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

impl ExtensionPrompts {
    /// The form served as `name` to `scope`'s user.
    async fn form(&self, scope: &UserScope, name: &str) -> Result<ExtensionPrompt, SourceError> {
        let forms = self
            .agents
            .prompt_forms(scope)
            .await
            .map_err(source_error)?;
        forms
            .into_iter()
            .find(|p| p.name == name)
            .ok_or_else(|| SourceError::UnknownPrompt {
                name: name.to_owned(),
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
            let prompt = self.form(scope, name).await?;
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
            let prompt = self.form(scope, name).await?;
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

#[cfg(test)]
mod tests {
    use example_hello_extension::HelloExtension;
    use oscova_agent::session::agent::extension_factory;
    use oscova_core::UserInfo;

    use super::*;

    fn forms() -> (PluginHost, ExtensionPrompts) {
        let plugins = PluginHost::builder().no_linked_plugins().build().unwrap();
        let forms =
            ExtensionPrompts::new(plugins.clone(), &[extension_factory::<HelloExtension>()])
                .unwrap();
        (plugins, forms)
    }

    #[tokio::test]
    async fn a_commands_form_is_listed_and_rendered_for_the_user() {
        let (plugins, forms) = forms();
        let scope = plugins.user_scope(UserInfo::new("alice"));
        let listed = forms.list(&scope).await.unwrap();
        let hello = listed.iter().find(|p| p.name == "hello").unwrap();
        assert_eq!(
            hello.description.as_deref(),
            Some("Greet someone with the hello tool")
        );
        let arguments = hello.arguments.as_ref().unwrap();
        assert_eq!(arguments[0].name, "name");
        assert_eq!(arguments[0].required, Some(true));

        let given = PromptArguments::from([("name".to_owned(), "Ada".to_owned())]);
        let got = forms.get(&scope, "hello", &given).await.unwrap();
        assert_eq!(got.messages.len(), 1);
        assert_eq!(
            serde_json::to_value(&got.messages[0]).unwrap()["content"]["text"],
            "Please greet Ada using the hello tool."
        );
    }

    #[tokio::test]
    async fn a_missing_or_unknown_argument_or_prompt_is_named() {
        let (plugins, forms) = forms();
        let scope = plugins.user_scope(UserInfo::new("alice"));
        let none = PromptArguments::new();
        assert!(matches!(
            forms.get(&scope, "hello", &none).await,
            Err(SourceError::MissingArgument { argument, .. }) if argument == "name"
        ));
        let odd = PromptArguments::from([
            ("name".to_owned(), "Ada".to_owned()),
            ("mood".to_owned(), "glad".to_owned()),
        ]);
        assert!(matches!(
            forms.get(&scope, "hello", &odd).await,
            Err(SourceError::UnknownArgument { argument, .. }) if argument == "mood"
        ));
        assert!(matches!(
            forms.get(&scope, "nope", &none).await,
            Err(SourceError::UnknownPrompt { name }) if name == "nope"
        ));
        assert!(matches!(
            forms.complete(&scope, "hello", "mood", "", &none).await,
            Err(SourceError::UnknownArgument { .. })
        ));
        assert_eq!(
            forms
                .complete(&scope, "hello", "name", "", &none)
                .await
                .unwrap(),
            Vec::<String>::new()
        );
    }
}
