"""The Python side of the A2A load run (`examples/a2a-load`): one agent
served by the official Python SDK (a2a-sdk 1.3.0), doing what `oscova
serve`'s agent does for one message, so the two servers are compared on the
same work.

Run with the interpreter scripts/ensure-python-a2a.sh prints:

    python load_agent.py --model URL

Each message becomes a task (TASK_STATE_WORKING), the message's text is sent
to the OpenAI-compatible model at URL (`POST URL/chat/completions`, streamed,
one shared keep-alive HTTP client), the streamed answer becomes the task's
artifact and the task completes. The SDK keeps tasks in its in-memory store.

It listens on 127.0.0.1 on a port the system picks, serves JSON-RPC at `/`
and the card at `/.well-known/agent-card.json`, and prints one line,
`load agent: serving http://127.0.0.1:PORT`, once it accepts connections.
"""

import argparse
import asyncio
import json
import socket
import sys

import httpx
import uvicorn
from starlette.applications import Starlette

from a2a.helpers.proto_helpers import (
    get_message_text,
    new_task_from_user_message,
    new_text_artifact,
)
from a2a.server.agent_execution.agent_executor import AgentExecutor
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.server.tasks.task_updater import TaskUpdater
from a2a.types import a2a_pb2 as pb


class ModelAgent(AgentExecutor):
    """Asks the model once per message; its answer is the task's artifact."""

    def __init__(self, model):
        self.url = f"{model}/chat/completions"
        self.http = httpx.AsyncClient(limits=httpx.Limits(max_connections=200))

    async def answer(self, text):
        body = {"model": "load", "stream": True, "messages": [{"role": "user", "content": text}]}
        answer = ""
        async with self.http.stream("POST", self.url, json=body) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                for choice in json.loads(line[6:]).get("choices", []):
                    answer += choice.get("delta", {}).get("content") or ""
        return answer

    async def execute(self, context, event_queue):
        task = context.current_task or new_task_from_user_message(context.message)
        if context.current_task is None:
            task.status.state = pb.TASK_STATE_WORKING
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        answer = await self.answer(get_message_text(context.message))
        await updater.add_artifact(new_text_artifact("answer", answer).parts, name="answer")
        await updater.complete()

    async def cancel(self, context, event_queue):
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    args = parser.parse_args()

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"

    card = pb.AgentCard(
        name="Load agent",
        description="Answers with the model's answer.",
        version="1.0.0",
        supported_interfaces=[
            pb.AgentInterface(url=base, protocol_binding="JSONRPC", protocol_version="1.0"),
        ],
        capabilities=pb.AgentCapabilities(streaming=False, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="chat", name="Chat", description="Asks the model.", tags=["load"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=ModelAgent(args.model), task_store=InMemoryTaskStore(), agent_card=card,
    )
    app = Starlette(routes=create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/"))
    config = uvicorn.Config(app, log_level="warning", lifespan="off", backlog=1024)
    server = uvicorn.Server(config)

    async def serve():
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        print(f"load agent: serving {base}", file=sys.stderr, flush=True)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    sys.exit(main())
