// End-to-end test in a real VS Code: code-server (VS Code 1.139.1 in the
// browser) with the packaged extension installed, driven by playwright-core in
// Debian's Chromium. An agent connects to the server's socket, found through
// the discovery file in VERBATIM_RUNTIME_DIR, and sends edits that the person
// reviews in VS Code's Refactor Preview.
//
// Needs: CODE_SERVER_BIN, VERBATIM_BIN, VERBATIM_TEST_OUTPUT (test/run.sh sets them).

import * as assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { cpSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

import { chromium } from "playwright-core";

import { Agent, discoveryFiles, ResponseError } from "./agent.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const extensionDir = path.resolve(here, "../..");
const vsix = path.join(extensionDir, "dist", "verbatim.vsix");
const codeServer = requiredEnv("CODE_SERVER_BIN");
const serverBin = requiredEnv("VERBATIM_BIN");
const output = requiredEnv("VERBATIM_TEST_OUTPUT");
const chromiumPath = process.env.CHROMIUM_BIN ?? "/usr/bin/chromium";

const ORIGINAL = "alpha\nbeta\ngamma\n";
/** The file after the person typed "delta" on its last line. */
const TYPED = "alpha\nbeta\ngamma\ndelta";

function requiredEnv(name) {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set; run the test through vscode-extension/test/run.sh`);
    return value;
}

async function waitFor(what, probe, { timeout = 60_000, interval = 250 } = {}) {
    const deadline = Date.now() + timeout;
    let last;
    for (;;) {
        try {
            const value = await probe();
            if (value) return value;
        } catch (error) {
            last = error;
        }
        if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}${last ? `: ${last.message}` : ""}`);
        await new Promise((resolve) => setTimeout(resolve, interval));
    }
}

function freePort() {
    return new Promise((resolve, reject) => {
        const server = net.createServer();
        server.once("error", reject);
        server.listen(0, "127.0.0.1", () => {
            const { port } = server.address();
            server.close(() => resolve(port));
        });
    });
}

