"""Drives `oscova mcp --listen` as a gateway with the official Python SDK's
client: the prompts and resources of an upstream MCP server re-served
under the server's name.

Usage: python mcp_upstream_client.py URL TOKEN [CHANGE]

Initializes a session (`Authorization: Bearer TOKEN`), lists the prompts,
gets `notes__summarize` (topic alpha, style lively), completes its
`style` from "l", lists the resources and templates, reads
`mcp://notes/notes://whoami` and `mcp://notes/notes://note/7`, and
completes the template's `id` from "1". With CHANGE, it then calls the
tool `oscova_mcp__notes__add_prompt` (name CHANGE) and waits (at most 30
s) for `notifications/prompts/list_changed`, then lists the prompts
again. Prints one JSON line with what it saw.

Usage: python mcp_upstream_client.py URL TOKEN --watch

Initializes a session, lists the prompts, prints `{"ready": true}`, then
waits until its standard input is closed and 2 s more, and prints
`{"changed": BOOL}`: whether `notifications/prompts/list_changed`
reached this session meanwhile.
"""

import json
import sys

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


def texts(result) -> str:
    return "".join(getattr(c, "text", "") or "" for c in result.contents)


async def main(url: str, token: str, change: str | None) -> None:
    changed = anyio.Event()

    async def on_message(message) -> None:
        message = getattr(message, "root", message)
        if getattr(message, "method", None) == "notifications/prompts/list_changed":
            changed.set()

    headers = {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                init = await session.initialize()
                if change == "--watch":
                    await session.list_prompts()
                    print(json.dumps({"ready": True}), flush=True)
                    await anyio.to_thread.run_sync(sys.stdin.read)
                    with anyio.move_on_after(2):
                        await changed.wait()
                    print(json.dumps({"changed": changed.is_set()}), flush=True)
                    return
                prompts = await session.list_prompts()
                got = await session.get_prompt("notes__summarize", {"topic": "alpha", "style": "lively"})
                styles = await session.complete(
                    types.PromptReference(type="ref/prompt", name="notes__summarize"),
                    {"name": "style", "value": "l"},
                )
                resources = await session.list_resources()
                templates = await session.list_resource_templates()
                whoami = await session.read_resource("mcp://notes/notes://whoami")
                note = await session.read_resource("mcp://notes/notes://note/7")
                ids = await session.complete(
                    types.ResourceTemplateReference(type="ref/resource", uri="mcp://notes/notes://note/{id}"),
                    {"name": "id", "value": "1"},
                )
                out = {
                    "protocol": init.protocol_version,
                    "list_changed": bool(init.capabilities.prompts and init.capabilities.prompts.list_changed),
                    "prompts": [p.name for p in prompts.prompts],
                    "prompt_text": got.messages[0].content.text,
                    "styles": styles.completion.values,
                    "resources": [r.uri for r in resources.resources],
                    "templates": [t.uri_template for t in templates.resource_templates],
                    "whoami": texts(whoami),
                    "whoami_uri": whoami.contents[0].uri,
                    "note": texts(note),
                    "ids": ids.completion.values,
                }
                if change:
                    await session.call_tool("oscova_mcp__notes__add_prompt", {"name": change})
                    with anyio.move_on_after(30):
                        await changed.wait()
                    out["changed"] = changed.is_set()
                    out["prompts_after"] = [p.name for p in (await session.list_prompts()).prompts]
                print(json.dumps(out), flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
