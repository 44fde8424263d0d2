"""Drives `oscova mcp` (started as this script's stdio server) with the
official MCP Python SDK: the config's prompts listed, got and completed,
the user's files root listed, read, templated and completed, a read that
would leave the root refused, and a subscribed file's change reported.
Prints what it saw as one JSON line.

Then the same on protocol 2026-07-28 (`server/discover`, and
`subscriptions/listen` in place of `resources/subscribe`), under "modern".

Run by tests/it/mcp_offer.rs: `python mcp_offer_client.py FILE <server
command...>`, where FILE is the subscribed file (under the user's root),
which this script changes after subscribing.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.subscriptions import listen
from mcp.shared.exceptions import MCPError


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def refused(call):
    try:
        await call
    except MCPError as e:
        return {"code": e.error.code, "message": e.error.message}
    return None


async def report(session, changed_file):
    out = {}
    init = await session.initialize()
    out["capabilities"] = dump(init.capabilities)

    prompts = await session.list_prompts()
    out["prompts"] = [dump(p) for p in prompts.prompts]
    got = await session.get_prompt("review", {"path": "notes/todo.txt", "tone": "blunt"})
    out["got"] = dump(got)
    out["missing"] = await refused(session.get_prompt("review", {"tone": "kind"}))
    out["not_a_choice"] = await refused(
        session.get_prompt("review", {"path": "x", "tone": "rude"})
    )
    done = await session.complete(
        types.PromptReference(type="ref/prompt", name="review"),
        {"name": "tone", "value": "b"},
    )
    out["tone_completion"] = done.completion.values

    resources = await session.list_resources()
    out["resources"] = sorted(str(r.uri) for r in resources.resources)
    text = await session.read_resource(("file:///notes/todo.txt"))
    out["text"] = dump(text.contents[0])
    blob = await session.read_resource(("file:///pixel.png"))
    out["blob"] = dump(blob.contents[0])
    templates = await session.list_resource_templates()
    out["templates"] = [dump(t)["uriTemplate"] for t in templates.resource_templates]
    done = await session.complete(
        types.ResourceTemplateReference(type="ref/resource", uri="file:///{+path}"),
        {"name": "path", "value": "notes/"},
    )
    out["path_completion"] = done.completion.values
    out["escape"] = await refused(session.read_resource(("file:///../secret.txt")))

    await session.subscribe_resource(("file:///notes/todo.txt"))
    with open(changed_file, "w") as f:
        f.write("milk and bread\n")
    out["updated"] = await asyncio.wait_for(UPDATES.get(), timeout=20)
    return out


async def modern_report(session, changed_file):
    out = {}
    result = await session.discover()
    out["protocol"] = session._negotiated_version
    out["capabilities"] = dump(result).get("capabilities", {})
    got = await session.get_prompt("review", {"path": "notes/tea.md", "tone": "kind"})
    out["got"] = dump(got)
    out["missing"] = await refused(session.get_prompt("review", {}))
    text = await session.read_resource("file:///notes/tea.md")
    out["text"] = dump(text.contents[0])
    done = await session.complete(
        types.ResourceTemplateReference(type="ref/resource", uri="file:///{+path}"),
        {"name": "path", "value": "notes/te"},
    )
    out["path_completion"] = done.completion.values
    out["escape"] = await refused(session.read_resource("file:///../secret.txt"))
    async with listen(session, resource_subscriptions=["file:///notes/todo.txt"]) as sub:
        # The server takes the file's first version once it has acknowledged:
        # change it until a change is reported.
        text = "tea"
        for _ in range(20):
            text += " more"
            with open(changed_file, "w") as f:
                f.write(text)
            try:
                event = await asyncio.wait_for(sub.__anext__(), timeout=1)
            except (asyncio.TimeoutError, TimeoutError):
                continue
            out["updated"] = event.uri
            break
    return out


UPDATES = asyncio.Queue()


async def on_message(message):
    if isinstance(message, types.ResourceUpdatedNotification):
        await UPDATES.put(str(message.params.uri))


async def main():
    changed_file, command, *args = sys.argv[1:]
    server = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    try:
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                out = await report(session, changed_file)
    except Exception as e:  # reported, and judged by the Rust side
        out = {"error": f"{type(e).__name__}: {e}"}
    try:
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write) as session:
                out["modern"] = await modern_report(session, changed_file)
    except Exception as e:  # reported, and judged by the Rust side
        out["modern"] = {"error": f"{type(e).__name__}: {e}"}
    print(json.dumps(out))


asyncio.run(main())
