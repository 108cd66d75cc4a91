// A minimal client of the server's Claude Code endpoint, as Claude Code
// connects (docs/protocol.md, "Claude Code's IDE protocol"): a WebSocket with
// subprotocol `mcp` and the lock file's token, then MCP's `initialize`. Lets
// the test call the IDE tools Claude Code's own flows do not (saveDocument,
// getCurrentSelection). Node's http and crypto only: the oldest VS Code's Node
// has no WebSocket client.

import { randomBytes } from "node:crypto";
import * as http from "node:http";

export class IdeClient {
    #socket;
    #buffer = Buffer.alloc(0);
    #nextId = 1;
    #pending = new Map();

    /** Connects to the endpoint on `port` with `token` (the lock file's `authToken`) and initializes. */
    static async connect(port, token) {
        const request = http.request({
            host: "127.0.0.1",
            port,
            path: "/",
            headers: {
                Connection: "Upgrade",
                Upgrade: "websocket",
                "Sec-WebSocket-Version": "13",
                "Sec-WebSocket-Key": randomBytes(16).toString("base64"),
                "Sec-WebSocket-Protocol": "mcp",
                "X-Claude-Code-Ide-Authorization": token,
            },
        });
        const socket = await new Promise((resolve, reject) => {
            request.on("upgrade", (_response, upgraded) => resolve(upgraded));
            request.on("response", (response) => reject(new Error(`the endpoint refused the upgrade: HTTP ${response.statusCode}`)));
            request.on("error", reject);
            request.end();
        });
        const client = new IdeClient(socket);
        await client.request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "verbatim-e2e", version: "1.0" } });
        client.notify("notifications/initialized", {});
        return client;
    }

    constructor(socket) {
        this.#socket = socket;
        socket.on("data", (chunk) => this.#onData(chunk));
        socket.on("close", () => {
            for (const { reject } of this.#pending.values()) reject(new Error("the endpoint closed the connection"));
            this.#pending.clear();
        });
    }

    request(method, params) {
        const id = this.#nextId++;
        const answer = new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
        this.#send({ jsonrpc: "2.0", id, method, params });
        return answer;
    }

    notify(method, params) {
        this.#send({ jsonrpc: "2.0", method, params });
    }

    /** Calls a tool; resolves to the texts of its answer's content. */
    async call(name, args = {}) {
        const result = await this.request("tools/call", { name, arguments: args });
        return (result.content ?? []).map((block) => block.text);
    }

    close() {
        this.#frame(0x8, Buffer.alloc(0));
        this.#socket.end();
    }

    #send(message) {
        this.#frame(0x1, Buffer.from(JSON.stringify(message), "utf8"));
    }

    /** One final frame, masked as a client's must be. */
    #frame(opcode, payload) {
        const length = payload.length;
        const header = length < 126 ? Buffer.from([0x80 | opcode, 0x80 | length]) : Buffer.alloc(length < 65536 ? 4 : 10);
        if (length >= 126 && length < 65536) {
            header[0] = 0x80 | opcode;
            header[1] = 0x80 | 126;
            header.writeUInt16BE(length, 2);
        } else if (length >= 65536) {
            header[0] = 0x80 | opcode;
            header[1] = 0x80 | 127;
            header.writeBigUInt64BE(BigInt(length), 2);
        }
        const mask = randomBytes(4);
        const masked = Buffer.from(payload);
        for (let i = 0; i < masked.length; i++) masked[i] ^= mask[i % 4];
        this.#socket.write(Buffer.concat([header, mask, masked]));
    }

    #onData(chunk) {
        this.#buffer = Buffer.concat([this.#buffer, chunk]);
        for (;;) {
            if (this.#buffer.length < 2) return;
            const opcode = this.#buffer[0] & 0x0f;
            let length = this.#buffer[1] & 0x7f;
            let offset = 2;
            if (length === 126) {
                if (this.#buffer.length < 4) return;
                length = this.#buffer.readUInt16BE(2);
                offset = 4;
            } else if (length === 127) {
                if (this.#buffer.length < 10) return;
                length = Number(this.#buffer.readBigUInt64BE(2));
                offset = 10;
            }
            if (this.#buffer.length < offset + length) return;
            const payload = this.#buffer.subarray(offset, offset + length);
            this.#buffer = this.#buffer.subarray(offset + length);
            if (opcode === 0x9) this.#frame(0xa, payload);
            if (opcode !== 0x1) continue;
            const message = JSON.parse(payload.toString("utf8"));
            if (message.id === undefined || message.method !== undefined) continue; // A notification, or a request to us.
            const pending = this.#pending.get(message.id);
            if (pending === undefined) continue;
            this.#pending.delete(message.id);
            if (message.error) pending.reject(new Error(`${message.error.message} (code ${message.error.code})`));
            else pending.resolve(message.result);
        }
    }
}
