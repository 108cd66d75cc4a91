import * as assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ApplyWorkspaceEditParams, TextEdit } from "vscode-languageserver-protocol";

import {
    acceptedEdits,
    allDecided,
    answerFor,
    applyEdits,
    carryDecisions,
    groupHunks,
    hunkAt,
    hunkKeys,
    joinReasons,
    lineStarts,
    nextUndecided,
    offsetAt,
    proposalView,
    readProposal,
    type Decision,
    type Proposal,
} from "../../src/hunks";

const URI = "file:///p/a.txt";
const OTHER = "file:///p/b.txt";

/** A text edit from "line:col-line:col". */
function edit(range: string, newText: string): TextEdit {
    const [start, end] = range.split("-").map((position) => position!.split(":").map(Number));
    return { range: { start: { line: start![0]!, character: start![1]! }, end: { line: end![0]!, character: end![1]! } }, newText };
}

function params(documents: { uri: string; version: number | null; edits: TextEdit[] }[], verbatim?: unknown): ApplyWorkspaceEditParams {
    return {
        label: "claude: Rename x",
        edit: {
            documentChanges: documents.map((document) => ({ textDocument: { uri: document.uri, version: document.version }, edits: document.edits })),
            changeAnnotations: { "verbatim/7": { label: "claude: Rename x", needsConfirmation: true } },
        },
        ...(verbatim === undefined ? {} : { verbatim }),
    } as ApplyWorkspaceEditParams;
}

const BASE = "one\ntwo\nthree\nfour\nfive\n";
/** Two hunks: line 1 ("two" → "TWO"), and lines 3-4 ("four" → "4", "five" removed with its line). */
const EDITS = [edit("1:0-1:3", "TWO"), edit("3:0-3:4", "4"), edit("4:0-5:0", "")];

describe("readProposal", () => {
    test("takes the server's hunks, id and offer", () => {
        const proposal = readProposal(
            params([{ uri: URI, version: 3, edits: EDITS }], {
                id: 12,
                agent: "claude",
                summary: "Rename x",
                origin: "agent",
                offer: 2,
                hunks: [
                    { uri: URI, edits: [0] },
                    { uri: URI, edits: [1, 2] },
                ],
            }),
        );
        assert.ok(proposal);
        assert.equal(proposal.key, "id 12");
        assert.equal(proposal.offer, 2);
        assert.equal(proposal.label, "claude: Rename x");
        assert.deepEqual(
            proposal.hunks.map((hunk) => hunk.edits),
            [[0], [1, 2]],
        );
    });

    test("groups the edits itself when the server lists no hunks, or hunks that do not cover every edit once", () => {
        for (const verbatim of [undefined, { id: 1, offer: 1, hunks: [{ uri: URI, edits: [0, 0] }] }]) {
            const proposal = readProposal(params([{ uri: URI, version: 3, edits: EDITS }], verbatim));
            assert.deepEqual(
                proposal?.hunks.map((hunk) => hunk.edits),
                [[0], [1, 2]],
            );
        }
    });

    test("leaves out edits that create, rename or delete files", () => {
        const withCreate = params([{ uri: URI, version: 1, edits: EDITS }]);
        withCreate.edit.documentChanges!.unshift({ kind: "create", uri: OTHER });
        assert.equal(readProposal(withCreate), undefined);
    });

    test("a change on disk", () => {
        const disk = params([{ uri: URI, version: 1, edits: EDITS }]);
        disk.edit.changeAnnotations = { "verbatim/disk/3": { label: "Changed on disk", needsConfirmation: true } };
        assert.equal(readProposal(disk)?.origin, "disk");
    });
});

describe("groupHunks", () => {
    test("neighbouring lines form one hunk; an unchanged line between edits separates them; documents apart", () => {
        const hunks = groupHunks([
            { uri: URI, version: 1, edits: [edit("5:0-5:1", "x"), edit("0:0-0:1", "a"), edit("1:2-1:3", "b"), edit("3:0-3:1", "c")] },
            { uri: OTHER, version: 1, edits: [edit("0:0-0:0", "new\n")] },
        ]);
        assert.deepEqual(
            hunks.map((hunk) => [hunk.index, hunk.uri, hunk.edits]),
            [
                [0, URI, [1, 2]],
                [1, URI, [3]],
                [2, URI, [0]],
                [3, OTHER, [0]],
            ],
        );
    });
});

describe("texts", () => {
    test("lines end at \\n, \\r\\n and \\r", () => {
        assert.deepEqual(lineStarts("a\nb\r\nc\rd"), [0, 2, 5, 7]);
    });

    test("a character past the end of its line is clamped before the line break", () => {
        const text = "ab\r\ncd";
        assert.equal(offsetAt(text, lineStarts(text), { line: 0, character: 9 }), 2);
        assert.equal(offsetAt(text, lineStarts(text), { line: 7, character: 0 }), text.length);
    });

    test("applyEdits in any order", () => {
        assert.equal(applyEdits(BASE, [...EDITS].reverse()), "one\nTWO\nthree\n4\n");
    });
});

