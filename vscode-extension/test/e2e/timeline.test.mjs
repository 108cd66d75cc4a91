// Issue 33's scenario in a real VS Code (code-server in Chromium) against the
// real server: three agents change two files over several turns while the
// person types between them; from the Verbatim Timeline view the person opens
// a change, marks a file reviewed, reverts one agent's turn (the review shows
// only its hunks; afterwards its changes are gone and the person's typing and
// the other agents' changes are still there), reverts that revert (they are
// back), and reverts an edit whose line the person changed since (the
// conflict is kept as the person has it when they reject it).
//
// The view itself, against a stand-in server, is timeline_view.test.mjs. This
// test needs a server with the timeline: it asks VERBATIM_BIN for
// `verbatim/timeline` first, and skips itself, saying so, when the server
// does not know the method.
//
// Needs: CODE_SERVER_BIN, VERBATIM_BIN, VERBATIM_TEST_OUTPUT (test/run.sh sets them).

import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe } from "node:test";
import { pathToFileURL } from "node:url";

import { launchEditor, requiredEnv, REVIEW_SELECTORS, scenarioSteps, waitFor, withTimeout } from "./harness.mjs";
import { readMessages, writeMessage } from "./stdio_lsp.mjs";

const output = path.join(requiredEnv("VERBATIM_TEST_OUTPUT"), "timeline");
const METHOD_NOT_FOUND = -32601;

const lines = (name, count = 10) => Array.from({ length: count }, (_, i) => `${name} line ${i + 1}`).join("\n") + "\n";
const A = lines("a");
const B = lines("b");

/**
 * Whether the server at `bin` answers `verbatim/timeline`: it is started as an
 * editor's server (`verbatim lsp` on stdio, its state and runtime files in a
 * scratch directory, no Claude Code or Gemini CLI endpoint) and asked once.
 * Only "method not found" means no; any other answer, even an error, means
 * the server has the method, and the test runs.
 */
async function serverHasTimeline(bin) {
    const scratch = mkdtempSync(path.join(tmpdir(), "verbatim-timeline-probe-"));
    const server = spawn(bin, ["lsp"], {
        env: { ...process.env, VERBATIM_STATE_DIR: path.join(scratch, "state"), VERBATIM_RUNTIME_DIR: path.join(scratch, "run") },
        stdio: ["pipe", "pipe", "ignore"],
    });
    const answers = new Map();
    readMessages(server.stdout, (message) => {
        if (message.id !== undefined && message.method === undefined) answers.get(message.id)?.(message);
    });
    const send = (message) => writeMessage(server.stdin, message);
    const request = (id, method, params) =>
        withTimeout(new Promise((resolve) => {
            answers.set(id, resolve);
            send({ id, method, params });
        }), `${method} from ${bin}`, 20_000);
    try {
        await request(1, "initialize", {
            processId: process.pid,
            clientInfo: { name: "timeline probe" },
            rootUri: null,
            capabilities: {},
            initializationOptions: { claudeCode: false, geminiCli: false, verbatimExtensions: true },
        });
        send({ method: "initialized", params: {} });
        const answer = await request(2, "verbatim/timeline", {});
        return answer.error?.code !== METHOD_NOT_FOUND;
    } finally {
        server.kill();
        rmSync(scratch, { recursive: true, force: true });
    }
}

const bin = requiredEnv("VERBATIM_BIN");
const hasTimeline = await serverHasTimeline(bin);
if (!hasTimeline) console.log(`# timeline.test.mjs: skipped: ${bin} does not know verbatim/timeline (issue 33's server side)`);

