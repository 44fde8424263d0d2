"""Drives the studio fixture host (`oscova mcp`'s server over a byte
stream) with the official MCP Python SDK and prints what it saw as one JSON
line.

Run by tests/it/python.rs: `python mcp_client.py --connect HOST PORT`,
where the test serves each connection on HOST:PORT; the SDK's stdio client
starts a relay (`RELAY`, this interpreter) between its stdio and that
socket, one connection per session. `python mcp_client.py <server
command...>` starts that command as the server instead. The SDK itself
validates every structured result against the tool's output schema (it
raises when one does not conform).
"""

import asyncio
import base64
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


# Copies stdin to the socket and the socket to stdout, byte for byte, until
# either side closes.
RELAY = r"""
import socket, sys, threading
sock = socket.create_connection((sys.argv[1], int(sys.argv[2])))
def up():
    while True:
        data = sys.stdin.buffer.read1(65536)
        if not data:
            sock.shutdown(socket.SHUT_WR)
            return
        sock.sendall(data)
threading.Thread(target=up, daemon=True).start()
while True:
    data = sock.recv(65536)
    if not data:
        break
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
"""


def tool(name):
    return f"test_studio__studio__{name}"


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def call_in_rounds(session, name, args, on_elicit):
    """A `tools/call` on 2026-07-28, driving SEP-2322's rounds with the SDK's
    own retry parameters: each `input_required` result's elicitations are
    answered by `on_elicit` and sent back with the echoed `request_state`."""
    responses, state = None, None
    for _ in range(10):
        result = await session.call_tool(
            name, args, input_responses=responses, request_state=state, allow_input_required=True
        )
        if not isinstance(result, types.InputRequiredResult):
            return result
        responses = {}
        for key, request in (result.input_requests or {}).items():
            responses[key] = await on_elicit(None, request.params)
        state = result.request_state
    raise RuntimeError("more than 10 rounds")


async def session_report(read, write, *, modern):
    report = {"asked": [], "logs": [], "progress": []}
    answers = [
        types.ElicitResult(action="accept", content={}),
        types.ElicitResult(action="accept", content={"choice": "blue"}),
        types.ElicitResult(action="accept", content={"name": "Grace", "loud": False}),
        types.ElicitResult(action="accept", content={}),  # approval of `clear`
    ]

    async def on_elicit(context, params):
        report["asked"].append(params.message)
        if answers:
            return answers.pop(0)
        return types.ElicitResult(action="cancel")

    async def on_log(params):
        report["logs"].append({"level": params.level, "data": params.data, "logger": params.logger})

    async def on_progress(progress, total, message):
        report["progress"].append([progress, total, message])

    async with ClientSession(
        read, write, elicitation_callback=on_elicit, logging_callback=on_log
    ) as session:
        if modern:
            result = await session.discover()
            report["protocol"] = session._negotiated_version
            report["capabilities"] = dump(result).get("capabilities", {})
        else:
            result = await session.initialize()
            report["protocol"] = result.protocol_version
            report["capabilities"] = dump(result.capabilities)
        await session.send_ping()
        report["pinged"] = True

        listed = await session.list_tools()
        report["tools"] = {t.name: dump(t) for t in listed.tools}

        media = await session.call_tool(tool("media"), {})
        blocks = []
        for block in media.content:
            entry = dump(block)
            if block.type in ("image", "audio"):
                entry["decoded"] = list(base64.b64decode(block.data))
            blocks.append(entry)
        report["media"] = blocks

        # The SDK validates these against their output schemas.
        rows = await session.call_tool(tool("rows"), {"n": 3})
        report["rows"] = rows.structured_content
        summary = await session.call_tool(tool("summary"), {})
        report["summary"] = summary.structured_content

        counted = await session.call_tool(tool("count"), {"to": 3}, progress_callback=on_progress)
        report["count"] = dump(counted)

        if not modern:
            await session.set_logging_level("warning")
        if modern:
            survey = await call_in_rounds(session, tool("survey"), {}, on_elicit)
            cleared = await call_in_rounds(session, tool("clear"), {"room": "lab"}, on_elicit)
        else:
            survey = await session.call_tool(tool("survey"), {})
            cleared = await session.call_tool(tool("clear"), {"room": "lab"})
        report["survey"] = dump(survey)
        report["clear"] = dump(cleared)
    return report


async def main():
    command, *args = sys.argv[1:]
    if command == "--connect":
        command, args = sys.executable, ["-c", RELAY, *args]
    env = dict(os.environ)
    out = {}
    for modern in (False, True):
        server = StdioServerParameters(command=command, args=args, env=env)
        key = "modern" if modern else "legacy"
        try:
            async with stdio_client(server) as (read, write):
                out[key] = await session_report(read, write, modern=modern)
        except Exception as e:  # reported, and judged by the Rust side
            out[key] = {"error": f"{type(e).__name__}: {e}"}
    print(json.dumps(out))


asyncio.run(main())
