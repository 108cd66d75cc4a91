// A minimal agent: one LSP session over the server's Unix socket, with
// Content-Length framing, as the protocol asks (initialize first).

import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import * as net from "node:net";
import * as path from "node:path";

/** An error answer from the server: JSON-RPC `code`, `message` and `data`. */
export class ResponseError extends Error {
    constructor(error) {
        super(`${error.message} (code ${error.code}, kind ${error.data?.kind})`);
        this.code = error.code;
        this.data = error.data;
        this.rpcMessage = error.message;
    }
}

export class Agent {
    #socket;
    #buffer = Buffer.alloc(0);
    #nextId = 1;
    #pending = new Map();
    /** Every message received, for the test log. */
    received = [];

    static async connect(socketPath, name = "test-agent") {
        const socket = net.connect(socketPath);
        await once(socket, "connect");
        const agent = new Agent(socket);
        const result = await agent.request("initialize", {
            processId: process.pid,
            clientInfo: { name, version: "1.0" },
            rootUri: null,
            capabilities: { general: { positionEncodings: ["utf-16"] } },
        });
        agent.notify("initialized", {});
        agent.initializeResult = result;
        return agent;
    }

    constructor(socket) {
        this.#socket = socket;
        socket.on("data", (chunk) => this.#onData(chunk));
        socket.on("close", () => {
            for (const { reject } of this.#pending.values()) reject(new Error("the server closed the socket"));
            this.#pending.clear();
        });
    }

    request(method, params) {
        const id = this.#nextId++;
        const promise = new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject, method }));
        this.#send({ jsonrpc: "2.0", id, method, params });
        return promise;
    }

    /** The id of the last request sent, for `$/cancelRequest`. */
    get lastRequestId() {
        return this.#nextId - 1;
    }

    notify(method, params) {
        this.#send({ jsonrpc: "2.0", method, params });
    }

    async close() {
        try {
            await Promise.race([this.request("shutdown", null), new Promise((resolve) => setTimeout(resolve, 2000))]);
            this.notify("exit", null);
        } catch {
            // The server may already be gone.
        }
        this.#socket.end();
    }

    #send(message) {
        const body = Buffer.from(JSON.stringify(message), "utf8");
        this.#socket.write(`Content-Length: ${body.length}\r\n\r\n`);
        this.#socket.write(body);
    }

    #onData(chunk) {
        this.#buffer = Buffer.concat([this.#buffer, chunk]);
        for (;;) {
            const headerEnd = this.#buffer.indexOf("\r\n\r\n");
            if (headerEnd < 0) return;
            const header = this.#buffer.subarray(0, headerEnd).toString("ascii");
            const length = Number(/Content-Length:\s*(\d+)/i.exec(header)?.[1]);
            if (!Number.isFinite(length)) throw new Error(`bad header from the server: ${header}`);
            if (this.#buffer.length < headerEnd + 4 + length) return;
            const body = this.#buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString("utf8");
            this.#buffer = this.#buffer.subarray(headerEnd + 4 + length);
            this.#onMessage(JSON.parse(body));
        }
    }

    #onMessage(message) {
        this.received.push(message);
        if (message.id !== undefined && message.method !== undefined) {
            // A request from the server: an agent supports none.
            this.#send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "the test agent handles no requests" } });
            return;
        }
        if (message.id === undefined) return; // A notification.
        const pending = this.#pending.get(message.id);
        if (!pending) return;
        this.#pending.delete(message.id);
        if (message.error) pending.reject(new ResponseError(message.error));
        else pending.resolve(message.result);
    }
}

/** The discovery files in `dir` whose server is alive, newest first. */
export function discoveryFiles(dir) {
    let names;
    try {
        names = readdirSync(dir);
    } catch {
        return [];
    }
    const files = [];
    for (const name of names.filter((n) => n.endsWith(".json"))) {
        try {
            const discovery = JSON.parse(readFileSync(path.join(dir, name), "utf8"));
            process.kill(discovery.pid, 0);
            files.push(discovery);
        } catch {
            // Half-written, or its server is gone.
        }
    }
    return files.sort((a, b) => String(b.startedAt).localeCompare(String(a.startedAt)));
}
