import * as assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
    atLeast,
    DiagnosticsTracker,
    OPEN_GRACE_MS,
    sameDiagnostics,
    toWireDiagnostic,
    type Clock,
    type DiagnosticsSource,
} from "../../src/diagnostics";
import type { DiagnosticsParams, DiagnosticsResult, WireDiagnostic } from "../../src/lsp_ext";

/** A clock that moves only when the test says so. */
class FakeClock implements Clock {
    time = 0;
    private timers: { at: number; callback: () => void; id: number }[] = [];
    private nextId = 1;

    now(): number {
        return this.time;
    }
    setTimeout(callback: () => void, ms: number): unknown {
        const id = this.nextId++;
        this.timers.push({ at: this.time + ms, callback, id });
        return id;
    }
    clearTimeout(handle: unknown): void {
        this.timers = this.timers.filter((timer) => timer.id !== handle);
    }
    /** Moves time forward by `ms`, firing every timer due on the way, in order. */
    advance(ms: number): void {
        const end = this.time + ms;
        for (;;) {
            const due = this.timers.filter((timer) => timer.at <= end).sort((a, b) => a.at - b.at)[0];
            if (due === undefined) break;
            this.timers = this.timers.filter((timer) => timer !== due);
            this.time = due.at;
            due.callback();
        }
        this.time = end;
    }
}

interface FakeDocument {
    version: number;
    languageId: string;
}

/** The editor: documents with versions, diagnostics per URI, and changes announced to the tracker. */
class FakeEditor implements DiagnosticsSource {
    readonly documents = new Map<string, FakeDocument>();
    readonly current = new Map<string, WireDiagnostic[]>();
    readonly clock = new FakeClock();
    readonly tracker = new DiagnosticsTracker(this, this.clock);

    diagnostics(uri: string): WireDiagnostic[] {
        return this.current.get(uri) ?? [];
    }
    all(): Iterable<[string, WireDiagnostic[]]> {
        return this.current.entries();
    }
    version(uri: string): number | undefined {
        return this.documents.get(uri)?.version;
    }
    languageId(uri: string): string | undefined {
        return this.documents.get(uri)?.languageId;
    }

    open(uri: string, version: number, languageId = "javascript"): void {
        this.documents.set(uri, { version, languageId });
        this.tracker.didOpen(uri);
    }
    edit(uri: string, version: number): void {
        const document = this.documents.get(uri);
        assert.ok(document);
        document.version = version;
    }
    /** A language server publishes `diagnostics` for `uri`. */
    publish(uri: string, diagnostics: WireDiagnostic[]): void {
        this.current.set(uri, diagnostics);
        this.tracker.didChange([uri]);
    }
}

const A = "file:///p/a.js";
const B = "file:///p/b.js";
const C = "file:///p/c.js";

function problem(line: number, message: string, severity = 1, code: string | number = 2304): WireDiagnostic {
    return { range: { start: { line, character: 0 }, end: { line, character: 3 } }, severity, code, source: "ts", message };
}

function waitParams(versions: Record<string, number>, overrides: Partial<DiagnosticsParams> = {}): DiagnosticsParams {
    return { uris: Object.keys(versions), minSeverity: "error", wait: { versions, quietMs: 300, timeoutMs: 2500 }, ...overrides };
}

/** The promise's value if it has settled, after letting pending callbacks run. */
async function peek(promise: Promise<DiagnosticsResult>): Promise<DiagnosticsResult | undefined> {
    let value: DiagnosticsResult | undefined;
    void promise.then((result) => (value = result));
    await new Promise((resolve) => setImmediate(resolve));
    return value;
}

