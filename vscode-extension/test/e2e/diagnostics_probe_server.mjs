// A stand-in for `verbatim lsp` that tests the extension's answer to
// `verbatim/diagnostics` in a real VS Code, whatever the real server does.
// It speaks LSP on stdio, like the server, and asks the editor for
// diagnostics the way the server does: at once (the baseline) when a
// document opens, and with a wait for the version each `didChange` brings.
// Every message it gets and every answer it receives is written as a line of
// JSON to the file named by PROBE_LOG.
//
// `--version` prints a Verbatim-like version, so that the extension takes it.

import { appendFileSync } from "node:fs";

import { IDLE_STATUS, receive, request, send } from "./stdio_lsp.mjs";

if (process.argv.includes("--version")) {
    process.stdout.write("verbatim 0.0.0-diagnostics-probe\n");
    process.exit(0);
}

const logFile = process.env.PROBE_LOG;
if (!logFile) throw new Error("PROBE_LOG is not set");
const start = Date.now();

function record(entry) {
    appendFileSync(logFile, `${JSON.stringify({ at: Date.now() - start, ...entry })}\n`);
}

async function askForDiagnostics(kind, params) {
    const sent = Date.now();
    try {
        const result = await request("verbatim/diagnostics", params);
        record({ kind, params, result, tookMs: Date.now() - sent });
    } catch (error) {
        record({ kind, params, error, tookMs: Date.now() - sent });
    }
}

function onMessage(message) {
    switch (message.method) {
        case "initialize":
            record({ kind: "initialize", initializationOptions: message.params.initializationOptions });
            send({
                id: message.id,
                result: {
                    capabilities: { positionEncoding: "utf-16", textDocumentSync: { openClose: true, change: 2 } },
                    serverInfo: { name: "verbatim", version: "0.0.0-diagnostics-probe" },
                },
            });
            return;
        case "shutdown":
            send({ id: message.id, result: null });
            return;
        case "exit":
            process.exit(0);
            return;
        case "verbatim/status":
            send({ id: message.id, result: IDLE_STATUS });
            return;
        case "textDocument/didOpen": {
            const { uri, version, languageId } = message.params.textDocument;
            record({ kind: "didOpen", uri, version, languageId });
            void askForDiagnostics("baseline", { uris: [uri], minSeverity: "error" });
            return;
        }
        case "textDocument/didChange": {
            const { uri, version } = message.params.textDocument;
            record({ kind: "didChange", uri, version });
            void askForDiagnostics("wait", {
                uris: [uri],
                minSeverity: "error",
                wait: { versions: { [uri]: version }, quietMs: 300, timeoutMs: 2500 },
            });
            return;
        }
        default:
            if (message.id !== undefined) send({ id: message.id, error: { code: -32601, message: `the probe handles no ${message.method}` } });
    }
}

receive(onMessage);
