// End-to-end test of the agents' own edit tools reviewed in VS Code before they
// write, through each agent's pre-write hook (`verbatim hook AGENT`), installed
// by `verbatim setup AGENT --write` and nothing else: code-server in Chromium
// with the extension and the real `verbatim lsp`, and the real CLIs from npm
// (tests/agents/install.sh) against the scripted models of tests/agents/
// (model_protocols.py for Codex and Copilot CLI, model_server.py for Claude Code).
// The person decides through the review's lenses on the page, as in the other
// tests. The Neovim twins of this file are tests/agents/e2e_hooks.py and, for
// Copilot CLI, tests/agents/e2e_hooks_chat.py.
//
// Cases:
// - codex exec: an apply_patch of two hunks to a file open with an unsaved line.
//   While the review waits the disk is unchanged; the person keeps one hunk and
//   rejects the other with a reason. The disk holds the disk text plus the kept
//   hunk, the document that plus the unsaved line (still dirty), no second
//   review, and the model's next request carries the reason.
// - codex exec, rejected whole with a reason: nothing written, the model reads it.
// - claude -p --permission-mode acceptEdits: its Edit reviewed, one hunk left out
//   with a reason; the model reads it as the hook's additional context.
// - copilot -p (GitHub Copilot CLI, BYOK against model_protocols.py's Chat
//   Completions): its `edit` of a file open with an unsaved line, as for Codex
//   (disk unchanged while the review waits, one review, one hunk kept and one
//   left out with a reason: the disk holds the kept hunk, the document that plus
//   the unsaved line, the model's next request the reason); then its `edit`
//   rejected whole with a reason: nothing written, the model reads the reason.
// - Timings at 1,000 and 10,000 lines, by the page's own clock (page_clock.mjs):
//   `verbatim hook codex` started → review on screen, and the person's accept
//   key → the hook's answer written. Printed, not asserted (BENCHMARKS.md).
//
// Needs: CODE_SERVER_BIN, VERBATIM_BIN, VERBATIM_TEST_OUTPUT (test/run.sh sets
// them); Codex, Claude Code and Copilot CLI (tests/agents/install.sh, quick once
// installed; Copilot unpacks itself into <repo>/.agents/copilot-cache on its first start).
// Alone, after `test/run.sh --install-only` and `cargo build -p verbatim`, from
// vscode-extension/:
//
//   export PATH=$PWD/../.node24/bin:$PATH && npm run --silent package:universal &&
//   CODE_SERVER_BIN=$PWD/../.code-server/node_modules/.bin/code-server VERBATIM_BIN=$PWD/../target/debug/verbatim \
//   VERBATIM_TEST_OUTPUT=$PWD/../.test-output/vscode node --test --test-reporter=spec test/e2e/hooks.test.mjs

import * as assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { after, before, describe } from "node:test";
import { pathToFileURL } from "node:url";

import { agentsDir } from "./claude_cli.mjs";
import { launchEditor, numberedFile, numberedLine, requiredEnv, REVIEW_SELECTORS, scenarioSteps, waitFor, withTimeout } from "./harness.mjs";
import { pressTimed, watchShown } from "./page_clock.mjs";

const output = path.join(requiredEnv("VERBATIM_TEST_OUTPUT"), "hooks");
const MODEL_PROTOCOLS = path.join(agentsDir, "model_protocols.py");
const MODEL_SERVER = path.join(agentsDir, "model_server.py");
// Copilot unpacks itself (about 235 MB) on its first start: the cache tests/agents/e2e_hooks_chat.py shares.
const COPILOT_CACHE = path.resolve(agentsDir, "..", "..", ".agents", "copilot-cache");

