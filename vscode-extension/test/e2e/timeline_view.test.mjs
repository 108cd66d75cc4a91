// The Verbatim Timeline view in a real VS Code (code-server in Chromium),
// against a stand-in server (timeline_probe_server.mjs) that answers the
// timeline methods as docs/protocol.md documents them: the tree, a change in
// a diff editor in the file's language, the journal's unified diff where the
// texts were not kept, the reviewed checkbox, Revert with its confirmation
// and the review it comes back as, an error's message, the filters, the time
// a journal of 10,000 entries takes to reach the screen (the view asks for
// the newest 500 edits, which the stand-in honours as the server does), and
// Load older changes. The same view against the real server is
// test/e2e/timeline.test.mjs.
//
// Needs: CODE_SERVER_BIN, VERBATIM_TEST_OUTPUT (test/run.sh sets them).

import * as assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

import * as esbuild from "esbuild";

import { extensionDir, launchEditor, requiredEnv, REVIEW_SELECTORS, scenarioSteps, waitFor } from "./harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const output = path.join(requiredEnv("VERBATIM_TEST_OUTPUT"), "timeline-view");

/** The unit tests' fixtures (TypeScript), bundled to import them here. */
async function importFixtures(dir) {
    const bundle = path.join(dir, "timeline_fixtures.mjs");
    await esbuild.build({
        entryPoints: [path.join(extensionDir, "test", "unit", "timeline_fixtures.ts")],
        outfile: bundle,
        bundle: true,
        platform: "node",
        format: "esm",
        logLevel: "warning",
    });
    return import(pathToFileURL(bundle).href);
}

const MAIN_BEFORE = "fn main() {\n    let x = 1;\n}\n";
const MAIN_AFTER = "fn main() {\n    let x = 2;\n}\n";
const LIB_DIFF = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,0 +1,4 @@\n+pub fn start() {\n+    run();\n+}\n+\n";
/** `verbatim.timeline.maxEdits`'s default: the view's first `maxEdits`. */
const MAX_EDITS = 500;

