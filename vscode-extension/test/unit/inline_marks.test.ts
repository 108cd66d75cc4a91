import * as assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { TextEdit } from "vscode-languageserver-protocol";

import { hunkAt, type Hunk, type ProposedDocument } from "../../src/hunks";
import { DEFAULT_DIFF_MAX_LINES, hunkMarks, insertionLabel, LINE_END, readDiffMaxLines, usesFastPath } from "../../src/inline_marks";

const URI = "file:///p/a.txt";

/** A text edit from "line:col-line:col". */
function edit(range: string, newText: string): TextEdit {
    const [start, end] = range.split("-").map((position) => position!.split(":").map(Number));
    return { range: { start: { line: start![0]!, character: start![1]! }, end: { line: end![0]!, character: end![1]! } }, newText };
}

const range = (text: string) => edit(text, "").range;

describe("the switch between the diff and the file's own editor", () => {
    test("more lines than the limit: the file's own editor; 0: always", () => {
        assert.equal(usesFastPath(5000, 5000), false);
        assert.equal(usesFastPath(5001, 5000), true);
        assert.equal(usesFastPath(1, 0), true);
        assert.equal(usesFastPath(0, 0), true);
    });

    test("the setting: a whole number of lines, 0 or more, else the default", () => {
        assert.equal(readDiffMaxLines(undefined), DEFAULT_DIFF_MAX_LINES);
        assert.equal(readDiffMaxLines(0), 0);
        assert.equal(readDiffMaxLines(200), 200);
        for (const bad of [-1, 1.5, "100", null, Number.NaN]) assert.equal(readDiffMaxLines(bad), DEFAULT_DIFF_MAX_LINES, String(bad));
    });
});

describe("insertionLabel", () => {
    test("one line shows as it is; a final line break as ⏎", () => {
        assert.deepEqual(insertionLabel("let x = 10;"), { label: "let x = 10;", hover: undefined });
        assert.deepEqual(insertionLabel("    let v = 5;\n"), { label: "    let v = 5; ⏎", hover: undefined });
    });

    test("several lines: the first, how many more, and the whole text for the hover", () => {
        assert.deepEqual(insertionLabel("a\nb\nc\n"), { label: "a … (+2 lines)", hover: "a\nb\nc\n" });
        assert.deepEqual(insertionLabel("a\r\nb"), { label: "a … (+1 line)", hover: "a\r\nb" });
        assert.deepEqual(insertionLabel("\nb"), { label: " … (+1 line)", hover: "\nb" });
    });
});

describe("hunkMarks", () => {
    // Hunk 0: line 2 "x" → "X" (one edit); hunk 1: lines 10-11 removed, with three lines inserted at line 12.
    const document: ProposedDocument = {
        uri: URI,
        version: 4,
        edits: [edit("10:0-12:0", ""), edit("2:4-2:5", "X"), edit("12:0-12:0", "p\nq\nr\n")],
    };
    const hunks: Hunk[] = [
        { index: 0, uri: URI, edits: [1] },
        { index: 1, uri: URI, edits: [0, 2] },
        { index: 2, uri: "file:///p/other.txt", edits: [0] },
    ];

    test("removed ranges and inserted texts, from the edits alone, in document order", () => {
        const marks = hunkMarks(document, hunks, []);
        assert.deepEqual(marks, [
            {
                index: 0,
                line: 2,
                endLine: 2,
                proposalLine: 2,
                proposalEndLine: 2,
                removed: [range("2:4-2:5")],
                inserted: [{ range: range("2:4-2:5"), label: "X", hover: undefined }],
            },
            {
                index: 1,
                line: 10,
                endLine: 12,
                proposalLine: 10,
                proposalEndLine: 12,
                removed: [range("10:0-12:0")],
                inserted: [{ range: range("12:0-12:0"), label: "p … (+2 lines)", hover: "p\nq\nr\n" }],
            },
        ]);
    });

    test("whole lines removed and replaced: the new text shows at the end of the last removed line", () => {
        const replacing: ProposedDocument = { uri: URI, version: 1, edits: [edit("3:0-5:0", "new\n")] };
        const [mark] = hunkMarks(replacing, [{ index: 0, uri: URI, edits: [0] }], []);
        assert.deepEqual(mark?.inserted, [{ range: { start: { line: 3, character: 0 }, end: { line: 4, character: LINE_END } }, label: "new ⏎", hover: undefined }]);
        assert.equal(mark?.endLine, 4);
    });

    test("a rejected hunk keeps its lines but shows no change; an accepted one still shows", () => {
        const marks = hunkMarks(document, hunks, ["rejected", "accepted"]);
        assert.deepEqual(marks[0]?.removed, []);
        assert.deepEqual(marks[0]?.inserted, []);
        assert.equal(marks[0]?.line, 2);
        assert.equal(marks[1]?.removed.length, 1);
    });

    test("hunkAt finds the hunk at the cursor in the document's lines", () => {
        const marks = hunkMarks(document, hunks, []);
        assert.equal(hunkAt(marks, 2, "base")?.index, 0);
        assert.equal(hunkAt(marks, 11, "base")?.index, 1);
        assert.equal(hunkAt(marks, 5, "base")?.index, 1);
        assert.equal(hunkAt(marks, 40, "base")?.index, 1);
    });
});
