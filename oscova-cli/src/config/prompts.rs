//! The `[prompts.NAME]` sections: prompts `oscova mcp` serves
//! (`prompts/list`, `prompts/get`, completion of their arguments).
//!
//! Rules: each prompt has a `description` (required), an optional
//! `title`, `[[prompts.NAME.arguments]]` (`name`, `description`,
//! `required` (default false), `choices`: the only values accepted, and
//! what completion offers) and at least one `[[prompts.NAME.messages]]`
//! (`role` `"user"` (the default) or `"assistant"`, and one of: `text`, a
//! template; `resource`, an embedded text resource whose URI and `text`
//! are templates, with an optional `mime_type`; `image`, a PNG, JPEG, GIF
//! or WebP file read when the config is loaded, relative to the config
//! file, at most 1 MiB). A template's `{argument}` is the argument's
//! value, `{{` and `}}` literal braces. Everything is checked when the
//! file is loaded (unknown keys, a message with none or two of `text`,
//! `resource` and `image`, a placeholder naming no declared argument, an
//! unmatched brace, an unreadable image), as an error naming the prompt.
//!
//! ```toml
//! [prompts.review]
//! description = "Review a file"
//!
//! [[prompts.review.arguments]]
//! name = "path"
//! required = true
//!
//! [[prompts.review.arguments]]
//! name = "tone"
//! choices = ["kind", "blunt"]
//!
//! [[prompts.review.messages]]
//! text = "Review {path}; be {tone}."
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use oscova_mcp::prompt::{MessageContent, PromptArg, PromptRole, PromptTemplate, PromptTemplates};
use serde::Deserialize;

/// The largest image a prompt message reads.
const MAX_IMAGE_BYTES: u64 = 1024 * 1024;

/// `[prompts.NAME]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FilePrompt {
    description: String,
    title: Option<String>,
    #[serde(default)]
    arguments: Vec<FileArgument>,
    #[serde(default)]
    messages: Vec<FileMessage>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileArgument {
    name: String,
    description: Option<String>,
    #[serde(default)]
    required: bool,
    #[serde(default)]
    choices: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileMessage {
    role: Option<String>,
    text: Option<String>,
    resource: Option<String>,
    mime_type: Option<String>,
    image: Option<String>,
}

/// The image's MIME type, from its extension.
fn image_type(path: &str) -> Option<&'static str> {
    let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

fn content(message: &FileMessage, config_dir: Option<&Path>) -> Result<MessageContent, String> {
    match (&message.text, &message.resource, &message.image) {
        (Some(text), Some(uri), None) => Ok(MessageContent::Resource {
            uri: uri.clone(),
            mime_type: message.mime_type.clone(),
            text: text.clone(),
        }),
        (Some(text), None, None) => Ok(MessageContent::Text(text.clone())),
        (None, None, Some(image)) => {
            let Some(mime_type) = image_type(image) else {
                return Err(format!(
                    "image {image:?} is not .png, .jpg, .jpeg, .gif or .webp"
                ));
            };
            let path = match config_dir {
                Some(dir) => dir.join(image),
                None => Path::new(image).to_path_buf(),
            };
            let data = oscova_core::fs::read_regular(&path, MAX_IMAGE_BYTES)
                .map_err(|e| format!("image {image:?}: {e}"))?;
            Ok(MessageContent::Image {
                data,
                mime_type: mime_type.to_owned(),
            })
        }
        (None, Some(_), _) => Err("a `resource` message needs its `text`".to_owned()),
        _ => Err("a message has one of `text`, `resource` (with `text`) or `image`".to_owned()),
    }
}

/// The declared prompts, checked; errors name the prompt.
pub(crate) fn templates(
    prompts: BTreeMap<String, FilePrompt>,
    config: Option<&Path>,
) -> Result<PromptTemplates, String> {
    let dir = config.and_then(Path::parent);
    let mut out = Vec::with_capacity(prompts.len());
    for (name, prompt) in prompts {
        let mut template = PromptTemplate::new(&name, prompt.description);
        if let Some(title) = prompt.title {
            template = template.with_title(title);
        }
        for argument in prompt.arguments {
            let mut arg = PromptArg::new(argument.name)
                .with_required(argument.required)
                .with_choices(argument.choices);
            if let Some(description) = argument.description {
                arg = arg.with_description(description);
            }
            template = template.argument(arg);
        }
        for message in &prompt.messages {
            let role: PromptRole = message
                .role
                .as_deref()
                .unwrap_or("user")
                .parse()
                .map_err(|e| format!("[prompts.{name}]: {e}"))?;
            let content = content(message, dir).map_err(|e| format!("[prompts.{name}]: {e}"))?;
            template = template.message(role, content);
        }
        out.push(template);
    }
    PromptTemplates::new(out).map_err(|e| format!("[prompts]: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PromptTemplates, String> {
        #[derive(Deserialize)]
        struct File {
            prompts: BTreeMap<String, FilePrompt>,
        }
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        templates(file.prompts, None)
    }

    #[test]
    fn prompts_load_and_mistakes_name_the_prompt() {
        let ok = parse("[prompts.a]\ndescription = \"d\"\n[[prompts.a.messages]]\ntext = \"hi\"\n")
            .unwrap();
        assert_eq!(ok.names().collect::<Vec<_>>(), ["a"]);
        for (text, says) in [
            (
                "[prompts.a]\ndescription = \"d\"\n",
                "prompt `a` has no message",
            ),
            (
                "[prompts.a]\ndescription = \"d\"\n[[prompts.a.messages]]\ntext = \"{x}\"\n",
                "declares no argument `x`",
            ),
            (
                "[prompts.a]\ndescription = \"d\"\n[[prompts.a.messages]]\nrole = \"system\"\ntext = \"x\"\n",
                "[prompts.a]: `system` is no message role",
            ),
            (
                "[prompts.a]\ndescription = \"d\"\n[[prompts.a.messages]]\nresource = \"u\"\n",
                "[prompts.a]: a `resource` message needs its `text`",
            ),
            (
                "[prompts.a]\ndescription = \"d\"\n[[prompts.a.messages]]\ntext = \"x\"\nimage = \"a.png\"\n",
                "[prompts.a]: a message has one of",
            ),
            (
                "[prompts.a]\ndescription = \"d\"\n[[prompts.a.messages]]\nimage = \"/nonexistent/a.png\"\n",
                "[prompts.a]: image \"/nonexistent/a.png\"",
            ),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.contains(says), "{error}");
        }
    }
}