const EIGHT = "first\nsecond\nthird\nfourth\nfifth\nsixth\nseventh\neighth\n";
const UNSAVED_LINE = "mine, unsaved";
// The person's unsaved line sits away from both hunks.
const EIGHT_UNSAVED = EIGHT.replace("fourth\n", `fourth\n${UNSAVED_LINE}\n`);
const BOTH_ENDS = EIGHT.replace("first", "FIRST").replace("eighth", "EIGHTH");
const twoHunks = (name) => `*** Begin Patch\n*** Update File: ${name}\n@@\n-first\n+FIRST\n@@\n-eighth\n+EIGHTH\n*** End Patch\n`;
const SIZES = [1_000, 10_000];
const TIMED_RUNS = 5;
const bigName = (lines) => `big${lines}.txt`;
/** The line of a big file the `run`th timed patch changes (near its end, where a diff is slowest to find). */
const bigTarget = (lines, run) => numberedLine(lines - 10 + run);

// The same configuration as tests/agents/e2e_agents.py's CODEX_CONFIG.
const codexConfig = (port) => `model = "gpt-5.5"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "workspace-write"

[model_providers.scripted]
name = "scripted"
base_url = "http://127.0.0.1:${port}/v1"
env_key = "SCRIPTED_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`;

/** Installs `agent` (pinned, from npm; quick once installed) and returns the command to run. */
function installAgent(agent) {
    return execFileSync(path.join(agentsDir, "install.sh"), ["--print-bin", agent], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
}

/** The wall clock to a fraction of a millisecond: the clock page_clock.mjs stamps the page's events with. */
const now = () => performance.timeOrigin + performance.now();

/** A scripted model (model_protocols.py or model_server.py): its log holds every request. */
class ScriptedModel {
    static async start({ server, script, dir, name }) {
        const scriptFile = path.join(dir, `${name}-script.json`);
        const log = path.join(dir, `${name}-requests.jsonl`);
        const portFile = path.join(dir, `${name}.port`);
        writeFileSync(scriptFile, JSON.stringify(script, null, 2));
        writeFileSync(log, "");
        rmSync(portFile, { force: true });
        const child = spawn("python3", [server, "--script", scriptFile, "--log", log, "--port-file", portFile], { stdio: ["ignore", "ignore", "inherit"] });
        const port = await waitFor("the scripted model to listen", () => existsSync(portFile) && Number(readFileSync(portFile, "utf8")), { timeout: 10_000, interval: 20 });
        return new ScriptedModel(child, port, log);
    }

    constructor(child, port, log) {
        this.child = child;
        this.port = port;
        this.log = log;
    }

    records() {
        return readFileSync(this.log, "utf8")
            .split("\n")
            .filter((line) => line.trim() !== "")
            .map((line) => JSON.parse(line));
    }

    /** The requests of the agent's main loop (`kind`: `responses` for Codex, `main` for Claude Code), oldest first. */
    requests(kind) {
        return this.records().filter((record) => record.event === undefined && record.kind === kind);
    }

    /** The script's expectations that a request did not meet. */
    mismatches() {
        return this.records().filter((record) => record.event !== undefined);
    }

    stop() {
        this.child.kill("SIGTERM");
    }
}

/** Writes `file` as Codex does: a temporary file beside it, renamed over it (in this process: a big text does not fit in another's arguments). */
function writeAsCodex(file, text) {
    const temp = `${file}.tmp-${process.pid}`;
    writeFileSync(temp, text);
    renameSync(temp, file);
}

/** Runs a CLI to its end without blocking the browser the test drives: `{ code, stdout, stderr }`. */
function runAgent(command, args, { cwd, env, timeout = 180_000 }) {
    return new Promise((resolve, reject) => {
        const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk) => (stdout += chunk));
        child.stderr.on("data", (chunk) => (stderr += chunk));
        const timer = setTimeout(() => {
            child.kill("SIGKILL");
            reject(new Error(`${path.basename(command)} ${args[0]} ran over ${timeout} ms:\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`));
        }, timeout);
        child.on("error", reject);
        child.on("close", (code) => {
            clearTimeout(timer);
            resolve({ code, stdout, stderr });
        });
    });
}

