// End-to-end test of Verbatim as the IDE that the real Claude Code connects
// to: code-server in Chromium with the extension and the real `verbatim lsp`,
// and the real interactive Claude Code (tests/agents/: under tmux, in its
// default permission mode, against a scripted model). Claude Code's Edit and
// Write call `openDiff` on the server's endpoint; the person reviews the
// change inline, as every agent edit; Claude Code writes what they kept.
// Also: Send to Claude Code, the IDE tools Claude Code's flows do not call
// (the selection, saveDocument) through a client of the endpoint, the timings
// at 1,000 and 10,000 lines, and a `claude` typed into VS Code's own terminal,
// which connects with no flag. Then, in a second editor with a stand-in for
// Anthropic's extension, which IDE a new terminal's `claude` picks.
//
// Needs: CODE_SERVER_BIN, VERBATIM_BIN, VERBATIM_TEST_OUTPUT (test/run.sh sets
// them); Claude Code and tmux (tests/agents/install.sh, which run.sh runs).

import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe } from "node:test";
import { pathToFileURL } from "node:url";

import { ClaudeSession, installClaudeCode, ModelServer, modelEnvironment, seedHome, toolResults, messageText } from "./claude_cli.mjs";
import { IdeClient } from "./ide_client.mjs";
import { extensionDir, launchEditor, numberedFile, numberedLine, requiredEnv, REVIEW_SELECTORS, scenarioSteps, waitFor, withTimeout } from "./harness.mjs";
import { pressTimed, watchShown } from "./page_clock.mjs";

const output = path.join(requiredEnv("VERBATIM_TEST_OUTPUT"), "claude-code");

const APP = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", ""].join("\n");
const CLEAN = ["one", "beta", "three", ""].join("\n");
const TYPED = "typed by the person, unsaved\n";
const NEW_FILE = "created by Claude Code\nsecond line\n";
const SIZES = [1_000, 10_000];
const bigName = (lines) => `big${lines}.txt`;
/** The line of a big file Claude Code edits (near its end, where a diff is slowest to find). */
const bigTarget = (lines) => numberedLine(lines - 5);

/**
 * Waits until the integrated terminal `terminal` (its `.xterm` element) is up and its
 * shell has drawn a prompt: keys typed before that can be lost.
 */
async function shellPrompt(terminal) {
    await terminal.waitFor({ state: "visible" });
    const rows = terminal.locator(".xterm-rows");
    await waitFor("the terminal's shell to draw its prompt", async () => ((await rows.textContent()) ?? "").trim() !== "", { timeout: 30_000 });
}