describe("the Verbatim Timeline view (code-server, a stand-in server)", { concurrency: false }, () => {
    let editor;
    let page;
    let workspace;
    let probeDir;
    let fixtureFile;
    let probeLog;
    let fixtures;
    const steps = scenarioSteps(() => page, output, () => editor?.userData);
    const step = (name, body) => steps.step(name, body);
    const uriOf = (name) => pathToFileURL(path.join(workspace, name)).href;

    /** The hand-written timeline of the unit tests, with its files in the workspace; a.txt is main.rs here, to show Rust. */
    function smallTimeline(ws) {
        const text = JSON.stringify(fixtures.smallTimeline()).replaceAll("a.txt", "main.rs").replaceAll("file:///p/", `${pathToFileURL(ws).href}/`);
        return JSON.parse(text);
    }

    function writeFixture(scenario) {
        writeFileSync(fixtureFile, JSON.stringify(scenario));
    }

    function probeEntries() {
        if (!existsSync(probeLog)) return [];
        return readFileSync(probeLog, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
    }

    const requests = (method) => probeEntries().filter((entry) => entry.kind === "request" && entry.method === method);

    before(async () => {
        rmSync(output, { recursive: true, force: true });
        probeDir = mkdtempSync(path.join(tmpdir(), "verbatim-timeline-probe-"));
        fixtures = await importFixtures(probeDir);
        fixtureFile = path.join(probeDir, "fixture.json");
        probeLog = path.join(probeDir, "probe.jsonl");
        const wrapper = path.join(probeDir, "verbatim");
        writeFileSync(
            wrapper,
            `#!/bin/sh\nTIMELINE_PROBE_FIXTURE='${fixtureFile}' TIMELINE_PROBE_LOG='${probeLog}' TIMELINE_PROBE_FIXTURES_MODULE='${path.join(probeDir, "timeline_fixtures.mjs")}' exec '${process.execPath}' '${path.join(here, "timeline_probe_server.mjs")}' "$@"\n`,
        );
        chmodSync(wrapper, 0o755);
        editor = await launchEditor({
            setup: (ws) => {
                writeFileSync(path.join(ws, "main.rs"), MAIN_AFTER);
                const timeline = smallTimeline(ws);
                const mainUri = `${pathToFileURL(ws).href}/main.rs`;
                writeFixture({
                    timeline,
                    entries: {
                        "18c3-41233-7.0": { id: "18c3-41233-7.0", uri: mainUri, newUri: null, before: MAIN_BEFORE, after: MAIN_AFTER, diff: "" },
                        "18c3-41233-7.1": { id: "18c3-41233-7.1", uri: `${pathToFileURL(ws).href}/src/lib.rs`, newUri: null, before: null, after: null, diff: LIB_DIFF },
                    },
                    revert: {
                        edit: { uri: mainUri, line: 1, oldText: "    let x = 2;", newText: "    let x = 1;" },
                        result: {
                            writeId: "18c5-41233-10",
                            outcome: "applied",
                            reverts: ["18c3-41233-7.0"],
                            files: [{ uri: mainUri, via: "editor", action: "edit", hunks: 1, outcome: "applied", conflicts: [] }],
                            message: "Reverted 1 edit in main.rs.",
                        },
                    },
                });
            },
            serverPath: wrapper,
            settings: { "verbatim.logLevel": "debug" },
            output,
        });
        ({ page, workspace } = editor);
    });

    after(async () => {
        await page?.screenshot({ path: path.join(output, "last.png") }).catch(() => undefined);
        if (probeLog && existsSync(probeLog)) writeFileSync(path.join(output, "probe.jsonl"), readFileSync(probeLog));
        await editor?.close();
        if (probeDir) rmSync(probeDir, { recursive: true, force: true });
        console.log(`# end-to-end artifacts in ${output} (last step: ${steps.last})`);
    });

    const sidebar = () => page.locator("#workbench\\.parts\\.sidebar");
    /** A row of the tree: its label, at its depth (1: sessions, 2: turns, 3: edits, 4: files). */
    const row = (label, level) => sidebar().locator(`.monaco-list-row[aria-level="${level}"][aria-label^="${label}"]`).first();
    const notification = (text) => page.locator(".notifications-toasts .notification-toast", { hasText: text }).first();

    /** Opens a collapsed row (a click on it toggles it). */
    async function expand(label, level) {
        const target = row(label, level);
        await target.waitFor({ state: "visible" });
        if ((await target.getAttribute("aria-expanded")) !== "true") await target.locator(".monaco-tl-twistie").click();
        await waitFor(`${label} to open`, async () => (await target.getAttribute("aria-expanded")) === "true", { timeout: 10_000 });
    }

    /** Scrolls the tree (the mouse is over it) until `target` is drawn: rows far down are not in the page until then. */
    async function scrollDownTo(target) {
        await waitFor(
            `${target} to be drawn`,
            async () => {
                if (await target.isVisible()) return true;
                // The tree has the focus: End goes to its last row. (The wheel scrolls
                // whatever tooltip is under the pointer.)
                await page.keyboard.press("End");
                return false;
            },
            { timeout: 30_000, interval: 100 },
        );
    }

    /** Runs an action of a row's context menu. */
    /**
     * Chooses `action` from the row's context menu with the keyboard: the item under
     * the pointer, once the menu shows it focused, then Enter. (A click that lands
     * while the menu still slides in is taken as a hover: nothing runs.)
     */
    async function contextAction(target, action) {
        await target.click({ button: "right" });
        const label = page.locator(".action-label", { hasText: action });
        await page.locator(".context-view .action-item", { has: label }).first().hover();
        await page.locator(".context-view .action-item.focused", { has: label }).first().waitFor({ state: "visible" });
        await page.keyboard.press("Enter");
    }

    /** Does `act` until `shown` is visible (at most three times: a tree that redraws its rows meanwhile loses the row's menu). */
    async function untilShown(act, shown) {
        for (let attempt = 1; ; attempt += 1) {
            if (!(await shown.isVisible())) {
                await page.keyboard.press("Escape");
                await act();
            }
            try {
                await shown.waitFor({ state: "visible", timeout: 10_000 });
                return;
            } catch (error) {
                if (attempt >= 3) throw error;
            }
        }
    }

    step("the view lists every session, newest first, and asked the server for the timeline", async () => {
        await page.locator('.activitybar .action-item a[aria-label^="Verbatim"]').first().click();
        await row("codex", 1).waitFor({ state: "visible", timeout: 60_000 });
        const labels = await sidebar().locator('.monaco-list-row[aria-level="1"]').evaluateAll((rows) => rows.map((r) => r.getAttribute("aria-label")));
        assert.deepEqual(labels.map((label) => label.split(" ")[0]), ["codex", "Claude", "Changes"]);
        assert.match(labels[0], /^codex 2 turns · /);
        const [timeline] = requests("verbatim/timeline");
        assert.deepEqual(timeline.params, { limit: 200, maxEdits: MAX_EDITS });
        // The newest session opens by itself, its turns named by their first edit.
        await row("Rename run to start", 2).waitFor({ state: "visible" });
        await row("Add start()", 2).waitFor({ state: "visible" });
        await page.screenshot({ path: path.join(output, "tree.png") });
    });

    step("a file opens its change in a diff editor, in the file's language", async () => {
        await expand("Rename run to start", 2);
        await expand("Rename run to start", 3);
        await row("main.rs", 4).click();
        const diff = page.locator(".monaco-diff-editor");
        await diff.locator(".editor.modified .view-lines", { hasText: "let x = 2;" }).first().waitFor({ state: "visible" });
        await diff.locator(".editor.original .view-lines", { hasText: "let x = 1;" }).first().waitFor({ state: "visible" });
        assert.equal(await diff.locator(".editor.modified").first().getAttribute("data-mode-id"), "rust");
        await page.locator(".tabs-container .tab", { hasText: "main.rs (Rename run to start) before ↔ after" }).first().waitFor({ state: "visible" });
        assert.deepEqual(requests("verbatim/timelineEntry").map((entry) => entry.params), [{ id: "18c3-41233-7.0" }]);
        await page.screenshot({ path: path.join(output, "diff.png") });
    });

    step("a change whose texts were not kept shows the journal's diff, as a diff", async () => {
        await row("lib.rs", 4).click();
        const shown = page.locator('[data-mode-id="diff"] .view-lines', { hasText: "+pub fn start() {" }).first();
        await shown.waitFor({ state: "visible" });
    });

    step("a file's checkbox marks it reviewed for its turn, on every row of that file in the turn", async () => {
        await expand("Revert apply_patch main.rs", 3);
        const checkbox = (target) => target.locator(".custom-view-tree-node-item-checkbox, .monaco-checkbox").first();
        const checked = async (target) => {
            const box = checkbox(target);
            return (await box.getAttribute("aria-checked")) === "true" || (await box.evaluate((element) => element.classList.contains("checked")));
        };
        const rows = sidebar().locator('.monaco-list-row[aria-level="4"][aria-label^="main.rs"]');
        await waitFor("two rows of main.rs in the turn", async () => (await rows.count()) >= 2, { timeout: 10_000 });
        assert.equal(await checked(rows.nth(0)), false);
        await checkbox(rows.nth(1)).click();
        const mark = await waitFor("verbatim/markReviewed", () => requests("verbatim/markReviewed")[0]);
        assert.deepEqual(mark.params, { turn: "01a23bcb-3138-4a6e-8f00-000000000002", uri: uriOf("main.rs"), reviewed: true });
        await waitFor("the other row of main.rs to show the mark", () => checked(rows.nth(0)), { timeout: 10_000 });
        await page.screenshot({ path: path.join(output, "reviewed.png") });
    });

    step("Revert on a file asks first; its change comes back as an ordinary review", async () => {
        // The edit "Rename run to start" changed main.rs: the second main.rs of the turn (the first is its revert's revert).
        const target = sidebar().locator('.monaco-list-row[aria-level="4"][aria-label^="main.rs"]').nth(1);
        // Open File first, so that the review has the document open, as a person would.
        await target.hover();
        await target.locator('.action-label[aria-label="Open File"]').click();
        await page.locator(".tabs-container .tab", { hasText: /^main\.rs/ }).first().waitFor({ state: "visible" });
        await target.hover();
        await target.locator('.action-label[aria-label="Revert…"]').click();
        const dialog = page.locator(".monaco-dialog-box");
        await dialog.getByText(/Revert the change to main\.rs made by “Rename run to start”/).waitFor({ state: "visible" });
        await page.screenshot({ path: path.join(output, "revert-confirm.png") });
        await dialog.locator(".monaco-button", { hasText: /^Revert$/ }).click();
        await page.locator(REVIEW_SELECTORS.titleAcceptAll).first().waitFor({ state: "visible", timeout: 30_000 });
        await page.screenshot({ path: path.join(output, "revert-review.png") });
        const [revert] = requests("verbatim/revert");
        assert.deepEqual(revert.params, { ids: ["18c3-41233-7.0"] });
        const timelinesBefore = requests("verbatim/timeline").length;
        await page.locator(REVIEW_SELECTORS.titleAcceptAll).first().click();
        await notification("Verbatim: Reverted 1 edit in main.rs.").waitFor({ state: "visible", timeout: 30_000 });
        const answered = probeEntries().find((entry) => entry.kind === "applyEditAnswered");
        assert.equal(answered.answer.applied, true);
        // The server announced the revert's journal line: the view read the timeline again.
        await waitFor("the timeline to be read again", () => requests("verbatim/timeline").length > timelinesBefore, { timeout: 10_000 });
    });

    step("an error's message is shown", async () => {
        const scenario = JSON.parse(readFileSync(fixtureFile, "utf8"));
        scenario.revert = {
            error: {
                code: -33019,
                message: "None of the 4 edits of this session can be reverted: their texts were pruned.",
                data: { kind: "notRevertible", ids: ["18c3-41233-7"], why: "pruned" },
            },
        };
        writeFixture(scenario);
        const dialog = page.locator(".monaco-dialog-box");
        await untilShown(() => contextAction(row("codex", 1), "Revert…"), dialog.getByText(/Revert every change of the codex session/));
        await dialog.locator(".monaco-button", { hasText: /^Revert$/ }).click();
        await notification("None of the 4 edits of this session can be reverted").waitFor({ state: "visible", timeout: 30_000 });
        assert.deepEqual(requests("verbatim/revert").at(-1).params, { session: "01a23bcb-7d1e-4c55-9a3f-5f5b1c2d3e4f" });
    });

    step("filter by agent and by file, and clear the filter", async () => {
        await editor.runCommand("Verbatim Timeline: Filter by Agent…");
        await page.locator(".quick-input-list .monaco-list-row", { hasText: "Claude Code" }).first().click();
        await waitFor("only Claude Code's session", async () => (await sidebar().locator('.monaco-list-row[aria-level="1"]').count()) === 1 && row("Claude Code", 1).isVisible(), {
            timeout: 10_000,
        });
        await sidebar().getByText("Filtered: agent Claude Code.").first().waitFor({ state: "visible" });
        await page.screenshot({ path: path.join(output, "filtered.png") });
        await sidebar().locator('.action-label[aria-label="Clear Filter"]').first().click();
        await row("Changes on disk", 1).waitFor({ state: "visible" });

        await editor.runCommand("Verbatim Timeline: Filter by File…");
        await page.locator(".quick-input-list .monaco-list-row", { hasText: "src/lib.rs" }).first().click();
        await waitFor("only codex's session", async () => (await sidebar().locator('.monaco-list-row[aria-level="1"]').count()) === 1 && row("codex", 1).isVisible(), {
            timeout: 10_000,
        });
        await sidebar().locator('.action-label[aria-label="Clear Filter"]').first().click();
        await row("Claude Code", 1).waitFor({ state: "visible" });
        assert.equal(requests("verbatim/timeline").length >= 2, true, "filters change the view, not the request");
    });

    /**
     * Swaps the timeline the probe serves for `timeline`, tells the view the
     * journal changed, and times `label` (a row of a session's first turn)
     * reaching the screen. The page notes the time itself (its clock is this
     * machine's too). Returns `{ afterAnswer, afterChange }` in ms: from the
     * probe's answer to `verbatim/timeline`, and from the journal change (which
     * adds the view's 300 ms wait for more changes and the probe's own reading).
     */
    async function timeRender(timeline, label) {
        const answersBefore = probeEntries().filter((entry) => entry.kind === "answered").length;
        await page.evaluate((turnLabel) => {
            window.__timelineShown = undefined;
            const seen = () => document.querySelector(`#workbench\\.parts\\.sidebar .monaco-list-row[aria-level="2"][aria-label^="${turnLabel} "]`);
            const observer = new MutationObserver(() => {
                if (seen()) {
                    window.__timelineShown = Date.now();
                    observer.disconnect();
                }
            });
            observer.observe(document.body, { subtree: true, childList: true, attributes: true });
        }, label);
        writeFixture({ timeline, entries: {} });
        const changedAt = Date.now();
        writeFileSync(`${fixtureFile}.journal-changed`, String(changedAt));
        const shownAt = await waitFor(`${label} on screen`, () => page.evaluate(() => window.__timelineShown), { timeout: 60_000, interval: 20 });
        const answer = await waitFor("the probe's answer", () => probeEntries().filter((entry) => entry.kind === "answered")[answersBefore]);
        assert.equal(answer.entries, timeline.entries);
        return { afterAnswer: shownAt - answer.answeredAt, afterChange: shownAt - changedAt };
    }

    step("a journal of 10,000 entries reaches the screen", async () => {
        const ROUNDS = 5;
        const small = fixtures.generatedTimeline({ sessions: 1, turnsPerSession: 1, editsPerTurn: 1, filesPerEdit: 1 }, Date.now());
        const smallLabel = small.sessions[0].turns[0].edits[0].summary;
        const lines = [];
        for (const [name, shape] of [
            ["50 sessions × 10 turns × 10 edits × 2 files", fixtures.SPREAD],
            ["1 turn of 10,000 edits", fixtures.ONE_TURN],
        ]) {
            const timeline = fixtures.generatedTimeline(shape, Date.now());
            assert.equal(timeline.entries, 10_000);
            // A turn is named by its oldest edit the view has: of a turn the budget cut, the oldest it read.
            const turnLabel = fixtures.withMaxEdits(timeline, MAX_EDITS).sessions[0].turns[0].edits.at(-1).summary;
            const rounds = [];
            for (let round = 0; round < ROUNDS; round++) {
                // From a one-entry journal to the large one each time, so that the row to wait for is new.
                await timeRender(small, smallLabel);
                rounds.push(await timeRender(timeline, turnLabel));
            }
            const afterAnswer = rounds.map((r) => r.afterAnswer).sort((a, b) => a - b);
            const afterChange = rounds.map((r) => r.afterChange).sort((a, b) => a - b);
            const median = (sorted) => sorted[Math.floor(sorted.length / 2)];
            lines.push(
                `${name} (the view asks for ${MAX_EDITS} edits): on screen ${median(afterAnswer)} ms (median of ${ROUNDS}; min ${afterAnswer[0]}, all ${afterAnswer.join(", ")}) after the server's answer; ` +
                    `${median(afterChange)} ms after the journal changed (with the view's 300 ms wait for more changes)`,
            );
            console.log(`# timeline render: ${lines.at(-1)}`);
            if (shape === fixtures.ONE_TURN) {
                // The turn opens on the newest 200 of the 500 edits read, then "Show 200 more…".
                const turn = row(turnLabel, 2);
                const clicked = Date.now();
                await turn.locator(".monaco-tl-twistie").click();
                await sidebar().locator('.monaco-list-row[aria-level="3"]').first().waitFor({ state: "visible", timeout: 60_000 });
                lines.push(`${name}: the turn opened (its newest 200 edits) ${Date.now() - clicked} ms after the click`);
                console.log(`# timeline render: ${lines.at(-1)}`);
                // End focuses the last row, Load older changes, just below it.
                await scrollDownTo(row("Show 200 more…", 3));
                // A click lost while the tree redraws leaves "Show 200 more…" there: click it again.
                await waitFor(
                    "Show 100 more… (the rest of the 500 read) after Show 200 more…",
                    async () => {
                        if (await row("Show 100 more…", 3).isVisible()) return true;
                        if (await row("Show 200 more…", 3).isVisible()) await row("Show 200 more…", 3).click();
                        else await page.keyboard.press("End");
                        return false;
                    },
                    { timeout: 60_000, interval: 250 },
                );
                // The tree ends with Load older changes: it asks for twice as many edits, and the open turn stays open, as long as it was.
                const asked = requests("verbatim/timeline").length;
                await scrollDownTo(row(`Load older changes (${MAX_EDITS} of 10000 edits shown)`, 1));
                await waitFor(
                    "a verbatim/timeline with twice the budget",
                    async () => {
                        if (requests("verbatim/timeline").slice(asked).some((entry) => entry.params.maxEdits === 2 * MAX_EDITS)) return true;
                        const older = row(`Load older changes (${MAX_EDITS} of 10000 edits shown)`, 1);
                        if (await older.isVisible()) await older.click();
                        return false;
                    },
                    { timeout: 60_000, interval: 250 },
                );
                await scrollDownTo(row(`Load older changes (${2 * MAX_EDITS} of 10000 edits shown)`, 1));
                await scrollDownTo(row("Show 400 more…", 3));
                lines.push(`${name}: Load older changes read ${2 * MAX_EDITS} edits; the open turn shows its 400 rows again`);
                console.log(`# timeline render: ${lines.at(-1)}`);
            }
            await page.screenshot({ path: path.join(output, `large-${shape.editsPerTurn}.png`) });
        }
        writeFileSync(path.join(output, "render.txt"), `${lines.join("\n")}\n`);
    });
});
