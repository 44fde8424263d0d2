//! The fixture prompts and resources the suite's prompts, resources and
//! completion scenarios read, each as its scenario describes it, served
//! through `oscova_mcp`'s public sources: the prompts are declared
//! templates (`PromptTemplates`), the resources a `ResourceSource` of
//! their own.

use oscova_core::UserScope;
use oscova_core::tool::encode_base64;
use oscova_mcp::prompt::PromptTemplates;
use oscova_mcp::prompt::{MessageContent, PromptArg, PromptDefError, PromptRole, PromptTemplate};
use oscova_mcp::rmcp::model::{Resource, ResourceContents, ResourceTemplate};
use oscova_mcp::{BoxFuture, ResourceSource, SourceError};

use super::red_pixel;

/// The fixture prompts.
pub fn prompts() -> Result<PromptTemplates, PromptDefError> {
    PromptTemplates::new([
        PromptTemplate::new("test_simple_prompt", "A simple prompt without arguments")
            .text(PromptRole::User, "This is a simple prompt for testing."),
        PromptTemplate::new(
            "test_prompt_with_arguments",
            "A prompt with two required arguments",
        )
        .argument(
            PromptArg::new("arg1")
                .with_description("First test argument")
                .with_required(true),
        )
        .argument(
            PromptArg::new("arg2")
                .with_description("Second test argument")
                .with_required(true),
        )
        .text(
            PromptRole::User,
            "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'",
        ),
        PromptTemplate::new(
            "test_prompt_with_embedded_resource",
            "A prompt that embeds a resource",
        )
        .argument(
            PromptArg::new("resourceUri")
                .with_description("URI of the resource to embed")
                .with_required(true),
        )
        .message(
            PromptRole::User,
            MessageContent::Resource {
                uri: "{resourceUri}".to_owned(),
                mime_type: Some("text/plain".to_owned()),
                text: "Embedded resource content for testing.".to_owned(),
            },
        )
        .text(
            PromptRole::User,
            "Please process the embedded resource above.",
        ),
        PromptTemplate::new("test_prompt_with_image", "A prompt with an image")
            .message(
                PromptRole::User,
                MessageContent::Image {
                    data: red_pixel(),
                    mime_type: "image/png".to_owned(),
                },
            )
            .text(PromptRole::User, "Please analyze the image above."),
    ])
}

const STATIC_TEXT: &str = "test://static-text";
const STATIC_BINARY: &str = "test://static-binary";
const WATCHED: &str = "test://watched-resource";
const TEMPLATE: &str = "test://template/{id}/data";

/// The fixture resources: two static ones, one to subscribe to, and a
/// template.
#[derive(Debug, Clone, Copy, Default)]
pub struct FixtureResources;

impl FixtureResources {
    fn read_now(uri: &str) -> Result<Vec<ResourceContents>, SourceError> {
        let contents = match uri {
            STATIC_TEXT => {
                ResourceContents::text("This is the content of the static text resource.", uri)
            }
            STATIC_BINARY => {
                ResourceContents::blob(encode_base64(&red_pixel()), uri).with_mime_type("image/png")
            }
            WATCHED => ResourceContents::text("The watched resource's content.", uri),
            _ => {
                let id = uri
                    .strip_prefix("test://template/")
                    .and_then(|rest| rest.strip_suffix("/data"))
                    .filter(|id| !id.is_empty() && !id.contains('/'))
                    .ok_or_else(|| SourceError::UnknownResource {
                        uri: uri.to_owned(),
                    })?;
                let data = oscova_core::serde_json::json!({
                    "id": id,
                    "templateTest": true,
                    "data": format!("Data for ID: {id}"),
                });
                ResourceContents::text(data.to_string(), uri).with_mime_type("application/json")
            }
        };
        Ok(vec![contents])
    }
}

impl ResourceSource for FixtureResources {
    fn list<'a>(
        &'a self,
        _scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<Resource>, SourceError>> {
        let resources = vec![
            Resource::new(STATIC_TEXT, "static-text")
                .with_description("A static text resource")
                .with_mime_type("text/plain"),
            Resource::new(STATIC_BINARY, "static-binary")
                .with_description("A static binary resource (a PNG image)")
                .with_mime_type("image/png"),
            Resource::new(WATCHED, "watched-resource")
                .with_description("A resource to subscribe to")
                .with_mime_type("text/plain"),
        ];
        Box::pin(std::future::ready(Ok(resources)))
    }

    fn templates<'a>(
        &'a self,
        _scope: &'a UserScope,
    ) -> BoxFuture<'a, Result<Vec<ResourceTemplate>, SourceError>> {
        let template = ResourceTemplate::new(TEMPLATE, "template-data")
            .with_description("Data for an id")
            .with_mime_type("application/json");
        Box::pin(std::future::ready(Ok(vec![template])))
    }

    fn read<'a>(
        &'a self,
        _scope: &'a UserScope,
        uri: &'a str,
    ) -> BoxFuture<'a, Result<Vec<ResourceContents>, SourceError>> {
        Box::pin(std::future::ready(Self::read_now(uri)))
    }

    fn subscribable(&self) -> bool {
        true
    }

    fn version<'a>(&'a self, _scope: &'a UserScope, uri: &'a str) -> BoxFuture<'a, Option<String>> {
        // The fixtures never change: one version each, for what exists.
        let version = Self::read_now(uri).ok().map(|_| "1".to_owned());
        Box::pin(std::future::ready(version))
    }
}
