// Runs the real pi package's compaction preparation on a session file:
// reads it as pi does, takes the branch ending at the last entry, and runs
// prepareCompaction with the given settings. Prints one JSON object:
// { preparation: { firstKeptEntryId, isSplitTurn, tokensBefore,
//   previousSummary, messagesToSummarize, turnPrefixMessages, readFiles,
//   modifiedFiles } | null, historyText, prefixText, context }
// (historyText and prefixText: serializeConversation of the two parts,
// what the summarising requests carry; context: buildSessionContext).
//
// Usage: node compaction.mjs <folder with node_modules> <session.jsonl> <keepRecentTokens> <reserveTokens>
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [dir, file, keep, reserve] = process.argv.slice(2);
const root = join(dir, "node_modules/@earendil-works/pi-coding-agent/dist");
const pi = await import(pathToFileURL(join(root, "index.js")).href);
const compaction = await import(pathToFileURL(join(root, "core/compaction/compaction.js")).href);
const utils = await import(pathToFileURL(join(root, "core/compaction/utils.js")).href);

const entries = pi.parseSessionEntries(readFileSync(file, "utf8"));
pi.migrateSessionEntries(entries);
const body = entries.filter((e) => e.type !== "session");
const byId = new Map(body.map((e) => [e.id, e]));
const path = [];
for (let e = body[body.length - 1]; e; e = e.parentId ? byId.get(e.parentId) : undefined) path.unshift(e);
const settings = { enabled: true, reserveTokens: Number(reserve), keepRecentTokens: Number(keep) };
const prep = compaction.prepareCompaction(path, settings);
const text = (messages) => utils.serializeConversation(pi.convertToLlm(messages));
let preparation = null;
if (prep) {
    const lists = utils.computeFileLists(prep.fileOps);
    preparation = {
        firstKeptEntryId: prep.firstKeptEntryId,
        isSplitTurn: prep.isSplitTurn,
        tokensBefore: prep.tokensBefore,
        previousSummary: prep.previousSummary ?? null,
        messagesToSummarize: prep.messagesToSummarize,
        turnPrefixMessages: prep.turnPrefixMessages,
        readFiles: lists.readFiles,
        modifiedFiles: lists.modifiedFiles,
    };
}
process.stdout.write(
    JSON.stringify({
        preparation,
        historyText: prep ? text(prep.messagesToSummarize) : null,
        prefixText: prep ? text(prep.turnPrefixMessages) : null,
        context: pi.buildSessionContext(path),
    }),
);
