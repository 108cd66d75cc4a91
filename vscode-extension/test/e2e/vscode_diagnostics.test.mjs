// Diagnostics after an edit, in a real VS Code (code-server), from a `// @ts-check`
// JavaScript file: VS Code's built-in TypeScript support reports its errors,
// with nothing to install.
//
// 1. The extension's answer to `verbatim/diagnostics`, asked by a stand-in
//    server (diagnostics_probe_server.mjs) that asks the way the server does:
//    a baseline when a document opens, and a wait for each new version.
// 2. The whole path: an agent's edit with `diagnostics: true` through the real
//    server, whose result names the error the edit introduced.
//
// Runs after vscode.test.mjs (the file name sorts after it), which clears the
// output directory first.
//
// Needs: CODE_SERVER_BIN, VERBATIM_BIN, VERBATIM_TEST_OUTPUT (test/run.sh sets them).

import * as assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";

import { launchEditor, requiredEnv, waitFor, withTimeout } from "./harness.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const output = path.join(requiredEnv("VERBATIM_TEST_OUTPUT"), "diagnostics");

/** Line 3 (1-based) has TypeScript error 2322, so the test can tell when TypeScript is up. */
const CHECKED_JS = ['// @ts-check', 'let count = "one";', "count = 1;", "console.log(count);", ""].join("\n");

/**
 * Two scripts of one program: use.js calls the function lib.js declares
 * (globals are shared). lib.js has an error of its own (2362) on the line
 * that a rename changes, so that TypeScript publishes it again after the edit.
 */
const LIB_JS = ["// @ts-check", "/** @param {string} name */", "function greet(name) { return name * 2; }", ""].join("\n");
const USE_JS = ["// @ts-check", 'console.log(greet("ada"));', ""].join("\n");

function writeFixture(workspace) {
    writeFileSync(path.join(workspace, "check.js"), CHECKED_JS);
    writeFileSync(path.join(workspace, "clean.js"), ["// @ts-check", "const answer = 42;", "console.log(answer);", ""].join("\n"));
    writeFileSync(path.join(workspace, "lib.js"), LIB_JS);
    writeFileSync(path.join(workspace, "use.js"), USE_JS);
    writeFileSync(path.join(workspace, "notes.txt"), "alpha\nbeta\n");
}

/** Waits until TypeScript has reported on the open check.js: its existing error is underlined. */
async function waitForTypeScript(page) {
    await page.locator(".monaco-editor .squiggly-error").first().waitFor({ state: "visible", timeout: 90_000 });
}

/** `missingName;` on a new line after `console.log(count);` (no brackets, which the editor would close). */
async function typeUndefinedName(page) {
    await page.locator(".monaco-editor .view-line", { hasText: "console.log(count);" }).first().click();
    await page.keyboard.press("End");
    await page.keyboard.press("Enter");
    await page.keyboard.insertText("missingName;");
}

