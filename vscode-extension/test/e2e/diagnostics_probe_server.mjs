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

let nextId = 1;
const pending = new Map();

function send(message) {
    const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", ...message }), "utf8");
    process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
    process.stdout.write(body);
}

function request(method, params) {
    const id = `probe-${nextId++}`;
    send({ id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
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

const STATUS = {
    socket: "/nonexistent/probe.sock",
    readOnlySocket: "/nonexistent/probe-ro.sock",
    discoveryFile: "/nonexistent/probe.json",
    editorConnected: true,
    agents: [],
    pending: [],
};

function onMessage(message) {
    if (message.method === undefined) {
        const waiting = pending.get(message.id);
        pending.delete(message.id);
        if (message.error) waiting?.reject(message.error);
        else waiting?.resolve(message.result);
        return;
    }
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
            send({ id: message.id, result: STATUS });
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

let buffer = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
        const headerEnd = buffer.indexOf("\r\n\r\n");
        if (headerEnd < 0) return;
        const length = Number(/Content-Length:\s*(\d+)/i.exec(buffer.subarray(0, headerEnd).toString("ascii"))?.[1]);
        if (buffer.length < headerEnd + 4 + length) return;
        const body = buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString("utf8");
        buffer = buffer.subarray(headerEnd + 4 + length);
        onMessage(JSON.parse(body));
    }
});
process.stdin.on("end", () => process.exit(0));