describe("the agents' own edits reviewed in VS Code through their pre-write hooks (code-server, real Codex, Claude Code and Copilot CLI)", { concurrency: false }, () => {
    let editor;
    let page;
    let workspace;
    let home;
    let binDir;
    let codexHome;
    let codex;
    let claude;
    let copilot;
    let reader;
    const models = [];
    const steps = scenarioSteps(() => page, output, () => editor?.userData);
    const step = (name, body) => steps.step(name, body);
    const file = (name) => path.join(workspace, name);
    const uriOf = (name) => pathToFileURL(file(name)).href;
    const onDisk = (name) => readFileSync(file(name), "utf8");

    before(async () => {
        rmSync(output, { recursive: true, force: true });
        mkdirSync(output, { recursive: true });
        // Before the browser runs: these calls block.
        codex = installAgent("codex");
        claude = installAgent("claude-code");
        copilot = installAgent("copilot");
        // The agents' HOME, with `verbatim` on their PATH: the command setup writes into their hooks.
        home = mkdtempSync(path.join(tmpdir(), "verbatim-hooks-home-"));
        binDir = path.join(home, "bin");
        mkdirSync(binDir);
        symlinkSync(requiredEnv("VERBATIM_BIN"), path.join(binDir, "verbatim"));
        codexHome = path.join(home, "codex-home");
        mkdirSync(codexHome);
        editor = await launchEditor({
            setup: (folder) => {
                for (const name of ["b.txt", "c.txt", "d.txt", "e.txt", "f.txt"]) writeFileSync(path.join(folder, name), EIGHT);
                for (const lines of SIZES) writeFileSync(path.join(folder, bigName(lines)), numberedFile(lines));
            },
            settings: {
                "verbatim.logLevel": "debug",
                "verbatim.reviewMode": "confirm",
                "workbench.editor.enablePreview": false,
            },
            output,
        });
        ({ page, workspace } = editor);
    });

    after(async () => {
        if (page) await page.screenshot({ path: path.join(output, "last.png") }).catch(() => undefined);
        for (const model of models) model.stop();
        await reader?.close().catch(() => undefined);
        await editor?.close();
        if (home) rmSync(home, { recursive: true, force: true });
        console.log(`# end-to-end artifacts in ${output} (last step: ${steps.last})`);
    });

    /** What the agents run with: their own HOME, `verbatim` on PATH, and the runtime directory the editor's server announces itself in. */
    const agentEnv = (extra = {}) => ({
        HOME: home,
        PATH: `${binDir}:/usr/local/bin:/usr/bin:/bin`,
        LANG: "C.UTF-8",
        TMPDIR: tmpdir(),
        VERBATIM_RUNTIME_DIR: editor.runtimeDir,
        ...extra,
    });

    async function startModel(server, script, name) {
        const model = await ScriptedModel.start({ server, script, dir: output, name });
        models.push(model);
        return model;
    }

    /** `verbatim setup ARGS` in the workspace, as the person runs it. */
    function setup(args, env) {
        execFileSync(path.join(binDir, "verbatim"), ["setup", ...args], { cwd: workspace, env, stdio: ["ignore", "pipe", "pipe"], timeout: 30_000 });
    }

    /** Sets Codex up with `verbatim setup codex --user --write` (its hook and the hook's trust) against `model`, and starts `codex exec`. */
    function codexExec(model, prompt) {
        writeFileSync(path.join(codexHome, "config.toml"), codexConfig(model.port));
        const env = agentEnv({ CODEX_HOME: codexHome, SCRIPTED_KEY: "any" });
        setup(["codex", "--user", "--write"], env);
        return runAgent(codex, ["exec", "--skip-git-repo-check", prompt], { cwd: workspace, env });
    }

    /**
     * Sets Copilot CLI up with `verbatim setup copilot --write` (its hook in $COPILOT_HOME/settings.json) and
     * starts `copilot -p` against `model` (a Chat Completions provider of its own, no GitHub login).
     */
    function copilotPrompt(model, prompt) {
        const env = agentEnv({
            COPILOT_HOME: path.join(home, ".copilot"),
            COPILOT_PROVIDER_BASE_URL: `http://127.0.0.1:${model.port}/v1`,
            COPILOT_PROVIDER_API_KEY: "any",
            COPILOT_MODEL: "claude-sonnet-4.5",
            COPILOT_OFFLINE: "true",
            COPILOT_AUTO_UPDATE: "false",
            XDG_CACHE_HOME: COPILOT_CACHE,
        });
        setup(["copilot", "--write"], env);
        return runAgent(copilot, ["-p", prompt, "--allow-all-tools", "--trust-folder"], { cwd: workspace, env, timeout: 300_000 });
    }

    const read = (name) => reader.request("verbatim/read", { uri: uriOf(name) });
    const status = () => reader.request("verbatim/status", null);
    const waitForText = (name, text) =>
        waitFor(`the document ${name} to hold ${JSON.stringify(text)}`, async () => ((await read(name)).text === text ? true : undefined));
    const waitForDisk = (name, text) => waitFor(`${name} on disk to hold ${JSON.stringify(text)}`, () => existsSync(file(name)) && onDisk(name) === text);
    const tabOf = (name) => `.tabs-container .tab[data-resource-name="${name}"]:not([aria-label*="↔"])`;
    const dirtyTab = (name) => page.locator(tabOf(name).replace(".tab[", ".tab.dirty["));
    const diff = () => page.locator(".monaco-diff-editor").first();
    const lenses = (text) => page.locator(REVIEW_SELECTORS.diffLens).filter({ hasText: new RegExp(`^\\W*${text}\\s*$`) });
    const reviewTab = (agent) => page.locator(".tabs-container .tab", { hasText: `${agent}:` });
    const reasonBox = () => page.locator(".quick-input-widget .quick-input-box input");
    const extensionLog = () => editor.extensionLog();

    /** When the extension's log first has a line matching `pattern` at or after `since` (epoch ms), from VS Code's timestamp. */
    function loggedAt(pattern, since) {
        for (const line of extensionLog().split("\n")) {
            const match = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3}) /.exec(line);
            if (!match || !pattern.test(line)) continue;
            const at = new Date(`${match[1]}T${match[2]}`).getTime();
            if (at >= since) return at;
        }
        return undefined;
    }

    /** Opens `name` from the Explorer and waits for its text, and for the server to hold the editor's copy. */
    const open = (name, visibleText) => editor.openFromExplorer(name, visibleText, { read: () => read(name) });

    /** Rejects the review's first undecided hunk (or all of them), giving `reason` in the box VS Code asks it in. */
    async function reject(lens, reason) {
        await lenses(lens).first().click();
        await reasonBox().waitFor({ state: "visible" });
        await reasonBox().fill(reason);
        await page.keyboard.press("Enter");
        await reasonBox().waitFor({ state: "hidden" });
    }

    /**
     * The server recorded the agent's write of `name` as the disk under the document (the extension logs the
     * `synced` it is told): from then on a second review could only come from a change it did not expect.
     */
    async function writeRecorded(name, since) {
        await waitFor(`the server to report ${name} synced with the agent's write`, () => loggedAt(new RegExp(`\\[disk\\] synced: .*${name.replace(".", "\\.")}`), since), {
            timeout: 15_000,
        });
    }

    /**
     * The extension re-read the dirty document `name` after the agent's write and put the person's text back
     * (disk_changes.ts): between the two, the buffer briefly holds the file's text.
     */
    async function rereadDone(name, since) {
        const pattern = new RegExp(`\\[disk\\] \\S*/${name.replace(".", "\\.")}: re-read from disk and the buffer's text put back`);
        await waitFor(`the extension to re-read ${name} and put the buffer's text back`, () => loggedAt(pattern, since), { timeout: 15_000 });
    }

    /** Opens `name` (EIGHT on disk) and types UNSAVED_LINE after its fourth line, unsaved. */
    async function typeUnsavedLine(name) {
        await open(name, "eighth");
        await page.locator(".monaco-editor:not(.monaco-diff-editor *) .view-line", { hasText: "fourth" }).first().click();
        await page.keyboard.press("End");
        await page.keyboard.press("Enter");
        await page.keyboard.type(UNSAVED_LINE);
        await waitForText(name, EIGHT_UNSAVED);
        await dirtyTab(name).waitFor({ state: "visible" });
    }

    /** No review is waiting or shown, in the server's view and on the page. */
    async function noReview(agent) {
        assert.equal((await status()).pending.length, 0, "no edit waits for review");
        assert.equal(await reviewTab(agent).count(), 0, "no review tab");
    }

    step("the person opens b.txt and types a line in the middle, unsaved", async () => {
        reader = await editor.connectAgent("e2e-reader");
        await typeUnsavedLine("b.txt");
    });

    step("codex exec: its apply_patch of two hunks waits for review, the disk unchanged; one hunk kept, one rejected with a reason", async () => {
        const model = await startModel(MODEL_PROTOCOLS, [{ custom_tool_call: { name: "apply_patch", input: twoHunks("b.txt") } }, { text: "Done." }], "codex-partial");
        const since = Date.now();
        const run = codexExec(model, "Shout the ends of b.txt");
        await reviewTab("Codex").first().waitFor({ state: "visible", timeout: 60_000 });
        await diff().locator(".editor.modified .view-lines", { hasText: "EIGHTH" }).first().waitFor({ state: "visible" });
        await lenses("Accept All").first().waitFor({ state: "visible" });
        assert.equal(await lenses("Accept").count(), 2, "one Accept per hunk");
        assert.equal(onDisk("b.txt"), EIGHT, "the disk is unchanged while the review waits");
        assert.equal((await status()).pending.length, 1, "one review");
        await page.screenshot({ path: path.join(output, "codex-review.png") });

        await lenses("Accept").first().click();
        await lenses("Accepted · Undo").first().waitFor({ state: "visible" });
        await reject("Reject", "eighth stays lower case");
        const done = await run;
        assert.equal(done.code, 0, `codex exec exited ${done.code}:\n${done.stdout.slice(-2000)}\n${done.stderr.slice(-3000)}`);
        assert.match(done.stderr, /hook: PreToolUse Completed/, "Codex ran the hook, and it allowed the kept hunk");

        const kept = EIGHT.replace("first", "FIRST");
        assert.equal(onDisk("b.txt"), kept, "the disk holds exactly the disk text plus the kept hunk");
        await waitForText("b.txt", EIGHT_UNSAVED.replace("first", "FIRST"));
        await diff().waitFor({ state: "detached" });
        await writeRecorded("b.txt", since);
        await rereadDone("b.txt", since);
        await noReview("Codex");
        // The document: the kept hunk and the unsaved line (the put-back's didChange may still be on its way).
        await waitForText("b.txt", EIGHT_UNSAVED.replace("first", "FIRST"));
        await dirtyTab("b.txt").waitFor({ state: "visible" });

        const requests = model.requests("responses");
        assert.equal(requests.length, 2, "Codex asked the model again after the patch");
        const told = JSON.stringify(requests.at(-1).body);
        assert.match(told, /Their reason: eighth stays lower case/, "the model's next request carries the person's reason");
        assert.match(told, /\+EIGHTH/, "and the hunk left out");
        assert.deepEqual(model.mismatches(), []);
    });

    step("codex exec: its apply_patch rejected whole with a reason: nothing written, the model reads the reason", async () => {
        await open("c.txt", "eighth");
        const reason = "not this file, use e.txt";
        const model = await startModel(
            MODEL_PROTOCOLS,
            [
                { custom_tool_call: { name: "apply_patch", input: twoHunks("c.txt") } },
                { expect: [`The person rejected this change in the editor: ${reason}`], text: "Understood." },
            ],
            "codex-rejected",
        );
        const run = codexExec(model, "Shout the ends of c.txt");
        await reviewTab("Codex").first().waitFor({ state: "visible", timeout: 60_000 });
        await lenses("Reject All").first().waitFor({ state: "visible" });
        await reject("Reject All", reason);
        const done = await run;
        assert.equal(done.code, 0, `codex exec exited ${done.code}:\n${done.stdout.slice(-2000)}\n${done.stderr.slice(-3000)}`);
        assert.match(done.stderr, /hook: PreToolUse Blocked/, "the hook denied the patch");
        await diff().waitFor({ state: "detached" });
        assert.equal(onDisk("c.txt"), EIGHT, "nothing written");
        assert.equal((await read("c.txt")).text, EIGHT, "the document unchanged");
        assert.equal(await dirtyTab("c.txt").count(), 0, "and not dirty");
        await noReview("Codex");
        assert.match(JSON.stringify(model.requests("responses").at(-1).body), /Command blocked by PreToolUse hook: The person rejected this change in the editor: not this file/);
        assert.deepEqual(model.mismatches(), []);
    });

    step("claude -p --permission-mode acceptEdits: its Edit reviewed, one hunk left out with a reason, which the model reads", async () => {
        await open("d.txt", "eighth");
        setup(["claude-code", "--write"], agentEnv());
        const reason = "keep first as it is";
        const model = await startModel(
            MODEL_SERVER,
            [
                { tool_use: { name: "Read", input: { file_path: file("d.txt") } } },
                { tool_use: { name: "Edit", input: { file_path: file("d.txt"), old_string: EIGHT, new_string: EIGHT.replace("first", "FIRST").replace("eighth", "EIGHTH") } } },
                { text: "Done." },
            ],
            "claude",
        );
        const since = Date.now();
        const run = runAgent(claude, ["-p", "Shout the ends of d.txt", "--output-format", "json", "--permission-mode", "acceptEdits"], {
            cwd: workspace,
            env: agentEnv({
                ANTHROPIC_BASE_URL: `http://127.0.0.1:${model.port}`,
                ANTHROPIC_API_KEY: "sk-e2e-any",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
                DISABLE_AUTOUPDATER: "1",
                ENABLE_TOOL_SEARCH: "false",
            }),
        });
        await reviewTab("Claude Code").first().waitFor({ state: "visible", timeout: 60_000 });
        await lenses("Accept All").first().waitFor({ state: "visible" });
        assert.equal(await lenses("Accept").count(), 2, "one Accept per hunk");
        assert.equal(onDisk("d.txt"), EIGHT, "nothing written while the review waits");
        await reject("Reject", reason);
        await lenses("Rejected \\(left out\\) · Undo").first().waitFor({ state: "visible" });
        await lenses("Accept").first().click();
        const done = await run;
        assert.equal(done.code, 0, `claude -p exited ${done.code}:\n${done.stdout.slice(-2000)}\n${done.stderr.slice(-2000)}`);

        const kept = EIGHT.replace("eighth", "EIGHTH");
        assert.equal(onDisk("d.txt"), kept, "the disk holds the kept hunk only");
        await waitForText("d.txt", kept);
        await diff().waitFor({ state: "detached" });
        await writeRecorded("d.txt", since);
        await noReview("Claude Code");
        const told = JSON.stringify(model.requests("main").at(-1).body);
        assert.match(told, /PreToolUse:Edit hook additional context/, "Claude Code handed the model the hook's context");
        assert.match(told, /Their reason: keep first as it is/, "the model's next request carries the person's reason");
        assert.deepEqual(model.mismatches(), []);
    });

    step("copilot -p: its edit of a file open with an unsaved line waits for review, the disk unchanged; one hunk kept, one left out with a reason", async () => {
        await typeUnsavedLine("e.txt");
        const reason = "eighth stays lower case";
        const model = await startModel(
            MODEL_PROTOCOLS,
            [{ tool_call: { name: "edit", input: { path: file("e.txt"), old_str: EIGHT, new_str: BOTH_ENDS } } }, { text: "Done." }],
            "copilot-partial",
        );
        const since = Date.now();
        const run = copilotPrompt(model, "Shout the ends of e.txt");
        // Copilot's first start unpacks it into its cache, which takes a while once.
        await reviewTab("GitHub Copilot CLI").first().waitFor({ state: "visible", timeout: 180_000 });
        await diff().locator(".editor.modified .view-lines", { hasText: "EIGHTH" }).first().waitFor({ state: "visible" });
        await lenses("Accept All").first().waitFor({ state: "visible" });
        assert.equal(await lenses("Accept").count(), 2, "one Accept per hunk");
        assert.equal(onDisk("e.txt"), EIGHT, "the disk is unchanged while the review waits");
        assert.equal((await status()).pending.length, 1, "one review");
        await page.screenshot({ path: path.join(output, "copilot-review.png") });

        await lenses("Accept").first().click();
        await lenses("Accepted · Undo").first().waitFor({ state: "visible" });
        await reject("Reject", reason);
        const done = await run;
        assert.equal(done.code, 0, `copilot -p exited ${done.code}:\n${done.stdout.slice(-2000)}\n${done.stderr.slice(-3000)}`);

        const kept = EIGHT.replace("first", "FIRST");
        assert.equal(onDisk("e.txt"), kept, "the disk holds exactly the disk text plus the kept hunk");
        await diff().waitFor({ state: "detached" });
        await writeRecorded("e.txt", since);
        await noReview("GitHub Copilot CLI");
        // The document: the kept hunk and the unsaved line, still dirty.
        await waitForText("e.txt", EIGHT_UNSAVED.replace("first", "FIRST"));
        await dirtyTab("e.txt").waitFor({ state: "visible" });

        const requests = model.requests("chat");
        assert.equal(requests.length, 2, "Copilot asked the model again after its edit");
        const told = JSON.stringify(requests.at(-1).body);
        assert.match(told, /Their reason: eighth stays lower case/, "the model's next request carries the person's reason");
        assert.match(told, /\+EIGHTH/, "and the hunk left out");
        assert.deepEqual(model.mismatches(), []);
    });

    step("copilot -p: its edit rejected whole with a reason: nothing written, the model reads the reason", async () => {
        await open("f.txt", "eighth");
        const reason = "not this file, use g.txt";
        const model = await startModel(
            MODEL_PROTOCOLS,
            [{ tool_call: { name: "edit", input: { path: file("f.txt"), old_str: EIGHT, new_str: BOTH_ENDS } } }, { text: "Understood." }],
            "copilot-rejected",
        );
        const run = copilotPrompt(model, "Shout the ends of f.txt");
        await reviewTab("GitHub Copilot CLI").first().waitFor({ state: "visible", timeout: 60_000 });
        await lenses("Reject All").first().waitFor({ state: "visible" });
        assert.equal(onDisk("f.txt"), EIGHT, "the disk is unchanged while the review waits");
        await reject("Reject All", reason);
        const done = await run;
        assert.equal(done.code, 0, `copilot -p exited ${done.code}:\n${done.stdout.slice(-2000)}\n${done.stderr.slice(-3000)}`);
        await diff().waitFor({ state: "detached" });
        assert.equal(onDisk("f.txt"), EIGHT, "nothing written");
        assert.equal((await read("f.txt")).text, EIGHT, "the document unchanged");
        assert.equal(await dirtyTab("f.txt").count(), 0, "and not dirty");
        await noReview("GitHub Copilot CLI");
        const requests = model.requests("chat");
        assert.equal(requests.length, 2, "Copilot asked the model again after the denied edit");
        assert.match(JSON.stringify(requests.at(-1).body), /Denied by preToolUse hook: The person rejected this change in the editor: not this file, use g\.txt/);
        assert.deepEqual(model.mismatches(), []);
    });

    for (const lines of SIZES) {
        step(`timings on a ${lines.toLocaleString("en")}-line file: hook started → review on screen, accept key → the hook's answer written`, async () => {
            const name = bigName(lines);
            await open(name, numberedLine(1));
            // Up to 5,000 lines (verbatim.review.diffMaxLines) in a diff; above, in the file's own editor.
            const inEditor = lines > 5_000;
            const shown = [];
            const answered = [];
            const parts = { server: [], opened: [], key: [], applied: [], decided: [] };
            let text = numberedFile(lines);
            for (let run = 0; run < TIMED_RUNS; run++) {
                const target = bigTarget(lines, run);
                const patch = `*** Begin Patch\n*** Update File: ${name}\n@@\n-${target}\n+${target} (edited)\n*** End Patch\n`;
                await waitFor("no review on screen", async () => (await page.locator(REVIEW_SELECTORS.titleAcceptAll).count()) === 0);
                // The title bar's Accept All comes with the review itself, in a diff or in the file's own editor.
                const titleShown = await watchShown(page, "title", REVIEW_SELECTORS.titleAcceptAll);
                // `verbatim hook codex` as Codex starts it, on what Codex would send for this patch.
                const started = now();
                const hook = spawn(path.join(binDir, "verbatim"), ["hook", "codex"], { cwd: workspace, env: agentEnv(), stdio: ["pipe", "pipe", "pipe"] });
                let answer = "";
                let answeredAt;
                hook.stdout.on("data", (chunk) => {
                    answeredAt ??= now();
                    answer += chunk;
                });
                const exited = new Promise((resolve) => hook.on("close", resolve));
                hook.stdin.end(
                    JSON.stringify({
                        session_id: "timings",
                        turn_id: `run-${run}`,
                        tool_use_id: `call-${run}`,
                        cwd: workspace,
                        hook_event_name: "PreToolUse",
                        permission_mode: "bypassPermissions",
                        tool_name: "apply_patch",
                        tool_input: { command: patch },
                    }),
                );
                const onScreen = await withTimeout(titleShown.at(), "the title bar's Accept All", 60_000);
                if (inEditor) await page.locator(REVIEW_SELECTORS.fileLens, { hasText: "Accept All" }).first().waitFor({ state: "visible" });
                else await lenses("Accept All").first().waitFor({ state: "visible" });
                // The person's accept: Ctrl+Alt+Shift+Y, Accept All's key.
                const pressed = await pressTimed(page, "Control+Alt+Shift+Y");
                const code = await withTimeout(exited, "the hook to answer", 30_000);
                assert.equal(code, 0);
                assert.match(answer, /"permissionDecision":"allow"/, `the hook allowed the patch: ${answer}`);
                shown.push(onScreen - started);
                answered.push(answeredAt - pressed);
                // Where the time goes, from the extension's log (whole milliseconds): the server sent the review,
                // the review opened; the key reached the extension, VS Code applied the kept hunk, the server
                // had the outcome for the hook.
                // The review's label, whatever words come before the patch's (the agent's name).
                const label = `[^"]*apply_patch ${name}`;
                const logged = (what, pattern, since) => waitFor(`the log line of ${what}`, () => loggedAt(pattern, Math.floor(since)), { timeout: 10_000 });
                parts.server.push((await logged("the review sent", new RegExp(`sending workspace/applyEdit: ${label} `), started)) - started);
                parts.opened.push((await logged("the review shown", new RegExp(`\\[review\\] "${label}": shown`), started)) - started);
                parts.key.push((await logged("the accept", new RegExp(`\\[review\\] "${label}": every undecided hunk accepted`), pressed)) - pressed);
                parts.applied.push((await logged("the apply", new RegExp(`\\[review\\] "${label}": applied the accepted hunks`), pressed)) - pressed);
                parts.decided.push((await logged("the outcome", /the proposal was decided agent=Codex/, pressed)) - pressed);
                // Codex writes what it was allowed to; the document, which holds it already, is then clean.
                const since = Date.now();
                text = text.replace(`${target}\n`, `${target} (edited)\n`);
                writeAsCodex(file(name), text);
                await writeRecorded(name, since);
                await waitFor(`${name} to be clean`, async () => (await dirtyTab(name).count()) === 0, { timeout: 10_000 });
                assert.equal((await read(name)).text, text);
            }
            const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
            const ms = (values) => `median ${median(values).toFixed(1)} ms (${values.map((value) => value.toFixed(1)).join(", ")})`;
            const range = (values) => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)} ms`;
            console.log(
                `# ${lines} lines (${inEditor ? "in its own editor" : "in a diff"}), ${TIMED_RUNS} runs: hook started → review on screen (the title bar's Accept All) ${ms(shown)}, ` +
                    `of which the server sent it after ${range(parts.server)}, the review opened after ${range(parts.opened)}; ` +
                    `accept key → the hook's answer written ${ms(answered)}, of which the key reached the extension after ${range(parts.key)}, ` +
                    `VS Code had applied the kept hunk after ${range(parts.applied)}, the server had the outcome after ${range(parts.decided)}`,
            );
        });
    }

    step("done", async () => {
        await noReview("Codex");
        steps.last = "done";
    });
});
