"""Two A2A 1.0 agents served by the official Python SDK (a2a-sdk 1.3.0), for
the tests of the `oscova.a2a` plugin: a real peer, not a copy of our own
reading of the protocol.

Run with the interpreter scripts/ensure-python-a2a.sh prints:

    python agents.py [--token TOKEN] [--polls N] [--after SECONDS] [--streaming]
                     [--push] [--binding JSONRPC|HTTP+JSON]

It listens on 127.0.0.1 on a port the system picks and prints one line,
`PORT <port>`, once it accepts connections. Two agents, each at its own
path with its own card (`/echo/.well-known/agent-card.json`, and `/slow/...`):

- `echo` answers every message at once with a message whose text is
  `echo: <the text>`, then a line `file NAME (TYPE, N bytes)` per file
  part; a message's metadata is echoed back in the reply's
  metadata, so a test sees what the client sent.
- `slow` starts a task (TASK_STATE_WORKING) and completes it, with an
  artifact `done: <the text>`, only on the Nth `GetTask` of that task
  (`--polls`, default 2): the Nth poll is answered after the task completed.
  With `--after`, it also completes that many seconds after it started.
  It is cancellable (`CancelTask`) until then. `--streaming` says in its
  card that it streams (`capabilities.streaming`). `--push` says in its
  card that it pushes (`capabilities.pushNotifications`) and makes the
  SDK's own push sender POST each task update to the webhook a message's
  `configuration.taskPushNotificationConfig` names, with its token in
  `X-A2A-Notification-Token`.

With `--token`, every JSON-RPC or HTTP+JSON request needs
`Authorization: Bearer TOKEN` (401 otherwise); the cards stay public.
`--binding` says which binding the cards prefer (listed first in
`supportedInterfaces`); both are served either way.
"""

import argparse
import asyncio
import socket
import sys

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Mount

from a2a.helpers.proto_helpers import (
    get_message_text,
    new_task_from_user_message,
    new_text_artifact,
    new_text_message,
)
from a2a.server.agent_execution.agent_executor import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks.base_push_notification_sender import BasePushNotificationSender
from a2a.server.tasks.inmemory_push_notification_config_store import (
    InMemoryPushNotificationConfigStore,
)
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.server.tasks.task_updater import TaskUpdater
from a2a.types import a2a_pb2 as pb


class EchoAgent(AgentExecutor):
    async def execute(self, context, event_queue):
        text = get_message_text(context.message)
        for part in context.message.parts:
            if part.HasField("raw"):
                text += f"\nfile {part.filename} ({part.media_type}, {len(part.raw)} bytes)"
        reply = new_text_message(f"echo: {text}", context_id=context.context_id)
        if context.message.HasField("metadata"):
            reply.metadata.CopyFrom(context.message.metadata)
        await event_queue.enqueue_event(reply)

    async def cancel(self, context, event_queue):
        return None


class SlowAgent(AgentExecutor):
    """Completes a task on its Nth GetTask (see `SlowHandler`)."""

    def __init__(self, after=None):
        self.after = after
        self.release = {}
        self.done = {}

    def events(self, task_id):
        release = self.release.setdefault(task_id, asyncio.Event())
        done = self.done.setdefault(task_id, asyncio.Event())
        return release, done

    async def execute(self, context, event_queue):
        task = context.current_task or new_task_from_user_message(context.message)
        if context.current_task is None:
            # The first answer to SendMessage says the task is under way.
            task.status.state = pb.TASK_STATE_WORKING
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        release, done = self.events(task.id)
        if self.after is None:
            await release.wait()
        else:
            try:
                await asyncio.wait_for(release.wait(), timeout=self.after)
            except asyncio.TimeoutError:
                pass
        text = get_message_text(context.message)
        await updater.add_artifact(new_text_artifact("result", f"done: {text}").parts, name="result")
        await updater.complete()
        done.set()

    async def cancel(self, context, event_queue):
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


