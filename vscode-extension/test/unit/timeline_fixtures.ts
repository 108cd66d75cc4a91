/**
 * `verbatim/timeline` results for the timeline's unit tests and its render
 * benchmark (test/bench/timeline_render.mjs), shaped as docs/protocol.md
 * documents them: sessions, turns and edits newest first.
 */

import type { TimelineEdit, TimelineResult, TimelineSession, TimelineTurn } from "../../src/lsp_ext";

/** The shape of a generated journal: how many sessions, turns per session, edits per turn and files per edit. */
export interface JournalShape {
    sessions: number;
    turnsPerSession: number;
    editsPerTurn: number;
    filesPerEdit: number;
}

/** 10,000 entries spread as a busy week of agents: 50 sessions × 10 turns × 10 edits × 2 files. */
export const SPREAD: JournalShape = { sessions: 50, turnsPerSession: 10, editsPerTurn: 10, filesPerEdit: 2 };
/** 10,000 entries in one turn of one session, one file each: the largest level there can be. */
export const ONE_TURN: JournalShape = { sessions: 1, turnsPerSession: 1, editsPerTurn: 10_000, filesPerEdit: 1 };

export function entriesOf(shape: JournalShape): number {
    return shape.sessions * shape.turnsPerSession * shape.editsPerTurn * shape.filesPerEdit;
}

const AGENTS = ["codex", "Claude Code", "Gemini CLI", "aider"];
const OUTCOMES = ["applied", "applied", "applied", "partial", "rejected", "modifiedByEditor"] as const;

/**
 * A generated result with `entriesOf(shape)` journal entries: each edit a
 * minute before the next, the newest at `newest`. Every seventh edit is
 * reverted by the one after it, every eleventh file cannot be reverted, and
 * every third file of a turn is marked reviewed.
 */
export function generatedTimeline(shape: JournalShape, newest = Date.parse("2026-12-03T12:00:00Z")): TimelineResult {
    let minute = 0;
    const at = (): string => new Date(newest - minute++ * 60_000).toISOString().replace(/\.000Z$/, "Z");
    const sessions: TimelineSession[] = [];
    let writeNumber = entriesOf(shape);
    for (let s = 0; s < shape.sessions; s++) {
        const agent = AGENTS[s % AGENTS.length] ?? "codex";
        const session: TimelineSession = {
            session: `session-${String(s).padStart(4, "0")}`,
            agent,
            source: "editor",
            started: "",
            ended: "",
            turns: [],
        };
        for (let t = 0; t < shape.turnsPerSession; t++) {
            const edits: TimelineEdit[] = [];
            const files = new Map<string, boolean>();
            let turnEnded = "";
            for (let e = 0; e < shape.editsPerTurn; e++) {
                const writeId = `18c3a9f2-41233-${writeNumber--}`;
                const time = at();
                if (e === 0) turnEnded = time;
                const edit: TimelineEdit = {
                    writeId,
                    time,
                    agent,
                    summary: `apply_patch src/module_${s}_${t}_${e}.rs`,
                    outcome: OUTCOMES[(s + t + e) % OUTCOMES.length] ?? "applied",
                    files: [],
                };
                for (let f = 0; f < shape.filesPerEdit; f++) {
                    const uri = `file:///p/src/dir_${f}/module_${s}_${t}_${(e + f) % 5}.rs`;
                    const revertible = (e + f) % 11 !== 10;
                    edit.files.push({
                        id: `${writeId}.${f}`,
                        uri,
                        outcome: edit.outcome,
                        added: (e * 7 + f) % 40,
                        removed: (e * 3 + f) % 13,
                        revertible,
                        ...(revertible ? {} : { whyNot: "tooLarge" as const }),
                    });
                    if (!files.has(uri)) files.set(uri, files.size % 3 === 0);
                }
                edits.push(edit);
            }
            // Edits are newest first: the one before each seventh is its revert.
            for (let e = 1; e < edits.length; e++) {
                const reverted = edits[e]!;
                const revert = edits[e - 1]!;
                if (e % 7 === 0 && revert.reverts === undefined && reverted.files.some((file) => file.revertible)) {
                    reverted.revertedBy = revert.writeId;
                    revert.reverts = reverted.files.map((file) => file.id);
                    revert.summary = `Revert ${reverted.summary}`;
                }
            }
            const turnStarted = edits[edits.length - 1]?.time ?? turnEnded;
            session.turns.push({
                turn: `turn-${s}-${t}`,
                started: turnStarted,
                ended: turnEnded,
                files: [...files].map(([uri, reviewed]) => ({ uri, reviewed })),
                edits,
                editCount: edits.length,
            });
        }
        session.ended = session.turns[0]?.ended ?? "";
        session.started = session.turns[session.turns.length - 1]?.started ?? "";
        sessions.push(session);
    }
    return { sessions, entries: entriesOf(shape), edits: shape.sessions * shape.turnsPerSession * shape.editsPerTurn, truncated: false };
}

/**
 * What the server answers with `maxEdits`, as docs/protocol.md says: the
 * newest `maxEdits` edits; the turn being filled when the bound is reached
 * keeps the edits it got (its `editCount` and `files` stay whole), older
 * turns and sessions are left out, and `truncated` says so. The stand-in
 * server of test/e2e/timeline_view.test.mjs answers with it too.
 */
