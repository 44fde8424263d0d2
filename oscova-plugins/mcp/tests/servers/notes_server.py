"""An MCP server written with the official Python SDK (pip package `mcp`),
started over stdio by the oscova.mcp plugin's integration tests.

Tools: `Shout-Text`, `add` (structured output), `fail` (an error result),
`slow` (progress, then waits to be cancelled), `whoami` (pid and
$NOTES_TOKEN reversed), `crash` (stderr, then exit), `book` (asks the
person for a form through elicitation, with its `message` argument or
"Booking details?"), `authorization` (the request's
Authorization header reversed, over HTTP; reversed so the host's
redaction of the credential leaves it readable).

`notes_server.py` serves stdio; `notes_server.py http PORT` serves
streamable HTTP at http://127.0.0.1:PORT/mcp.
"""

import asyncio
import os
import sys

from typing import Literal

from pydantic import BaseModel, Field

from mcp.server.mcpserver import MCPServer, Context

server = MCPServer("notes")


@server.tool(name="Shout-Text", description="Shouts the text.")
def shout_text(text: str) -> str:
    return text.upper()


@server.tool(description="Adds two integers.")
def add(a: int, b: int) -> dict[str, int]:
    return {"sum": a + b}


@server.tool(description="Always fails.")
def fail() -> str:
    raise ValueError("this tool always fails")


@server.tool(description="Reports progress, then waits to be cancelled.")
async def slow(ctx: Context) -> str:
    await ctx.report_progress(1, 10, "step 1")
    await ctx.report_progress(2, 10, "step 2")
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        marker = os.environ.get("MARKER_DIR")
        if marker:
            with open(os.path.join(marker, "cancelled"), "w") as f:
                f.write("yes")
        raise
    return "done"


@server.tool(description="Its process id and credential, reversed.")
def whoami() -> str:
    token = os.environ.get("NOTES_TOKEN", "")[::-1]
    leaked = "HOST_SECRET_TOKEN" in os.environ
    return f"pid={os.getpid()} token_reversed={token} host_secret_seen={leaked}"


class Booking(BaseModel):
    guests: int = Field(default=2, ge=1, le=8, title="Guests")
    room: Literal["main", "garden"] = Field(default="main", title="Room")
    vegan: bool = Field(default=False, title="Vegan")


@server.tool(description="Books a table, asking the person for the details.")
async def book(ctx: Context, message: str = "Booking details?") -> str:
    answer = await ctx.elicit(message=message, schema=Booking)
    if answer.action != "accept":
        return f"not booked: {answer.action}"
    d = answer.data
    return f"booked {d.guests} in {d.room} vegan={d.vegan}"


@server.tool(description="The Authorization header of this request, reversed (HTTP only).")
def authorization(ctx: Context) -> str:
    request = getattr(ctx.request_context, "request", None)
    headers = getattr(request, "headers", None)
    header = (headers.get("authorization") if headers is not None else None) or "none"
    return header[::-1]


@server.tool(description="Exits.")
def crash() -> str:
    print("fatal: crashing on purpose with token " + os.environ.get("NOTES_TOKEN", ""),
          file=sys.stderr, flush=True)
    os._exit(3)


if __name__ == "__main__":
    print("python notes server starting", file=sys.stderr, flush=True)
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
