// The official A2A JavaScript SDK's client (@a2a-js/sdk 1.3.0) against an
// A2A server, for the tests of oscova-a2a: a second real peer beside the
// Python SDK's (client.py), with its own reading of the protocol.
//
// Run with the Node 22 scripts/ensure-pi.sh installs:
//
//   node client.mjs SDK_DIR --url BASE [--token TOKEN] [--binding JSONRPC|HTTP+JSON] OP [ARG...]
//
// SDK_DIR is the folder holding node_modules (scripts/ensure-a2a-js.sh
// prints it). The client reads the card at BASE/.well-known/agent-card.json
// through the SDK's card resolver and ClientFactory picks the interface of
// the binding asked for; every request carries `Authorization: Bearer TOKEN`
// when given, through the SDK's own authenticating fetch. OP is one of:
//
// - `card`: the card.
// - `send TEXT [CONTEXT]`: sendMessage (blocking), in CONTEXT when given.
// - `send-nowait TEXT [CONTEXT]`: sendMessage with the client's `polling`
//   config (the request's returnImmediately).
// - `stream TEXT [CONTEXT]`: sendMessageStream; the result is the list of
//   events received.
// - `answer TEXT CONTEXT TASK`: sendMessage (blocking) in task TASK, the
//   answer to the question the task waits on.
// - `get ID`, `cancel ID`: getTask, cancelTask.
// - `list [CONTEXT]`: listTasks (in CONTEXT when given).
//
// It prints one line of JSON: {"ok": <the result as the protocol's JSON,
// by the SDK's own codecs>} or {"error": "<the error's name>", "class":
// "<the SDK's error class>", "message": "..."}, and exits 0 either way (1
// only when it could not run).
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const [sdkDir, ...rest] = process.argv.slice(2);
const { values: flags, positionals } = parseArgs({
  args: rest,
  options: {
    url: { type: 'string' },
    token: { type: 'string' },
    binding: { type: 'string', default: 'JSONRPC' },
  },
  allowPositionals: true,
});
const [op, ...args] = positionals;

const sdk = join(sdkDir, 'node_modules/@a2a-js/sdk/dist');
const load = (path) => import(pathToFileURL(join(sdk, path)).href);
const {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  createAuthenticatingFetchWithRetry,
} = await load('client/index.js');
const {
  AgentCard,
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  Task,
} = await load('index.js');

async function run() {
  // The bearer token goes on every request, the card's included, as an
  // AuthenticationHandler's headers; a refusal is not retried.
  const fetchImpl = flags.token
    ? createAuthenticatingFetchWithRetry(fetch, {
        headers: async () => ({ Authorization: `Bearer ${flags.token}` }),
        shouldRetryWithHeaders: async () => undefined,
      })
    : fetch;
  const cardResolver = new DefaultAgentCardResolver({ fetchImpl });
  const card = await cardResolver.resolve(flags.url);
  if (op === 'card') {
    return AgentCard.toJSON(card);
  }
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      preferredTransports: [flags.binding],
      cardResolver,
      clientConfig: { polling: op === 'send-nowait' },
    }),
  );
  const client = await factory.createFromAgentCard(card);
  if (client.transport.protocolName !== flags.binding) {
    throw new Error(`the SDK picked ${client.transport.protocolName}, not ${flags.binding}`);
  }
  // Requests are built from the protocol's JSON by the SDK's own codecs,
  // which fill every field the JSON leaves out.
  if (op === 'send' || op === 'send-nowait' || op === 'stream' || op === 'answer') {
    const message = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: args[0] }] };
    if (args[1]) {
      message.contextId = args[1];
    }
    if (args[2]) {
      message.taskId = args[2];
    }
    const request = SendMessageRequest.fromJSON({ message });
    if (op === 'stream') {
      const events = [];
      for await (const event of client.sendMessageStream(request)) {
        events.push(StreamResponse.toJSON(event));
      }
      return events;
    }
    const result = await client.sendMessage(request);
    // SendMessageResult is a Task or a Message; a Task has a status.
    return 'status' in result ? { task: Task.toJSON(result) } : { message: Message.toJSON(result) };
  }
  if (op === 'get') {
    return Task.toJSON(await client.getTask(GetTaskRequest.fromJSON({ id: args[0] })));
  }
  if (op === 'cancel') {
    return Task.toJSON(await client.cancelTask(CancelTaskRequest.fromJSON({ id: args[0] })));
  }
  if (op === 'list') {
    const request = ListTasksRequest.fromJSON(args[0] ? { contextId: args[0] } : {});
    return ListTasksResponse.toJSON(await client.listTasks(request));
  }
  throw Object.assign(new Error(`unknown op ${op}`), { name: 'UsageError' });
}

let answer;
try {
  answer = { ok: await run() };
} catch (error) {
  // The SDK names an A2A error by the specification (`name`, e.g.
  // TaskNotFoundError) and its class by the binding it came over
  // (JsonRpcTaskNotFoundError, RestTaskNotFoundError).
  answer = {
    error: error?.name ?? 'Error',
    class: error?.constructor?.name ?? 'Error',
    message: String(error?.message ?? error),
  };
}
console.log(JSON.stringify(answer));