describe("verbatim/diagnostics: the wait", () => {
    test("settles once a change at the new version is followed by the quiet period", async () => {
        const editor = new FakeEditor();
        editor.open(A, 5);
        editor.publish(A, []);
        editor.edit(A, 6);
        const answer = editor.tracker.handle(waitParams({ [A]: 6 }));
        editor.clock.advance(100);
        editor.publish(A, [problem(2, "Cannot find name 'foo'.")]);
        editor.clock.advance(299);
        assert.equal(await peek(answer), undefined, "still inside the quiet period");
        editor.clock.advance(1);
        const result = await peek(answer);
        assert.ok(result);
        assert.deepEqual(result.documents, [
            { uri: A, version: 6, status: "settled", waitedMs: 400, sources: ["ts"], diagnostics: [problem(2, "Cannot find name 'foo'.")] },
        ]);
        assert.deepEqual(result.others, []);
    });

    test("a further change starts the quiet period again", async () => {
        const editor = new FakeEditor();
        editor.open(A, 6);
        const answer = editor.tracker.handle(waitParams({ [A]: 6 }));
        editor.publish(A, [problem(1, "first")]);
        editor.clock.advance(200);
        editor.publish(A, [problem(1, "second")]);
        editor.clock.advance(200);
        assert.equal(await peek(answer), undefined);
        editor.clock.advance(100);
        const result = await peek(answer);
        assert.equal(result?.documents[0]?.status, "settled");
        assert.equal(result?.documents[0]?.waitedMs, 500);
        assert.equal(result?.documents[0]?.diagnostics[0]?.message, "second");
    });

    test("a change at the new version seen before the request counts", async () => {
        const editor = new FakeEditor();
        editor.open(A, 6);
        editor.publish(A, [problem(1, "early")]);
        editor.clock.advance(1000);
        const result = await peek(editor.tracker.handle(waitParams({ [A]: 6 })));
        assert.equal(result?.documents[0]?.status, "settled");
        assert.equal(result?.documents[0]?.waitedMs, 0);
    });

    test("a change before the request still needs its quiet period", async () => {
        const editor = new FakeEditor();
        editor.open(A, 7);
        editor.publish(A, []);
        editor.clock.advance(100);
        const answer = editor.tracker.handle(waitParams({ [A]: 7 }));
        editor.clock.advance(199);
        assert.equal(await peek(answer), undefined);
        editor.clock.advance(1);
        assert.deepEqual((await peek(answer))?.documents.map((d) => [d.status, d.waitedMs]), [["settled", 200]]);
    });

    test("a change made at an older version does not count, and the timeout gives timedOut, never settled", async () => {
        const editor = new FakeEditor();
        editor.open(A, 5);
        editor.publish(A, [problem(1, "stale")]);
        editor.edit(A, 6);
        const answer = editor.tracker.handle(waitParams({ [A]: 6 }));
        editor.clock.advance(2499);
        assert.equal(await peek(answer), undefined);
        editor.clock.advance(1);
        const result = await peek(answer);
        assert.deepEqual(result?.documents.map((d) => [d.status, d.waitedMs, d.version]), [["timedOut", 2500, 6]]);
        assert.equal(result?.documents[0]?.diagnostics[0]?.message, "stale", "what the editor holds, flagged as timedOut");
    });

    test("changes that never stop give timedOut at the cap", async () => {
        const editor = new FakeEditor();
        editor.open(A, 6);
        const answer = editor.tracker.handle(waitParams({ [A]: 6 }));
        for (let elapsed = 0; elapsed < 2500; elapsed += 200) {
            editor.publish(A, [problem(1, `at ${elapsed}`)]);
            editor.clock.advance(200);
        }
        const result = await peek(answer);
        assert.equal(result?.documents[0]?.status, "timedOut");
        assert.equal(result?.documents[0]?.waitedMs, 2500);
    });

    test("every document must settle; each reports when it did", async () => {
        const editor = new FakeEditor();
        editor.open(A, 3);
        editor.open(B, 9);
        const answer = editor.tracker.handle(waitParams({ [A]: 3, [B]: 9 }));
        editor.publish(A, []);
        editor.clock.advance(1000);
        assert.equal(await peek(answer), undefined, "B has not changed yet");
        editor.publish(B, [problem(4, "broken")]);
        editor.clock.advance(300);
        const result = await peek(answer);
        assert.deepEqual(result?.documents.map((d) => [d.uri, d.status, d.waitedMs]), [
            [A, "settled", 300],
            [B, "settled", 1300],
        ]);
    });

    test("a document nothing ever reported on is unavailable, not timedOut, when the wait ends", async () => {
        const editor = new FakeEditor();
        editor.open(A, 2, "javascript");
        const answer = editor.tracker.handle(waitParams({ [A]: 2 }));
        editor.clock.advance(2500);
        assert.deepEqual((await peek(answer))?.documents.map((d) => [d.status, d.sources]), [["unavailable", []]]);
    });

    test("a document of a language that got diagnostics elsewhere is watched: timedOut, not unavailable", async () => {
        const editor = new FakeEditor();
        editor.open(B, 1, "javascript");
        editor.publish(B, [problem(0, "elsewhere")]);
        editor.open(A, 2, "javascript");
        editor.open(C, 1, "markdown");
        const answer = editor.tracker.handle(waitParams({ [A]: 2, [C]: 1 }));
        editor.clock.advance(2500);
        assert.deepEqual((await peek(answer))?.documents.map((d) => [d.uri, d.status]), [
            [A, "timedOut"],
            [C, "unavailable"],
        ]);
    });

    test("plain text and documents that are not open are unavailable at once, unless something reported on them", async () => {
        const editor = new FakeEditor();
        editor.open(A, 2, "plaintext");
        const notOpen = "file:///p/closed.js";
        const result = await peek(editor.tracker.handle(waitParams({ [A]: 2, [notOpen]: 1 })));
        assert.deepEqual(result?.documents.map((d) => [d.status, d.waitedMs, d.version]), [
            ["unavailable", 0, 2],
            ["unavailable", 0, null],
        ]);

        editor.publish(A, [problem(0, "spelling", 2, "cSpell")]);
        editor.edit(A, 3);
        const answer = editor.tracker.handle(waitParams({ [A]: 3 }));
        assert.equal(await peek(answer), undefined, "a plain text document with a checker is waited for");
        editor.clock.advance(2500);
        assert.equal((await peek(answer))?.documents[0]?.status, "timedOut");
    });

    test("sources include those seen earlier on the document", async () => {
        const editor = new FakeEditor();
        editor.open(A, 1);
        editor.publish(A, [problem(0, "old")]);
        editor.edit(A, 2);
        editor.publish(A, []);
        editor.clock.advance(300);
        const result = await peek(editor.tracker.handle(waitParams({ [A]: 2 })));
        assert.deepEqual(result?.documents[0], { uri: A, version: 2, status: "settled", waitedMs: 0, sources: ["ts"], diagnostics: [] });
    });
});