describe("the Verbatim Timeline against the real server (code-server)", { concurrency: false, skip: hasTimeline ? false : `${bin} does not know verbatim/timeline` }, () => {
    let editor;
    let page;
    let workspace;
    const agents = {};
    const steps = scenarioSteps(() => page, output, () => editor?.userData);
    const step = (name, body) => steps.step(name, body);
    const uriOf = (name) => pathToFileURL(path.join(workspace, name)).href;

    before(async () => {
        rmSync(output, { recursive: true, force: true });
        editor = await launchEditor({
            setup: (folder) => {
                writeFileSync(path.join(folder, "a.txt"), A);
                writeFileSync(path.join(folder, "b.txt"), B);
            },
            // The journal in a scratch state directory of this editor's own (code-server's environment reaches the server).
            env: { VERBATIM_STATE_DIR: path.join(tmpdir(), `verbatim-timeline-state-${process.pid}`) },
            settings: { "verbatim.logLevel": "debug" },
            output,
        });
        ({ page, workspace } = editor);
    });

    after(async () => {
        await page?.screenshot({ path: path.join(output, "last.png") }).catch(() => undefined);
        for (const agent of Object.values(agents)) await agent.close().catch(() => undefined);
        await editor?.close();
        rmSync(path.join(tmpdir(), `verbatim-timeline-state-${process.pid}`), { recursive: true, force: true });
        console.log(`# end-to-end artifacts in ${output} (last step: ${steps.last})`);
    });

    const read = (name) => agents.alpha.request("verbatim/read", { uri: uriOf(name) });
    const waitForText = (name, text) =>
        waitFor(`the server to hold ${JSON.stringify(text)} in ${name}`, async () => {
            const result = await read(name);
            return result.text === text ? result : undefined;
        });
    const sidebar = () => page.locator("#workbench\\.parts\\.sidebar");
    const row = (label, level) => sidebar().locator(`.monaco-list-row[aria-level="${level}"][aria-label^="${label}"]`).first();
    const dialog = () => page.locator(".monaco-dialog-box");

    /** An agent's edit, accepted with Accept All in the title bar of its review; resolves with the agent's result. */
    async function editAccepted(agent, method, params) {
        const pending = agent.request(method, params);
        pending.catch(() => undefined);
        await page.locator(REVIEW_SELECTORS.titleAcceptAll).first().click({ timeout: 60_000 });
        const result = await withTimeout(pending, `${method} "${params.summary}"`);
        await page.locator(REVIEW_SELECTORS.titleAcceptAll).first().waitFor({ state: "detached" });
        return result;
    }

    /** Types `text` at the end of the line that reads `line` in the open `name`. */
    async function typeAtEndOf(name, line, text) {
        await editor.tab(name).click();
        await page.locator(".monaco-editor .view-line", { hasText: line }).first().click();
        await page.keyboard.press("End");
        await page.keyboard.type(text);
    }

    /** Shows the Timeline (a click on its activity bar icon while it shows would close the side bar). */
    async function showTimeline() {
        const item = page.locator('.activitybar .action-item:has(a[aria-label^="Verbatim"])').first();
        if (!(await item.evaluate((element) => element.classList.contains("checked")))) await item.locator("a").first().click();
    }

    /** Opens a row (its label, at its depth: 1 sessions, 2 turns, 3 edits) once it shows. */
    async function openRow(label, level) {
        const target = row(label, level);
        await target.waitFor({ state: "visible", timeout: 30_000 });
        // A click while the view reloads (the journal changed) can be lost: look again a second later, and click again.
        await waitFor(
            `${label} to open`,
            async () => {
                if ((await target.getAttribute("aria-expanded")) === "true") return true;
                await target.locator(".monaco-tl-twistie").click();
                return false;
            },
            { timeout: 15_000, interval: 1000 },
        );
    }

    /** Revert… from a row's context menu, confirmed; the review it comes back as is then shown. */
    async function revertFromMenu(target, question) {
        // A tree that redraws its rows while the menu is open loses the row's menu:
        // open it again.
        const asked = dialog().getByText(question);
        for (let attempt = 1; ; attempt += 1) {
            await page.keyboard.press("Escape");
            await target.click({ button: "right" });
            // Chosen with the keyboard once the menu shows the item focused: a click that
            // lands while the menu still slides in is taken as a hover (nothing runs).
            const label = page.locator(".action-label", { hasText: "Revert…" });
            await page.locator(".context-view .action-item", { has: label }).first().hover();
            await page.locator(".context-view .action-item.focused", { has: label }).first().waitFor({ state: "visible" });
            await page.keyboard.press("Enter");
            try {
                await asked.waitFor({ state: "visible", timeout: 10_000 });
                break;
            } catch (error) {
                if (attempt >= 3) throw error;
            }
        }
        await dialog().locator(".monaco-button", { hasText: /^Revert$/ }).click();
        await page.locator(REVIEW_SELECTORS.titleAcceptAll).first().waitFor({ state: "visible", timeout: 60_000 });
    }

    step("three agents and the person change two files over several turns", async () => {
        for (const name of ["alpha", "beta", "gamma"]) agents[name] = await editor.connectAgent(name);
        await editor.openFromExplorer("a.txt", "a line 1");
        await editor.openFromExplorer("b.txt", "b line 1");
        let a = await waitForText("a.txt", A);
        let b = await waitForText("b.txt", B);

        await editAccepted(agents.alpha, "verbatim/strReplace", { uri: uriOf("a.txt"), oldStr: "a line 2", newStr: "alpha 2", summary: "alpha: line 2", baseRev: a.rev, turn: "alpha-1" });
        await typeAtEndOf("a.txt", "a line 5", " typed");
        a = await waitForText("a.txt", A.replace("a line 2", "alpha 2").replace("a line 5", "a line 5 typed"));
        await editAccepted(agents.beta, "verbatim/batchEdit", {
            summary: "beta: both files",
            turn: "beta-1",
            edits: [
                { uri: uriOf("a.txt"), oldStr: "a line 8", newStr: "beta 8", baseRev: a.rev },
                { uri: uriOf("b.txt"), oldStr: "b line 3", newStr: "beta 3", baseRev: b.rev },
            ],
        });
        b = await read("b.txt");
        await editAccepted(agents.gamma, "verbatim/strReplace", { uri: uriOf("b.txt"), oldStr: "b line 6", newStr: "gamma 6", summary: "gamma: line 6", baseRev: b.rev, turn: "gamma-1" });
        b = await read("b.txt");
        await editAccepted(agents.alpha, "verbatim/strReplace", { uri: uriOf("b.txt"), oldStr: "b line 9", newStr: "alpha 9", summary: "alpha: line 9", baseRev: b.rev, turn: "alpha-2" });
        await waitForText("a.txt", A.replace("a line 2", "alpha 2").replace("a line 5", "a line 5 typed").replace("a line 8", "beta 8"));
        await waitForText("b.txt", B.replace("b line 3", "beta 3").replace("b line 6", "gamma 6").replace("b line 9", "alpha 9"));
    });

    step("the timeline lists the agents' sessions, newest first, with their turns", async () => {
        const timeline = await agents.alpha.request("verbatim/timeline", { workspace: pathToFileURL(workspace).href });
        const byAgent = Object.fromEntries(timeline.sessions.map((session) => [session.agent, session]));
        assert.deepEqual(byAgent.alpha.turns.map((turn) => turn.turn), ["alpha-2", "alpha-1"]);
        assert.deepEqual(byAgent.beta.turns.map((turn) => turn.turn), ["beta-1"]);
        assert.deepEqual(byAgent.beta.turns[0].files.map((file) => file.uri).sort(), [uriOf("a.txt"), uriOf("b.txt")]);

        await showTimeline();
        await row("alpha", 1).waitFor({ state: "visible", timeout: 30_000 });
        const sessions = await sidebar().locator('.monaco-list-row[aria-level="1"]').evaluateAll((rows) => rows.map((r) => r.getAttribute("aria-label").split(" ")[0]));
        assert.deepEqual(sessions.filter((name) => ["alpha", "beta", "gamma"].includes(name)), ["alpha", "gamma", "beta"]);
        await page.screenshot({ path: path.join(output, "timeline.png") });
    });

    step("a file of beta's edit opens its change in a diff editor", async () => {
        await openRow("beta", 1);
        await openRow("beta: both files", 2);
        await openRow("beta: both files", 3);
        await row("b.txt", 4).waitFor({ state: "visible" });
        await sidebar().locator('.monaco-list-row[aria-level="4"][aria-label^="b.txt"]').last().click();
        const diff = page.locator(".monaco-diff-editor").first();
        await diff.locator(".editor.modified .view-lines", { hasText: "beta 3" }).first().waitFor({ state: "visible" });
        await diff.locator(".editor.original .view-lines", { hasText: "b line 3" }).first().waitFor({ state: "visible" });
    });

    step("b.txt marked reviewed for beta's turn", async () => {
        const file = sidebar().locator('.monaco-list-row[aria-level="4"][aria-label^="b.txt"]').last();
        await file.locator(".custom-view-tree-node-item-checkbox, .monaco-checkbox").first().click();
        await waitFor("the mark in the server's timeline", async () => {
            const timeline = await agents.beta.request("verbatim/timeline", { agent: "beta" });
            const turn = timeline.sessions[0]?.turns.find((candidate) => candidate.turn === "beta-1");
            return turn?.files.find((candidate) => candidate.uri === uriOf("b.txt"))?.reviewed === true;
        });
    });

    step("revert beta's turn: only its hunks are reviewed; the person's typing and the other agents' changes stay", async () => {
        await revertFromMenu(row("beta: both files", 2), /Revert the whole turn of beta/);
        await page.screenshot({ path: path.join(output, "revert-review.png") });
        await page.locator(REVIEW_SELECTORS.titleAcceptAll).first().click();
        await page.locator(".notifications-toasts .notification-toast", { hasText: "Verbatim:" }).first().waitFor({ state: "visible", timeout: 30_000 });
        await waitForText("a.txt", A.replace("a line 2", "alpha 2").replace("a line 5", "a line 5 typed"));
        await waitForText("b.txt", B.replace("b line 6", "gamma 6").replace("b line 9", "alpha 9"));
    });

    step("revert that revert: beta's changes are back", async () => {
        // The revert is journaled as a change of its own ("Revert…" and what it reverts), in the newest session, which is open.
        await openRow("Revert", 2);
        const revertEdit = row("Revert", 3);
        await revertEdit.waitFor({ state: "visible", timeout: 30_000 });
        await revertFromMenu(revertEdit, /Revert the edit “Revert/);
        await page.locator(REVIEW_SELECTORS.titleAcceptAll).first().click();
        await waitForText("a.txt", A.replace("a line 2", "alpha 2").replace("a line 5", "a line 5 typed").replace("a line 8", "beta 8"));
        await waitForText("b.txt", B.replace("b line 3", "beta 3").replace("b line 6", "gamma 6").replace("b line 9", "alpha 9"));
    });

    step("a line changed since the reverted edit is a conflict: rejected, it stays as the person has it", async () => {
        await typeAtEndOf("a.txt", "alpha 2", " edited");
        const expected = A.replace("a line 2", "alpha 2 edited").replace("a line 5", "a line 5 typed").replace("a line 8", "beta 8");
        await waitForText("a.txt", expected);
        await showTimeline();
        await openRow("alpha", 1);
        await openRow("alpha: line 2", 2);
        await revertFromMenu(row("alpha: line 2", 3), /Revert the edit “alpha: line 2”/);
        // The conflict's hunk says so next to its Accept and Reject (the server's note).
        await page
            .locator(".codelens-decoration span", { hasText: "Conflict: a later change also touched line 2" })
            .first()
            .waitFor({ state: "visible", timeout: 30_000 });
        await page.screenshot({ path: path.join(output, "conflict-review.png") });
        await page.locator('.editor-actions [aria-label*="Reject All Hunks"]').first().click();
        const reason = page.locator(".quick-input-widget .quick-input-box input");
        await reason.waitFor({ state: "visible" });
        await page.keyboard.press("Enter");
        await page.locator(".notifications-toasts .notification-toast", { hasText: "Verbatim:" }).first().waitFor({ state: "visible", timeout: 30_000 });
        assert.equal((await read("a.txt")).text, expected);
    });
});
