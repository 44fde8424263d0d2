// Has the real pi package write a session file with its SessionManager:
// every kind of entry, a branch with a summary, a compaction. Prints one
// JSON object: { file, context } (pi's buildSessionContext of it).
//
// Usage: node write.mjs <folder with node_modules> <folder for the file>
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [dir, out] = process.argv.slice(2);
const entry = join(dir, "node_modules/@earendil-works/pi-coding-agent/dist/index.js");
const { SessionManager } = await import(pathToFileURL(entry).href);

const usage = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const sm = SessionManager.create("/project", out);
sm.appendModelChange("ollama", "llama3.2");
sm.appendThinkingLevelChange("high");
const question = sm.appendMessage({ role: "user", content: "Time in Tokyo?", timestamp: 1733234401000 });
sm.appendMessage({
    role: "assistant",
    content: [{ type: "thinking", thinking: "use the clock" },
        { type: "toolCall", id: "call-1", name: "time__clock__now", arguments: { zone: "Asia/Tokyo" } }],
    api: "openai-completions", provider: "ollama", model: "llama3.2", usage, stopReason: "toolUse",
    timestamp: 1733234402000,
});
sm.appendMessage({
    role: "toolResult", toolCallId: "call-1", toolName: "time__clock__now",
    content: [{ type: "text", text: "12:00" }], isError: false, timestamp: 1733234403000,
});
sm.appendMessage({
    role: "assistant", content: [{ type: "text", text: "It is noon." }],
    api: "openai-completions", provider: "ollama", model: "llama3.2", usage, stopReason: "stop",
    timestamp: 1733234404000,
});
sm.appendCustomEntry("counter", { count: 1 });
sm.appendCustomMessageEntry("reminder", "Remember the milk.", true, { why: "not for the model" });
sm.appendLabelChange(question, "start");
const summary = sm.branchWithSummary(question, "Asked the clock; it said noon.");
sm.appendMessage({ role: "user", content: [{ type: "text", text: "And in Paris?" }], timestamp: 1733234405000 });
sm.appendMessage({
    role: "assistant", content: [{ type: "text", text: "Four in the morning." }],
    api: "openai-completions", provider: "ollama", model: "llama3.2", usage, stopReason: "stop",
    timestamp: 1733234406000,
});
sm.appendCompaction("Tokyo and Paris times were asked.", summary, 1234);
sm.appendCustomMessageEntry("reminder", [{ type: "text", text: "Bring an umbrella." }], false);
sm.appendMessage({ role: "user", content: "Thanks!", timestamp: 1733234407000 });
sm.appendSessionInfo("clock questions");
process.stdout.write(JSON.stringify({ file: sm.getSessionFile(), context: sm.buildSessionContext() }));
