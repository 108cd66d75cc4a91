// End-to-end test of Verbatim as the IDE companion of the real Gemini CLI:
// code-server in Chromium with the extension and the real `verbatim lsp`, and
// the real interactive Gemini CLI (tests/agents/: under tmux, in its default
// approval mode with IDE mode on, against the scripted Gemini API of
// model_protocols.py), started with the variables that a terminal of VS Code
// gets from the extension. Gemini CLI's `replace` and `write_file` send
// `openDiff`; the person reviews the change inline, as every agent edit, through
// the UI; Gemini CLI writes what they kept. Also: the editor's context reaches
// the model, and the timings at 10,000 lines.
//
// Needs: CODE_SERVER_BIN, VERBATIM_BIN, VERBATIM_TEST_OUTPUT (test/run.sh sets
// them); Gemini CLI, Claude Code (whose binary the tmux harness checks) and
// tmux (tests/agents/install.sh, which run.sh runs). Alone, after
// `test/run.sh --install-only` and `cargo build -p verbatim`, from vscode-extension/:
//
//   export PATH=$PWD/../.node24/bin:$PATH && npm run --silent package:universal &&
//   CODE_SERVER_BIN=$PWD/../.code-server/node_modules/.bin/code-server VERBATIM_BIN=$PWD/../target/debug/verbatim \
//   VERBATIM_TEST_OUTPUT=$PWD/../.test-output/vscode node --test --test-reporter=spec test/e2e/gemini_cli.test.mjs

import * as assert from "node:assert/strict";
import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe } from "node:test";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

import { agentsDir, installClaudeCode } from "./claude_cli.mjs";
import { launchEditor, numberedFile, numberedLine, requiredEnv, REVIEW_SELECTORS, scenarioSteps, waitFor, withTimeout } from "./harness.mjs";
import { pressTimed, watchShown } from "./page_clock.mjs";

const output = path.join(requiredEnv("VERBATIM_TEST_OUTPUT"), "gemini-cli");
const run = promisify(execFile);
const CLAUDE_TMUX = path.join(agentsDir, "claude_tmux.py");
const MODEL_PROTOCOLS = path.join(agentsDir, "model_protocols.py");

const APP = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", ""].join("\n");
const TYPED = "typed by the person, unsaved\n";
const NEW_FILE = "created by Gemini CLI\nsecond line\n";
const BIG_LINES = 10_000;
const BIG = "big10000.txt";
const TIMED_EDITS = 3;
/** The lines of the big file Gemini CLI edits, one per timed edit (near its end, where a diff is slowest to find). */
const bigTarget = (k) => numberedLine(BIG_LINES - 10 + k);
const COMPANION_VARIABLES = /^(GEMINI_CLI_IDE_[A-Z_]+|QWEN_CODE_IDE_[A-Z_]+)=(.*)$/;

