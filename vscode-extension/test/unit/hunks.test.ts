import * as assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ApplyWorkspaceEditParams, CreateFile, DeleteFile, RenameFile, TextDocumentEdit, TextEdit } from "vscode-languageserver-protocol";

import {
    acceptedEdits,
    allDecided,
    answerFor,
    applyEdits,
    carryDecisions,
    decidedWhole,
    describeOperations,
    editSteps,
    fileView,
    groupHunks,
    hunkAt,
    hunkKeys,
    joinReasons,
    lineStarts,
    nextUndecided,
    noteHeadline,
    offsetAt,
    proposalView,
    readProposal,
    sourceUri,
    targetUri,
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

/** Params whose `documentChanges` are `changes`, as the server sends them, with its hunks. */
function withChanges(changes: (TextDocumentEdit | CreateFile | RenameFile | DeleteFile)[], hunks?: { uri: string; edits: number[] }[]): ApplyWorkspaceEditParams {
    return {
        label: "codex: Reorganise",
        edit: { documentChanges: changes, changeAnnotations: { "verbatim/9": { label: "codex: Reorganise", needsConfirmation: true } } },
        verbatim: { id: 9, agent: "codex", summary: "Reorganise", origin: "agent", offer: 1, hunks: hunks ?? [] },
    } as ApplyWorkspaceEditParams;
}

const NEVER_OVERWRITE = { overwrite: false, ignoreIfExists: false };

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
        assert.equal(proposal.agent, "claude");
        assert.deepEqual(
            proposal.hunks.map((hunk) => hunk.edits),
            [[0], [1, 2]],
        );
    });

    test("keeps a hunk's note (a revert's conflict), and only a note that says something", () => {
        const note = "Conflict: a later change also touched line 2. Accepting this hunk takes it back.";
        const proposal = readProposal(
            params([{ uri: URI, version: 3, edits: EDITS }], {
                id: 4,
                offer: 1,
                hunks: [
                    { uri: URI, edits: [0], note },
                    { uri: URI, edits: [1, 2], note: "" },
                ],
            }),
        );
        assert.deepEqual(
            proposal?.hunks.map((hunk) => hunk.note),
            [note, undefined],
        );
        assert.equal(noteHeadline(note), "Conflict: a later change also touched line 2");
        assert.equal(noteHeadline("No sentence end here"), "No sentence end here");
        assert.equal(noteHeadline("x".repeat(100)), `${"x".repeat(79)}…`);
        assert.equal(noteHeadline("v1.2 is kept. Then more"), "v1.2 is kept");
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

    test("leaves out edits that change nothing, and those with a change it does not know", () => {
        assert.equal(readProposal(params([{ uri: URI, version: 1, edits: [] }])), undefined);
        assert.equal(readProposal(withChanges([{ kind: "copy", uri: URI } as unknown as DeleteFile])), undefined);
    });

    test("a change on disk", () => {
        const disk = params([{ uri: URI, version: 1, edits: EDITS }]);
        disk.edit.changeAnnotations = { "verbatim/disk/3": { label: "Changed on disk", needsConfirmation: true } };
        assert.equal(readProposal(disk)?.origin, "disk");
        assert.equal(readProposal(disk)?.agent, undefined);
    });
});

