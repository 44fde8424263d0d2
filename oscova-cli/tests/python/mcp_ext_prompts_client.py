"""Drives `oscova mcp` with the official MCP Python SDK's client: lists the
prompts, gets the session extension's prompt PROMPT with `name`, and
without it, and with an argument it does not declare. Prints what it saw
as one JSON line.

Run by tests/it/mcp_ext_prompts.rs:
`python mcp_ext_prompts_client.py PROMPT stdio <server command...>` (the
script starts the server as its stdio server) or
`python mcp_ext_prompts_client.py PROMPT http URL` (streamable HTTP, no
token).
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.exceptions import MCPError


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def refused(call):
    try:
        await call
    except MCPError as e:
        return {"code": e.error.code, "message": e.error.message}
    return None


async def report(session, prompt):
    out = {}
    init = await session.initialize()
    out["capabilities"] = dump(init.capabilities)
    listed = await session.list_prompts()
    out["prompts"] = [dump(p) for p in listed.prompts]
    got = await session.get_prompt(prompt, {"name": "Ada"})
    out["got"] = dump(got)
    out["missing"] = await refused(session.get_prompt(prompt, {}))
    out["undeclared"] = await refused(session.get_prompt(prompt, {"name": "Ada", "tone": "kind"}))
    return out


async def main(prompt, mode, rest):
    if mode == "stdio":
        params = StdioServerParameters(command=rest[0], args=rest[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                return await report(session, prompt)
    async with create_mcp_http_client() as http:
        async with streamable_http_client(rest[0], http_client=http) as (read, write, *_):
            async with ClientSession(read, write) as session:
                return await report(session, prompt)


if __name__ == "__main__":
    try:
        out = anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3:])
    except BaseException as error:  # noqa: BLE001 - report whatever failed
        out = {"error": repr(error)}
    print(json.dumps(out), flush=True)