export function withMaxEdits(result: TimelineResult, maxEdits: number): TimelineResult {
    let left = maxEdits;
    let truncated = result.truncated;
    const sessions: TimelineSession[] = [];
    for (const session of result.sessions) {
        if (left === 0) {
            truncated = true;
            break;
        }
        const turns: TimelineTurn[] = [];
        for (const turn of session.turns) {
            if (left === 0) {
                truncated = true;
                break;
            }
            const edits = turn.edits.slice(0, left);
            left -= edits.length;
            if (edits.length < turn.edits.length) truncated = true;
            turns.push({ ...turn, edits, editCount: turn.editCount ?? turn.edits.length });
        }
        sessions.push({ ...session, turns });
    }
    const edits = result.edits ?? result.sessions.reduce((sum, session) => sum + session.turns.reduce((inSession, turn) => inSession + turn.edits.length, 0), 0);
    return { ...result, sessions, edits, truncated };
}

/**
 * A small, hand-written result: codex (two turns; a batch of two files, a
 * partial edit and its revert, a rejected edit whose file was never written),
 * Claude Code (one edit whose file is too large to keep), and changes on disk.
 */
export function smallTimeline(): TimelineResult {
    return {
        sessions: [
            {
                session: "01a23bcb-7d1e-4c55-9a3f-5f5b1c2d3e4f",
                agent: "codex",
                source: "editor",
                started: "2026-12-03T10:01:02Z",
                ended: "2026-12-03T10:04:40Z",
                turns: [
                    {
                        turn: "01a23bcb-3138-4a6e-8f00-000000000002",
                        started: "2026-12-03T10:03:00Z",
                        ended: "2026-12-03T10:04:40Z",
                        files: [
                            { uri: "file:///p/a.txt", reviewed: false },
                            { uri: "file:///p/src/lib.rs", reviewed: true },
                        ],
                        edits: [
                            {
                                writeId: "18c4-41233-9",
                                time: "2026-12-03T10:04:40Z",
                                agent: "codex",
                                summary: "Revert apply_patch a.txt",
                                outcome: "applied",
                                reverts: ["18c3-41233-8.0"],
                                files: [{ id: "18c4-41233-9.0", uri: "file:///p/a.txt", outcome: "applied", added: 1, removed: 3, revertible: true }],
                            },
                            {
                                writeId: "18c3-41233-8",
                                time: "2026-12-03T10:04:00Z",
                                agent: "codex",
                                summary: "apply_patch a.txt",
                                outcome: "partial",
                                revertedBy: "18c4-41233-9",
                                files: [{ id: "18c3-41233-8.0", uri: "file:///p/a.txt", outcome: "partial", added: 3, removed: 1, revertible: true }],
                            },
                            {
                                writeId: "18c3-41233-7",
                                time: "2026-12-03T10:03:00Z",
                                agent: "codex",
                                summary: "Rename run to start",
                                outcome: "partial",
                                files: [
                                    { id: "18c3-41233-7.0", uri: "file:///p/a.txt", outcome: "applied", added: 2, removed: 2, revertible: true },
                                    { id: "18c3-41233-7.1", uri: "file:///p/src/lib.rs", outcome: "rejected", added: 5, removed: 0, revertible: false, whyNot: "nothingWritten" },
                                ],
                            },
                        ],
                        editCount: 3,
                    },
                    {
                        turn: "01a23bcb-3138-4a6e-8f00-000000000001",
                        started: "2026-12-03T10:01:02Z",
                        ended: "2026-12-03T10:01:02Z",
                        files: [{ uri: "file:///p/src/lib.rs", reviewed: false }],
                        edits: [
                            {
                                writeId: "18c3-41233-2",
                                time: "2026-12-03T10:01:02Z",
                                agent: "codex",
                                summary: "Add start()",
                                outcome: "rejected",
                                files: [{ id: "18c3-41233-2.0", uri: "file:///p/src/lib.rs", outcome: "rejected", added: 4, removed: 0, revertible: false, whyNot: "nothingWritten" }],
                            },
                        ],
                        editCount: 1,
                    },
                ],
            },
            {
                session: "claude-7f00",
                agent: "Claude Code",
                source: "editor",
                started: "2026-12-02T16:00:00Z",
                ended: "2026-12-02T16:00:00Z",
                turns: [
                    {
                        turn: "prompt-42",
                        started: "2026-12-02T16:00:00Z",
                        ended: "2026-12-02T16:00:00Z",
                        files: [{ uri: "file:///p/data/big.json", reviewed: false }],
                        edits: [
                            {
                                writeId: "18b0-777-1",
                                time: "2026-12-02T16:00:00Z",
                                agent: "Claude Code",
                                summary: "Regenerate the fixture",
                                outcome: "applied",
                                files: [{ id: "18b0-777-1.0", uri: "file:///p/data/big.json", outcome: "applied", added: 90000, removed: 90000, revertible: false, whyNot: "tooLarge" }],
                            },
                        ],
                        editCount: 1,
                    },
                ],
            },
            {
                session: "disk",
                agent: "",
                source: "disk",
                started: "2026-11-20T08:00:00Z",
                ended: "2026-11-20T08:00:00Z",
                turns: [
                    {
                        turn: "auto:1890-1-1",
                        started: "2026-11-20T08:00:00Z",
                        ended: "2026-11-20T08:00:00Z",
                        files: [{ uri: "file:///p/a.txt", reviewed: false }],
                        edits: [
                            {
                                writeId: "1890-1-1",
                                time: "2026-11-20T08:00:00Z",
                                agent: "",
                                summary: "changed on disk",
                                outcome: "reloaded",
                                files: [{ id: "1890-1-1.0", uri: "file:///p/a.txt", outcome: "reloaded", added: 1, removed: 1, revertible: true }],
                            },
                        ],
                        editCount: 1,
                    },
                ],
            },
        ],
        entries: 7,
        edits: 6,
        truncated: false,
    };
}