describe("verbatim/diagnostics answered by VS Code (a stand-in server asks)", { concurrency: false }, () => {
    let editor;
    let page;
    let probeLog;
    let probeDir;

    /** Every line the probe wrote so far. */
    function entries() {
        if (!existsSync(probeLog)) return [];
        return readFileSync(probeLog, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
    }

    before(async () => {
        rmSync(output, { recursive: true, force: true });
        probeDir = mkdtempSync(path.join(tmpdir(), "verbatim-probe-"));
        probeLog = path.join(probeDir, "probe.jsonl");
        const wrapper = path.join(probeDir, "verbatim");
        // The extension starts the binary itself: the probe's log file and Node go in by name.
        writeFileSync(
            wrapper,
            `#!/bin/sh\nPROBE_LOG='${probeLog}' exec '${process.execPath}' '${path.join(here, "diagnostics_probe_server.mjs")}' "$@"\n`,
        );
        chmodSync(wrapper, 0o755);
        editor = await launchEditor({ setup: writeFixture, serverPath: wrapper, settings: { "verbatim.logLevel": "debug" }, output: path.join(output, "probe") });
        page = editor.page;
    });

    after(async () => {
        await page?.screenshot({ path: path.join(output, "probe-last.png") }).catch(() => undefined);
        if (probeLog && existsSync(probeLog)) writeFileSync(path.join(output, "probe.jsonl"), readFileSync(probeLog));
        await editor?.close();
        if (probeDir) rmSync(probeDir, { recursive: true, force: true });
    });

    test("the extension says in initializationOptions that it answers verbatim/diagnostics", async () => {
        const initialize = await waitFor("the probe's initialize", () => entries().find((entry) => entry.kind === "initialize"), { timeout: 90_000 });
        assert.equal(initialize.initializationOptions.diagnostics, true);
    });

    test("a plain text document nothing reports on is unavailable, at once", async () => {
        await editor.openFromExplorer("notes.txt", "alpha");
        const uri = pathToFileURL(path.join(editor.workspace, "notes.txt")).href;
        const baseline = await waitFor("the baseline of notes.txt", () => entries().find((entry) => entry.kind === "baseline" && entry.params.uris[0] === uri));
        assert.deepEqual(baseline.result.documents.map((d) => [d.uri, d.status, d.diagnostics.length]), [[uri, "unavailable", 0]]);
        await page.locator(".monaco-editor .view-line", { hasText: "beta" }).first().click();
        await page.keyboard.press("End");
        await page.keyboard.insertText("!");
        const wait = await waitFor("the wait on notes.txt", () => entries().find((entry) => entry.kind === "wait" && entry.params.uris[0] === uri));
        const [document] = wait.result.documents;
        assert.equal(document.status, "unavailable");
        assert.equal(document.version, wait.params.wait.versions[uri]);
        assert.ok(wait.tookMs < 1000, `answered after ${wait.tookMs} ms: a plain text document is not waited for`);
    });

    test("an edit that uses an undefined name: the wait settles with TypeScript's 2304 on the new line", async (t) => {
        await editor.openFromExplorer("check.js", "console.log(count);");
        await waitForTypeScript(page);
        const uri = pathToFileURL(path.join(editor.workspace, "check.js")).href;
        const baseline = await waitFor("the baseline of check.js", () => entries().find((entry) => entry.kind === "baseline" && entry.params.uris[0] === uri));
        assert.equal(baseline.result.documents[0].uri, uri);

        await typeUndefinedName(page);
        await page.locator(".monaco-editor .view-line", { hasText: "missingName;" }).first().waitFor({ state: "visible" });
        // Enter and each typed character make a version; the answer for the last one is the one to check.
        const answerForLastVersion = () =>
            waitFor("the answer for the document's last version", () => {
                const changes = entries().filter((entry) => entry.kind === "didChange" && entry.uri === uri);
                const version = Math.max(...changes.map((entry) => entry.version));
                return entries().find((entry) => entry.kind === "wait" && entry.params.wait.versions[uri] === version);
            }, { timeout: 30_000 });
        let last = await answerForLastVersion();
        if (!last.result.documents[0].diagnostics.some((d) => d.code === 2304)) {
            // On a busy machine TypeScript can publish for an older version after the
            // last change and then take more than the quiet period to check the new
            // text: the answer was true to what VS Code had. Once VS Code shows the new
            // error, the next change's answer must carry it.
            t.diagnostic(`TypeScript was late, the first answer had no 2304: ${JSON.stringify(last)}`);
            await waitFor("VS Code to underline missingName", async () => (await page.locator(".monaco-editor .squiggly-error").count()) >= 2, { timeout: 30_000 });
            await page.keyboard.insertText(" ");
            last = await answerForLastVersion();
        }
        await page.screenshot({ path: path.join(output, "probe-check-js.png") });

        const [document] = last.result.documents;
        assert.equal(document.status, "settled", JSON.stringify(last));
        assert.equal(document.version, last.params.wait.versions[uri]);
        assert.ok(document.sources.includes("ts"), `sources: ${document.sources}`);
        assert.ok(last.tookMs >= 290, `settled after ${last.tookMs} ms: a fresh change and a 300 ms quiet period`);
        assert.ok(last.tookMs < 2600 && document.waitedMs <= 2500, `capped at 2.5 s: ${last.tookMs} ms`);
        const introduced = document.diagnostics.find((d) => d.code === 2304);
        assert.ok(introduced, `no 2304 in ${JSON.stringify(document.diagnostics)}`);
        assert.equal(introduced.severity, 1);
        assert.equal(introduced.range.start.line, 4, "0-based: the line after console.log(count);");
        assert.match(introduced.message, /Cannot find name 'missingName'/);
        assert.ok(document.diagnostics.some((d) => d.code === 2322 && d.range.start.line === 2), "the existing error is still there");
        assert.ok(document.diagnostics.every((d) => d.severity === 1), "minSeverity error leaves the rest out");
    });
    test("a file that stays clean: no change comes, so the wait ends timedOut with an empty list, never settled", async () => {
        // TypeScript publishes only what differs, and VS Code fires no change
        // for an empty set replacing an empty set: nothing says the file was
        // checked again, so the honest answer is timedOut, after the cap.
        const uri = pathToFileURL(path.join(editor.workspace, "clean.js")).href;
        await editor.openFromExplorer("clean.js", "console.log(answer);");
        await page.locator(".monaco-editor .view-line", { hasText: "const answer = 42;" }).first().click();
        await page.keyboard.press("End");
        await page.keyboard.press("Enter");
        const version = await waitFor("the didChange of clean.js", () =>
            entries().find((entry) => entry.kind === "didChange" && entry.uri === uri)?.version,
        );
        const wait = await waitFor("the answer for that version", () =>
            entries().find((entry) => entry.kind === "wait" && entry.params.wait.versions[uri] === version),
        );
        const [document] = wait.result.documents;
        assert.equal(document.status, "timedOut", JSON.stringify(wait));
        assert.deepEqual(document.diagnostics, []);
        assert.ok(document.waitedMs >= 2500 && document.waitedMs < 2700, `waited ${document.waitedMs} ms: the whole cap (a timer may fire a little late)`);
    });
});

describe("an agent's edit with diagnostics: true, through the real server", { concurrency: false }, () => {
    let editor;
    let agent;

    before(async () => {
        editor = await launchEditor({
            setup: writeFixture,
            // No preview tabs: opening lib.js must leave use.js open, for TypeScript to check it.
            settings: { "verbatim.logLevel": "debug", "verbatim.reviewMode": "auto", "workbench.editor.enablePreview": false },
            output: path.join(output, "server"),
        });
    });

    after(async () => {
        await editor?.page?.screenshot({ path: path.join(output, "server-last.png") }).catch(() => undefined);
        await agent?.close().catch(() => undefined);
        await editor?.close();
    });

    test("result.diagnostics.introduced names TypeScript's 2304 at the new line", async (t) => {
        const { page } = editor;
        await editor.openFromExplorer("check.js", "console.log(count);");
        await waitForTypeScript(page);
        agent = await editor.connectAgent("diagnostics-agent");
        const uri = pathToFileURL(path.join(editor.workspace, "check.js")).href;
        const replace = async (oldStr, newStr, summary) =>
            withTimeout(
                agent.request("verbatim/strReplace", {
                    uri,
                    oldStr,
                    newStr,
                    baseRev: (await agent.request("verbatim/read", { uri })).rev,
                    summary,
                    diagnostics: true,
                }),
                "the agent's answer",
            );
        // On a busy machine TypeScript can take longer than the 300 ms quiet period to
        // check the new text, and the answer is then true to what VS Code had: settled,
        // nothing introduced yet. So the edit is tried up to three times (taken back in
        // between), and every answer must be right about what it does report.
        let introduced;
        let report;
        for (let attempt = 1; attempt <= 3 && introduced === undefined; attempt += 1) {
            const result = await replace("console.log(count);", "console.log(count);\nmissingName;", "Use a name that does not exist");
            await page.screenshot({ path: path.join(output, "server-check-js.png") });
            assert.equal(result.applied, true);
            report = result.diagnostics;
            assert.ok(report, `no diagnostics in ${JSON.stringify(result)}`);
            t.diagnostic(`attempt ${attempt}, result.diagnostics: ${JSON.stringify(report)}`);
            assert.equal(report.status, "settled", JSON.stringify(report));
            assert.equal(report.resolved.length, 0);
            assert.ok(report.existing >= 1, "the 2322 that was there before is counted as existing");
            assert.ok(report.introduced.every((item) => String(item.code) === "2304"), JSON.stringify(report));
            introduced = report.introduced.find((item) => String(item.code) === "2304");
            if (introduced === undefined) {
                await replace("console.log(count);\nmissingName;", "console.log(count);", "Take the line back");
                await waitFor("VS Code to show check.js's one error again", async () => (await page.locator(".monaco-editor .squiggly-error").count()) === 1, { timeout: 30_000 });
            }
        }
        assert.ok(introduced, `no 2304 introduced in three tries: ${JSON.stringify(report)}`);
        assert.equal(introduced.line, 5);
        assert.equal(introduced.severity, "error");
        assert.match(introduced.message, /Cannot find name 'missingName'/);
    });

    test("an edit that breaks a caller in another open file: otherFiles names it", async (t) => {
        await editor.openFromExplorer("use.js", "greet");
        await editor.openFromExplorer("lib.js", "function greet");
        await waitForTypeScript(editor.page);
        const uri = pathToFileURL(path.join(editor.workspace, "lib.js")).href;
        const read = () =>
            waitFor("the server to hold lib.js from the editor", async () => {
                const read = await agent.request("verbatim/read", { uri });
                return read.source === "editor" ? read : undefined;
            });
        const rename = async (from, to) =>
            withTimeout(
                agent.request("verbatim/strReplace", {
                    uri,
                    oldStr: `function ${from}(name)`,
                    newStr: `function ${to}(name)`,
                    baseRev: (await read()).rev,
                    summary: `Rename ${from}`,
                    diagnostics: true,
                }),
                "the agent's answer",
            );
        // Other files count only when TypeScript reports them before the edited file's
        // diagnostics have been quiet for 300 ms; under load it may check use.js later.
        // So the rename is tried up to five times (renamed back in between), and every
        // answer must be right about what it does report.
        let broken;
        let report;
        for (let attempt = 1; attempt <= 5 && broken === undefined; attempt += 1) {
            const result = await rename("greet", "welcome");
            await editor.page.screenshot({ path: path.join(output, "server-others.png") });
            report = result.diagnostics;
            t.diagnostic(`attempt ${attempt}, result.diagnostics: ${JSON.stringify(report)}`);
            assert.equal(report.status, "settled");
            assert.deepEqual(report.introduced, []);
            assert.deepEqual(report.resolved, []);
            assert.equal(report.existing, 1, "lib.js's own 2362 moved with its line");
            assert.ok(report.otherFiles.every((item) => item.path === "use.js"), JSON.stringify(report));
            // 2552 is 2304 with a "Did you mean" suggestion.
            broken = report.otherFiles.find((item) => item.path === "use.js" && ["2304", "2552"].includes(String(item.code)));
            if (broken === undefined) await rename("welcome", "greet");
        }
        assert.ok(broken, `use.js is not in otherFiles: ${JSON.stringify(report)}`);
        assert.equal(broken.line, 2);
        assert.match(broken.message, /Cannot find name 'greet'/);
    });
});
