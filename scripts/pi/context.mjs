// Runs the real pi package on a session file: reads it as pi does
// (parseSessionEntries, migrateSessionEntries) and builds the model context
// from its last entry (buildSessionContext). Prints one JSON object:
// { header, context, times_ms, rss_before_kib, max_rss_kib, heap_used_bytes }
// (rss_before_kib: after pi's package was loaded, before the first run).
// `repeat` runs the read-and-build that many times (the resume benchmark);
// `times_ms` has one figure per run, the file read included.
//
// Usage: node context.mjs <folder with node_modules> <session.jsonl> [repeat]
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [dir, file, repeat = "1"] = process.argv.slice(2);
const entry = join(dir, "node_modules/@earendil-works/pi-coding-agent/dist/index.js");
const pi = await import(pathToFileURL(entry).href);

const rssBefore = Math.round(process.memoryUsage().rss / 1024);
let header;
let context;
const times = [];
for (let i = 0; i < Number(repeat); i++) {
    const start = process.hrtime.bigint();
    const entries = pi.parseSessionEntries(readFileSync(file, "utf8"));
    pi.migrateSessionEntries(entries);
    header = entries.find((e) => e.type === "session");
    context = pi.buildSessionContext(entries.filter((e) => e.type !== "session"));
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
}
process.stdout.write(
    JSON.stringify({
        header,
        context,
        times_ms: times,
        rss_before_kib: rssBefore,
        max_rss_kib: process.resourceUsage().maxRSS,
        heap_used_bytes: process.memoryUsage().heapUsed,
    }),
);
