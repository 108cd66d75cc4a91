import * as assert from "node:assert/strict";
import { describe, test } from "node:test";

import { applyReplacement, EXPECTED_WRITE_MS, ExpectedWrites, externalChangeAction, restoringEdit } from "../../src/external";
import type { ExternalChangeKind } from "../../src/lsp_ext";
import { editedDocuments, isDiskEdit, withReviewMode } from "../../src/review";

describe("externalChangeAction", () => {
    const action = (kind: ExternalChangeKind, conflicts = 0, movedTo?: string) =>
        externalChangeAction({
            kind,
            conflicts: Array.from({ length: conflicts }, () => ({ line: 4, endLine: 4, diskLine: 4, diskEndLine: 5 })),
            movedTo,
        });

    test("reload: VS Code reloads a clean document by itself", () => {
        assert.deepEqual(action("reload"), { show: false, compare: undefined, resync: false });
    });

    test("offered: the review shows it; conflicts are told, with a comparison", () => {
        assert.deepEqual(action("offered"), { show: false, compare: undefined, resync: false });
        assert.deepEqual(action("offered", 1), { show: true, compare: "disk", resync: false });
    });

    test("conflict and synced bring VS Code's record of the file up to date at once", () => {
        assert.deepEqual(action("conflict", 2), { show: true, compare: "disk", resync: true });
        assert.deepEqual(action("synced"), { show: false, compare: undefined, resync: true });
    });

    test("deleted and moved are told; a moved file is compared where it went", () => {
        assert.deepEqual(action("deleted"), { show: true, compare: undefined, resync: false });
        assert.deepEqual(action("moved", 0, "file:///p/b.txt"), { show: true, compare: "movedTo", resync: false });
        assert.deepEqual(action("moved"), { show: true, compare: undefined, resync: false });
    });
});

describe("restoringEdit", () => {
    function check(from: string, to: string, expected: { start: number; end: number; text: string } | undefined): void {
        const edit = restoringEdit(from, to);
        assert.deepEqual(edit, expected);
        assert.equal(edit === undefined ? from : applyReplacement(from, edit), to);
    }

    test("equal texts need no edit", () => check("a\nb\n", "a\nb\n", undefined));
    test("one line in the middle", () => check("a\nb\nc\n", "a\nB\nc\n", { start: 2, end: 4, text: "B\n" }));
    test("a line added at the end without a newline", () => check("a\nb\n", "a\nb\nc", { start: 4, end: 4, text: "c" }));
    test("text typed at the end of the last line", () => check("a\nb", "a\nbc", { start: 2, end: 3, text: "bc" }));
    test("a line removed", () => check("a\nb\nc\n", "a\nc\n", { start: 2, end: 4, text: "" }));
    test("two distant changes: one replacement spanning both", () =>
        check("1\n2\n3\n4\n", "one\n2\n3\nfour\n", { start: 0, end: 8, text: "one\n2\n3\nfour\n" }));
    test("whole lines keep a CRLF pair together", () =>
        check("a\r\nb\r\n", "a\r\nb\nx\r\n", { start: 3, end: 6, text: "b\nx\r\n" }));
    test("whole lines keep a surrogate pair together", () => check("x😀\n", "x😃\n", { start: 0, end: 4, text: "x😃\n" }));
    test("from empty and to empty", () => {
        check("", "a\n", { start: 0, end: 0, text: "a\n" });
        check("a\n", "", { start: 0, end: 2, text: "" });
    });
    test("a repeated line does not confuse prefix and suffix", () => check("a\na\n", "a\na\na\n", { start: 4, end: 4, text: "a\n" }));
});

describe("changes made on disk in workspace/applyEdit", () => {
    const diskEdit = {
        label: "Changed on disk outside the editor: notes.txt (at 09:13:05)",
        edit: {
            documentChanges: [
                {
                    textDocument: { uri: "file:///p/notes.txt", version: 7 },
                    edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 5 } }, newText: "ALPHA", annotationId: "verbatim/disk/3" }],
                },
            ],
            changeAnnotations: {
                "verbatim/disk/3": {
                    label: "Changed on disk outside the editor: notes.txt (at 09:13:05)",
                    description: "Changed on disk outside the editor: notes.txt (at 09:13:05)",
                    needsConfirmation: true,
                },
            },
        },
    };

    test("are told apart from agents' edits", () => {
        assert.equal(isDiskEdit(diskEdit), true);
        assert.equal(isDiskEdit({ edit: { changeAnnotations: { "verbatim/12": { label: "a: b" } } } }), false);
        assert.equal(isDiskEdit({ edit: { changes: {} } }), false);
    });

    test("keep the server's needsConfirmation (the externalChanges setting), whatever the agents' review mode", () => {
        const rewritten = withReviewMode(diskEdit, "auto");
        assert.deepEqual(rewritten.edit.changeAnnotations, {
            "verbatim/disk/3": { label: "Changed on disk outside the editor: notes.txt (at 09:13:05)", needsConfirmation: true },
        });
    });

    test("name the documents they change and the versions they were planned against", () => {
        assert.deepEqual(editedDocuments(diskEdit), [{ uri: "file:///p/notes.txt", version: 7 }]);
        assert.deepEqual(editedDocuments({ edit: { changes: { "file:///p/a.txt": [] } } }), [{ uri: "file:///p/a.txt", version: null }]);
    });
});

describe("ExpectedWrites: Claude Code writes the file once the person has accepted its edit", () => {
    const URI = "file:///p/notes.txt";

    test("a write expected is taken once", () => {
        const writes = new ExpectedWrites(() => 1_000);
        assert.equal(writes.take(URI), false);
        writes.expect(URI);
        assert.equal(writes.take("file:///p/other.txt"), false);
        assert.equal(writes.take(URI), true);
        assert.equal(writes.take(URI), false, "the next change is not that write");
    });

    test("a write that never comes is forgotten", () => {
        let now = 0;
        const writes = new ExpectedWrites(() => now);
        writes.expect(URI);
        now = EXPECTED_WRITE_MS;
        assert.equal(writes.take(URI), true, "just in time");
        writes.expect(URI);
        now += EXPECTED_WRITE_MS + 1;
        assert.equal(writes.take(URI), false);
    });
});
