// Latency of agent edits in a real VS Code (code-server 4.139.1 in Chromium),
// driven by the end-to-end harness: what a person with the extension lives
// with, not the server's own cost (that is `cargo bench --bench end_to_end`).
//
// For each file size (generated files of numbered lines, each open in the
// editor as the active tab):
//   - auto mode: an agent's `verbatim/strReplace` round trip over the socket,
//     from sending the request to its answer (the server answers once the
//     editor's didChange shows the edit);
//   - review mode: from sending the request until the review shows (seen by
//     a MutationObserver in the page; the page's and Node's wall clocks are
//     the same machine's), then it is rejected. With `--ui inline` (the
//     default, as `verbatim.review.ui`) the review is shown once the diff's
//     proposal side holds the new text and its Reject All lens; on a file of
//     more than `--diff-max-lines` lines (`verbatim.review.diffMaxLines`,
//     default 5,000; 0: every file), reviewed in the file's own editor, once
//     the inserted text shows there as a decoration and its Reject All lens;
//     with `--ui refactorPreview`, once the edit's row is in the Refactor Preview.
//
// With --tap the extension starts the server through test/bench/stdio_tap.mjs,
// which timestamps every LSP message between VS Code and the server, and the
// page timestamps its WebSocket frames (the extension host's traffic with the
// workbench). Each round trip is then split into:
//   serverToApplyEdit  agent request → the server sends workspace/applyEdit;
//   applyEditToPage    → the workbench page gets its next frame (the language
//                      client's conversion, the extension host's applyEdit,
//                      the socket);
//   inPage             → the page sends its next frame (VS Code applies the edit);
//   pageToDidChange    → the language client sends didChange (socket, the
//                      extension host's document event);
//   editorToAnswer     applyEdit sent → the editor's answer arrives;
//   serverToAgent      the later of answer and didChange → the agent's answer.
// The page-frame split is approximate (other traffic shares the socket); the
// timelines-<size>.json files hold every event. The tap adds a pipe hop each
// way, so take the headline figures from a run without it.
//
// Usage (through test/run.sh, which installs code-server and packages the extension):
//   vscode-extension/test/run.sh --bench [--sizes 100,10000,100000] [--edits 50] [--reviews 20] [--ui inline|refactorPreview] [--diff-max-lines N] [--tap]
//   npm run bench -- --tap
// VERBATIM_BIN defaults to <repo>/target/release/verbatim there; results go to
// $VERBATIM_TEST_OUTPUT/edit_latency.json.

import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath, pathToFileURL } from "node:url";

import { ResponseError } from "../e2e/agent.mjs";
import { launchEditor, numberedFile, numberedLine, requiredEnv, waitFor, withTimeout } from "../e2e/harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: options } = parseArgs({
    options: {
        sizes: { type: "string", default: "100,10000,100000" },
        edits: { type: "string", default: "50" },
        reviews: { type: "string", default: "20" },
        warmup: { type: "string", default: "5" },
        tap: { type: "boolean", default: false },
        ui: { type: "string", default: "inline" },
        "diff-max-lines": { type: "string" },
    },
});
const sizes = options.sizes.split(",").map(Number);
const edits = Number(options.edits);
const reviews = Number(options.reviews);
const warmup = Number(options.warmup);
const diffMaxLines = options["diff-max-lines"] === undefined ? undefined : Number(options["diff-max-lines"]);
/** Where the inline review of a file of `size` numbered lines shows (the file has one more, empty, line after the last newline). */
const reviewedInEditor = (size) => options.ui === "inline" && ((diffMaxLines ?? 5000) === 0 || size + 1 > (diffMaxLines ?? 5000));
const output = requiredEnv("VERBATIM_TEST_OUTPUT");
const serverBin = requiredEnv("VERBATIM_BIN");

const now = () => performance.timeOrigin + performance.now();
const fileName = (size) => `lines-${size}.txt`;
const inEditorLabel = (size) => (reviewedInEditor(size) ? "the file's own editor" : "diff editor");

function summary(samples) {
    const sorted = [...samples].sort((a, b) => a - b);
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    const round = (ms) => Math.round(ms * 10) / 10;
    return { n: sorted.length, median: round(at(0.5)), p90: round(at(0.9)), min: round(sorted[0]), max: round(sorted.at(-1)) };
}

