"""An MCP server written with the official Python SDK (pip package `mcp`)
offering prompts, resources and completion, started over stdio by the
tests of the oscova.mcp plugin's host API (`McpUpstreams`) and of the
`oscova mcp` gateway that re-serves them.

Prompts: `summarize` (arguments `topic`, required, and `style`; both
complete: `style` from short/long/lively, `topic` from alpha/beta/gamma),
`cite` (argument `id`; one message embedding `notes://note/{id}`).
Resources: `notes://readme` (static text), `notes://whoami` (pid and
$NOTES_TOKEN reversed, so a test tells users' processes apart even
after redaction; and $NOTES_TOKEN as it is, which redaction must hide),
and the template `notes://note/{id}` (`id` completes from 1, 2, 10).
Tools: `add_prompt` (adds a prompt named by its argument and sends
`notifications/prompts/list_changed`), `add_resource` (likewise for a
resource and `notifications/resources/list_changed`).
"""

import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.resources import TextResource
from mcp_types import Completion, PromptReference, ResourceTemplateReference

server = MCPServer("notes")

STYLES = ["short", "long", "lively"]
TOPICS = ["alpha", "beta", "gamma"]
NOTE_IDS = ["1", "2", "10"]


@server.prompt(description="Summarizes a topic.")
def summarize(topic: str, style: str = "short") -> str:
    return f"Summarize {topic} in a {style} way."


@server.prompt(description="Cites a note, embedded.")
def cite(id: str) -> list:
    return [
        {
            "role": "user",
            "content": {
                "type": "resource",
                "resource": {"uri": f"notes://note/{id}", "mimeType": "text/plain", "text": f"Note number {id}."},
            },
        }
    ]


@server.resource("notes://readme", name="readme", mime_type="text/plain")
def readme() -> str:
    return "The notes server's readme."


@server.resource("notes://whoami", name="whoami", mime_type="text/plain")
def whoami() -> str:
    token = os.environ.get("NOTES_TOKEN", "")
    return f"pid={os.getpid()} token_reversed={token[::-1]} token={token}"


@server.resource("notes://note/{id}", name="note", mime_type="text/plain")
def note(id: str) -> str:
    return f"Note number {id}."


@server.completion()
async def complete(ref, argument, context):
    if isinstance(ref, PromptReference) and ref.name == "summarize":
        choices = STYLES if argument.name == "style" else TOPICS
    elif isinstance(ref, ResourceTemplateReference) and argument.name == "id":
        choices = NOTE_IDS
    else:
        return None
    values = [c for c in choices if c.startswith(argument.value)]
    return Completion(values=values, total=len(values), has_more=False)


@server.tool(description="Adds a prompt and says the prompt list changed.")
async def add_prompt(name: str, ctx: Context) -> str:
    def added() -> str:
        return f"The prompt {name} was added at run time."

    server.add_prompt(Prompt.from_function(added, name=name, description="Added at run time."))
    await ctx.session.send_prompt_list_changed()
    return f"added prompt {name}"


@server.tool(description="Adds a resource and says the resource list changed.")
async def add_resource(name: str, ctx: Context) -> str:
    server.add_resource(TextResource(uri=f"notes://added/{name}", name=name, text=f"added {name}"))
    await ctx.session.send_resource_list_changed()
    return f"added resource {name}"


if __name__ == "__main__":
    print("python prompts server starting", file=sys.stderr, flush=True)
    server.run("stdio")
