// LSP's Content-Length framing for the end-to-end tests' own LSP peers, and
// what the stand-in servers they start in place of `verbatim lsp`
// (diagnostics_probe_server.mjs, timeline_probe_server.mjs) share: messages
// on this process's stdio, requests to the editor, an idle `verbatim/status`.

/** A `verbatim/status` result with no agent and nothing pending. */
export const IDLE_STATUS = {
    socket: "/nonexistent/probe.sock",
    readOnlySocket: "/nonexistent/probe-ro.sock",
    discoveryFile: "/nonexistent/probe.json",
    editorConnected: true,
    agents: [],
    pending: [],
};

let nextId = 1;
const pending = new Map();

/** Writes one JSON-RPC message, framed, to `stream`. */
export function writeMessage(stream, message) {
    const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", ...message }), "utf8");
    stream.write(`Content-Length: ${body.length}\r\n\r\n`);
    stream.write(body);
}

/** Calls `onMessage` with each framed JSON-RPC message read from `stream`. */
export function readMessages(stream, onMessage) {
    let buffer = Buffer.alloc(0);
    stream.on("data", (chunk) => {
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
}

/** Writes one JSON-RPC message to stdout. */
export function send(message) {
    writeMessage(process.stdout, message);
}

/** Sends a request to the editor; settles with its answer (rejects with the JSON-RPC error). */
export function request(method, params) {
    const id = `probe-${nextId++}`;
    send({ id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

/**
 * Calls `onMessage` with each request and notification read from stdin (the
 * editor's answers settle {@link request}s); `onEnd` (default: exit) when
 * stdin closes.
 */
export function receive(onMessage, onEnd = () => process.exit(0)) {
    readMessages(process.stdin, (message) => {
        if (message.method === undefined) settle(message);
        else onMessage(message);
    });
    process.stdin.on("end", onEnd);
}

function settle(answer) {
    const waiting = pending.get(answer.id);
    pending.delete(answer.id);
    if (answer.error) waiting?.reject(answer.error);
    else waiting?.resolve(answer.result);
}
