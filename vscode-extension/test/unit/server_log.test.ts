import * as assert from "node:assert/strict";
import { test } from "node:test";

import { parseServerLogLine } from "../../src/server_log";

test("tracing lines keep their level, lose the timestamp", () => {
    assert.deepEqual(parseServerLogLine("2026-11-30T09:12:44.123456Z  WARN verbatim::agent: agent went away"), {
        level: "warn",
        message: "verbatim::agent: agent went away",
    });
    assert.deepEqual(parseServerLogLine("2026-11-30T09:12:44Z ERROR verbatim: boom"), { level: "error", message: "verbatim: boom" });
    assert.deepEqual(parseServerLogLine("DEBUG verbatim::lsp: didChange"), { level: "debug", message: "verbatim::lsp: didChange" });
});

test("colour codes are removed", () => {
    assert.deepEqual(parseServerLogLine("\u001b[2m2026-11-30T09:12:44Z\u001b[0m \u001b[32m INFO\u001b[0m verbatim: listening"), {
        level: "info",
        message: "verbatim: listening",
    });
});

test("other lines stay at info", () => {
    assert.deepEqual(parseServerLogLine("thread 'main' panicked at src/main.rs:3:5:"), {
        level: "info",
        message: "thread 'main' panicked at src/main.rs:3:5:",
    });
    assert.deepEqual(parseServerLogLine("  the INFO word later on"), { level: "info", message: "  the INFO word later on" });
});
