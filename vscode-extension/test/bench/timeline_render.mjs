// The timeline view's own cost for a journal of 10,000 entries, in plain Node
// (no editor): from the `verbatim/timeline` result as the language client
// receives it (JSON text) to what VS Code asks for first: the model, the root
// items and the items of the session that opens by itself. Also the cost of
// making and drawing every node, as if the person opened everything. What the
// editor adds on top (the extension host's IPC, the workbench drawing the
// tree) is measured in a real VS Code by test/e2e/timeline_view.test.mjs.
//
// Each journal is measured whole (every edit, as the view asks while a filter
// is set) and as the view asks for it at first (the newest 500 edits,
// `verbatim.timeline.maxEdits`'s default).
//
// Usage: node test/bench/timeline_render.mjs [--runs 15]
// (bundles src/timeline.ts and the unit tests' fixtures with esbuild first).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

import * as esbuild from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { runs: { type: "string", default: "15" } } });
const runs = Number(values.runs);

const out = mkdtempSync(path.join(tmpdir(), "verbatim-timeline-bench-"));
const bundle = path.join(out, "timeline_bench.mjs");
await esbuild.build({
    stdin: {
        contents: `export * from "./src/timeline"; export * from "./test/unit/timeline_fixtures";`,
        resolveDir: path.resolve(here, "../.."),
        loader: "ts",
    },
    outfile: bundle,
    bundle: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "warning",
});
const { TimelineModel, generatedTimeline, withMaxEdits, entriesOf, SPREAD, ONE_TURN } = await import(pathToFileURL(bundle).href);
rmSync(out, { recursive: true, force: true });

const context = { now: new Date("2026-12-03T12:05:00Z"), workspaceFolders: ["file:///p"] };

/** The view's first `maxEdits`. */
const MAX_EDITS = 500;

function once(text, maxEdits) {
    const started = performance.now();
    const result = JSON.parse(text);
    const parsed = performance.now();
    const model = new TimelineModel(result, {}, new Map(), maxEdits);
    const roots = model.roots();
    const views = roots.map((node) => model.view(node, context));
    for (const [index, node] of roots.entries()) {
        if (views[index].collapsible !== "expanded") continue;
        for (const child of model.children(node)) model.view(child, context);
    }
    const shown = performance.now();
    // The newest turn opened: its first page of edits.
    const [turn] = model.children(roots[0]);
    for (const edit of model.children(turn)) model.view(edit, context);
    const turnOpened = performance.now();
    let nodes = 0;
    const walk = (node) => {
        let children = model.children(node);
        // Every page of a long level ("Show more" until none is left).
        for (let last = children.at(-1); last?.kind === "more"; last = children.at(-1)) {
            model.showMore(last);
            children = model.children(node);
        }
        for (const child of children) {
            nodes += 1;
            model.view(child, context);
            walk(child);
        }
    };
    walk(undefined);
    const walked = performance.now();
    return { parse: parsed - started, firstScreen: shown - parsed, turn: turnOpened - shown, everything: walked - turnOpened, nodes };
}

const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)];
const fmt = (ms) => `${ms.toFixed(1)} ms`;

console.log(`timeline render, ${runs} runs each (median, min)`);
for (const [name, shape, maxEdits] of [
    ["50 sessions × 10 turns × 10 edits × 2 files", SPREAD, undefined],
    [`50 sessions × 10 turns × 10 edits × 2 files, the newest ${MAX_EDITS} edits`, SPREAD, MAX_EDITS],
    ["1 session, 1 turn, 10,000 edits of 1 file", ONE_TURN, undefined],
    [`1 session, 1 turn, 10,000 edits of 1 file, the newest ${MAX_EDITS} edits`, ONE_TURN, MAX_EDITS],
]) {
    const whole = generatedTimeline(shape);
    const text = JSON.stringify(maxEdits === undefined ? whole : withMaxEdits(whole, maxEdits));
    const samples = Array.from({ length: runs }, () => once(text, maxEdits));
    const column = (key) => {
        const times = samples.map((sample) => sample[key]);
        return `${fmt(median(times))} (min ${fmt(Math.min(...times))})`;
    };
    console.log(`\n${name}: ${entriesOf(shape)} entries, ${(text.length / 1e6).toFixed(2)} MB of JSON`);
    console.log(`  JSON.parse (the language client's)          ${column("parse")}`);
    console.log(`  model + first screen (roots, open session)  ${column("firstScreen")}`);
    console.log(`  the newest turn opened (its first page)     ${column("turn")}`);
    console.log(`  every node made and drawn (${String(samples[0].nodes).padEnd(5)} nodes)    ${column("everything")}`);
}