/** The server path the extension gets: the binary itself, or a script that runs it behind the tap. */
function serverPath() {
    if (!options.tap) return serverBin;
    const wrapper = path.join(output, "verbatim-tapped");
    const script = `#!/bin/sh\nexec "${process.execPath}" "${path.join(here, "stdio_tap.mjs")}" "${tapLog}" "${serverBin}" "$@"\n`;
    writeFileSync(wrapper, script);
    chmodSync(wrapper, 0o755);
    return wrapper;
}

/**
 * Runs in the page: timestamps every WebSocket frame between the page and
 * code-server (where the extension host's messages to the workbench travel).
 */
function recordSocketFrames() {
    const frames = (window.verbatimFrames = []);
    const stamp = () => performance.timeOrigin + performance.now();
    const size = (data) => data.byteLength ?? data.size ?? data.length;
    const Native = window.WebSocket;
    window.WebSocket = class extends Native {
        constructor(...args) {
            super(...args);
            this.addEventListener("message", (event) => frames.length < 500_000 && frames.push({ t: stamp(), direction: "toPage", bytes: size(event.data) }));
        }
        send(data) {
            if (frames.length < 500_000) frames.push({ t: stamp(), direction: "fromPage", bytes: size(data) });
            return super.send(data);
        }
    };
}

/**
 * Splits each round trip [start, end] with the tap's log (when the server sent
 * workspace/applyEdit, when the editor's didChange and its answer came back)
 * and the page's WebSocket frames (when the workbench got the extension
 * host's first message after the applyEdit, and when it first sent one back).
 */
function splitRoundTrips(messages, frames, trips) {
    const parts = { serverToApplyEdit: [], applyEditToPage: [], inPage: [], pageToDidChange: [], editorToAnswer: [], serverToAgent: [] };
    const timelines = [];
    for (const { start, end } of trips) {
        const request = messages.find((m) => m.t >= start && m.t <= end && m.direction === "toEditor" && m.method === "workspace/applyEdit");
        if (!request) continue;
        const answer = messages.find((m) => m.t >= request.t && m.direction === "toServer" && m.method === undefined && m.id === request.id);
        const didChange = messages.find((m) => m.t >= request.t && m.direction === "toServer" && m.method === "textDocument/didChange");
        if (!answer || !didChange || answer.t > end || didChange.t > end) continue;
        const toPage = frames.find((f) => f.t >= request.t && f.direction === "toPage");
        const fromPage = toPage && frames.find((f) => f.t >= toPage.t && f.direction === "fromPage");
        parts.serverToApplyEdit.push(request.t - start);
        parts.editorToAnswer.push(answer.t - request.t);
        parts.serverToAgent.push(end - Math.max(answer.t, didChange.t));
        if (fromPage && fromPage.t <= didChange.t) {
            parts.applyEditToPage.push(toPage.t - request.t);
            parts.inPage.push(fromPage.t - toPage.t);
            parts.pageToDidChange.push(didChange.t - fromPage.t);
        }
        const relative = (t) => Math.round((t - start) * 100) / 100;
        timelines.push({
            start,
            events: [
                { at: 0, agent: "request" },
                ...messages.filter((m) => m.t >= start && m.t <= end).map((m) => ({ at: relative(m.t), lsp: m.direction, method: m.method, id: m.id })),
                ...frames.filter((f) => f.t >= start && f.t <= end).map((f) => ({ at: relative(f.t), socket: f.direction, bytes: f.bytes })),
                { at: relative(end), agent: "answer" },
            ].sort((a, b) => a.at - b.at),
        });
    }
    return { parts: Object.fromEntries(Object.entries(parts).map(([name, samples]) => [name, summary(samples)])), timelines };
}