describe("verbatim/diagnostics: other documents", () => {
    test("only documents whose problems at minSeverity changed during the wait are reported, with before and after", async () => {
        const editor = new FakeEditor();
        editor.open(A, 1);
        editor.open(B, 1);
        editor.open(C, 1);
        const bBefore = [problem(0, "old in b")];
        editor.publish(B, bBefore);
        editor.publish(C, [problem(0, "c error"), problem(1, "c hint", 4)]);
        const answer = editor.tracker.handle(waitParams({ [A]: 1 }));
        editor.clock.advance(50);
        const bAfter = [problem(0, "old in b"), problem(5, "new in b")];
        editor.publish(B, bAfter);
        // Only a hint changes in C: nothing at minSeverity "error".
        editor.publish(C, [problem(0, "c error"), problem(2, "c hint moved", 4)]);
        editor.publish(A, []);
        editor.clock.advance(300);
        const result = await peek(answer);
        assert.equal(result?.documents[0]?.status, "settled");
        assert.deepEqual(result?.others, [{ uri: B, before: bBefore, after: bAfter }]);
    });

    test("a change before the wait is not reported", async () => {
        const editor = new FakeEditor();
        editor.open(A, 1);
        editor.publish(B, [problem(0, "b")]);
        editor.publish(A, []);
        const result = await peek(editor.tracker.handle(waitParams({ [A]: 1 }, { wait: { versions: { [A]: 1 }, quietMs: 0, timeoutMs: 2500 } })));
        assert.deepEqual(result?.others, []);
    });

    test("a document that gains its first error during the wait has an empty before", async () => {
        const editor = new FakeEditor();
        editor.open(A, 1);
        const answer = editor.tracker.handle(waitParams({ [A]: 1 }, { minSeverity: "warning" }));
        editor.publish(B, [problem(3, "a warning", 2)]);
        editor.publish(A, []);
        editor.clock.advance(300);
        assert.deepEqual((await peek(answer))?.others, [{ uri: B, before: [], after: [problem(3, "a warning", 2)] }]);
    });
});