describe("proposalView", () => {
    const proposal = readProposal(params([{ uri: URI, version: 1, edits: EDITS }]))!;
    const document = proposal.documents[0]!;

    test("every hunk shown while undecided or accepted; lines on both sides", () => {
        const view = proposalView(BASE, document, proposal.hunks, []);
        assert.equal(view.text, "one\nTWO\nthree\n4\n");
        assert.deepEqual(view.hunks, [
            { index: 0, line: 1, endLine: 1, proposalLine: 1, proposalEndLine: 1 },
            { index: 1, line: 3, endLine: 5, proposalLine: 3, proposalEndLine: 4 },
        ]);
    });

    test("a rejected hunk is left out, and the lines below move", () => {
        const inserting = readProposal(params([{ uri: URI, version: 1, edits: [edit("0:3-0:3", "\nzero\nhalf"), edit("3:0-3:4", "4")] }]))!;
        const decisions: Decision[] = ["rejected", undefined];
        const view = proposalView(BASE, inserting.documents[0]!, inserting.hunks, decisions);
        assert.equal(view.text, "one\ntwo\nthree\n4\nfive\n");
        assert.equal(view.hunks[1]!.proposalLine, 3);
        const shown = proposalView(BASE, inserting.documents[0]!, inserting.hunks, []);
        assert.equal(shown.text, "one\nzero\nhalf\ntwo\nthree\n4\nfive\n");
        assert.deepEqual(shown.hunks.map((hunk) => [hunk.proposalLine, hunk.proposalEndLine]), [[0, 2], [5, 5]]);
    });

    test("hunkAt: the hunk under the line, else the next below, else the last above", () => {
        const { hunks } = proposalView(BASE, document, proposal.hunks, []);
        assert.equal(hunkAt(hunks, 1, "proposal")?.index, 0);
        assert.equal(hunkAt(hunks, 2, "proposal")?.index, 1);
        assert.equal(hunkAt(hunks, 5, "base")?.index, 1);
        assert.equal(hunkAt(hunks, 9, "base")?.index, 1);
        assert.equal(hunkAt(hunks, 0, "base")?.index, 0);
    });
});

describe("decisions and the answer", () => {
    const proposal: Proposal = readProposal(params([{ uri: URI, version: 1, edits: EDITS }]))!;

    test("allDecided and nextUndecided", () => {
        assert.equal(allDecided(["accepted"], 2), false);
        assert.equal(allDecided(["accepted", "rejected"], 2), true);
        assert.equal(nextUndecided([undefined, "accepted", undefined], 3, 0), 2);
        assert.equal(nextUndecided([undefined, "accepted", "rejected"], 3, 0), 0);
        assert.equal(nextUndecided(["accepted", "accepted"], 2, 0), undefined);
    });

    test("one hunk of two accepted: applied, with the decisions and the reason", () => {
        const decisions: Decision[] = ["accepted", "rejected"];
        assert.deepEqual(acceptedEdits(proposal, decisions), new Map([[URI, [EDITS[0]]]]));
        assert.deepEqual(answerFor(proposal, decisions, "keep four"), {
            applied: true,
            hunks: [
                { index: 0, accepted: true },
                { index: 1, accepted: false },
            ],
            reason: "keep four",
        });
    });

    test("nothing accepted: not applied, the reason as failureReason", () => {
        const answer = answerFor(proposal, ["rejected", "rejected"], "not now");
        assert.equal(answer.applied, false);
        assert.equal(answer.failureReason, "not now");
        assert.equal(answerFor(proposal, ["rejected", "rejected"], undefined).failureReason, "rejected in review");
    });

    test("joinReasons drops empty reasons", () => {
        assert.equal(joinReasons(["", "  "]), undefined);
        assert.equal(joinReasons(["a", "", "b "]), "a; b");
    });
});

describe("a new offer of the same edit", () => {
    test("hunks that are unchanged keep their decision, though they moved", () => {
        const first = readProposal(params([{ uri: URI, version: 1, edits: EDITS }]))!;
        // The person typed a line at the top; the server moved the edit down a line and changed the first hunk.
        const typed = `typed\n${BASE}`;
        const again = readProposal(params([{ uri: URI, version: 2, edits: [edit("2:0-2:3", "Two"), edit("4:0-4:4", "4"), edit("5:0-6:0", "")] }]))!;
        const carried = carryDecisions(
            hunkKeys(first, () => BASE),
            ["accepted", "rejected"],
            hunkKeys(again, () => typed),
        );
        assert.deepEqual(carried, [undefined, "rejected"]);
    });

    test("equal hunks are matched in order", () => {
        assert.deepEqual(carryDecisions(["k", "k"], ["accepted", "rejected"], ["k", "k", "k"]), ["accepted", "rejected", undefined]);
    });
});
