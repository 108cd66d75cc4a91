// A real VS Code for the end-to-end test and the latency benchmark: code-server
// (VS Code 1.139.1 in the browser, or 1.93.1, the oldest that engines.vscode
// allows) with the packaged extension installed, on a scratch copy of a
// workspace, driven by playwright-core in Debian's Chromium.
//
// Needs: CODE_SERVER_BIN, VERBATIM_BIN, VERBATIM_TEST_OUTPUT (test/run.sh sets them).

import { spawn, spawnSync, execFileSync } from "node:child_process";
import { test } from "node:test";
import { cpSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { chromium } from "playwright-core";

import { Agent, discoveryFiles } from "./agent.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
export const extensionDir = path.resolve(here, "../..");

export function requiredEnv(name) {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set; run through vscode-extension/test/run.sh`);
    return value;
}

export async function waitFor(what, probe, { timeout = 60_000, interval = 250 } = {}) {
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

/**
 * The steps of one scenario in one editor: once a step fails, the later ones
 * are skipped (they build on it), the page is saved as `failure.png` and
 * `failure.html` in `output`, and the end of the extension's log is printed
 * (CI keeps what the run prints, not the artifacts). `page()` gives the page
 * once the editor is up, `userData()` VS Code's user data directory.
 */
export function scenarioSteps(page, output, userData = () => undefined) {
    let failedStep;
    const steps = {
        last: "setup",
        step(name, body) {
            test(name, async (t) => {
                if (failedStep !== undefined) {
                    t.skip(`the step "${failedStep}" failed`);
                    return;
                }
                steps.last = name;
                try {
                    await body();
                } catch (error) {
                    failedStep = name;
                    await page()?.screenshot({ path: path.join(output, "failure.png") }).catch(() => undefined);
                    const html = await page()?.content().catch(() => undefined);
                    if (html) writeFileSync(path.join(output, "failure.html"), html);
                    printLogTail(userData());
                    throw error;
                }
            });
        },
    };
    return steps;
}

/** The extension's own logs (its "Verbatim" output channel, one file per window) under `userData`: `{ file, text }`. */
function extensionLogs(userData) {
    const logs = userData && path.join(userData, "logs");
    if (!logs || !existsSync(logs)) return [];
    return readdirSync(logs, { recursive: true })
        .map(String)
        .filter((name) => path.basename(name) === "Verbatim.log")
        .sort()
        .map((file) => ({ file, text: readFileSync(path.join(logs, file), "utf8") }));
}

/** Prints the last lines of the extension's own log under `userData`. */
function printLogTail(userData, lines = 40) {
    for (const { file, text } of extensionLogs(userData)) {
        const tail = text.trimEnd().split("\n").slice(-lines);
        console.log(`# the last ${tail.length} lines of ${file}:`);
        for (const line of tail) console.log(`#   ${line}`);
    }
}

/**
 * Rewrites a file the way most agents do: a separate process writes a temporary
 * file next to it and renames it over the file.
 */
export function writeAtomically(file, text) {
    const script = `const fs = require("node:fs"); const [file, text] = process.argv.slice(1);
        const temp = file + ".tmp-" + process.pid; fs.writeFileSync(temp, text); fs.renameSync(temp, file);`;
    const run = spawnSync(process.execPath, ["-e", script, file, text], { encoding: "utf8" });
    if (run.status !== 0) throw new Error(`rewriting ${file} failed: ${run.stderr}`);
}

/** Rejects when `promise` has not settled after `ms`: a step must fail, not hang. */
export function withTimeout(promise, what, ms = 30_000) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Waits for `step` while an agent's request (`pending`) is meant to wait for the
 * person: if the request ends first (the server refused the edit, say), the wait
 * fails at once with its answer, instead of after the step's whole timeout.
 */
export async function untilAnswered(step, pending, what) {
    step.catch(() => undefined);
    const answered = pending.then(
        (result) => {
            throw new Error(`the agent was answered while waiting for ${what}: ${JSON.stringify(result)}`);
        },
        (error) => {
            throw new Error(`the agent's request failed while waiting for ${what}: ${error.message}`);
        },
    );
    answered.catch(() => undefined);
    return Promise.race([step, answered]);
}

