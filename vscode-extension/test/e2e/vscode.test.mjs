// End-to-end test in a real VS Code: code-server (VS Code 1.139.1 in the
// browser) with the packaged extension installed, driven by playwright-core in
// Debian's Chromium. An agent connects to the server's socket, found through
// the discovery file in VERBATIM_RUNTIME_DIR, and sends edits that the person
// reviews in VS Code's Refactor Preview.
//
// Needs: CODE_SERVER_BIN, VERBATIM_BIN, VERBATIM_TEST_OUTPUT (test/run.sh sets them).

import * as assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe } from "node:test";
import { pathToFileURL } from "node:url";

import { Agent, discoveryFiles, ResponseError } from "./agent.mjs";
import { extensionDir, launchEditor, numberedFile, numberedLine, requiredEnv, scenarioSteps, waitFor, withTimeout, writeAtomically } from "./harness.mjs";

const output = requiredEnv("VERBATIM_TEST_OUTPUT");

const ORIGINAL = "alpha\nbeta\ngamma\n";
/** A file of 20,000 distinct lines, written next to the fixture before code-server starts. */
const LARGE_NAME = "large.txt";
const LARGE_LINES = 20_000;
/** The file after the person typed "delta" on its last line. */
const TYPED = "alpha\nbeta\ngamma\ndelta";
/** A file that an outside program rewrites while it is open. */
const DISK_NAME = "disk.txt";
const DISK_ORIGINAL = Array.from({ length: 12 }, (_, i) => `disk line ${i + 1}`).join("\n") + "\n";

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
    const steps = scenarioSteps(() => page, output, () => editor?.userData);
    const step = (name, body) => steps.step(name, body);

    before(async () => {
        // This scenario's own artifacts, not the other tests' folders inside the output directory.
        for (const name of existsSync(output) ? readdirSync(output, { withFileTypes: true }) : []) {
            if (name.isFile() || name.name === "vscode-logs") rmSync(path.join(output, name.name), { recursive: true, force: true });
        }
        editor = await launchEditor({
            fixture: path.join(extensionDir, "test", "fixtures", "workspace"),
            setup: (folder) => {
                writeFileSync(path.join(folder, LARGE_NAME), numberedFile(LARGE_LINES));
                writeFileSync(path.join(folder, DISK_NAME), DISK_ORIGINAL);
            },
            // This scenario reviews in the Refactor Preview; test/e2e/inline_review.test.mjs covers the in-editor review.
            settings: { "verbatim.logLevel": "debug", "verbatim.externalChanges": "review", "verbatim.review.ui": "refactorPreview" },
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
        console.log(`# end-to-end artifacts in ${output} (last step: ${steps.last})`);
    });


    const statusBar = () => editor.statusBar();
    const notesTab = () => editor.tab("notes.txt");
    /** Waits for the Refactor Preview to show `label`; fails at once if the agent's request `pending` ends first. */
    const waitForPreview = (label, pending) => editor.waitForPreview(label, { pending });
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
        await editor.showTab("notes.txt");
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
        await editor.click(statusBar().getByText("Verbatim: 1 agent").first());
        const list = page.locator(".quick-input-widget");
        await list.locator(".monaco-list-row", { hasText: "test-agent" }).first().waitFor({ state: "visible" });
        await list.locator(".monaco-list-row", { hasText: "Copy Agent Connection Info" }).first().click();
        await page.getByText("copied the agent socket path").first().waitFor({ state: "visible" });
        const copied = await page.evaluate(() => navigator.clipboard.readText());
        assert.equal(copied, discovery.socket);
    });

    step("the person opens a file through the Explorer and types an unsaved change", async () => {
        await editor.openFromExplorer("notes.txt", "alpha");
        await typeAtEndOfNotes("delta");
        await notesTab().and(page.locator(".dirty")).waitFor({ state: "visible" });
        const live = await waitForServerText(TYPED);
        assert.equal(live.source, "editor");
        assert.equal(readFileSync(notesPath, "utf8"), ORIGINAL, "typing does not save");
    });

    step("Apply in the Refactor Preview: the agent's edit lands in the unsaved buffer", async () => {
        const before = await read();
        const pending = strReplace("beta", "BETA", "Shout beta", before.rev);
        const row = await waitForPreview("test-agent: Shout beta", pending);
        await statusBar().getByText("1 pending").first().waitFor({ state: "visible", timeout: 30_000 });
        await editor.tickAllChanges();

        // Selecting the edit opens VS Code's diff of the ticked changes; hovering
        // it shows its label, so the screenshot says who proposed what.
        const label = row.locator(".monaco-highlighted-label").first();
        await label.click();
        await page.locator(".monaco-diff-editor .view-lines", { hasText: "BETA" }).first().waitFor({ state: "visible", timeout: 30_000 });
        await editor.pointerAway();
        await label.hover();
        await page.getByText("test-agent: Shout beta", { exact: true }).first().waitFor({ state: "visible", timeout: 10_000 });
        await page.screenshot({ path: path.join(output, "refactor-preview.png") });
        await editor.pointerAway();

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
        await waitForPreview("test-agent: Shout gamma", pending);
        await editor.pressDiscard();

        const error = await expectError(pending);
        assert.equal(error.data?.kind, "rejected");
        assert.equal(error.code, -33008);
        assert.equal((await read()).text, "alpha\nBETA\ngamma\ndelta");
        assert.equal(readFileSync(notesPath, "utf8"), ORIGINAL);
    });

    step("the person typed elsewhere after the agent read: the edit is moved over the typing", async () => {
        const seen = await read();
        await typeAtEndOfNotes("!");
        const moved = await waitForServerText("alpha\nBETA\ngamma\ndelta!");
        assert.notEqual(moved.rev, seen.rev);

        const pending = strReplace("BETA", "Beta", "Calm beta", seen.rev);
        await waitForPreview("test-agent: Calm beta", pending);
        await editor.tickAllChanges();
        await editor.pressApply();
        const result = await withTimeout(pending, "the agent's answer");
        assert.equal(result.applied, true);
        assert.equal(result.rebased, true);
        assert.equal(result.rebasedFrom, seen.rev);
        assert.equal(result.baseRev, moved.rev);
        assert.equal((await read()).text, "alpha\nBeta\ngamma\ndelta!");
    });

    /** The edit with this summary that waits for review, as `verbatim/status` lists it. */
    async function pendingEdit(summary) {
        return waitFor(`"${summary}" to wait for review`, async () => {
            const status = await agent.request("verbatim/status");
            return status.pending.find((edit) => edit.summary === summary);
        });
    }

    step("the person types elsewhere while the edit waits in the preview: it is offered again over the typing, and applied rebased", async () => {
        const before = await read();
        const pending = strReplace("gamma", "GAMMA", "Shout gamma again", before.rev);
        await waitForPreview("test-agent: Shout gamma again", pending);
        await pendingEdit("Shout gamma again");
        await typeAtEndOfNotes("?");
        const moved = await waitForServerText(`${before.text}?`);

        // The extension withdraws the stale preview, and the server offers the edit again over the new
        // text, under the same id. The old preview is gone before the server hears of it, so the preview
        // shown once the server has sent the second offer is that one.
        await waitFor("the server to offer the edit again", () => /sending workspace\/applyEdit: test-agent: Shout gamma again .*offer=2/.test(editor.extensionLog()));
        await waitForPreview("test-agent: Shout gamma again", pending);
        await page.screenshot({ path: path.join(output, "offered-again.png") });
        await editor.tickAllChanges();
        await editor.pressApply();

        const result = await withTimeout(pending, "the agent's answer");
        assert.equal(result.applied, true);
        assert.equal(result.rebased, true);
        assert.equal(result.rebasedFrom, before.rev);
        assert.equal(result.baseRev, moved.rev, "the revision it was applied to");
        assert.equal(result.modifiedByEditor, false);
        const after = await read();
        assert.equal(after.text, "alpha\nBeta\nGAMMA\ndelta!?", "both the typing and the edit");
        assert.equal(after.rev, result.rev);
        await page.locator(".monaco-editor .view-lines", { hasText: "GAMMA" }).first().waitFor({ state: "visible" });
    });

    step("the person types inside the quoted text while the edit waits in the preview: the agent gets `stale`", async () => {
        const before = await read();
        const pending = strReplace("GAMMA", "gamma", "Quiet gamma", before.rev);
        await waitForPreview("test-agent: Quiet gamma", pending);
        // Into the middle of line 3, "GAMMA": the end of the file, up a line, its start, two to the right.
        await typeAtEndOfNotes("");
        for (const key of ["ArrowUp", "Home", "ArrowRight", "ArrowRight"]) await page.keyboard.press(key);
        await page.keyboard.type("x");
        const moved = await waitForServerText("alpha\nBeta\nGAxMMA\ndelta!?");

        const error = await expectError(pending);
        assert.equal(error.data?.kind, "stale", `expected stale, got ${error.message}`);
        assert.equal(error.code, -33003);
        assert.deepEqual(error.data?.changedLines, [3, 3]);
        assert.equal(error.data?.currentRev, moved.rev);
        assert.equal((await read()).text, moved.text, "nothing applied");
        await waitFor("the withdrawn edit to leave the pending list", async () =>
            (await agent.request("verbatim/status")).pending.every((edit) => edit.summary !== "Quiet gamma"),
        );
    });

    step("a 20,000-line file: an edit near the end, applied in the preview, leaves the buffer exact", async () => {
        const largePath = path.join(workspace, LARGE_NAME);
        const largeUri = pathToFileURL(largePath).href;
        const original = readFileSync(largePath, "utf8");
        await editor.openFromExplorer(LARGE_NAME, numberedLine(1), { read: () => read(largeUri) });
        const before = await read(largeUri);
        assert.ok(before.text === original, "the server holds the file as the editor opened it");

        const target = numberedLine(LARGE_LINES - 7);
        const replacement = `${target} (edited by the agent)`;
        const pending = strReplace(target, replacement, "Edit near the end", before.rev, largeUri);
        await waitForPreview("test-agent: Edit near the end", pending);
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
        await editor.pressSave(LARGE_NAME);
        // A 1.2 MB save may be read half-written: wait for the whole of it.
        await waitFor("the save to reach the disk", () => readFileSync(largePath, "utf8") === expected, { timeout: 15_000 }).catch(() => undefined);
        assert.ok(readFileSync(largePath, "utf8") === expected, "the saved file is the original with one line replaced");
    });

    step("Toggle Auto-Apply: the next edit is applied at once, without the preview", async () => {
        await editor.showTab("notes.txt");
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

    // Changes made on disk outside the editor (issue 16). The session is in
    // auto-apply for agents since the toggle above: a change on disk still
    // follows `verbatim.externalChanges` ("review").

    const diskPath = () => path.join(workspace, DISK_NAME);
    const diskUri = () => pathToFileURL(diskPath()).href;
    const saveConflict = () => page.getByText("The content of the file is newer");

    step("a clean document rewritten on disk: VS Code reloads it by itself", async () => {
        await editor.openFromExplorer(DISK_NAME, "disk line 1", { read: () => read(diskUri()) });
        await waitFor("the server to hold disk.txt", async () => (await read(diskUri())).text === DISK_ORIGINAL);
        const rewritten = DISK_ORIGINAL.replace("disk line 12", "disk line 12, rewritten while clean");
        writeAtomically(diskPath(), rewritten);
        await page.locator(".monaco-editor .view-lines", { hasText: "rewritten while clean" }).first().waitFor({ state: "visible" });
        await waitFor("the reloaded text to reach the server", async () => (await read(diskUri())).text === rewritten);
        assert.equal(await editor.tab(DISK_NAME).and(page.locator(".dirty")).count(), 0, "the reloaded document is clean");
    });

    step("a dirty document rewritten on disk: the merged change is reviewed, and Ctrl+S saves both without a dialog", async () => {
        const clean = readFileSync(diskPath(), "utf8");
        // The person adds a line at the top, unsaved.
        await editor.showTab(DISK_NAME);
        await page.locator(".monaco-editor .view-lines", { hasText: "disk line 1" }).first().click();
        await page.keyboard.press("Control+Home");
        await page.keyboard.type("typed by the person\n");
        const typed = `typed by the person\n${clean}`;
        await waitFor("the typing to reach the server", async () => (await read(diskUri())).text === typed);
        await editor.tab(DISK_NAME).and(page.locator(".dirty")).waitFor({ state: "visible" });

        // An agent's own tool rewrites a line far from it, atomically.
        const onDisk = clean.replace("disk line 10", "disk line 10, changed by an agent on disk");
        writeAtomically(diskPath(), onDisk);
        await waitForPreview(`Changed on disk outside the editor: ${DISK_NAME}`);
        await editor.tickAllChanges();
        await editor.pressApply();

        const merged = `typed by the person\n${onDisk}`;
        await waitFor("the merged text in the server's copy of the buffer", async () => (await read(diskUri())).text === merged);
        await page.locator(".monaco-editor .view-lines", { hasText: "changed by an agent on disk" }).first().waitFor({ state: "visible" });
        // The extension re-reads the file and puts the buffer's text back: dirty again, with the merged text.
        await editor.tab(DISK_NAME).and(page.locator(".dirty")).waitFor({ state: "visible" });
        await waitFor("the buffer to hold the merged text after the re-read", async () => {
            const live = await read(diskUri());
            return live.text === merged && (await editor.tab(DISK_NAME).and(page.locator(".dirty")).count()) === 1;
        });

        await editor.pressSave(DISK_NAME, "typed by the person");
        // A save on a busy machine: seconds.
        await waitFor("the save to reach the disk", () => readFileSync(diskPath(), "utf8") === merged, { timeout: 30_000 });
        await editor.tab(DISK_NAME).and(page.locator(".dirty")).waitFor({ state: "detached" });
        await page.screenshot({ path: path.join(output, "saved-after-change-on-disk.png") });
        // VS Code shows that notification instead of writing the file: the save is done and on disk.
        assert.equal(await saveConflict().count(), 0, "no \"content of the file is newer\" notification");
        assert.equal(readFileSync(diskPath(), "utf8"), merged, "the file holds the agent's and the person's changes");

        // The undo history survived the re-read: undo reaches the person's own
        // typing before the change on disk (through the re-read's two steps), and redo comes back.
        const texts = [];
        for (let undos = 1; undos <= 5 && texts.at(-1) !== typed; undos++) {
            const before = (await read(diskUri())).rev;
            await page.keyboard.press("Control+z");
            texts.push((await waitFor("the undo to reach the server", async () => {
                const live = await read(diskUri());
                return live.rev !== before ? live : undefined;
            })).text);
        }
        console.log(`# undo after the re-read: ${JSON.stringify(texts.map((text) => text.split("\n").slice(0, 1).concat(text.includes("agent on disk") ? ["(agent's line)"] : [])))}`);
        assert.equal(texts.at(-1), typed, "undo reaches the text the person typed before the change on disk");
        for (let redos = 0; redos < texts.length; redos++) await page.keyboard.press("Control+Shift+z");
        await waitFor("redo to bring back the saved text", async () => (await read(diskUri())).text === merged);
        await editor.tab(DISK_NAME).and(page.locator(".dirty")).waitFor({ state: "detached" });
    });

    step("a change on disk that overlaps the person's unsaved line: told, compared, and saving still just works", async () => {
        const saved = readFileSync(diskPath(), "utf8");
        await page.locator(".monaco-editor .view-lines", { hasText: "typed by the person" }).first().click();
        await page.keyboard.press("Control+Home");
        await page.keyboard.press("End");
        await page.keyboard.type(", twice");
        const typed = saved.replace("typed by the person", "typed by the person, twice");
        await waitFor("the typing to reach the server", async () => (await read(diskUri())).text === typed);

        writeAtomically(diskPath(), saved.replace("typed by the person", "typed by the person, then by an agent"));
        const warning = page.locator(".notification-toast", { hasText: "every change overlaps your unsaved changes" });
        await warning.waitFor({ state: "visible" });
        await warning.locator(".monaco-button", { hasText: "Compare with Disk" }).click();
        await page.locator(".monaco-diff-editor .view-lines", { hasText: "then by an agent" }).first().waitFor({ state: "visible" });
        await page.screenshot({ path: path.join(output, "compare-with-disk.png") });
        assert.equal((await read(diskUri())).text, typed, "the person's line is kept");

        await editor.pressSave(DISK_NAME, "twice");
        await waitFor("the save to reach the disk", () => readFileSync(diskPath(), "utf8") === typed, { timeout: 30_000 });
        await editor.tab(DISK_NAME).and(page.locator(".dirty")).waitFor({ state: "detached" });
        // VS Code shows that notification instead of writing the file: the save is done and on disk.
        assert.equal(await saveConflict().count(), 0, "no \"content of the file is newer\" notification");
    });
});
