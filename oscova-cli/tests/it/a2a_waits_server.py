"""An MCP server written with the official Python SDK (pip package `mcp`),
started over stdio by `oscova serve` as `[mcp.servers.ledger]` in the
`a2a_waits` tests.

Each tool asks the person to confirm through elicitation (a form with one
boolean, `confirm`) and, once accepted, appends a line to a file in the
directory given as the first argument, so the file counts the runs that
took effect:

- `settle` (idempotentHint: true) appends to `settled.txt`;
- `pay` (idempotentHint: false) appends to `paid.txt`.
"""

import os
import sys

from pydantic import BaseModel, Field

from mcp.server.mcpserver import MCPServer, Context
from mcp.types import ToolAnnotations

LEDGER = sys.argv[1]

server = MCPServer("ledger")


class Confirm(BaseModel):
    confirm: bool = Field(default=False, title="Confirm")


async def confirmed(ctx: Context, message: str) -> bool:
    answer = await ctx.elicit(message=message, schema=Confirm)
    return answer.action == "accept" and answer.data.confirm


def record(name: str, line: str) -> None:
    with open(os.path.join(LEDGER, name), "a") as f:
        f.write(line + "\n")


@server.tool(
    description="Settles an invoice, once the person confirms.",
    annotations=ToolAnnotations(idempotent_hint=True),
)
async def settle(ctx: Context, invoice: str) -> str:
    if not await confirmed(ctx, f"Settle invoice {invoice}?"):
        return f"not settled: {invoice}"
    record("settled.txt", invoice)
    return f"settled {invoice}"


@server.tool(
    description="Pays someone, once the person confirms.",
    annotations=ToolAnnotations(idempotent_hint=False),
)
async def pay(ctx: Context, to: str) -> str:
    if not await confirmed(ctx, f"Pay {to}?"):
        return f"not paid: {to}"
    record("paid.txt", to)
    return f"paid {to}"


if __name__ == "__main__":
    server.run()