/** Where a review's buttons are on the page: its lenses in a diff's proposal side and in a file's own editor, and Accept All in the editor's title bar. */
export const REVIEW_SELECTORS = {
    diffLens: ".monaco-diff-editor .editor.modified .codelens-decoration a",
    fileLens: ".monaco-editor:not(.monaco-diff-editor *) .codelens-decoration a",
    titleAcceptAll: '.editor-actions [aria-label*="Accept All Hunks"]',
};

/** Line `n` (from 1) of a generated file: every line is distinct, so any one can be quoted. */
export function numberedLine(n) {
    return `line ${String(n).padStart(6, "0")}: the quick brown fox jumps over the lazy dog`;
}

/** A file of `count` numbered lines, each ending in a newline. */
export function numberedFile(count) {
    const lines = new Array(count);
    for (let n = 1; n <= count; n++) lines[n - 1] = numberedLine(n);
    return `${lines.join("\n")}\n`;
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

/** User settings that keep VS Code quiet and deterministic under test. */
const BASE_SETTINGS = {
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
    // VS Code forwards every port a process opens (the server's endpoints among them); past
    // 20 on a busy machine it says so and rewrites the user settings mid-test (a restart
    // right after was seen to find no verbatim.server.path).
    "remote.autoForwardPorts": false,
};

/**
 * Starts code-server on a scratch copy of `fixture` (a directory) with the
 * packaged extension, and opens it in Chromium. `setup(workspace)` may add
 * files before code-server starts; `settings` are added to the user settings.
 * `serverPath` overrides the binary the extension starts (default VERBATIM_BIN);
 * `initScript` runs in the page before VS Code's own scripts. With
 * `workspaceTrust`, VS Code's workspace trust is on (without the startup
 * prompt), so the workspace opens untrusted, in Restricted Mode.
 * `bundledServer` is linked into the installed extension as its bundled
 * binary (`server/verbatim`). `env` is added to code-server's environment,
 * which the extension host, the server and the integrated terminals inherit.
 * `extraExtensions` are `.vsix` files installed beside the extension.
 * `logLevel` is VS Code's (`--log`): at `debug`, the extension's output
 * channel keeps the server's debug lines too.
 */
export async function launchEditor({ fixture, setup, settings = {}, serverPath, initScript, output, workspaceTrust = false, bundledServer, env, extraExtensions = [], logLevel }) {
    const codeServer = requiredEnv("CODE_SERVER_BIN");
    const vsix = path.join(extensionDir, "dist", "verbatim.vsix");
    const chromiumPath = process.env.CHROMIUM_BIN ?? "/usr/bin/chromium";

    const temp = mkdtempSync(path.join(tmpdir(), "verbatim-vscode-"));
    const userData = path.join(temp, "user-data");
    const extensions = path.join(temp, "extensions");
    const workspace = path.join(temp, "workspace");
    const runtimeDir = path.join(temp, "run");
    mkdirSync(output, { recursive: true });
    if (fixture) cpSync(fixture, workspace, { recursive: true });
    else mkdirSync(workspace, { recursive: true });
    await setup?.(workspace, temp);

    mkdirSync(path.join(userData, "User"), { recursive: true });
    writeFileSync(
        path.join(userData, "User", "settings.json"),
        JSON.stringify(
            {
                ...BASE_SETTINGS,
                ...(workspaceTrust ? { "security.workspace.trust.enabled": true, "security.workspace.trust.startupPrompt": "never" } : {}),
                "verbatim.server.path": serverPath ?? requiredEnv("VERBATIM_BIN"),
                ...settings,
            },
            null,
            2,
        ),
    );
    const configFile = path.join(temp, "code-server.yaml");
    writeFileSync(configFile, "auth: none\ncert: false\n");

    const installs = [vsix, ...extraExtensions].flatMap((file) => ["--install-extension", file]);
    execFileSync(codeServer, ["--config", configFile, "--user-data-dir", userData, "--extensions-dir", extensions, ...installs], {
        stdio: ["ignore", "inherit", "inherit"],
        timeout: 120_000,
    });
    if (bundledServer) {
        const installed = readdirSync(extensions).find((name) => name.startsWith("verbatim.verbatim-"));
        if (!installed) throw new Error(`the extension is not installed in ${extensions}`);
        mkdirSync(path.join(extensions, installed, "server"), { recursive: true });
        symlinkSync(bundledServer, path.join(extensions, installed, "server", "verbatim"));
    }

    const port = await freePort();
    const log = createWriteStream(path.join(output, "code-server.log"));
    const codeServerProcess = spawn(
        codeServer,
        [
            "--config", configFile,
            "--auth", "none",
            "--bind-addr", `127.0.0.1:${port}`,
            "--user-data-dir", userData,
            "--extensions-dir", extensions,
            "--disable-telemetry",
            "--disable-update-check",
            ...(workspaceTrust ? [] : ["--disable-workspace-trust"]),
            "--disable-getting-started-override",
            ...(logLevel ? ["--log", logLevel] : []),
            workspace,
        ],
        {
            // The extension host inherits this environment, and the server inherits the extension host's.
            env: { ...process.env, VERBATIM_RUNTIME_DIR: runtimeDir, ...env },
            stdio: ["ignore", "pipe", "pipe"],
            detached: true,
        },
    );
    codeServerProcess.stdout.pipe(log);
    codeServerProcess.stderr.pipe(log);

    const editor = new Editor({ temp, userData, workspace, runtimeDir, output, codeServerProcess });
    try {
        await waitFor("code-server to listen", async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, { timeout: 90_000 });
        editor.browser = await chromium.launch({
            executablePath: chromiumPath,
            args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        });
        const context = await editor.browser.newContext({ viewport: { width: 1280, height: 800 } });
        await context.grantPermissions(["clipboard-read", "clipboard-write"]);
        if (initScript) await context.addInitScript(initScript);
        editor.page = await context.newPage();
        editor.page.setDefaultTimeout(60_000);
        await editor.page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
        await editor.page.waitForSelector(".monaco-workbench", { timeout: 120_000 });
    } catch (error) {
        await editor.close();
        throw error;
    }
    return editor;
}

/** A running code-server with its page, and the UI actions the tests share. */
export class Editor {
    browser;
    page;

    constructor({ temp, userData, workspace, runtimeDir, output, codeServerProcess }) {
        this.temp = temp;
        this.userData = userData;
        this.workspace = workspace;
        this.runtimeDir = runtimeDir;
        this.output = output;
        this.codeServerProcess = codeServerProcess;
    }

    /** Closes the browser and code-server; copies VS Code's logs to the output directory. */
    async close() {
        await this.browser?.close().catch(() => undefined);
        const codeServer = this.codeServerProcess;
        if (codeServer?.pid) {
            // Its logs are complete once it has exited (or given up on after a while).
            const exited = codeServer.exitCode !== null || codeServer.signalCode !== null ? Promise.resolve() : new Promise((resolve) => codeServer.once("exit", resolve));
            try {
                process.kill(-codeServer.pid, "SIGTERM");
            } catch {
                // Already gone.
            }
            await withTimeout(exited, "code-server to exit", 10_000).catch(() => undefined);
        }
        const logs = path.join(this.userData, "logs");
        if (existsSync(logs)) cpSync(logs, path.join(this.output, "vscode-logs"), { recursive: true });
        rmSync(this.temp, { recursive: true, force: true });
    }

    panel() {
        return this.page.locator("#workbench\\.parts\\.panel");
    }

    /** The extension's own log (its "Verbatim" output channel), as VS Code has written it so far. */
    extensionLog() {
        return extensionLogs(this.userData)
            .map(({ text }) => text)
            .join("\n");
    }

    statusBar() {
        return this.page.locator("#workbench\\.parts\\.statusbar");
    }

    /** The editor tab of the file `name` (not the tab of a diff that shows it). */
    tab(name) {
        return this.page.locator(`.tabs-container .tab[data-resource-name="${name}"]:not([aria-label*="↔"])`);
    }

    /** The discovery file of the server started for this workspace (a newer one than `previous`). */
    async discovery(previous) {
        const folder = pathToFileURL(this.workspace).href;
        return waitFor(
            `a discovery file in VERBATIM_RUNTIME_DIR=${this.runtimeDir}`,
            () => discoveryFiles(this.runtimeDir).find((file) => file.workspaceFolders.includes(folder) && file.pid !== previous?.pid),
            { timeout: 90_000 },
        );
    }

    /** Connects an agent to the server, once it is up. */
    async connectAgent(name = "test-agent") {
        return Agent.connect((await this.discovery()).socket, name);
    }

    /**
     * Moves the pointer where nothing shows a tooltip, and the keyboard focus off an
     * element that shows one, and waits until no hover is up. VS Code shows a tooltip
     * once the pointer rests on an Explorer row, a tab or a status bar item, and it
     * stays while the pointer is on it or on the tooltip: one that lies over what the
     * next step clicks takes that click, and Playwright retries it for its whole
     * timeout. It also shows one when such an element gets the focus back (a status
     * bar item, once the quick pick it opened closes), until the focus leaves it. The
     * spot is the Explorer's empty space below its files, else the middle of the
     * editor area.
     */
    async pointerAway() {
        const explorer = this.page.locator(".explorer-folders-view");
        const box = (await explorer.isVisible()) ? await explorer.boundingBox() : null;
        const rows = box ? await explorer.locator(".monaco-list-row").evaluateAll((rows) => Math.max(0, ...rows.map((row) => row.getBoundingClientRect().bottom))) : 0;
        const emptyBelow = box && box.y + box.height - rows > 40;
        if (emptyBelow) await this.page.mouse.move(box.x + box.width / 2, box.y + box.height - 20);
        else await this.page.mouse.move(900, 450);
        const hovers = this.page.locator(".workbench-hover-container:visible, .monaco-hover:visible");
        if ((await hovers.count()) > 0) {
            // VS Code marks an element whose tooltip it draws itself with `custom-hover`, and shows
            // that tooltip on focus unless the element takes typing (an input box, an editor).
            await this.page.evaluate(() => {
                const focused = document.activeElement;
                const takesTyping = focused instanceof HTMLInputElement || focused instanceof HTMLTextAreaElement || (focused instanceof HTMLElement && focused.isContentEditable);
                if (focused instanceof HTMLElement && !takesTyping && focused.closest("[custom-hover]")) focused.blur();
            });
        }
        await waitFor("no hover to be up", async () => (await hovers.count()) === 0, { timeout: 10_000, interval: 100 });
    }

    /**
     * Clicks `target` (an Explorer row, a tab, a status bar item: anything with a
     * tooltip) with no hover in the way, and takes the pointer off it again, so that
     * its own tooltip does not show over what the next step clicks.
     */
    async click(target, options) {
        await this.pointerAway();
        await target.click(options);
        await this.pointerAway();
    }

    /**
     * Presses Ctrl+S in the open document `name`, as the person does: brings it to the
     * front, clicks into its own editor (where it shows `visibleText`; never a diff, never
     * the Refactor Preview's) and waits until that editor has the keyboard focus, for a key
     * pressed while the workbench moves the focus (a preview closing, a tab coming to the
     * front) goes elsewhere. Without `visibleText`, the first such editor.
     */
    async pressSave(name, visibleText) {
        await this.showTab(name);
        const editors = ".editor-group-container .monaco-editor:not(.monaco-diff-editor *) .view-lines:visible";
        const view = this.page.locator(editors, visibleText === undefined ? {} : { hasText: visibleText }).first();
        await this.click(view);
        await waitFor(`the keyboard focus in the editor of ${name}`, () =>
            this.page.evaluate(() => {
                const editor = document.activeElement?.closest(".monaco-editor");
                return editor !== null && editor !== undefined && editor.closest(".monaco-diff-editor") === null && editor.closest(".editor-group-container") !== null;
            }),
        );
        await this.page.keyboard.press("Control+s");
    }

    /** Brings the open document `name` to the front by its tab. */
    async showTab(name) {
        await this.click(this.tab(name).first());
        await this.tab(name).and(this.page.locator(".active")).first().waitFor({ state: "visible" });
    }

    /**
     * Opens a workspace file by clicking it in the Explorer (Ctrl+P would go to the browser).
     * With `read` (an agent's `verbatim/read` of that file), it also waits until the server
     * holds the editor's copy: the editor's didOpen arrives a moment after the tab shows
     * (seconds on a busy machine), and until then the server answers from the disk.
     */
    async openFromExplorer(name, visibleText, { read } = {}) {
        await this.click(this.page.locator(".explorer-folders-view").getByText(name, { exact: true }).first());
        await this.tab(name).waitFor({ state: "visible" });
        if (visibleText) await this.page.locator(".monaco-editor .view-lines", { hasText: visibleText }).first().waitFor({ state: "visible" });
        if (read) await waitFor(`the server to hold ${name} as the editor opened it`, async () => ((await read()).source === "editor" ? true : undefined));
    }

    /**
     * Waits for the Refactor Preview to show an edit labelled `label`. VS Code
     * puts the change annotation's label (and its description, which the
     * extension drops when it only repeats the summary) in the edit row's hover.
     */
    async waitForPreview(label, { timeout = 60_000, pending } = {}) {
        const labelled = this.panel().locator(`.monaco-list-row:has([title^="${label}"])`).first();
        const shown = (async () => {
            await labelled.waitFor({ state: "visible", timeout });
            await this.panel().locator(".monaco-button", { hasText: "Apply" }).first().waitFor({ state: "visible" });
            return labelled;
        })();
        return pending ? untilAnswered(shown, pending, `the Refactor Preview to show "${label}"`) : shown;
    }

    /**
     * Ticks every change in the Refactor Preview: they start unchecked. VS Code
     * 1.139 draws them as `.monaco-checkbox` (checked: `aria-checked`); 1.93 as
     * native `input.edit-checkbox` elements.
     */
    async tickAllChanges() {
        const checkboxes = this.panel().locator(".monaco-checkbox, input.edit-checkbox");
        await checkboxes.first().waitFor({ state: "visible" });
        const checked = (box) =>
            box.evaluate((element) => (element instanceof HTMLInputElement ? element.checked : element.getAttribute("aria-checked") === "true"));
        const count = await checkboxes.count();
        for (let i = 0; i < count; i++) {
            const box = checkboxes.nth(i);
            if (!(await checked(box))) await box.click();
        }
        await waitFor("the last change to be ticked", () => checked(checkboxes.last()), { timeout: 10_000 });
    }

    async pressApply() {
        await this.panel().locator(".monaco-button", { hasText: "Apply" }).first().click();
    }

    async pressDiscard() {
        await this.panel().locator(".monaco-button", { hasText: "Discard" }).first().click();
    }

    /** Runs a command through the command palette (F1: Ctrl+Shift+P would go to the browser). */
    async runCommand(title) {
        // The text box (1.93 has checkboxes in the widget too).
        const input = this.page.locator(".quick-input-widget .quick-input-box input");
        // A key pressed while the workbench moves focus (an editor closing) can be
        // lost: press it again, a few times, before giving up.
        for (let attempt = 1; ; attempt++) {
            await this.page.keyboard.press("F1");
            try {
                await input.waitFor({ state: "visible", timeout: 5_000 });
                break;
            } catch (error) {
                if (attempt === 4) throw error;
            }
        }
        await input.fill(`>${title}`);
        await this.page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor({ state: "visible" });
        await this.page.keyboard.press("Enter");
    }
}