/** Rejects when `promise` has not settled after `ms`: a step must fail, not hang. */
function withTimeout(promise, what, ms = 30_000) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

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
    const temp = mkdtempSync(path.join(tmpdir(), "verbatim-vscode-"));
    const userData = path.join(temp, "user-data");
    const extensions = path.join(temp, "extensions");
    const workspace = path.join(temp, "workspace");
    const runtimeDir = path.join(temp, "run");
    const notesPath = path.join(workspace, "notes.txt");
    const notesUri = pathToFileURL(notesPath).href;

    let codeServerProcess;
    let browser;
    let page;
    let agent;
    let lastStep = "setup";

    before(async () => {
        rmSync(output, { recursive: true, force: true });
        mkdirSync(output, { recursive: true });
        cpSync(path.join(extensionDir, "test", "fixtures", "workspace"), workspace, { recursive: true });
        assert.equal(readFileSync(notesPath, "utf8"), ORIGINAL);

        mkdirSync(path.join(userData, "User"), { recursive: true });
        writeFileSync(
            path.join(userData, "User", "settings.json"),
            JSON.stringify(
                {
                    "security.workspace.trust.enabled": false,
                    "files.autoSave": "off",
                    "chat.disableAIFeatures": true,
                    "workbench.secondarySideBar.defaultVisibility": "hidden",
                    "workbench.startupEditor": "none",
                    "workbench.tips.enabled": false,
                    "update.mode": "none",
                    "telemetry.telemetryLevel": "off",
                    "editor.acceptSuggestionOnEnter": "off",
                    "editor.quickSuggestions": { other: false, comments: false, strings: false },
                    "verbatim.server.path": serverBin,
                    "verbatim.logLevel": "debug",
                },
                null,
                2,
            ),
        );
        const configFile = path.join(temp, "code-server.yaml");
        writeFileSync(configFile, "auth: none\ncert: false\n");

        execFileSync(codeServer, ["--config", configFile, "--user-data-dir", userData, "--extensions-dir", extensions, "--install-extension", vsix], {
            stdio: ["ignore", "inherit", "inherit"],
            timeout: 120_000,
        });

        const port = await freePort();
        const log = createWriteStream(path.join(output, "code-server.log"));
        codeServerProcess = spawn(
            codeServer,
            [
                "--config", configFile,
                "--auth", "none",
                "--bind-addr", `127.0.0.1:${port}`,
                "--user-data-dir", userData,
                "--extensions-dir", extensions,
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                workspace,
            ],
            {
                // The extension host inherits this environment, and the server inherits the extension host's.
                env: { ...process.env, VERBATIM_RUNTIME_DIR: runtimeDir },
                stdio: ["ignore", "pipe", "pipe"],
                detached: true,
            },
        );
        codeServerProcess.stdout.pipe(log);
        codeServerProcess.stderr.pipe(log);
        await waitFor("code-server to listen", async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, { timeout: 90_000 });

        browser = await chromium.launch({
            executablePath: chromiumPath,
            args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        });
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        await context.grantPermissions(["clipboard-read", "clipboard-write"]);
        page = await context.newPage();
        page.setDefaultTimeout(60_000);
        await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
        await page.waitForSelector(".monaco-workbench", { timeout: 120_000 });
    });

    after(async () => {
        if (page) await page.screenshot({ path: path.join(output, "last.png") }).catch(() => undefined);
        await agent?.close().catch(() => undefined);
        await browser?.close().catch(() => undefined);
        if (codeServerProcess?.pid) {
            try {
                process.kill(-codeServerProcess.pid, "SIGTERM");
            } catch {
                // Already gone.
            }
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const logs = path.join(userData, "logs");
        if (existsSync(logs)) cpSync(logs, path.join(output, "vscode-logs"), { recursive: true });
        rmSync(temp, { recursive: true, force: true });
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

    const panel = () => page.locator("#workbench\\.parts\\.panel");
    const statusBar = () => page.locator("#workbench\\.parts\\.statusbar");
    const notesTab = () => page.locator(".tabs-container .tab", { hasText: "notes.txt" });

    /** Sends `verbatim/strReplace` as the agent; the returned promise settles when the person decides. */
    function strReplace(oldStr, newStr, summary, baseRev) {
        const pending = agent.request("verbatim/strReplace", { uri: notesUri, oldStr, newStr, baseRev, summary });
        pending.catch(() => undefined); // Awaited later; keep Node from calling it unhandled meanwhile.
        return pending;
    }

    async function read() {
        return agent.request("verbatim/read", { uri: notesUri });
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

    /**
     * Waits for the Refactor Preview to show an edit labelled `label`. VS Code
     * puts the change annotation's label (and its description, which the
     * extension drops when it only repeats the summary) in the edit row's hover.
     */
    async function waitForPreview(label) {
        const labelled = panel().locator(`.monaco-list-row:has([title^="${label}"])`).first();
        await labelled.waitFor({ state: "visible", timeout: 60_000 });
        await panel().locator(".monaco-button", { hasText: "Apply" }).first().waitFor({ state: "visible" });
        return labelled;
    }

    /** Runs a command through the command palette (F1: Ctrl+Shift+P would go to the browser). */
    async function runCommand(title) {
        await page.keyboard.press("F1");
        const input = page.locator(".quick-input-widget input");
        await input.waitFor({ state: "visible" });
        await input.fill(`>${title}`);
        await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor({ state: "visible" });
        await page.keyboard.press("Enter");
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
        // The changes start unchecked: tick them.
        const checkboxes = panel().locator(".monaco-checkbox");
        await checkboxes.first().waitFor({ state: "visible" });
        const count = await checkboxes.count();
        for (let i = 0; i < count; i++) {
            const box = checkboxes.nth(i);
            if ((await box.getAttribute("aria-checked")) !== "true") await box.click();
        }
        await checkboxes.last().and(page.locator('[aria-checked="true"]')).waitFor({ state: "visible" });

        // Selecting the edit opens VS Code's diff of the ticked changes; hovering
        // it shows its label, so the screenshot says who proposed what.
        const label = row.locator(".monaco-highlighted-label").first();
        await label.click();
        await page.locator(".monaco-diff-editor .view-lines", { hasText: "BETA" }).first().waitFor({ state: "visible", timeout: 30_000 });
        await page.mouse.move(10, 400);
        await label.hover();
        await page.getByText("test-agent: Shout beta", { exact: true }).first().waitFor({ state: "visible", timeout: 10_000 });
        await page.screenshot({ path: path.join(output, "refactor-preview.png") });

        await panel().locator(".monaco-button", { hasText: "Apply" }).first().click();

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
        await panel().locator(".monaco-button", { hasText: "Discard" }).first().click();

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

        const box = panel().locator(".monaco-checkbox").first();
        if ((await box.getAttribute("aria-checked")) !== "true") await box.click();
        await panel().locator(".monaco-button", { hasText: "Apply" }).first().click();
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
