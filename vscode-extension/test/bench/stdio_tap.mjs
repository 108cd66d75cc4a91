// Sits between VS Code's language client and `verbatim lsp`, passes every byte
// through unchanged, and appends one JSON line per LSP message to a log: when
// it passed (wall-clock milliseconds, sub-millisecond precision), which way
// ("toServer" or "toEditor"), its method and id. The latency benchmark uses it
// to split an agent's round trip into the server's part and the editor's.
//
// Usage: node stdio_tap.mjs LOG_FILE SERVER_BINARY [ARGS...]

import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

const [logFile, binary, ...args] = process.argv.slice(2);
const server = spawn(binary, args, { stdio: ["pipe", "pipe", "inherit"] });
server.on("exit", (code, signal) => process.exit(signal ? 1 : (code ?? 0)));
process.on("SIGTERM", () => server.kill("SIGTERM"));

const now = () => performance.timeOrigin + performance.now();

/** Forwards `from` to `to` at once, and logs each complete message it carried. */
function tap(from, to, direction) {
    let buffer = Buffer.alloc(0);
    from.on("data", (chunk) => {
        const t = now();
        to.write(chunk);
        buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
        for (;;) {
            const headerEnd = buffer.indexOf("\r\n\r\n");
            if (headerEnd < 0) return;
            const length = Number(/Content-Length:\s*(\d+)/i.exec(buffer.subarray(0, headerEnd).toString("ascii"))?.[1]);
            if (buffer.length < headerEnd + 4 + length) return;
            const body = buffer.subarray(headerEnd + 4, headerEnd + 4 + length);
            buffer = buffer.subarray(headerEnd + 4 + length);
            appendFileSync(logFile, `${JSON.stringify({ t, direction, ...envelope(body), bytes: length })}\n`);
        }
    });
    from.on("end", () => to.end());
}

/** The method and id of a message; a big one (a didOpen's text can be megabytes) is only skimmed. */
function envelope(body) {
    if (body.length < 65_536) {
        const { method, id } = JSON.parse(body.toString("utf8"));
        return { method, id };
    }
    const head = body.subarray(0, 200).toString("utf8");
    return { method: /"method"\s*:\s*"([^"]+)"/.exec(head)?.[1] };
}

tap(process.stdin, server.stdin, "toServer");
tap(server.stdout, process.stdout, "toEditor");