class SlowHandler(DefaultRequestHandler):
    def __init__(self, agent, polls, **kwargs):
        super().__init__(agent_executor=agent, **kwargs)
        self.agent = agent
        self.polls = polls
        self.seen = {}

    async def on_get_task(self, params, context):
        count = self.seen.get(params.id, 0) + 1
        self.seen[params.id] = count
        if count >= self.polls and params.id in self.agent.release:
            release, done = self.agent.events(params.id)
            release.set()
            await asyncio.wait_for(done.wait(), timeout=10)
            # The store is written after the completion event is queued.
            for _ in range(100):
                task = await super().on_get_task(params, context)
                if task is not None and task.status.state == pb.TASK_STATE_COMPLETED:
                    return task
                await asyncio.sleep(0.02)
        return await super().on_get_task(params, context)


def card(name, description, base, binding, skill, streaming=False, push=False):
    jsonrpc = pb.AgentInterface(url=base, protocol_binding="JSONRPC", protocol_version="1.0")
    rest = pb.AgentInterface(url=base, protocol_binding="HTTP+JSON", protocol_version="1.0")
    interfaces = [rest, jsonrpc] if binding == "HTTP+JSON" else [jsonrpc, rest]
    return pb.AgentCard(
        name=name,
        description=description,
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=pb.AgentCapabilities(streaming=streaming, push_notifications=push),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[skill],
    )


def agent_app(agent_card, handler, binding):
    routes = create_agent_card_routes(agent_card)
    if binding == "HTTP+JSON":
        routes += create_rest_routes(handler) + create_jsonrpc_routes(handler, rpc_url="/")
    else:
        routes += create_jsonrpc_routes(handler, rpc_url="/") + create_rest_routes(handler)
    return Starlette(routes=routes)


def with_token(app, token):
    if token is None:
        return app

    async def guarded(scope, receive, send):
        if scope["type"] == "http" and not scope["path"].endswith("/agent-card.json"):
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                response = JSONResponse({"error": "unauthorized"}, status_code=401)
                await response(scope, receive, send)
                return
        await app(scope, receive, send)

    return guarded


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--token")
    parser.add_argument("--polls", type=int, default=2)
    parser.add_argument("--binding", default="JSONRPC", choices=["JSONRPC", "HTTP+JSON"])
    parser.add_argument("--streaming", action="store_true")
    parser.add_argument("--push", action="store_true")
    parser.add_argument("--after", type=float)
    args = parser.parse_args()

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"

    echo_card = card(
        "Echo", "Repeats what it is told.", f"{base}/echo", args.binding,
        pb.AgentSkill(id="echo", name="Echo", description="Repeats the message.",
                      tags=["test"], examples=["hello"]),
    )
    echo_handler = DefaultRequestHandler(
        agent_executor=EchoAgent(), task_store=InMemoryTaskStore(), agent_card=echo_card,
    )
    slow_agent = SlowAgent(args.after)
    slow_card = card(
        "Slow", "Works until polled enough.", f"{base}/slow", args.binding,
        pb.AgentSkill(id="wait", name="Wait", description="Finishes after a few polls.",
                      tags=["test"]),
        streaming=args.streaming,
        push=args.push,
    )
    pushes = {}
    if args.push:
        store = InMemoryPushNotificationConfigStore()
        pushes = {
            "push_config_store": store,
            "push_sender": BasePushNotificationSender(httpx.AsyncClient(), store),
        }
    slow_handler = SlowHandler(
        slow_agent, args.polls, task_store=InMemoryTaskStore(), agent_card=slow_card,
        **pushes,
    )
    app = Starlette(routes=[
        Mount("/echo", app=agent_app(echo_card, echo_handler, args.binding)),
        Mount("/slow", app=agent_app(slow_card, slow_handler, args.binding)),
    ])
    config = uvicorn.Config(with_token(app, args.token), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)

    async def serve():
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        print(f"PORT {port}", flush=True)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    sys.exit(main())