describe("readProposal: files created, moved and deleted", () => {
    const NEW = "file:///p/new.rs";
    const MOVED = "file:///p/moved.txt";

    test("a created file with its text, and an edit of another file: two files, the order kept, the server's hunks taken", () => {
        const changes = [
            { kind: "create", uri: NEW, options: NEVER_OVERWRITE } satisfies CreateFile,
            { textDocument: { uri: NEW, version: null }, edits: [edit("0:0-0:0", "fn new() {}\n")] },
            { textDocument: { uri: URI, version: 4 }, edits: EDITS },
        ];
        const hunks = [
            { uri: NEW, edits: [0] },
            { uri: URI, edits: [0] },
            { uri: URI, edits: [1, 2] },
        ];
        const proposal = readProposal(withChanges(changes, hunks));
        assert.ok(proposal);
        assert.deepEqual(proposal.operations, [{ kind: "create", uri: NEW, options: NEVER_OVERWRITE, change: 0 }]);
        assert.deepEqual(
            proposal.files.map((file) => [file.uri, file.document?.uri, file.operation?.kind]),
            [
                [NEW, NEW, "create"],
                [URI, URI, undefined],
            ],
        );
        assert.deepEqual(
            proposal.hunks.map((hunk) => [hunk.index, hunk.uri, hunk.edits]),
            [
                [0, NEW, [0]],
                [1, URI, [0]],
                [2, URI, [1, 2]],
            ],
        );
        assert.equal(decidedWhole(proposal), true);
        assert.equal(describeOperations(proposal), "creates new.rs");
        assert.equal(fileView("", proposal.files[0]!, proposal.hunks, []).text, "fn new() {}\n");
        assert.deepEqual(
            editSteps(proposal, ["accepted", "accepted", "accepted"]).map((step) => [step.kind, step.uri]),
            [
                ["create", NEW],
                ["edit", NEW],
                ["edit", URI],
            ],
        );
        assert.deepEqual(answerFor(proposal, ["accepted", "accepted", "accepted"], undefined, "accepted"), {
            applied: true,
            hunks: [0, 1, 2].map((index) => ({ index, accepted: true })),
        });
    });

    test("a moved file with its edits, made before the move as the server does: one file, from the old name to the new", () => {
        const changes = [
            { textDocument: { uri: URI, version: 2 }, edits: EDITS },
            { kind: "rename", oldUri: URI, newUri: MOVED, options: NEVER_OVERWRITE } satisfies RenameFile,
        ];
        const proposal = readProposal(withChanges(changes, [{ uri: URI, edits: [0, 1, 2] }]));
        assert.ok(proposal);
        assert.equal(proposal.files.length, 1);
        const [file] = proposal.files;
        assert.deepEqual([file!.uri, sourceUri(file!), targetUri(file!)], [URI, URI, MOVED]);
        assert.equal(fileView(BASE, file!, proposal.hunks, []).text, "one\nTWO\nthree\n4\n");
        assert.deepEqual(proposal.operations, [{ kind: "rename", uri: URI, newUri: MOVED, options: NEVER_OVERWRITE, change: 1 }]);
        assert.deepEqual(
            editSteps(proposal, ["accepted"]).map((step) => step.kind),
            ["edit", "rename"],
        );
        assert.equal(describeOperations(proposal), "moves a.txt → moved.txt");
    });

    test("a moved file with its edits after the move, on the new name: one file; the edits are the new name's", () => {
        const changes = [
            { kind: "rename", oldUri: URI, newUri: MOVED } satisfies RenameFile,
            { textDocument: { uri: MOVED, version: null }, edits: [edit("0:0-0:3", "ONE")] },
        ];
        const proposal = readProposal(withChanges(changes));
        assert.ok(proposal);
        assert.equal(proposal.files.length, 1);
        const [file] = proposal.files;
        assert.deepEqual([file!.uri, sourceUri(file!), targetUri(file!)], [MOVED, URI, MOVED]);
        assert.deepEqual(
            proposal.hunks.map((hunk) => [hunk.uri, hunk.edits]),
            [[MOVED, [0]]],
        );
        assert.deepEqual(
            editSteps(proposal, ["accepted"]).map((step) => step.kind),
            ["rename", "edit"],
        );
    });

    test("a file moved without edits, and one deleted: no hunks; shown as they are, and as nothing", () => {
        const changes = [
            { kind: "rename", oldUri: URI, newUri: MOVED, options: NEVER_OVERWRITE } satisfies RenameFile,
            { kind: "delete", uri: OTHER, options: { recursive: false, ignoreIfNotExists: false } } satisfies DeleteFile,
        ];
        const proposal = readProposal(withChanges(changes));
        assert.ok(proposal, "an edit of file operations only is reviewed too");
        assert.deepEqual(proposal.hunks, []);
        assert.deepEqual(
            proposal.files.map((file) => [file.uri, file.document, file.operation?.kind]),
            [
                [URI, undefined, "rename"],
                [OTHER, undefined, "delete"],
            ],
        );
        assert.equal(fileView(BASE, proposal.files[0]!, proposal.hunks, []).text, BASE);
        assert.deepEqual(fileView(BASE, proposal.files[1]!, proposal.hunks, []), { text: "", hunks: [] });
        assert.deepEqual(editSteps(proposal, []), proposal.operations);
        assert.deepEqual(proposal.operations[1], { kind: "delete", uri: OTHER, options: { recursive: false, ignoreIfNotExists: false }, change: 1 });
        assert.equal(describeOperations(proposal), "moves a.txt → moved.txt, deletes b.txt");
        assert.deepEqual(answerFor(proposal, [], undefined, "accepted"), { applied: true, hunks: [] });
        assert.deepEqual(answerFor(proposal, [], "keep b", "rejected"), { applied: false, failureReason: "keep b", hunks: [] });
    });

    test("an edit without file operations is decided hunk by hunk, as before", () => {
        const proposal = readProposal(params([{ uri: URI, version: 1, edits: EDITS }]))!;
        assert.equal(decidedWhole(proposal), false);
        assert.deepEqual(
            proposal.files.map((file) => [file.uri, file.operation]),
            [[URI, undefined]],
        );
        assert.deepEqual(editSteps(proposal, ["accepted", "rejected"]), [{ kind: "edit", uri: URI, edits: [EDITS[0]] }]);
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
