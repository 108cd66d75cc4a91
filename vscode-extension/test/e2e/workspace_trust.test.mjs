// Workspace trust in a real VS Code: a repository whose .vscode/settings.json
// points `verbatim.server.path` at a program of its own opens untrusted
// (Restricted Mode), and the extension neither runs that program nor the one
// in the user's settings; it starts its bundled binary and logs why. (Not one
// on PATH: a PATH given to code-server did not reach the extension host, whose
// environment code-server builds from the user's shell.)
// Then, in the same editor, two restarts fired at once leave one server.
//
// Runs after vscode.test.mjs (the file name sorts after it, and test:e2e runs
// one file at a time), since that test clears the output directory first.
//
// Needs: CODE_SERVER_BIN, VERBATIM_BIN, VERBATIM_TEST_OUTPUT (test/run.sh sets them).

import * as assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";

import { discoveryFiles } from "./agent.mjs";
import { launchEditor, requiredEnv, waitFor } from "./harness.mjs";

const output = path.join(requiredEnv("VERBATIM_TEST_OUTPUT"), "workspace-trust");

/** The pids of the `verbatim lsp` processes started for the editor whose runtime directory is `runtimeDir`. */
function serverProcesses(runtimeDir) {
    const pids = [];
    for (const entry of readdirSync("/proc")) {
        if (!/^\d+$/.test(entry)) continue;
        try {
            const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
            if (path.basename(args[0] ?? "") !== "verbatim" || args[1] !== "lsp") continue;
            const environment = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
            if (environment.includes(`VERBATIM_RUNTIME_DIR=${runtimeDir}`)) pids.push(Number(entry));
        } catch {
            // The process ended while we looked.
        }
    }
    return pids;
}

/** Every file under `dir`, recursively. */
function filesUnder(dir) {
    if (!existsSync(dir)) return [];
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const full = path.join(dir, entry.name);
        return entry.isDirectory() ? filesUnder(full) : [full];
    });
}

describe("an untrusted workspace (code-server with workspace trust on)", { concurrency: false }, () => {
    let editor;
    let marker;

    before(async () => {
        editor = await launchEditor({
            workspaceTrust: true,
            bundledServer: realpathSync(requiredEnv("VERBATIM_BIN")),
            setup: (workspace, temp) => {
                // A key for the restart command, so that a test can fire two restarts within milliseconds.
                mkdirSync(path.join(temp, "user-data", "User"), { recursive: true });
                writeFileSync(
                    path.join(temp, "user-data", "User", "keybindings.json"),
                    JSON.stringify([{ key: "ctrl+alt+f9", command: "verbatim.restartServer" }]),
                );
                marker = path.join(temp, "malicious-binary-ran");
                const malicious = path.join(workspace, "not-verbatim.sh");
                // It would pass for Verbatim if it were run, and leaves a trace when it is.
                writeFileSync(malicious, `#!/bin/sh\necho "$@" >> '${marker}'\necho "verbatim 6.6.6"\n`);
                chmodSync(malicious, 0o755);
                mkdirSync(path.join(workspace, ".vscode"));
                writeFileSync(path.join(workspace, ".vscode", "settings.json"), JSON.stringify({ "verbatim.server.path": malicious }));
                writeFileSync(path.join(workspace, "a.txt"), "alpha\n");
            },
            output,
        });
    });

    after(async () => {
        await editor?.page?.screenshot({ path: path.join(output, "last.png") }).catch(() => undefined);
        await editor?.close();
        console.log(`# workspace trust artifacts in ${output}`);
    });

    test("VS Code opens the workspace in Restricted Mode", async () => {
        await editor.statusBar().getByText("Restricted Mode").first().waitFor({ state: "visible", timeout: 60_000 });
    });

    test("the bundled server starts, and the workspace's binary is never run", async () => {
        const discovery = await editor.discovery();
        const exe = realpathSync(`/proc/${discovery.pid}/exe`);
        assert.equal(exe, realpathSync(requiredEnv("VERBATIM_BIN")));
        assert.equal(existsSync(marker), false, `the workspace's binary ran with: ${existsSync(marker) ? readFileSync(marker, "utf8") : ""}`);
    });

    test("the Verbatim log says the setting is ignored because the workspace is not trusted, and the bundled binary was used", async () => {
        const logs = path.join(editor.userData, "logs");
        const logLine = (what, pattern) =>
            waitFor(what, () =>
                filesUnder(logs)
                    .filter((file) => file.endsWith(".log"))
                    .flatMap((file) => readFileSync(file, "utf8").split("\n"))
                    .find((line) => pattern.test(line)),
            );
        // VS Code itself hides the workspace's value of a restricted setting, so the path named is the user's.
        await logLine("the log to explain the untrusted workspace", /verbatim\.server\.path: "[^"]+" is ignored and not run: the workspace is not trusted/);
        await logLine("the log to say the bundled server is used", /Using the bundled \S+ \(verbatim [^)]*\)\./);
        assert.equal(existsSync(marker), false);
    });

    test("two restarts fired at once leave exactly one verbatim lsp process", async () => {
        const [first] = await waitFor("one server process", () => {
            const pids = serverProcesses(editor.runtimeDir);
            return pids.length === 1 ? pids : undefined;
        });
        await editor.page.locator(".monaco-workbench").click({ position: { x: 600, y: 300 } });
        await editor.page.keyboard.press("Control+Alt+F9");
        await editor.page.keyboard.press("Control+Alt+F9");
        // Both requests reach the extension, and the server starts twice more (the running restart and the queued one).
        const logs = path.join(editor.userData, "logs");
        const count = (text) =>
            filesUnder(logs)
                .filter((file) => file.endsWith("Verbatim.log"))
                .reduce((sum, file) => sum + readFileSync(file, "utf8").split(text).length - 1, 0);
        await waitFor("the log to show both restart requests", () => count("Restart requested.") >= 2);
        await waitFor("the log to show three starts (at activation, then two restarts)", () => count("Using the bundled ") >= 3);
        // Each server started says so once the editor's initialize reached it: the third one's line means
        // both restarts are done, and the servers before it are on their way out.
        await waitFor("the third server to be initialized", () => count("editor initialized") >= 3);
        const remaining = await waitFor("one server process to remain", () => {
            const pids = serverProcesses(editor.runtimeDir);
            return pids.length === 1 ? pids : undefined;
        });
        assert.equal(count("editor initialized"), 3, "no fourth server started beside them");
        assert.notEqual(remaining[0], first);
        await waitFor("the discovery file of the remaining server", () =>
            discoveryFiles(editor.runtimeDir).some((file) => file.pid === remaining[0]),
        );
    });
});
