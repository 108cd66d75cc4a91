// End-to-end test in a real VS Code: code-server (VS Code 1.139.1 in the
// browser) with the packaged extension installed, driven by playwright-core in
// Debian's Chromium. An agent connects to the server's socket, found through
// the discovery file in VERBATIM_RUNTIME_DIR, and sends edits that the person
// reviews in VS Code's Refactor Preview.
//
// Needs: CODE_SERVER_BIN, VERBATIM_BIN, VERBATIM_TEST_OUTPUT (test/run.sh sets them).

import * as assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";

import { Agent, discoveryFiles, ResponseError } from "./agent.mjs";
import { extensionDir, launchEditor, numberedFile, numberedLine, requiredEnv, waitFor, withTimeout } from "./harness.mjs";

const output = requiredEnv("VERBATIM_TEST_OUTPUT");

const ORIGINAL = "alpha\nbeta\ngamma\n";
/** A file of 20,000 distinct lines, written next to the fixture before code-server starts. */
const LARGE_NAME = "large.txt";
const LARGE_LINES = 20_000;
/** The file after the person typed "delta" on its last line. */
const TYPED = "alpha\nbeta\ngamma\ndelta";

/** Resolves with the error of a request that must fail. */
async function expectError(promise) {
    try {
        const result = await withTimeout(promise, "the agent's answer");
        assert.fail(`expected an error, got ${JSON.stringify(result)}`);
    } catch (error) {
        if (!(error instanceof ResponseError)) throw error;
        return error;
    }
}