describe("verbatim/diagnostics: the baseline (no wait)", () => {
    test("answers at once with what the editor holds, at minSeverity", async () => {
        const editor = new FakeEditor();
        editor.open(A, 4);
        editor.open(B, 1, "markdown");
        editor.publish(A, [problem(0, "error"), problem(1, "warning", 2), problem(2, "info", 3)]);
        const result = await peek(editor.tracker.handle({ uris: [A, B], minSeverity: "warning" }));
        assert.deepEqual(result, {
            documents: [
                { uri: A, version: 4, status: "settled", waitedMs: 0, sources: ["ts"], diagnostics: [problem(0, "error"), problem(1, "warning", 2)] },
                { uri: B, version: 1, status: "unavailable", waitedMs: 0, sources: [], diagnostics: [] },
            ],
            others: [],
        });
    });
});

describe("verbatim/diagnostics: whether a baseline is believed", () => {
    test("a document of a watched language that has not been open long, and got no report, is unavailable until OPEN_GRACE_MS", async () => {
        const editor = new FakeEditor();
        editor.open(B, 1);
        editor.publish(B, [problem(0, "b")]);
        editor.open(A, 1);
        editor.clock.advance(OPEN_GRACE_MS - 1);
        const early = await peek(editor.tracker.handle({ uris: [A], minSeverity: "error" }));
        assert.equal(early?.documents[0]?.status, "unavailable", "its language server may not have checked it yet");
        editor.clock.advance(1);
        const later = await peek(editor.tracker.handle({ uris: [A], minSeverity: "error" }));
        assert.equal(later?.documents[0]?.status, "settled", "long enough: a clean document gets no report at all");
    });

    test("a document reported on is believed at once; one of a language nothing reported on never is", async () => {
        const editor = new FakeEditor();
        editor.open(A, 1);
        editor.publish(A, [problem(0, "a")]);
        editor.open(C, 1, "markdown");
        editor.clock.advance(10 * OPEN_GRACE_MS);
        const result = await peek(editor.tracker.handle({ uris: [A, C], minSeverity: "error" }));
        assert.deepEqual(result?.documents.map((d) => d.status), ["settled", "unavailable"]);
    });

    test("a closed and reopened document starts its grace again", async () => {
        const editor = new FakeEditor();
        editor.open(B, 1);
        editor.publish(B, []);
        editor.open(A, 1);
        editor.clock.advance(OPEN_GRACE_MS);
        editor.tracker.didClose(A);
        editor.tracker.didOpen(A);
        const result = await peek(editor.tracker.handle({ uris: [A], minSeverity: "error" }));
        assert.equal(result?.documents[0]?.status, "unavailable");
    });
});

describe("conversions", () => {
    test("VS Code's severity counts from 0, LSP's from 1; a { value, target } code sends its value", () => {
        const range = { start: { line: 3, character: 6 }, end: { line: 3, character: 9 } };
        assert.deepEqual(toWireDiagnostic({ range, severity: 0, code: 2304, source: "ts", message: "Cannot find name 'foo'." }), {
            range,
            severity: 1,
            code: 2304,
            source: "ts",
            message: "Cannot find name 'foo'.",
        });
        assert.deepEqual(toWireDiagnostic({ range, severity: 1, code: { value: "no-undef", target: { scheme: "https" } }, message: "m" }), {
            range,
            severity: 2,
            code: "no-undef",
            message: "m",
        });
        assert.deepEqual(toWireDiagnostic({ range, severity: 3, message: "hint" }), { range, severity: 4, message: "hint" });
    });

    test("atLeast and sameDiagnostics", () => {
        const all = [problem(0, "e"), problem(1, "w", 2), problem(2, "i", 3), problem(3, "h", 4)];
        assert.deepEqual(atLeast(all, "error").map((d) => d.message), ["e"]);
        assert.deepEqual(atLeast(all, "warning").map((d) => d.message), ["e", "w"]);
        assert.ok(sameDiagnostics([problem(0, "a"), problem(1, "b")], [problem(1, "b"), problem(0, "a")]));
        assert.ok(!sameDiagnostics([problem(0, "a")], [problem(1, "a")]));
        assert.ok(!sameDiagnostics([problem(0, "a")], [problem(0, "a"), problem(0, "a")]));
    });
});