describe("Claude Code connected to Verbatim (code-server, real Claude Code)", { concurrency: false }, () => {
    let editor;
    let page;
    let workspace;
    let home;
    let claude;
    let terminalModel;
    let reader;
    let port;
    let lock;
    const steps = scenarioSteps(() => page, output, () => editor?.userData);
    const step = (name, body) => steps.step(name, body);
    const file = (name) => path.join(workspace, name);
    const uriOf = (name) => pathToFileURL(file(name)).href;
    const onDisk = (name) => readFileSync(file(name), "utf8");

    // One conversation, prompt by prompt: what the scripted model answers to each request of Claude Code's main loop.
    const script = () => [
        // "Upper-case alpha and epsilon in app.txt."
        { tool_use: { name: "Read", input: { file_path: file("app.txt") } } },
        {
            tool_use: {
                name: "Edit",
                input: { file_path: file("app.txt"), old_string: "alpha\nbeta\ngamma\ndelta\nepsilon", new_string: "ALPHA\nbeta\ngamma\ndelta\nEPSILON" },
            },
        },
        { expect: "modified", text: "Done: the person kept part of it." },
        // "Upper-case beta in clean.txt."
        { tool_use: { name: "Read", input: { file_path: file("clean.txt") } } },
        { tool_use: { name: "Edit", input: { file_path: file("clean.txt"), old_string: "beta", new_string: "BETA" } } },
        { expect: "has been updated", text: "Done with clean.txt." },
        // "Upper-case gamma in app.txt." (rejected: Claude Code stops the turn, no request follows)
        { tool_use: { name: "Edit", input: { file_path: file("app.txt"), old_string: "gamma", new_string: "GAMMA" } } },
        // "Create new.txt."
        { tool_use: { name: "Write", input: { file_path: file("new.txt"), content: NEW_FILE } } },
        { expect: "created", text: "Created new.txt." },
        // One edit near the end of each big file, for the timings.
        ...SIZES.flatMap((lines) => [
            { tool_use: { name: "Read", input: { file_path: file(bigName(lines)), offset: lines - 10, limit: 10 } } },
            { tool_use: { name: "Edit", input: { file_path: file(bigName(lines)), old_string: bigTarget(lines), new_string: `${bigTarget(lines)} (edited)` } } },
            { text: `Edited ${bigName(lines)}.` },
        ]),
    ];

    before(async () => {
        rmSync(output, { recursive: true, force: true });
        mkdirSync(output, { recursive: true });
        const claudeBinary = installClaudeCode();
        // Claude Code's HOME, and code-server's: the server writes its lock file under HOME/.claude/ide/,
        // and VS Code's terminals inherit it.
        home = mkdtempSync(path.join(tmpdir(), "verbatim-claude-home-"));
        // `claude` on the PATH of VS Code's terminals as a person has it: in ~/.local/bin, which their
        // ~/.profile puts on PATH (VS Code takes the terminals' environment from a login shell).
        mkdirSync(path.join(home, ".local", "bin"), { recursive: true });
        symlinkSync(claudeBinary, path.join(home, ".local", "bin", "claude"));
        const onPath = 'case ":$PATH:" in *":$HOME/.local/bin:"*) ;; *) PATH="$HOME/.local/bin:$PATH" ;; esac\n';
        writeFileSync(path.join(home, ".profile"), onPath);
        writeFileSync(path.join(home, ".bashrc"), onPath);
        terminalModel = await ModelServer.start({ script: [{ text: "Hello from the terminal." }], dir: output });
        const inherited = { ...process.env };
        delete inherited.CLAUDE_CODE_SSE_PORT;
        delete inherited.ENABLE_IDE_INTEGRATION;
        delete inherited.CLAUDE_CONFIG_DIR;
        editor = await launchEditor({
            setup: (folder) => {
                writeFileSync(path.join(folder, "app.txt"), APP);
                writeFileSync(path.join(folder, "clean.txt"), CLEAN);
                for (const lines of SIZES) writeFileSync(path.join(folder, bigName(lines)), numberedFile(lines));
                seedHome(home, [folder]);
            },
            settings: {
                "verbatim.logLevel": "debug",
                "terminal.integrated.enablePersistentSessions": false,
                // The terminal drawn in the page's DOM, not on a canvas, so that the test reads what it shows.
                "terminal.integrated.gpuAcceleration": "off",
                // Every file opened from the Explorer keeps its tab.
                "workbench.editor.enablePreview": false,
            },
            env: {
                ...inherited,
                HOME: home,
                ...modelEnvironment(terminalModel.port),
            },
            // The server's debug lines (the openDiff call's arrival, for the timings) reach the extension's log.
            logLevel: "debug",
            output,
        });
        ({ page, workspace } = editor);
    });

    after(async () => {
        if (page) await page.screenshot({ path: path.join(output, "last.png") }).catch(() => undefined);
        if (claude) writeFileSync(path.join(output, "claude-screen.txt"), await claude.capture().catch(() => ""));
        await claude?.stop({ keep: steps.last !== "done" });
        terminalModel?.stop();
        await reader?.close().catch(() => undefined);
        await editor?.close();
        if (home) rmSync(home, { recursive: true, force: true });
        console.log(`# end-to-end artifacts in ${output} (last step: ${steps.last})`);
    });

    const statusBar = () => editor.statusBar();
    const read = (name) => reader.request("verbatim/read", { uri: uriOf(name) });
    const waitForText = (name, text) =>
        waitFor(`the buffer of ${name} to hold ${JSON.stringify(text)}`, async () => ((await read(name)).text === text ? true : undefined));
    const waitForDisk = (name, text) => waitFor(`${name} on disk to hold ${JSON.stringify(text)}`, () => existsSync(file(name)) && onDisk(name) === text);
    const dirtyTab = (name) => page.locator(`.tabs-container .tab.dirty[data-resource-name="${name}"]:not([aria-label*="↔"])`);
    const diff = () => page.locator(".monaco-diff-editor").first();
    const lenses = (text) => page.locator(REVIEW_SELECTORS.diffLens).filter({ hasText: new RegExp(`^\\W*${text}\\s*$`) });
    const reviewTab = () => page.locator(".tabs-container .tab", { hasText: "Claude Code:" }).first();
    /** "The content of the file is newer": VS Code's save conflict, as a notification or a dialog. */
    const saveConflict = () => page.locator(".notification-toast, .monaco-dialog-box", { hasText: "newer" });

    const extensionLog = () => editor.extensionLog();

    /** When the extension's log first has a line matching `pattern` after `since` (epoch ms), from VS Code's timestamp. */
    function loggedAt(pattern, since) {
        for (const line of extensionLog().split("\n")) {
            const match = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3}) /.exec(line);
            if (!match || !pattern.test(line)) continue;
            const at = new Date(`${match[1]}T${match[2]}`).getTime();
            if (at >= since) return at;
        }
        return undefined;
    }

    /** How many lines of the extension's log match `pattern` so far. */
    const loggedCount = (pattern) => extensionLog().split("\n").filter((line) => pattern.test(line)).length;

    /** Waits until the extension's log has more lines matching `pattern` than `count`. */
    const loggedMore = (what, pattern, count) => waitFor(what, () => loggedCount(pattern) > count);

    /** Types `text` at the end of the file shown in the editor that holds `visibleText`. */
    async function typeAtEnd(visibleText, text) {
        await page.locator(".monaco-editor:not(.monaco-diff-editor *) .view-lines", { hasText: visibleText }).first().click();
        await page.keyboard.press("Control+End");
        await page.keyboard.type(text);
    }

    /** Saves the document in front with Ctrl+S and checks VS Code saved it, with no conflict. */
    async function saveWithoutConflict(name) {
        await page.keyboard.press("Control+s");
        await dirtyTab(name).waitFor({ state: "detached", timeout: 10_000 });
        assert.equal(await saveConflict().count(), 0, "no save conflict");
        assert.equal(onDisk(name), (await read(name)).text, "the disk holds the buffer");
    }

    /** Claude Code, once it has shown `regex`, or its screen in the failure. */
    const claudeShows = (regex, timeout) => claude.waitFor(regex, timeout);

    step("the server serves Claude Code's endpoint: a lock file, the port in the status tooltip and in new terminals' variables", async () => {
        reader = await editor.connectAgent("e2e-reader");
        port = Number(await waitFor("the extension to log the endpoint", () => /new terminals get CLAUDE_CODE_SSE_PORT=(\d+)/.exec(extensionLog())?.[1]));
        lock = JSON.parse(readFileSync(path.join(home, ".claude", "ide", `${port}.lock`), "utf8"));
        assert.deepEqual(lock.workspaceFolders, [workspace]);
        assert.equal(lock.transport, "ws");
        assert.equal(typeof lock.authToken, "string");
        // The status bar item's hover (VS Code draws it after a delay, in an element of its own).
        await page.locator('[id="verbatim.verbatim.verbatim.status"]').hover();
        await page.getByText(`ws://127.0.0.1:${port}`).first().waitFor({ state: "visible", timeout: 15_000 });
        await editor.pointerAway();
    });

    step("the person opens app.txt and clean.txt, and types a line at the end of app.txt (unsaved)", async () => {
        await editor.openFromExplorer("clean.txt", "three", { read: () => read("clean.txt") });
        await editor.openFromExplorer("app.txt", "epsilon", { read: () => read("app.txt") });
        await typeAtEnd("epsilon", TYPED);
        await waitForText("app.txt", APP + TYPED);
        await dirtyTab("app.txt").waitFor({ state: "visible" });
    });

    /** Brings the open document `name` to the front by its tab. */
    async function showTab(name, visibleText) {
        await editor.showTab(name);
        await page.locator(".monaco-editor:not(.monaco-diff-editor *) .view-lines", { hasText: visibleText }).first().waitFor({ state: "visible" });
    }

    /** Clicks into the file editor that shows `text`, on it. */
    async function clickOn(text) {
        await page.locator(".monaco-editor:not(.monaco-diff-editor *) .view-line", { hasText: text }).first().click();
    }

    /** The extension's log line of a selection it sent the server, in `name`. */
    const selectionSent = (name) => new RegExp(`\\[claude code\\] selection \\S*/${name.replace(".", "\\.")} `);

    /**
     * The person selects `word` (a double click) in the file editor of `name`, and Claude
     * Code shows the selection in its prompt box (`screenShows`). Claude Code drops
     * notifications for a moment after it connects: the person clicks elsewhere
     * (`elsewhere`: the extension reports only a changed selection) and selects again
     * until it shows.
     */
    async function selectForClaude(name, word, elsewhere, screenShows) {
        await waitFor(
            `Claude Code to show the selection of "${word}"`,
            async () => {
                let sent = loggedCount(selectionSent(name));
                await clickOn(elsewhere);
                await loggedMore(`the extension to send the click on "${elsewhere}"`, selectionSent(name), sent);
                sent = loggedCount(selectionSent(name));
                await page.locator(".monaco-editor:not(.monaco-diff-editor *) .view-line", { hasText: word }).first().dblclick();
                await loggedMore(`the extension to send the selection of "${word}"`, selectionSent(name), sent);
                return screenShows(5_000).then(
                    () => true,
                    () => false,
                );
            },
            { timeout: 45_000, interval: 100 },
        );
    }

    step("Claude Code under tmux connects; the first prompt carries the file the person is in", async () => {
        claude = await ClaudeSession.start({
            name: `verbatim-e2e-${process.pid}`,
            cwd: workspace,
            home,
            script: script(),
            scriptFile: path.join(output, "claude-script.json"),
            env: { CLAUDE_CODE_SSE_PORT: String(port), ENABLE_IDE_INTEGRATION: "true" },
        });
        const status = await waitFor("Claude Code among the connected agents", async () => {
            const current = await reader.request("verbatim/status", null);
            return current.agents.some((agent) => agent.name === "Claude Code") ? current : undefined;
        });
        assert.equal(status.pending.length, 0);
        await claude.waitIde(lock.ideName);
        // The person selects a word in app.txt once Claude Code listens.
        await selectForClaude("app.txt", "gamma", "beta", (ms) => claude.waitFor("⧉ 1 line selected", ms / 1000));
    });

    let reviewShown;
    step("a. the model's Edit of app.txt (unsaved changes elsewhere) shows as the inline review, with two hunks", async () => {
        await claude.send("Upper-case alpha and epsilon in app.txt.");
        const first = await claude.waitRequest(1);
        assert.match(messageText(first), /(selected the lines \d+ to \d+ from|opened the file) \S*app\.txt/, "Claude Code told the model which file the person is in");
        await reviewTab().waitFor({ state: "visible", timeout: 30_000 });
        reviewShown = Date.now();
        await diff().locator(".editor.modified .view-lines", { hasText: "EPSILON" }).first().waitFor({ state: "visible" });
        await lenses("Accept All").first().waitFor({ state: "visible" });
        assert.equal(await lenses("Accept").count(), 2, "one Accept per hunk");
        await claudeShows("Do you want to make this edit to app\\.txt\\?");
        assert.equal(onDisk("app.txt"), APP, "nothing written yet");
        await page.screenshot({ path: path.join(output, "claude-code-review.png") });
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
        const request = await claude.waitRequest(3);
        assert.match(toolResults(request), /modified/i, "Claude Code told the model the person changed its proposal");
        // The write is the one the server expected: it says the disk now holds the decision (`synced`), and the
        // extension re-reads the file and puts the person's line back; no second review.
        await waitFor("the extension to re-read app.txt after Claude Code's write", () => loggedCount(reread) > rereadBefore);
        assert.equal(await reviewTab().count(), 0, "no second review");
        assert.equal((await reader.request("verbatim/status", null)).pending.length, 0);
        assert.equal((await read("app.txt")).text, kept + TYPED);
        await dirtyTab("app.txt").waitFor({ state: "visible" });
        assert.equal(onDisk("app.txt"), kept);
        assert.deepEqual(await claude.mismatches(), []);
    });

    step("a. saving it afterwards writes the buffer, with no \"The content of the file is newer\"", async () => {
        await editor.showTab("app.txt");
        await page.locator(".monaco-editor:not(.monaco-diff-editor *) .view-lines", { hasText: "ALPHA" }).first().click();
        await saveWithoutConflict("app.txt");
        assert.equal(onDisk("app.txt"), APP.replace("alpha", "ALPHA") + TYPED);
    });

    step("Send to Claude Code: the selected lines go into Claude Code's prompt as @clean.txt#L1-2", async () => {
        await claude.waitForPrompt();
        await editor.showTab("clean.txt");
        await clickOn("one");
        await page.keyboard.press("Control+Home");
        await page.keyboard.press("Shift+ArrowDown");
        await page.keyboard.press("Shift+End");
        await editor.runCommand("Verbatim: Send to Claude Code");
        await claudeShows("@clean\\.txt#L1-2");
    });

    step("an Edit of a file with no unsaved changes, accepted: the disk holds the document's text and it is not dirty; a later save just works", async () => {
        // After the mention in the prompt box.
        await claude.send("Upper-case beta in clean.txt.");
        await reviewTab().waitFor({ state: "visible", timeout: 30_000 });
        await lenses("Accept All").first().click();
        const expected = CLEAN.replace("beta", "BETA");
        await waitForDisk("clean.txt", expected);
        await waitForText("clean.txt", expected);
        await page.locator(".tabs-container .tab", { hasText: "clean.txt" }).first().waitFor({ state: "visible" });
        await waitFor("clean.txt to be clean", async () => (await dirtyTab("clean.txt").count()) === 0, { timeout: 10_000 });
        assert.match(messageText(await claude.waitRequest(4)), /@clean\.txt#L1-2 Upper-case beta/, "the mention was in the prompt");
        assert.match(toolResults(await claude.waitRequest(6)), /has been updated/);
        assert.deepEqual(await claude.mismatches(), []);
        await editor.showTab("clean.txt");
        await typeAtEnd("three", "four\n");
        await dirtyTab("clean.txt").waitFor({ state: "visible" });
        await saveWithoutConflict("clean.txt");
        assert.equal(onDisk("clean.txt"), `${expected}four\n`);
    });

    step("b. a full reject: the file is untouched, and Claude Code stops and tells the model the person did not want it", async () => {
        await claude.waitForPrompt();
        const before = onDisk("app.txt");
        await claude.send("Upper-case gamma in app.txt.");
        await reviewTab().waitFor({ state: "visible", timeout: 30_000 });
        await lenses("Reject All").first().click();
        const input = page.locator(".quick-input-widget .quick-input-box input");
        await input.waitFor({ state: "visible" });
        await input.fill("not now");
        await page.keyboard.press("Enter");
        await diff().waitFor({ state: "detached" });
        await claude.waitForPrompt();
        assert.equal(onDisk("app.txt"), before, "nothing written");
        assert.equal((await read("app.txt")).text, before);
    });

    step("c. a Write of a new file is reviewed as a created file; accepted, the file holds its text", async () => {
        await claude.send("Create new.txt.");
        // The request this prompt starts carries the rejection of the previous turn's Edit.
        const request = await claude.waitRequest(8);
        assert.match(messageText(request), /doesn't want to proceed|rejected/i, "the model was told the person rejected the edit");
        await page.locator(".tabs-container .tab", { hasText: "creates new.txt" }).first().waitFor({ state: "visible", timeout: 30_000 });
        await diff().locator(".editor.modified .view-lines", { hasText: "created by Claude Code" }).first().waitFor({ state: "visible" });
        assert.equal(existsSync(file("new.txt")), false, "showing the new file does not create it");
        await lenses("Accept All").first().click();
        await waitForDisk("new.txt", NEW_FILE);
        assert.match(toolResults(await claude.waitRequest(9)), /created/);
        assert.deepEqual(await claude.mismatches(), []);
        await diff().waitFor({ state: "detached" });
        await waitFor("new.txt to be clean, if open", async () => (await dirtyTab("new.txt").count()) === 0, { timeout: 10_000 });
        assert.equal(await saveConflict().count(), 0);
    });

    for (const lines of SIZES) {
        step(`timings on a ${lines.toLocaleString("en")}-line file: openDiff received → review on screen, accept key → answer sent`, async () => {
            const name = bigName(lines);
            await claude.waitForPrompt();
            await editor.openFromExplorer(name, numberedLine(1), { read: () => read(name) });
            // Up to 5,000 lines (verbatim.review.diffMaxLines) in a diff; above, in the file's own editor.
            const inEditor = lines > 5_000;
            // The title bar's Accept All comes with the review itself; the lenses after VS Code's fetch delay.
            const titleShown = await watchShown(page, "title", REVIEW_SELECTORS.titleAcceptAll);
            const lensesShown = await watchShown(page, "lenses", inEditor ? REVIEW_SELECTORS.fileLens : REVIEW_SELECTORS.diffLens, "Accept All");
            const sent = Date.now();
            await claude.send(`Edit ${name}.`);
            const shown = await withTimeout(titleShown.at(), "the title bar's Accept All", 60_000);
            const lensesAt = await withTimeout(lensesShown.at(), "the Accept All lens", 60_000);
            const received = await waitFor("the server's log of the openDiff call", () => loggedAt(/IDE tool call.*openDiff/, sent - 1_000));
            // The person's accept: Ctrl+Alt+Shift+Y, Accept All's key.
            const pressed = await pressTimed(page, "Control+Alt+Shift+Y");
            const answered = await waitFor("the server's log of the answer", () => loggedAt(/openDiff: accepted/, pressed - 5));
            await waitForDisk(name, numberedFile(lines).replace(bigTarget(lines), `${bigTarget(lines)} (edited)`));
            assert.ok(
                loggedAt(/answered from the person's decision .* document=big/, pressed - 5) !== undefined,
                "Claude Code was answered from the decision the extension told (verbatim/reviewDecided), before VS Code applied the edit",
            );
            // Where the time goes, from the extension's log: the review opened (its diff, or the file's own
            // editor with the hunks marked); the key reached the extension before the edit was applied.
            const opened = loggedAt(new RegExp(`\\[review\\] "Claude Code: edit ${name}": shown`), received) ?? NaN;
            const decided = loggedAt(new RegExp(`\\[review\\] "Claude Code: edit ${name}": every undecided hunk accepted`), pressed - 5) ?? NaN;
            const ms = (value) => `${Math.round(value)} ms`;
            console.log(
                `# ${lines} lines (${inEditor ? "in its own editor" : "in a diff"}): openDiff received → review on screen (the title bar's Accept All) ${ms(shown - received)} ` +
                    `(opened after ${ms(opened - received)}; its lenses after ${ms(lensesAt - received)}); accept key → answer sent ${ms(answered - pressed)} ` +
                    `(the key reached the extension after ${ms(decided - pressed)})`,
            );
        });
    }

    step("Claude Code's IDE tools answer from the editor: getCurrentSelection (never a click in a review's diff), saveDocument", async () => {
        const ide = await IdeClient.connect(port, lock.authToken);
        try {
            const selection = async () => JSON.parse((await ide.call("getCurrentSelection"))[0]);
            await showTab("clean.txt", "three");
            await page.locator(".monaco-editor:not(.monaco-diff-editor *) .view-line", { hasText: "three" }).first().dblclick();
            const selected = await waitFor("the selection of \"three\"", async () => {
                const current = await selection();
                return current.text === "three" ? current : undefined;
            });
            assert.match(selected.filePath, /clean\.txt$/);
            assert.deepEqual(selected.selection.start, { line: 2, character: 0 });
            assert.deepEqual(selected.selection.end, { line: 2, character: 5 });

            // An agent's edit under review: clicks on either side of its diff are not the person's selection.
            const before = await read("clean.txt");
            const pending = reader.request("verbatim/strReplace", { uri: uriOf("clean.txt"), oldStr: "four", newStr: "FOUR", summary: "Shout four", baseRev: before.rev });
            pending.catch(() => undefined);
            await page.locator(".tabs-container .tab", { hasText: "e2e-reader: Shout four" }).first().waitFor({ state: "visible" });
            await lenses("Reject All").first().waitFor({ state: "visible" });
            // The cursor moves on each side (a click, then End, so that it surely moves); the extension says
            // that it did not send each of those selections.
            const notSent = /\[claude code\] a selection in a review's diff is not the person's: not sent/;
            for (const [side, text] of [["original", "one"], ["modified", "FOUR"]]) {
                const count = loggedCount(notSent);
                await diff().locator(`.editor.${side} .view-line`, { hasText: text }).first().click();
                await page.keyboard.press("End");
                await loggedMore(`the extension to pass over the selection in the diff's ${side} side`, notSent, count);
            }
            assert.equal((await selection()).text, "three", "still the selection made in the file's own editor");
            await lenses("Reject All").first().click();
            const input = page.locator(".quick-input-widget .quick-input-box input");
            await input.waitFor({ state: "visible" });
            await page.keyboard.press("Enter");
            await pending.then(
                () => assert.fail("the edit was applied"),
                () => undefined,
            );
            await diff().waitFor({ state: "detached" });

            // Claude Code's saveDocument saves the document in VS Code.
            await editor.showTab("clean.txt");
            await typeAtEnd("three", "five\n");
            // Asked as soon as the tab shows the change, before the extension host may have heard of it
            // (the save is the window's all the same).
            await dirtyTab("clean.txt").waitFor({ state: "visible" });
            const saved = JSON.parse((await ide.call("saveDocument", { filePath: file("clean.txt") }))[0]);
            assert.equal(saved.saved, true, JSON.stringify(saved));
            await dirtyTab("clean.txt")
                .waitFor({ state: "detached", timeout: 20_000 })
                .catch((error) => assert.fail(`saveDocument answered ${JSON.stringify(saved)}, and the tab is still dirty: ${error.message}`));
            assert.equal(onDisk("clean.txt"), (await read("clean.txt")).text);
            assert.equal(await saveConflict().count(), 0);
        } finally {
            ide.close();
        }
    });

    step("d. Claude Code typed into VS Code's integrated terminal connects with no flag (the terminal's variables)", async () => {
        await claude.stop();
        claude = undefined;
        await waitFor("the tmux Claude Code to disconnect", async () => {
            const status = await reader.request("verbatim/status", null);
            return status.agents.every((agent) => agent.name !== "Claude Code");
        });
        await showTab("clean.txt", "three");
        await editor.runCommand("Terminal: Create New Terminal");
        const terminal = page.locator(".terminal-wrapper .xterm").first();
        await shellPrompt(terminal);
        await terminal.click();
        await page.keyboard.type("claude\n");
        await waitFor(
            "Claude Code from the terminal among the connected agents",
            async () => (await reader.request("verbatim/status", null)).agents.some((agent) => agent.name === "Claude Code"),
            { timeout: 45_000 },
        );
        // The person selects a word in clean.txt, and back in the terminal asks something: the model hears of
        // the selection. Claude Code drops notifications for a moment after it connects: select again until
        // its prompt box shows the selection.
        const terminalText = page.locator(".terminal-wrapper .xterm-rows").first();
        await terminalText.getByText("? for shortcuts").first().waitFor({ state: "visible", timeout: 30_000 });
        await selectForClaude("clean.txt", "three", "one", (ms) => terminalText.getByText("1 line selected").first().waitFor({ state: "visible", timeout: ms }));
        await terminal.click();
        await page.keyboard.type("Say hello.");
        await page.keyboard.press("Enter");
        const request = await waitFor("the terminal's Claude Code to ask the model", () => terminalModel.requests()[0], { timeout: 30_000 });
        assert.match(messageText(request), /selected the lines 3 to 3 from \S*clean\.txt/, "Claude Code told the model what the person selected");
        await page.screenshot({ path: path.join(output, "terminal-claude.png") });
    });

    // Last, so that a miss here does not hide what the steps above check.
    step("the lock file is as docs/protocol.md has it: Verbatim's by its ideName, a fresh token, private", async () => {
        assert.match(lock.ideName, / \(Verbatim\)$/);
        assert.match(lock.authToken, /^[0-9a-f]{64}$/);
        const lockFile = path.join(home, ".claude", "ide", `${port}.lock`);
        assert.equal(statSync(lockFile).mode & 0o777, 0o600, "the lock file is 0600");
        assert.equal(statSync(path.dirname(lockFile)).mode & 0o777, 0o700, "its directory is 0700");
        steps.last = "done";
    });
});

// A stand-in for Anthropic's own extension (`anthropic.claude-code`): like it,
// it sets CLAUDE_CODE_SSE_PORT for new terminals when it activates.
const ANTHROPIC_PORT = "41999";

function standInAnthropicExtension(dir) {
    const source = path.join(dir, "anthropic-claude-code");
    mkdirSync(source, { recursive: true });
    writeFileSync(
        path.join(source, "package.json"),
        JSON.stringify({
            name: "claude-code",
            displayName: "Claude Code (a stand-in for the end-to-end test)",
            description: "Sets CLAUDE_CODE_SSE_PORT for new terminals, as Anthropic's extension does.",
            publisher: "anthropic",
            version: "0.0.1",
            engines: { vscode: "^1.93.0" },
            activationEvents: ["onStartupFinished"],
            main: "./extension.js",
        }),
    );
    writeFileSync(
        path.join(source, "extension.js"),
        `exports.activate = (context) => {
            context.environmentVariableCollection.persistent = false;
            context.environmentVariableCollection.replace("CLAUDE_CODE_SSE_PORT", ${JSON.stringify(ANTHROPIC_PORT)});
        };\n`,
    );
    writeFileSync(path.join(source, "README.md"), "A stand-in for Anthropic's Claude Code extension.\n");
    const vsix = path.join(dir, "anthropic-claude-code.vsix");
    execFileSync(path.join(extensionDir, "node_modules", ".bin", "vsce"), ["package", "--no-dependencies", "--allow-missing-repository", "--skip-license", "-o", vsix], {
        cwd: source,
        stdio: ["ignore", "ignore", "inherit"],
    });
    return vsix;
}

describe("Anthropic's Claude Code extension installed too (code-server, a stand-in for it)", { concurrency: false }, () => {
    const standInOutput = path.join(output, "with-anthropic-extension");
    let editor;
    let page;
    const steps = scenarioSteps(() => page, standInOutput, () => editor?.userData);
    const step = (name, body) => steps.step(name, body);

    before(async () => {
        rmSync(standInOutput, { recursive: true, force: true });
        mkdirSync(standInOutput, { recursive: true });
        const inherited = { ...process.env };
        delete inherited.CLAUDE_CODE_SSE_PORT;
        const home = mkdtempSync(path.join(tmpdir(), "verbatim-claude-home-"));
        editor = await launchEditor({
            // The terminal drawn in the page's DOM, so that the test sees its shell's prompt.
            settings: { "terminal.integrated.enablePersistentSessions": false, "terminal.integrated.gpuAcceleration": "off" },
            env: { ...inherited, HOME: home },
            extraExtensions: [standInAnthropicExtension(standInOutput)],
            output: standInOutput,
        });
        editor.home = home;
        ({ page } = editor);
    });

    after(async () => {
        if (page) await page.screenshot({ path: path.join(standInOutput, "last.png") }).catch(() => undefined);
        await editor?.close();
        if (editor?.home) rmSync(editor.home, { recursive: true, force: true });
    });

    step("the log says which IDE a claude started in a new terminal connects to, a message says how to choose, and a terminal gets that port", async () => {
        const logged = await waitFor(
            "the extension's word on Anthropic's extension",
            () => /\[claude code\] Anthropic's Claude Code extension \(anthropic\.claude-code\) is installed too.*/.exec(editor.extensionLog())?.[0],
            { timeout: 90_000 },
        );
        const ours = /new terminals get Verbatim's port (\d+)/.exec(logged)?.[1];
        const theirs = /new terminals get port (\d+), not Verbatim's/.exec(logged)?.[1];
        assert.ok(ours !== undefined || theirs === ANTHROPIC_PORT, `the log names a winner: ${logged}`);
        await page.locator(".notification-toast", { hasText: "verbatim.claudeCode.enabled" }).first().waitFor({ state: "visible", timeout: 30_000 });
        // What a terminal the person opens now gets, typed and read back as a person would.
        await editor.runCommand("Terminal: Create New Terminal");
        const terminal = page.locator(".terminal-wrapper .xterm").first();
        await shellPrompt(terminal);
        await terminal.click();
        // VS Code draws the terminal on a canvas: the shell writes what it got to a file instead.
        const got = path.join(editor.workspace, "port.txt");
        await page.keyboard.type(`echo "$CLAUDE_CODE_SSE_PORT" > ${got}\n`);
        await waitFor("the terminal to write its CLAUDE_CODE_SSE_PORT", () => existsSync(got) && readFileSync(got, "utf8").trim() !== "", { timeout: 15_000 });
        assert.equal(readFileSync(got, "utf8").trim(), ours ?? theirs, "a new terminal gets the port the log names");
        console.log(`# with Anthropic's extension too: ${logged}`);
    });
});