describe("Verbatim in VS Code (code-server)", { concurrency: false }, () => {
    let editor;
    let workspace;
    let runtimeDir;
    let notesPath;
    let notesUri;
    let page;
    let agent;
    let lastStep = "setup";

    before(async () => {
        rmSync(output, { recursive: true, force: true });
        editor = await launchEditor({
            fixture: path.join(extensionDir, "test", "fixtures", "workspace"),
            setup: (folder) => writeFileSync(path.join(folder, LARGE_NAME), numberedFile(LARGE_LINES)),
            settings: { "verbatim.logLevel": "debug" },
            output,
        });
        ({ workspace, runtimeDir, page } = editor);
        notesPath = path.join(workspace, "notes.txt");
        notesUri = pathToFileURL(notesPath).href;
        assert.equal(readFileSync(notesPath, "utf8"), ORIGINAL);
    });

    after(async () => {
        if (page) await page.screenshot({ path: path.join(output, "last.png") }).catch(() => undefined);
        await agent?.close().catch(() => undefined);
        await editor?.close();
        console.log(`# end-to-end artifacts in ${output} (last step: ${lastStep})`);
    });

    /** A step of the scenario: once one fails, the later ones are skipped (they build on it). */
    let failedStep;
    function step(name, body) {
        test(name, async (t) => {
            if (failedStep !== undefined) {
                t.skip(`the step "${failedStep}" failed`);
                return;
            }
            lastStep = name;
            try {
                await body();
            } catch (error) {
                failedStep = name;
                await page?.screenshot({ path: path.join(output, "failure.png") }).catch(() => undefined);
                const html = await page?.content().catch(() => undefined);
                if (html) writeFileSync(path.join(output, "failure.html"), html);
                throw error;
            }
        });
    }

    const statusBar = () => editor.statusBar();
    const notesTab = () => editor.tab("notes.txt");
    const waitForPreview = (label) => editor.waitForPreview(label);
    const runCommand = (title) => editor.runCommand(title);

    /** Sends `verbatim/strReplace` as the agent; the returned promise settles when the person decides. */
    function strReplace(oldStr, newStr, summary, baseRev, uri = notesUri) {
        const pending = agent.request("verbatim/strReplace", { uri, oldStr, newStr, baseRev, summary });
        pending.catch(() => undefined); // Awaited later; keep Node from calling it unhandled meanwhile.
        return pending;
    }

    /** The server's live copy of the document: the editor's buffer, as its didChange notifications left it. */
    async function read(uri = notesUri) {
        return agent.request("verbatim/read", { uri });
    }

    /** Waits until the server's live buffer holds `text` (the editor's didChange is asynchronous). */
    async function waitForServerText(text) {
        return waitFor(`the server to hold ${JSON.stringify(text)}`, async () => {
            const result = await read();
            return result.text === text ? result : undefined;
        });
    }

    async function typeAtEndOfNotes(text) {
        await notesTab().click();
        await page.locator(".monaco-editor .view-lines", { hasText: "alpha" }).first().click();
        await page.keyboard.press("Control+End");
        await page.keyboard.type(text);
    }

    let discovery;

    step("the extension starts the server, which the agent finds through the discovery file", async () => {
        discovery = await waitFor(
            `a discovery file in VERBATIM_RUNTIME_DIR=${runtimeDir}`,
            () => discoveryFiles(runtimeDir).find((file) => file.workspaceFolders.includes(pathToFileURL(workspace).href)),
            { timeout: 90_000 },
        );
        assert.equal(discovery.protocolVersion, 1);
        assert.equal(path.dirname(discovery.socket), runtimeDir, "the socket lies in VERBATIM_RUNTIME_DIR");
        agent = await Agent.connect(discovery.socket, "test-agent");
        assert.equal(agent.initializeResult.capabilities.positionEncoding, "utf-16");
        assert.ok(agent.initializeResult.capabilities.experimental.verbatim.methods.includes("verbatim/strReplace"));

        await statusBar().getByText("Verbatim: 1 agent").first().waitFor({ state: "visible", timeout: 30_000 });
    });

    step("the status bar item lists the agents; the socket path can be copied", async () => {
        await statusBar().getByText("Verbatim: 1 agent").first().click();
        const list = page.locator(".quick-input-widget");
        await list.locator(".monaco-list-row", { hasText: "test-agent" }).first().waitFor({ state: "visible" });
        await list.locator(".monaco-list-row", { hasText: "Copy Agent Connection Info" }).first().click();
        await page.getByText("copied the agent socket path").first().waitFor({ state: "visible" });
        const copied = await page.evaluate(() => navigator.clipboard.readText());
        assert.equal(copied, discovery.socket);
    });

    step("the person opens a file through the Explorer and types an unsaved change", async () => {
        await page.locator(".explorer-folders-view").getByText("notes.txt").first().click();
        await page.locator(".monaco-editor .view-lines", { hasText: "alpha" }).first().waitFor({ state: "visible" });
        await typeAtEndOfNotes("delta");
        await notesTab().and(page.locator(".dirty")).waitFor({ state: "visible" });
        const live = await waitForServerText(TYPED);
        assert.equal(live.source, "editor");
        assert.equal(readFileSync(notesPath, "utf8"), ORIGINAL, "typing does not save");
    });

    step("Apply in the Refactor Preview: the agent's edit lands in the unsaved buffer", async () => {
        const before = await read();
        const pending = strReplace("beta", "BETA", "Shout beta", before.rev);
        const row = await waitForPreview("test-agent: Shout beta");
        await statusBar().getByText("1 pending").first().waitFor({ state: "visible", timeout: 30_000 });
        await editor.tickAllChanges();

        // Selecting the edit opens VS Code's diff of the ticked changes; hovering
        // it shows its label, so the screenshot says who proposed what.
        const label = row.locator(".monaco-highlighted-label").first();
        await label.click();
        await page.locator(".monaco-diff-editor .view-lines", { hasText: "BETA" }).first().waitFor({ state: "visible", timeout: 30_000 });
        await page.mouse.move(10, 400);
        await label.hover();
        await page.getByText("test-agent: Shout beta", { exact: true }).first().waitFor({ state: "visible", timeout: 10_000 });
        await page.screenshot({ path: path.join(output, "refactor-preview.png") });

        await editor.pressApply();

        const result = await withTimeout(pending, "the agent's answer");
        assert.equal(result.applied, true);
        assert.equal(result.dryRun, false);
        assert.equal(result.modifiedByEditor, false);
        assert.equal(result.baseRev, before.rev);
        assert.deepEqual(result.replaced, ["beta"]);

        const after = await read();
        assert.equal(after.text, "alpha\nBETA\ngamma\ndelta");
        assert.equal(after.rev, result.rev);
        assert.equal(after.source, "editor");
        await notesTab().and(page.locator(".dirty")).waitFor({ state: "visible" });
        assert.equal(readFileSync(notesPath, "utf8"), ORIGINAL, "the file on disk is unchanged");
        await page.locator(".monaco-editor .view-lines", { hasText: "BETA" }).first().waitFor({ state: "visible" });
    });

    step("Discard in the Refactor Preview: the agent gets `rejected`", async () => {
        const before = await read();
        const pending = strReplace("gamma", "GAMMA", "Shout gamma", before.rev);
        await waitForPreview("test-agent: Shout gamma");
        await editor.pressDiscard();

        const error = await expectError(pending);
        assert.equal(error.data?.kind, "rejected");
        assert.equal(error.code, -33008);
        assert.equal((await read()).text, "alpha\nBETA\ngamma\ndelta");
        assert.equal(readFileSync(notesPath, "utf8"), ORIGINAL);
    });

    step("a stale edit (the person typed after the agent read) is refused", async () => {
        const stale = await read();
        await typeAtEndOfNotes("!");
        const moved = await waitForServerText("alpha\nBETA\ngamma\ndelta!");
        assert.notEqual(moved.rev, stale.rev);

        const error = await expectError(
            strReplace("alpha", "ALPHA", "Shout alpha", stale.rev),
        );
        assert.equal(error.data?.kind, "stale");
        assert.equal(error.code, -33003);
        assert.equal(error.data?.baseRev, stale.rev);
        assert.equal(error.data?.currentRev, moved.rev);
        assert.equal((await read()).text, "alpha\nBETA\ngamma\ndelta!");
    });

    step("the person types while the edit waits in the preview: Apply is refused as stale", async () => {
        const before = await read();
        const pending = strReplace("gamma", "GAMMA", "Shout gamma again", before.rev);
        await waitForPreview("test-agent: Shout gamma again");
        await typeAtEndOfNotes("?");
        const moved = await waitForServerText(`${before.text}?`);

        await editor.tickAllChanges();
        await editor.pressApply();
        // VS Code refuses in a modal dialog; the person acknowledges it.
        const dialog = page.locator(".monaco-dialog-box", { hasText: "has changed in the meantime" });
        await dialog.waitFor({ state: "visible" });
        await page.screenshot({ path: path.join(output, "changed-in-the-meantime.png") });
        await dialog.locator(".monaco-button", { hasText: "OK" }).click();

        const error = await expectError(pending);
        assert.equal(error.data?.kind, "stale", `expected stale, got ${error.message}`);
        assert.equal(error.code, -33003);
        assert.equal(error.data?.currentRev, moved.rev);
        assert.equal((await read()).text, moved.text, "VS Code applied nothing");
        await page.keyboard.press("Escape");
    });

    step("a 20,000-line file: an edit near the end, applied in the preview, leaves the buffer exact", async () => {
        const largePath = path.join(workspace, LARGE_NAME);
        const largeUri = pathToFileURL(largePath).href;
        const original = readFileSync(largePath, "utf8");
        await editor.openFromExplorer(LARGE_NAME, numberedLine(1));
        const before = await waitFor("the server to hold the large file as the editor opened it", async () => {
            const result = await read(largeUri);
            return result.text === original ? result : undefined;
        });

        const target = numberedLine(LARGE_LINES - 7);
        const replacement = `${target} (edited by the agent)`;
        const pending = strReplace(target, replacement, "Edit near the end", before.rev, largeUri);
        await waitForPreview("test-agent: Edit near the end");
        await editor.tickAllChanges();
        await editor.pressApply();
        const result = await withTimeout(pending, "the agent's answer");
        assert.equal(result.applied, true);
        assert.equal(result.modifiedByEditor, false);

        const expected = original.replace(target, replacement);
        assert.notEqual(expected, original);
        const live = await read(largeUri);
        assert.equal(live.rev, result.rev);
        assert.ok(live.text === expected, "the server's copy of the buffer is the original with one line replaced");

        // The editor's own text, written out by a save, is exact too.
        await editor.tab(LARGE_NAME).click();
        await editor.tab(LARGE_NAME).and(page.locator(".active")).waitFor({ state: "visible" });
        await page.locator(".monaco-editor .view-lines").first().click();
        await page.keyboard.press("Control+s");
        await waitFor("the save to reach the disk", () => readFileSync(largePath, "utf8") !== original);
        assert.ok(readFileSync(largePath, "utf8") === expected, "the saved file is the original with one line replaced");
    });

    step("Toggle Auto-Apply: the next edit is applied at once, without the preview", async () => {
        await notesTab().click();
        await runCommand("Verbatim: Toggle Auto-Apply for This Session");
        await statusBar().getByText("(auto-apply)").first().waitFor({ state: "visible", timeout: 30_000 });

        const before = await read();
        const result = await withTimeout(strReplace("alpha", "ALPHA", "Shout alpha", before.rev), "the agent's answer");
        assert.equal(result.applied, true);
        assert.equal((await read()).text, before.text.replace("alpha", "ALPHA"));
        assert.equal(readFileSync(notesPath, "utf8"), ORIGINAL);
        await page.locator(".monaco-editor .view-lines", { hasText: "ALPHA" }).first().waitFor({ state: "visible" });

        // One undo step takes the whole agent edit back.
        await page.locator(".monaco-editor .view-lines", { hasText: "ALPHA" }).first().click();
        await page.keyboard.press("Control+z");
        await waitForServerText(before.text);
    });

    step("Restart Server: a new server takes over, and the unsaved text is still what it reads", async () => {
        const unsaved = (await read()).text;
        const before = discovery;
        await runCommand("Verbatim: Restart Server");
        discovery = await waitFor("a new discovery file", () => discoveryFiles(runtimeDir).find((file) => file.pid !== before.pid), {
            timeout: 60_000,
        });
        await waitFor("the old server to remove its discovery file", () => !existsSync(path.join(runtimeDir, `${before.pid}.json`)));
        await agent.close();
        agent = await Agent.connect(discovery.socket, "test-agent");
        assert.equal((await waitForServerText(unsaved)).source, "editor");
        await statusBar().getByText("Verbatim: 1 agent").first().waitFor({ state: "visible", timeout: 30_000 });
    });
});
