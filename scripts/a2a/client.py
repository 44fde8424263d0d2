"""The official A2A Python SDK's client (a2a-sdk 1.3.0) against an A2A
server, for the tests of `oscova-a2a`: a real peer, not a copy of our own
reading of the protocol.

Run with the interpreter scripts/ensure-python-a2a.sh prints:

    python client.py --url BASE [--token TOKEN] [--binding JSONRPC|HTTP+JSON] OP [ARG...]

The client reads the card at BASE/.well-known/agent-card.json and talks to
the interface of the binding asked for, with `Authorization: Bearer TOKEN`
on every call when given. OP is one of:

- `card`: the card.
- `send TEXT [CONTEXT]`: SendMessage (blocking), in CONTEXT when given.
- `send-nowait TEXT [CONTEXT]`: SendMessage with returnImmediately.
- `stream TEXT [CONTEXT]`: SendStreamingMessage; the result is the list of
  events received.
- `answer TEXT CONTEXT TASK`: SendMessage (blocking) in task TASK, the
  answer to the question the task waits on.
- `push TASK URL ID TOKEN SECRET`: CreateTaskPushNotificationConfig, the
  webhook URL called with `Authorization: Bearer SECRET` and the token.
- `get ID`, `cancel ID`: GetTask, CancelTask.
- `list [CONTEXT]`: ListTasks (in CONTEXT when given).
- `extended`: GetExtendedAgentCard.

It prints one line of JSON: {"ok": <the result as the protocol's JSON>} or
{"error": "<the SDK's exception class>", "message": "..."}, and exits 0
either way (1 only when it could not run at all).
"""

import argparse
import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf.json_format import MessageToDict

from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types import a2a_pb2 as pb


def as_json(message):
    return MessageToDict(message)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token")
    parser.add_argument("--binding", default="JSONRPC")
    parser.add_argument("op")
    parser.add_argument("args", nargs="*")
    args = parser.parse_args()
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        try:
            card = await A2ACardResolver(http, args.url).get_agent_card()
            if args.op == "card":
                return {"ok": as_json(card)}
            config = ClientConfig(
                httpx_client=http,
                streaming=args.op == "stream",
                supported_protocol_bindings=[args.binding],
            )
            client = ClientFactory(config).create(card)
            if args.op in ("send", "send-nowait", "stream", "answer"):
                message = pb.Message(
                    message_id=str(uuid.uuid4()),
                    role=pb.ROLE_USER,
                    parts=[pb.Part(text=args.args[0])],
                )
                if len(args.args) > 1:
                    message.context_id = args.args[1]
                if len(args.args) > 2:
                    message.task_id = args.args[2]
                request = pb.SendMessageRequest(message=message)
                request.configuration.return_immediately = args.op == "send-nowait"
                answers = [as_json(r) async for r in client.send_message(request)]
                return {"ok": answers if args.op == "stream" else answers[-1]}
            if args.op == "push":
                task, url, config_id, token, secret = args.args
                config = pb.TaskPushNotificationConfig(
                    task_id=task, id=config_id, url=url, token=token
                )
                config.authentication.scheme = "Bearer"
                config.authentication.credentials = secret
                created = await client.create_task_push_notification_config(config)
                return {"ok": as_json(created)}
            if args.op == "get":
                task = await client.get_task(pb.GetTaskRequest(id=args.args[0]))
                return {"ok": as_json(task)}
            if args.op == "cancel":
                task = await client.cancel_task(pb.CancelTaskRequest(id=args.args[0]))
                return {"ok": as_json(task)}
            if args.op == "extended":
                card = await client.get_extended_agent_card(pb.GetExtendedAgentCardRequest())
                return {"ok": as_json(card)}
            if args.op == "list":
                request = pb.ListTasksRequest()
                if args.args:
                    request.context_id = args.args[0]
                return {"ok": as_json(await client.list_tasks(request))}
            return {"error": "UsageError", "message": f"unknown op {args.op}"}
        except Exception as error:  # noqa: BLE001 - reported to the test
            return {"error": type(error).__name__, "message": str(error)}


if __name__ == "__main__":
    try:
        print(json.dumps(asyncio.run(main())))
    except Exception as error:  # noqa: BLE001
        print(f"client.py failed: {error!r}", file=sys.stderr)
        sys.exit(1)
