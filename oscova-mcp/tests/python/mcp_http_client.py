"""Drives an MCP streamable HTTP server with the official Python SDK's client.

Usage: python mcp_http_client.py URL TOKEN|- TOOL [ARGS_JSON]

Initializes a session (sending `Authorization: Bearer TOKEN` unless TOKEN
is `-`), lists the tools, calls TOOL with ARGS_JSON (default `{}`), and
prints one JSON line: {"protocol": ..., "tools": [...], "is_error": ...,
"text": ...}. A refusal (an HTTP error status, or the error the SDK makes of
one) prints {"refused": ..., ...} and ends with exit code 3.
"""

import json
import sys

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


async def main(url: str, token: str, tool: str, args: dict) -> None:
    headers = {} if token == "-" else {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                listed = await session.list_tools()
                result = await session.call_tool(tool, args)
                text = "".join(
                    block.text for block in result.content if getattr(block, "text", None) is not None
                )
                print(
                    json.dumps(
                        {
                            "protocol": init.protocol_version,
                            "tools": [t.name for t in listed.tools],
                            "is_error": bool(result.is_error),
                            "text": text,
                        }
                    ),
                    flush=True,
                )


if __name__ == "__main__":
    url, token, tool = sys.argv[1], sys.argv[2], sys.argv[3]
    args = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    try:
        anyio.run(main, url, token, tool, args)
    except BaseException as error:  # noqa: BLE001 - report HTTP statuses plainly
        found = error
        while isinstance(found, BaseExceptionGroup) and found.exceptions:
            found = found.exceptions[0]
        if isinstance(found, httpx2.HTTPStatusError):
            print(json.dumps({"refused": f"HTTP {found.response.status_code}"}), flush=True)
            sys.exit(3)
        if isinstance(found, MCPError):
            print(json.dumps({"refused": str(found), "code": found.code, "data": found.data}, default=str), flush=True)
            sys.exit(3)
        raise