rmSync(output, { recursive: true, force: true });
mkdirSync(output, { recursive: true });
const tapLog = options.tap ? path.join(output, "tap.jsonl") : undefined;
const editor = await launchEditor({
    setup: (workspace) => {
        for (const size of sizes) writeFileSync(path.join(workspace, fileName(size)), numberedFile(size));
    },
    settings: {
        "verbatim.reviewMode": "auto",
        "verbatim.review.ui": options.ui,
        ...(diffMaxLines === undefined ? {} : { "verbatim.review.diffMaxLines": diffMaxLines }),
    },
    serverPath: serverPath(),
    initScript: options.tap ? recordSocketFrames : undefined,
    output,
});
const results = { date: new Date().toISOString(), server: serverBin, edits, reviews, warmup, tap: options.tap, ui: options.ui, diffMaxLines, sizes: {} };
let agent;
try {
    agent = await editor.connectAgent("bench-agent");
    // Each line's current text, so that every quote is unique and current.
    const lineTexts = new Map();
    const uriOf = (size) => pathToFileURL(path.join(editor.workspace, fileName(size))).href;

    /** Opens the file as the active editor and waits until the server holds the editor's buffer. */
    async function open(size) {
        await editor.openFromExplorer(fileName(size), numberedLine(1));
        return waitFor(`the server to hold ${fileName(size)} as the editor has it`, async () => {
            const result = await agent.request("verbatim/read", { uri: uriOf(size) });
            return result.source === "editor" ? result : undefined;
        });
    }

    /** Replaces line `n` of the file with a new text; resolves to the agent's answer (or ResponseError). */
    function replaceLine(size, n, tag, summaryText, baseRev) {
        const key = `${size}:${n}`;
        const oldStr = lineTexts.get(key) ?? numberedLine(n);
        const newStr = `${numberedLine(n)} ${tag}`;
        return agent.request("verbatim/strReplace", { uri: uriOf(size), oldStr, newStr, baseRev, summary: summaryText }).then((result) => {
            lineTexts.set(key, newStr);
            return result;
        });
    }

    /** Edits land all over the file, near its end included. */
    const lineFor = (size, i) => 1 + ((i * 7919) % size);

    for (const size of sizes) {
        let rev = (await open(size)).rev;
        const trips = [];
        for (let i = 0; i < warmup + edits; i++) {
            const start = now();
            const result = await withTimeout(replaceLine(size, lineFor(size, i), `auto-${i}`, `auto edit ${i}`, rev), "the agent's answer");
            const end = now();
            if (!result.applied) throw new Error(`edit ${i} on ${size} lines was not applied: ${JSON.stringify(result)}`);
            rev = result.rev;
            if (i >= warmup) trips.push({ start, end });
        }
        results.sizes[size] = { roundTrip: summary(trips.map(({ start, end }) => end - start)) };
        if (tapLog) {
            const messages = readFileSync(tapLog, "utf8").trim().split("\n").map((line) => JSON.parse(line));
            const frames = await editor.page.evaluate(() => window.verbatimFrames);
            const { parts, timelines } = splitRoundTrips(messages, frames, trips);
            results.sizes[size].roundTripParts = parts;
            writeFileSync(path.join(output, `timelines-${size}.json`), JSON.stringify(timelines, null, 1));
        }
        console.log(`${size} lines, auto mode: round trip ${JSON.stringify(results.sizes[size].roundTrip)}`);
        if (tapLog) console.log(`  parts: ${JSON.stringify(results.sizes[size].roundTripParts)}`);
    }

    if (reviews > 0) {
        await editor.runCommand("Verbatim: Toggle Auto-Apply for This Session");
        await waitFor("review mode", async () => !(await editor.statusBar().innerText()).includes("(auto-apply)"));
    }

    for (const size of reviews > 0 ? sizes : []) {
        const rev = (await open(size)).rev;
        const shown = [];
        const actions = [];
        for (let i = 0; i < reviews; i++) {
            // "#1." is no prefix of "#10.": the selector below matches this edit's row only.
            const summaryText = `review ${size} #${i}.`;
            const label = `bench-agent: ${summaryText}`;
            const tag = `review-${i}`;
            // The observers are in place before the request leaves.
            const inEditor = reviewedInEditor(size);
            await editor.page.evaluate(
                ({ label, tag, inline, inEditor }) => {
                    const proposal = () => document.querySelector(".monaco-diff-editor .editor.modified");
                    const fileEditors = () => [...document.querySelectorAll(".monaco-editor")].filter((node) => !node.closest(".monaco-diff-editor"));
                    // In the file's own editor, inserted text is decoration text: a CSS pseudo-element's content.
                    const markShown = () =>
                        fileEditors().some((node) =>
                            [...node.querySelectorAll(".view-lines span")].some((span) => getComputedStyle(span, "::after").content.includes(tag)),
                        );
                    const textShown = !inline
                        ? () => document.querySelector(`#workbench\\.parts\\.panel .monaco-list-row [title^="${label}"]`) !== null
                        : inEditor
                          ? markShown
                          : () => proposal()?.querySelector(".view-lines")?.textContent?.includes(tag) === true;
                    const lensesOf = () =>
                        inEditor
                            ? fileEditors().flatMap((node) => [...node.querySelectorAll(".codelens-decoration a")])
                            : [...(proposal()?.querySelectorAll(".codelens-decoration a") ?? [])];
                    const actionsShown = inline ? () => textShown() && lensesOf().some((lens) => lens.textContent?.includes("Reject All")) : textShown;
                    const when = (isShown) =>
                        new Promise((resolve) => {
                            const stamp = () => performance.timeOrigin + performance.now();
                            if (isShown()) return resolve(stamp());
                            const observer = new MutationObserver(() => {
                                if (!isShown()) return;
                                observer.disconnect();
                                resolve(stamp());
                            });
                            observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["title"] });
                        });
                    window.verbatimPreviewShown = when(textShown);
                    window.verbatimActionsShown = when(actionsShown);
                },
                { label, tag, inline: options.ui === "inline", inEditor },
            );
            const start = now();
            const pending = replaceLine(size, lineFor(size, 1000 + i), tag, summaryText, rev);
            pending.catch(() => undefined);
            const shownAt = await withTimeout(editor.page.evaluate(() => window.verbatimPreviewShown), "the review", 60_000);
            const actionsAt = await withTimeout(editor.page.evaluate(() => window.verbatimActionsShown), "the review's actions", 60_000);
            shown.push(shownAt - start);
            actions.push(actionsAt - start);
            if (options.ui === "inline") {
                const lenses = inEditor ? ".monaco-editor:not(.monaco-diff-editor *) .codelens-decoration a" : ".monaco-diff-editor .editor.modified .codelens-decoration a";
                await editor.page.locator(lenses, { hasText: "Reject All" }).first().click();
                const reason = editor.page.locator(".quick-input-widget .quick-input-box input");
                await reason.waitFor({ state: "visible" });
                await editor.page.keyboard.press("Enter");
                if (inEditor) await editor.page.locator(lenses, { hasText: "Reject All" }).first().waitFor({ state: "detached" });
                else await editor.page.locator(".monaco-diff-editor").first().waitFor({ state: "detached" });
            } else {
                await editor.waitForPreview(label);
                await editor.pressDiscard();
            }
            const error = await withTimeout(pending.then(() => undefined, (error) => error), "the agent's answer");
            if (!(error instanceof ResponseError) || error.data?.kind !== "rejected") throw new Error(`review ${i} on ${size} lines: expected rejected, got ${error}`);
        }
        results.sizes[size].reviewShown = summary(shown);
        if (options.ui === "inline") results.sizes[size].reviewedIn = inEditorLabel(size);
        // The in-editor review's CodeLenses come later: VS Code asks for them at least 250 ms after opening an editor.
        results.sizes[size].reviewActionsShown = summary(actions);
        console.log(`${size} lines, review mode${options.ui === "inline" ? ` (${inEditorLabel(size)})` : ""}: proposal shown ${JSON.stringify(results.sizes[size].reviewShown)}`);
        console.log(`${size} lines, review mode: its actions shown ${JSON.stringify(results.sizes[size].reviewActionsShown)}`);
    }
} finally {
    await agent?.close().catch(() => undefined);
    await editor.close();
}

const file = path.join(output, "edit_latency.json");
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\n| lines | round trip, auto: median | p90 | review shown: median | p90 | its actions shown: median | p90 |`);
console.log(`|---|---|---|---|---|---|---|`);
for (const size of sizes) {
    const { roundTrip, reviewShown, reviewActionsShown } = results.sizes[size];
    const cells = (figures) => (figures ? `${figures.median} ms | ${figures.p90} ms` : "— | —");
    console.log(`| ${size.toLocaleString("en")} | ${roundTrip.median} ms | ${roundTrip.p90} ms | ${cells(reviewShown)} | ${cells(reviewActionsShown)} |`);
}
console.log(`\n(${edits} round trips after ${warmup} warm-up edits, ${reviews} reviews per size; results in ${file})`);