/** Installs Gemini CLI (pinned, from npm; quick once installed) and returns its script (run with node). */
function installGeminiCli() {
    return execFileSync(path.join(agentsDir, "install.sh"), ["--print-bin", "gemini-cli"], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
}

/** Runs claude_tmux.py; its errors (with the screen) become the thrown message. Asynchronous: a blocking call would stall the browser. */
async function tmux(...args) {
    try {
        return (await run("python3", [CLAUDE_TMUX, ...args], { maxBuffer: 64 * 1024 * 1024 })).stdout;
    } catch (error) {
        throw new Error(`claude_tmux.py ${args[0]} failed: ${error.stderr || error.message}`);
    }
}

/** The scripted Gemini API (model_protocols.py): its log holds every request. */
class GeminiModel {
    static async start(script, dir) {
        const scriptFile = path.join(dir, "gemini-script.json");
        const log = path.join(dir, "gemini-requests.jsonl");
        const portFile = path.join(dir, "gemini-model.port");
        writeFileSync(scriptFile, JSON.stringify(script, null, 2));
        writeFileSync(log, "");
        rmSync(portFile, { force: true });
        const child = spawn("python3", [MODEL_PROTOCOLS, "--script", scriptFile, "--log", log, "--port-file", portFile], { stdio: ["ignore", "ignore", "inherit"] });
        const port = await waitFor("the scripted model to listen", () => existsSync(portFile) && Number(readFileSync(portFile, "utf8")), { timeout: 10_000, interval: 20 });
        return new GeminiModel(child, port, log);
    }

    constructor(child, port, log) {
        this.child = child;
        this.port = port;
        this.log = log;
    }

    /** The main requests (streamGenerateContent) so far, oldest first. */
    requests() {
        return readFileSync(this.log, "utf8")
            .split("\n")
            .filter((line) => line.trim() !== "")
            .map((line) => JSON.parse(line))
            .filter((record) => record.kind === "gemini_stream");
    }

    /** The `count`th main request (from 1), once it came. */
    waitRequest(count, timeout = 30_000) {
        return waitFor(`the model's request ${count}`, () => this.requests()[count - 1], { timeout, interval: 100 });
    }

    stop() {
        this.child.kill("SIGTERM");
    }
}

/** Every text part of a logged request's contents, joined. */
function requestText(record) {
    return (record?.body?.contents ?? [])
        .flatMap((content) => content.parts ?? [])
        .map((part) => part.text ?? "")
        .join("\n");
}

/** How many functionResponse parts a logged request holds, in all its history. */
function functionResponses(record) {
    return (record?.body?.contents ?? []).flatMap((content) => content.parts ?? []).filter((part) => part.functionResponse !== undefined);
}

/** The JSON of the last editor context Gemini CLI gave the model in a request (the whole context or a summary of changes). */
function editorContexts(record) {
    const text = requestText(record);
    const found = [];
    for (const match of text.matchAll(/Here is (the user's editor context as a JSON object|a summary of changes in the user's editor context)[^\n]*\n```json\n([\s\S]*?)\n```/g)) {
        found.push({ kind: match[1].startsWith("the") ? "full" : "changes", json: JSON.parse(match[2]) });
    }
    return found;
}

/** The interactive Gemini CLI under its own tmux server. */
class GeminiSession {
    static async start({ name, cwd, home, model, env, claudeBinary, geminiScript }) {
        const settings = {
            security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
            privacy: { usageStatisticsEnabled: false },
            telemetry: { enabled: false },
            general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
            ide: { enabled: true, hasSeenNudge: true },
        };
        mkdirSync(path.join(home, ".gemini"), { recursive: true });
        writeFileSync(path.join(home, ".gemini", "settings.json"), JSON.stringify(settings, null, 2));
        const fullEnv = {
            GEMINI_API_KEY: "any",
            GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${model.port}`,
            // This machine is a container: without it the CLI dials host.docker.internal.
            REMOTE_CONTAINERS: "true",
            GEMINI_CLI_TRUST_WORKSPACE: "true",
            PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
            ...env,
        };
        const envArgs = Object.entries(fullEnv).flatMap(([key, value]) => ["--env", `${key}=${value}`]);
        await tmux(
            "start", "--name", name, "--cwd", cwd, "--home", home, "--base-url", `http://127.0.0.1:${model.port}`,
            "--bin", claudeBinary, "--size", "120x40", "--command", `exec ${process.execPath} ${geminiScript}`, ...envArgs,
        );
        return new GeminiSession(name);
    }

    constructor(name) {
        this.name = name;
    }

    /**
     * Types `text` in the prompt box and presses Enter, until the model has its `count`th request:
     * Gemini CLI 0.61 takes keys typed at once for a paste, and an Enter less than 40 ms after a paste
     * (by its own clock, on a loaded machine) for a newline in it; the next Enter sends the prompt, and
     * an Enter in an empty box does nothing.
     */
    async submit(text, model, count) {
        await tmux("send", "--name", this.name, "--text", text);
        for (let attempt = 1; ; attempt++) {
            const arrived = await waitFor(`the model's request ${count}`, () => model.requests().length >= count, { timeout: 2_000, interval: 100 }).catch(() => false);
            if (arrived) return;
            if (attempt === 6) throw new Error(`Gemini CLI did not send the prompt ${JSON.stringify(text)}:\n${await this.capture()}`);
            console.log(`# Gemini CLI has not sent ${JSON.stringify(text)} after ${attempt * 2} s: Enter again`);
            await tmux("send", "--name", this.name, "Enter");
        }
    }

    /** Waits until `regex` (Python syntax) matches the screen. */
    async waitFor(regex, timeout = 30) {
        return JSON.parse(await tmux("wait-for", "--name", this.name, "--regex", regex, "--timeout", String(timeout)));
    }

    capture() {
        return tmux("capture", "--name", this.name);
    }

    stop({ keep = false } = {}) {
        return tmux("stop", "--name", this.name, ...(keep ? ["--keep"] : [])).catch(() => undefined);
    }
}

describe("Gemini CLI connected to Verbatim as its IDE companion (code-server, real Gemini CLI)", { concurrency: false }, () => {
    let editor;
    let page;
    let workspace;
    let home;
    let geminiHome;
    let gemini;
    let model;
    let reader;
    let companionEnv;
    let claudeBinary;
    let geminiScript;
    const steps = scenarioSteps(() => page, output, () => editor?.userData);
    const step = (name, body) => steps.step(name, body);
    const file = (name) => path.join(workspace, name);
    const uriOf = (name) => pathToFileURL(file(name)).href;
    const onDisk = (name) => readFileSync(file(name), "utf8");

    // One conversation: the scripted model's answer to each streamGenerateContent request.
    const script = () => [
        // "Upper-case alpha and epsilon in app.txt."
        {
            tool_call: {
                name: "replace",
                input: { file_path: file("app.txt"), old_string: "alpha\nbeta\ngamma\ndelta\nepsilon", new_string: "ALPHA\nbeta\ngamma\ndelta\nEPSILON", instruction: "Upper-case alpha and epsilon" },
            },
        },
        { text: "Kept what you kept." },
        // "Upper-case gamma in app.txt." (rejected: Gemini CLI ends the turn, no request follows)
        { tool_call: { name: "replace", input: { file_path: file("app.txt"), old_string: "gamma", new_string: "GAMMA", instruction: "Upper-case gamma" } } },
        // "Create new.txt."
        { tool_call: { name: "write_file", input: { file_path: file("new.txt"), content: NEW_FILE } } },
        { text: "Created new.txt." },
        // "Edit the big file.": one edit after another, each reviewed and accepted, for the timings.
        ...Array.from({ length: TIMED_EDITS }, (_, k) => ({
            tool_call: { name: "replace", input: { file_path: file(BIG), old_string: bigTarget(k), new_string: `${bigTarget(k)} (edited)`, instruction: `Edit line ${k}` } },
        })),
        { text: "Edited the big file." },
    ];

    before(async () => {
        rmSync(output, { recursive: true, force: true });
        mkdirSync(output, { recursive: true });
        // Before the browser runs: these calls block.
        claudeBinary = installClaudeCode();
        geminiScript = installGeminiCli();
        home = mkdtempSync(path.join(tmpdir(), "verbatim-gemini-home-"));
        geminiHome = mkdtempSync(path.join(tmpdir(), "verbatim-gemini-cli-home-"));
        const inherited = { ...process.env };
        for (const name of Object.keys(inherited)) if (COMPANION_VARIABLES.test(`${name}=`)) delete inherited[name];
        editor = await launchEditor({
            setup: (folder) => {
                writeFileSync(path.join(folder, "app.txt"), APP);
                writeFileSync(path.join(folder, BIG), numberedFile(BIG_LINES));
            },
            settings: {
                "verbatim.logLevel": "debug",
                "terminal.integrated.enablePersistentSessions": false,
                "workbench.editor.enablePreview": false,
            },
            env: { ...inherited, HOME: home },
            // The server's debug lines (the openDiff call's arrival, for the timings) reach the extension's log.
            logLevel: "debug",
            output,
        });
        ({ page, workspace } = editor);
    });

    after(async () => {
        if (page) await page.screenshot({ path: path.join(output, "last.png") }).catch(() => undefined);
        if (gemini) writeFileSync(path.join(output, "gemini-screen.txt"), await gemini.capture().catch(() => ""));
        await gemini?.stop({ keep: steps.last !== "done" });
        model?.stop();
        await reader?.close().catch(() => undefined);
        await editor?.close();
        for (const dir of [home, geminiHome]) if (dir) rmSync(dir, { recursive: true, force: true });
        console.log(`# end-to-end artifacts in ${output} (last step: ${steps.last})`);
    });

    const read = (name) => reader.request("verbatim/read", { uri: uriOf(name) });
    const status = () => reader.request("verbatim/status", null);
    const waitForText = (name, text) =>
        waitFor(`the buffer of ${name} to hold ${JSON.stringify(text)}`, async () => ((await read(name)).text === text ? true : undefined));
    const waitForDisk = (name, text) => waitFor(`${name} on disk to hold ${JSON.stringify(text)}`, () => existsSync(file(name)) && onDisk(name) === text);
    const dirtyTab = (name) => page.locator(`.tabs-container .tab.dirty[data-resource-name="${name}"]:not([aria-label*="↔"])`);
    const diff = () => page.locator(".monaco-diff-editor").first();
    const lenses = (text) => page.locator(REVIEW_SELECTORS.diffLens).filter({ hasText: new RegExp(`^\\W*${text}\\s*$`) });
    const reviewTab = () => page.locator(".tabs-container .tab", { hasText: "Gemini CLI:" }).first();
    const extensionLog = () => editor.extensionLog();

    /** When the extension's log first has a line matching `pattern` at or after `since` (epoch ms), from VS Code's timestamp; `nth` counts matches. */
    function loggedAt(pattern, since, nth = 0) {
        let seen = 0;
        for (const line of extensionLog().split("\n")) {
            const match = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3}) /.exec(line);
            if (!match || !pattern.test(line)) continue;
            const at = new Date(`${match[1]}T${match[2]}`).getTime();
            if (at >= since && seen++ === nth) return at;
        }
        return undefined;
    }

    /** How many lines of the extension's log match `pattern` so far. */
    const loggedCount = (pattern) => extensionLog().split("\n").filter((line) => pattern.test(line)).length;

    /** Clicks into the file editor on the line that shows `text` (double: selects the word there). */
    async function clickOn(text, { double = false } = {}) {
        const line = page.locator(".monaco-editor:not(.monaco-diff-editor *) .view-line", { hasText: text }).first();
        if (double) await line.dblclick();
        else await line.click();
    }

    /**
     * Waits until the extension has sent the server a selection ending on `line` (1-based) of `name`,
     * and the server has sent Gemini CLI the context with that cursor (after its debounce).
     */
    async function selectionSent(name, line, since) {
        const sent = await waitFor(`the extension to send the selection at line ${line} of ${name}`, () => {
            const pattern = new RegExp(`\\[claude code\\] selection \\S*${name.replace(".", "\\.")} \\d+:\\d+-${line}:\\d+`);
            return loggedAt(pattern, since);
        });
        const update = new RegExp(`ide/contextUpdate sent active=\\S*/${name.replace(".", "\\.")} cursor_line=${line}\\b`);
        await waitFor(`the server to send Gemini CLI the cursor at line ${line} of ${name}`, () => loggedAt(update, sent));
    }

    step("the extension gives a new terminal Gemini CLI's variables, naming the server's discovery file", async () => {
        reader = await editor.connectAgent("e2e-reader");
        await waitFor("the extension to log the companion endpoint", () => /\[gemini cli\] serving the IDE companion interface on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(extensionLog()));
        // What a terminal the person opens gets, written to a file by its shell.
        await editor.runCommand("Terminal: Create New Terminal");
        const terminal = page.locator(".terminal-wrapper .xterm").first();
        await terminal.waitFor({ state: "visible" });
        const got = path.join(home, "terminal-env.txt");
        const written = `${got}.done`;
        await waitFor(
            "the terminal's shell to write its environment",
            async () => {
                if (existsSync(written)) return true;
                await terminal.click();
                await page.keyboard.type(`env > ${got}; touch ${written}\n`);
                return waitFor("the file", () => existsSync(written), { timeout: 3_000, interval: 100 }).catch(() => false);
            },
            { timeout: 30_000, interval: 500 },
        );
        companionEnv = Object.fromEntries(
            readFileSync(got, "utf8")
                .split("\n")
                .map((line) => COMPANION_VARIABLES.exec(line))
                .filter((match) => match !== null)
                .map((match) => [match[1], match[2]]),
        );
        for (const name of ["GEMINI_CLI_IDE_SERVER_PORT", "GEMINI_CLI_IDE_WORKSPACE_PATH", "GEMINI_CLI_IDE_AUTH_TOKEN", "GEMINI_CLI_IDE_PID", "QWEN_CODE_IDE_SERVER_PORT"]) {
            assert.ok(companionEnv[name], `the terminal has ${name}: ${JSON.stringify(Object.keys(companionEnv))}`);
        }
        assert.equal(companionEnv.GEMINI_CLI_IDE_WORKSPACE_PATH, workspace);
        const discovery = path.join(tmpdir(), "gemini", "ide", `gemini-ide-server-${companionEnv.GEMINI_CLI_IDE_PID}-${companionEnv.GEMINI_CLI_IDE_SERVER_PORT}.json`);
        const content = JSON.parse(readFileSync(discovery, "utf8"));
        assert.equal(content.authToken, companionEnv.GEMINI_CLI_IDE_AUTH_TOKEN);
        assert.equal(content.workspacePath, workspace);
        assert.equal(content.ideInfo.name, "vscode");
        await page.keyboard.type("exit\n");
    });

    step("the person opens app.txt and types a line at its end (unsaved)", async () => {
        await editor.openFromExplorer(BIG, numberedLine(1), { read: () => read(BIG) });
        await editor.openFromExplorer("app.txt", "epsilon", { read: () => read("app.txt") });
        await clickOn("epsilon");
        await page.keyboard.press("Control+End");
        await page.keyboard.type(TYPED);
        await waitForText("app.txt", APP + TYPED);
        await dirtyTab("app.txt").waitFor({ state: "visible" });
    });

    step("Gemini CLI under tmux, with the terminal's variables, connects as an agent", async () => {
        model = await GeminiModel.start(script(), output);
        gemini = await GeminiSession.start({
            name: `verbatim-gemini-e2e-${process.pid}`,
            cwd: workspace,
            home: geminiHome,
            model,
            env: companionEnv,
            claudeBinary,
            geminiScript,
        });
        await gemini.waitFor("Type your message", 60);
        await waitFor("Gemini CLI among the connected agents", async () => (await status()).agents.some((agent) => agent.name === "Gemini CLI"), { timeout: 30_000 });
        // The person puts the cursor on gamma (line 3) once Gemini CLI listens.
        const since = Date.now();
        await clickOn("gamma");
        await selectionSent("app.txt", 3, since - 1_000);
    });

    step("a. the replace of app.txt (with unsaved changes) shows as the inline review, two hunks; the model got the editor's context", async () => {
        await gemini.submit("Upper-case alpha and epsilon in app.txt.", model, 1);
        const first = await model.waitRequest(1);
        const [context] = editorContexts(first);
        assert.ok(context, `the first request holds the editor's context: ${requestText(first).slice(0, 3000)}`);
        assert.equal(context.json.activeFile?.path, file("app.txt"), JSON.stringify(context.json));
        assert.equal(context.json.activeFile?.cursor?.line, 3, JSON.stringify(context.json));
        await reviewTab().waitFor({ state: "visible", timeout: 30_000 });
        await diff().locator(".editor.modified .view-lines", { hasText: "EPSILON" }).first().waitFor({ state: "visible" });
        await lenses("Accept All").first().waitFor({ state: "visible" });
        assert.equal(await lenses("Accept").count(), 2, "one Accept per hunk");
        assert.equal(onDisk("app.txt"), APP, "nothing written yet");
        await page.screenshot({ path: path.join(output, "gemini-review.png") });
    });

    step("a. the person keeps one hunk of two: the disk holds exactly the disk text and that hunk; the buffer that and their line, still dirty", async () => {
        // The extension's re-read of app.txt once the agent has written it (the buffer has the person's line).
        const reread = /\[disk\] \S*\/app\.txt: re-read from disk and the buffer's text put back \(the agent wrote/;
        const rereadBefore = loggedCount(reread);
        await lenses("Accept").first().click();
        await lenses("Accepted · Undo").first().waitFor({ state: "visible" });
        await lenses("Reject").first().click();
        const input = page.locator(".quick-input-widget .quick-input-box input");
        await input.waitFor({ state: "visible" });
        await input.fill("keep epsilon as it is");
        await page.keyboard.press("Enter");
        const kept = APP.replace("alpha", "ALPHA");
        await waitForDisk("app.txt", kept);
        await waitForText("app.txt", kept + TYPED);
        await diff().waitFor({ state: "detached" });
        const second = await model.waitRequest(2);
        assert.equal(functionResponses(second).length, 1, "the replace's result went to the model");
        await gemini.waitFor("Kept what you kept");
        // The write is the one the server expected: it says the disk now holds the decision (`synced`), and the
        // extension re-reads the file and puts the person's line back; no second review.
        await waitFor("the extension to re-read app.txt after Gemini CLI's write", () => loggedCount(reread) > rereadBefore);
        assert.equal(await reviewTab().count(), 0, "no second review");
        assert.equal((await status()).pending.length, 0);
        assert.equal((await read("app.txt")).text, kept + TYPED);
        await dirtyTab("app.txt").waitFor({ state: "visible" });
        assert.equal(onDisk("app.txt"), kept);
    });

    step("b. a rejection through the UI writes nothing", async () => {
        const before = onDisk("app.txt");
        const since = Date.now();
        await gemini.submit("Upper-case gamma in app.txt.", model, 3);
        await reviewTab().waitFor({ state: "visible", timeout: 30_000 });
        await lenses("Reject All").first().waitFor({ state: "visible" });
        await lenses("Reject All").first().click();
        const input = page.locator(".quick-input-widget .quick-input-box input");
        await input.waitFor({ state: "visible" });
        await input.fill("not now");
        await page.keyboard.press("Enter");
        await diff().waitFor({ state: "detached" });
        await waitFor("the server's log of the rejection", () => loggedAt(/openDiff: rejected/, since - 1_000));
        await gemini.waitFor("Request cancelled", 30);
        assert.equal(onDisk("app.txt"), before, "nothing written");
        assert.equal((await read("app.txt")).text, before + TYPED);
        assert.equal(model.requests().length, 3, "Gemini CLI ended the turn");
    });

    step("c. the context update reaches the model; a write_file of a new file is reviewed as created and, accepted, written", async () => {
        // The person selects "delta" in app.txt: the next request carries the change.
        await editor.showTab("app.txt");
        const since = Date.now();
        await clickOn("delta", { double: true });
        await selectionSent("app.txt", 4, since - 1_000);
        await gemini.submit("Create new.txt.", model, 4);
        const request = await model.waitRequest(4);
        const contexts = editorContexts(request);
        // The latest context in it: the whole of it again (Gemini CLI 0.61 sends it whole after a cancelled turn) or a summary of the changes.
        const latest = contexts.at(-1);
        const active = latest?.kind === "full" ? latest.json.activeFile : (latest?.json.changes?.selectionChanged ?? latest?.json.changes?.activeFileChanged);
        assert.equal(active?.path, file("app.txt"), `the request holds the new selection: ${JSON.stringify(contexts)}`);
        assert.equal(active?.selectedText, "delta", `the request holds the new selection: ${JSON.stringify(contexts)}`);
        // The model is never told of the rejection: the request holds the first replace's result only.
        assert.equal(functionResponses(request).length, 1, "function responses after the rejection");
        assert.ok(!requestText(request).includes("GAMMA"), "nor the rejected call");
        await page.locator(".tabs-container .tab", { hasText: "creates new.txt" }).first().waitFor({ state: "visible", timeout: 30_000 });
        await diff().locator(".editor.modified .view-lines", { hasText: "created by Gemini CLI" }).first().waitFor({ state: "visible" });
        assert.equal(existsSync(file("new.txt")), false, "showing the new file does not create it");
        await lenses("Accept All").first().click();
        await waitForDisk("new.txt", NEW_FILE);
        await model.waitRequest(5);
        await gemini.waitFor("Created new\\.txt");
        await diff().waitFor({ state: "detached" });
        await waitFor("new.txt to be clean, if open", async () => (await dirtyTab("new.txt").count()) === 0, { timeout: 10_000 });
    });

    step(`timings on a ${BIG_LINES.toLocaleString("en")}-line file: openDiff received → review on screen, accept key → ide/diffAccepted sent`, async () => {
        await editor.showTab(BIG);
        // Above verbatim.review.diffMaxLines (5,000), the review is in the file's own editor; each edit's
        // watch is armed while the last one's buttons are still there.
        const watch = async (k) => ({
            title: await watchShown(page, `title${k}`, REVIEW_SELECTORS.titleAcceptAll, undefined, { afterGone: k > 0 }),
            lenses: await watchShown(page, `lenses${k}`, REVIEW_SELECTORS.fileLens, "Accept All", { afterGone: k > 0 }),
        });
        let watches = await watch(0);
        const sent = Date.now();
        await gemini.submit(`Edit ${BIG}.`, model, 6);
        const shown = [];
        const lensShown = [];
        const answered = [];
        const server = [];
        const openedAfter = [];
        const reached = [];
        let expected = numberedFile(BIG_LINES);
        for (let k = 0; k < TIMED_EDITS; k++) {
            const titleAt = await withTimeout(watches.title.at(), "the title bar's Accept All", 60_000);
            const lensAt = await withTimeout(watches.lenses.at(), "the Accept All lens", 60_000);
            const at = await waitFor("the server's log of the openDiff call", () => loggedAt(/IDE tool call.*openDiff/, sent, k));
            if (k + 1 < TIMED_EDITS) watches = await watch(k + 1);
            // The person's accept: Ctrl+Alt+Shift+Y, Accept All's key.
            const pressed = await pressTimed(page, "Control+Alt+Shift+Y");
            const answer = await waitFor("the server's log of ide/diffAccepted", () => loggedAt(/openDiff: accepted; the CLI writes the file/, sent, k));
            expected = expected.replace(bigTarget(k), `${bigTarget(k)} (edited)`);
            await waitForDisk(BIG, expected);
            assert.ok(
                loggedAt(/answered from the person's decision .* document=big/, pressed - 5) !== undefined,
                "Gemini CLI was answered from the decision the extension told (verbatim/reviewDecided), before VS Code applied the edit",
            );
            // Where the time goes, from the extension's log: the server's part (→ workspace/applyEdit), the
            // review opened in the file's editor, and the key reaching the extension.
            const applyEdit = loggedAt(new RegExp(`sending workspace/applyEdit: Gemini CLI: edit ${BIG.replace(".", "\\.")}`), at) ?? NaN;
            const opened = loggedAt(new RegExp(`\\[review\\] "Gemini CLI: edit ${BIG.replace(".", "\\.")}": shown`), at) ?? NaN;
            const decided = loggedAt(new RegExp(`\\[review\\] "Gemini CLI: edit ${BIG.replace(".", "\\.")}": every undecided hunk accepted`), pressed - 5) ?? NaN;
            shown.push(Math.round(titleAt - at));
            lensShown.push(Math.round(lensAt - at));
            server.push(applyEdit - at);
            openedAfter.push(opened - at);
            answered.push(Math.round(answer - pressed));
            reached.push(Math.round(decided - pressed));
        }
        await gemini.waitFor("Edited the big file");
        const summary = (values) => {
            const sorted = [...values].sort((a, b) => a - b);
            return `median ${sorted[Math.floor(sorted.length / 2)]} ms (${values.join(", ")})`;
        };
        console.log(`# ${BIG_LINES} lines (in its own editor): openDiff received → review on screen (the title bar's Accept All): ${summary(shown)}`);
        console.log(`# ${BIG_LINES} lines:   its lenses: ${summary(lensShown)}; the server (→ workspace/applyEdit sent): ${summary(server)}; the review opened: ${summary(openedAfter)}`);
        console.log(`# ${BIG_LINES} lines: accept key → ide/diffAccepted sent: ${summary(answered)}; the key reaching the extension: ${summary(reached)}`);
        steps.last = "done";
    });
});
