import * as assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { describe, test } from "node:test";

import type { RevertResult, TimelineEntryResult, TimelineResult } from "../../src/lsp_ext";
import {
    displayPath,
    EditBudget,
    entryPresentation,
    entryTitle,
    filterDescription,
    lineCounts,
    normalizedUri,
    PAGE_SIZE,
    relativeTime,
    sameUri,
    TimelineModel,
    treeMessage,
    type EditNode,
    type FileNode,
    type MoreNode,
    type OlderNode,
    type SessionNode,
    type TimelineNode,
    type TurnNode,
    type ViewContext,
} from "../../src/timeline";
import { entriesOf, generatedTimeline, ONE_TURN, smallTimeline, SPREAD, withMaxEdits } from "./timeline_fixtures";

const NOW = new Date("2026-12-03T10:10:00Z");
const context: ViewContext = { now: NOW, workspaceFolders: ["file:///p"] };

function findUp(relative: string): string {
    for (let dir = __dirname; ; dir = path.dirname(dir)) {
        const candidate = path.join(dir, relative);
        if (existsSync(candidate)) return candidate;
        if (path.dirname(dir) === dir) throw new Error(`${relative} not found above ${__dirname}`);
    }
}

/** The JSON examples of a method's section in docs/protocol.md, parsed: the timeline's view must read them as they are written. */
function documentedExamples(method: string): unknown[] {
    const protocol = readFileSync(findUp("docs/protocol.md"), "utf8");
    const start = protocol.indexOf(`### \`${method}\``);
    assert.ok(start >= 0, `docs/protocol.md has no section for ${method}`);
    const end = protocol.indexOf("\n### ", start + 1);
    const body = protocol.slice(start, end < 0 ? undefined : end);
    return [...body.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1] ?? "null") as unknown);
}

function sessions(model: TimelineModel): SessionNode[] {
    return model.roots();
}
function turns(model: TimelineModel, session: SessionNode): TurnNode[] {
    return model.children(session) as TurnNode[];
}
function edits(model: TimelineModel, turn: TurnNode): EditNode[] {
    return model.children(turn) as EditNode[];
}
function files(model: TimelineModel, edit: EditNode): FileNode[] {
    return model.children(edit) as FileNode[];
}

/** Every node, depth first, making them all, and every page of a long level. */
function walk(model: TimelineModel, node?: TimelineNode): TimelineNode[] {
    let children = model.children(node);
    for (let last = children.at(-1); last?.kind === "more"; last = children.at(-1)) {
        model.showMore(last);
        children = model.children(node);
    }
    return children.flatMap((child) => [child, ...walk(model, child)]);
}

describe("the timeline of the documented example", () => {
    const [params, result] = documentedExamples("verbatim/timeline") as [unknown, TimelineResult];

    test("the params example names only what the view may send", () => {
        assert.deepEqual(Object.keys(params as object).sort(), ["agent", "limit", "maxEdits", "uri", "workspace"]);
    });

    test("session → turn → edit → file, as the page writes it", () => {
        const model = new TimelineModel(result);
        const [session] = sessions(model);
        assert.ok(session);
        const view = model.view(session, context);
        assert.equal(view.label, "codex");
        assert.equal(view.description, "1 turn · 5m ago");
        assert.equal(view.contextValue, "session"); // Its one edit was reverted: nothing left to revert.
        assert.equal(view.collapsible, "expanded");

        const [turn] = turns(model, session);
        assert.ok(turn);
        // "…" is what the page has for the times: shown as it is.
        assert.equal(model.view(turn, context).description, "1 edit · 1 file · reverted · …");
        const [edit] = edits(model, turn);
        assert.ok(edit);
        const editView = model.view(edit, context);
        assert.equal(editView.label, "apply_patch a.txt");
        assert.equal(editView.description, "reverted · …");
        assert.deepEqual(editView.icon, { id: "discard", color: "disabledForeground" });
        const [file] = files(model, edit);
        assert.ok(file);
        const fileView = model.view(file, context);
        assert.equal(fileView.label, "a.txt");
        assert.equal(fileView.description, "+3 \u22121");
        assert.equal(fileView.resourceUri, "file:///p/a.txt");
        assert.equal(fileView.reviewed, false);
        assert.equal(fileView.contextValue, "file unreviewed");
        assert.equal(treeMessage(model, context.workspaceFolders), undefined);
    });

    test("the page's lists of every agent and file are what the filters offer", () => {
        const model = new TimelineModel(result);
        assert.deepEqual(
            model.agentChoices(context).map((choice) => [choice.label, choice.description]),
            [
                ["codex", "412 edits, the latest 5m ago"],
                ["claude-code", "228 edits, the latest 17h ago"],
            ],
        );
        assert.deepEqual(
            model.fileChoices(context.workspaceFolders).map((choice) => [choice.label, choice.description]),
            [
                ["a.txt", "a.txt · 97 edits"],
                ["lib.rs", "src/lib.rs · 31 edits"],
            ],
        );
    });

    test("the documented entry shows as a diff of its two texts", () => {
        const [entry] = documentedExamples("verbatim/timelineEntry") as [TimelineEntryResult];
        assert.deepEqual(entryPresentation(entry), { kind: "sides", before: "one\ntwo\n", after: "one\nTWO\n" });
        assert.equal(entryTitle(entry, "apply_patch a.txt"), "a.txt (apply_patch a.txt)");
    });

    test("the documented revert params and result have the fields the view reads", () => {
        const [revertParams, revertResult] = documentedExamples("verbatim/revert") as [Record<string, unknown>, RevertResult];
        assert.ok(Array.isArray(revertParams["ids"]));
        assert.equal(typeof revertResult.message, "string");
        assert.equal(revertResult.outcome, "applied");
    });
});

describe("labels, descriptions and context values", () => {
    const model = new TimelineModel(smallTimeline());
    const [codex, claude, disk] = sessions(model);
    assert.ok(codex && claude && disk);

    test("sessions: the agent, newest first; changes on disk are their own source", () => {
        assert.deepEqual(
            sessions(model).map((node) => [model.view(node, context).label, model.view(node, context).description, model.view(node, context).icon?.id]),
            [
                ["codex", "2 turns · 5m ago", "hubot"],
                ["Claude Code", "1 turn · 18h ago", "hubot"],
                ["Changes on disk", "1 turn · 2026-11-20", "save"],
            ],
        );
        assert.equal(model.view(codex, context).collapsible, "expanded");
        assert.equal(model.view(claude, context).collapsible, "collapsed");
        assert.equal(model.view(codex, context).contextValue, "session revertible");
        assert.equal(model.view(claude, context).contextValue, "session", "its one file was too large to keep");
        assert.match(model.tooltip(codex, context), /Session `01a23bcb-7d1e-4c55-9a3f-5f5b1c2d3e4f`/);
    });

    test("turns: named by their first edit, with counts, reviewed files and time", () => {
        const [second, first] = turns(model, codex);
        assert.ok(second && first);
        const view = model.view(second, context);
        assert.equal(view.label, "Rename run to start");
        assert.equal(view.description, "3 edits · 2 files · 1/2 reviewed · 5m ago");
        assert.equal(view.contextValue, "turn revertible");
        assert.equal(view.icon?.id, "comment-discussion");
        assert.match(model.tooltip(second, context), /- Revert apply\\_patch a\\.txt: applied\n- apply\\_patch a\\.txt: reverted\n- Rename run to start: partly kept/);
        assert.equal(model.view(first, context).contextValue, "turn", "a rejected edit wrote nothing to revert");
        const [diskTurn] = turns(model, disk);
        assert.ok(diskTurn);
        assert.match(model.tooltip(diskTurn, context), /Turn `auto:1890-1-1` \(edits of the session with no gap over 2 minutes\)/);
    });

    test("a turn's tooltip lists its newest edits, not thousands", () => {
        const model = new TimelineModel(generatedTimeline(ONE_TURN));
        const [turn] = turns(model, sessions(model)[0]!);
        const tooltip = model.tooltip(turn!, context);
        assert.equal(tooltip.split("\n").filter((line) => line.startsWith("- ")).length, 11);
        assert.match(tooltip, /- … and 9990 earlier edits\n/);
    });

    test("edits: summary, outcome (reverted wins), time; icons by outcome", () => {
        const [second] = turns(model, codex);
        assert.ok(second);
        const [revert, reverted, batch] = edits(model, second);
        assert.ok(revert && reverted && batch);
        assert.deepEqual(
            [revert, reverted, batch].map((node) => {
                const view = model.view(node, context);
                return [view.label, view.description, view.contextValue, view.icon?.id];
            }),
            [
                ["Revert apply_patch a.txt", "applied · 5m ago", "edit revertible", "history"],
                ["apply_patch a.txt", "reverted · 6m ago", "edit", "discard"],
                ["Rename run to start", "partly kept · 2 files · 7m ago", "edit revertible", "check"],
            ],
        );
        assert.match(model.tooltip(reverted, context), /reverted \(was partly kept\)/);
        assert.match(model.tooltip(reverted, context), /Reverted by `18c4-41233-9`/);
        assert.match(model.tooltip(revert, context), /Reverts `18c3-41233-8\.0`/);
        assert.match(model.tooltip(batch, context), /Cannot be reverted: src\/lib\\\.rs \(nothing was written\)/);
    });

    test("an edit by another agent than its session's names that agent", () => {
        const result = smallTimeline();
        const edit = result.sessions[0]!.turns[1]!.edits[0]!;
        edit.agent = "subagent";
        const other = new TimelineModel(result);
        const [first] = turns(other, sessions(other)[0]!).slice(1);
        assert.equal(other.view(edits(other, first!)[0]!, context).description, "subagent · rejected · 8m ago");
    });

    test("files: name, +added −removed, folder, outcome when it differs from its edit's, reviewed mark", () => {
        const [second] = turns(model, codex);
        const batch = edits(model, second!)[2]!;
        const [a, lib] = files(model, batch);
        assert.ok(a && lib);
        assert.deepEqual(
            [a, lib].map((node) => {
                const view = model.view(node, context);
                return [view.label, view.description, view.contextValue, view.reviewed, view.resourceUri, view.icon];
            }),
            [
                ["a.txt", "+2 \u22122 · applied", "file revertible unreviewed", false, "file:///p/a.txt", undefined],
                ["lib.rs", "+5 \u22120 · rejected · src", "file reviewed", true, "file:///p/src/lib.rs", undefined],
            ],
        );
        assert.match(model.tooltip(lib, context), /Cannot be reverted: nothing was written\./);
        assert.match(model.tooltip(a, context), /Entry `18c3-41233-7\.0`/);
        // The file of a reverted edit is not offered for revert again: revert the revert instead.
        const reverted = edits(model, second!)[1]!;
        assert.equal(model.view(files(model, reverted)[0]!, context).contextValue, "file unreviewed");
    });

    test("ids are unique and stable", () => {
        const ids = walk(model).map((node) => node.id);
        assert.equal(new Set(ids).size, ids.length);
        assert.deepEqual(walk(new TimelineModel(smallTimeline())).map((node) => node.id), ids);
        assert.deepEqual(ids.slice(0, 5), [
            "session/01a23bcb-7d1e-4c55-9a3f-5f5b1c2d3e4f",
            "turn/01a23bcb-7d1e-4c55-9a3f-5f5b1c2d3e4f/01a23bcb-3138-4a6e-8f00-000000000002",
            "edit/18c4-41233-9",
            "file/18c4-41233-9.0",
            "edit/18c3-41233-8",
        ]);
    });

    test("an agent's summary cannot inject Markdown into a tooltip", () => {
        const result = smallTimeline();
        result.sessions[0]!.turns[0]!.edits[0]!.summary = "[click](command:evil) *x*";
        const other = new TimelineModel(result);
        const edit = edits(other, turns(other, sessions(other)[0]!)[0]!)[0]!;
        assert.match(other.tooltip(edit, context), /^\*\*\\\[click\\\]\\\(command:evil\\\) \\\*x\\\*\*\*/);
        assert.equal(other.view(edit, context).label, "[click](command:evil) *x*");
    });
});

describe("revert requests per level", () => {
    const model = new TimelineModel(smallTimeline());
    const [codex, claude] = sessions(model);
    const [second, first] = turns(model, codex!);
    const [revert, reverted, batch] = edits(model, second!);

    test("a file: its entry id", () => {
        const [a, lib] = files(model, batch!);
        const request = model.revertRequest(a!, context);
        assert.deepEqual(request?.params, { ids: ["18c3-41233-7.0"] });
        assert.equal(request?.question, "Revert the change to a.txt made by “Rename run to start” (codex, 7m ago)?");
        assert.match(request?.detail ?? "", /offered for your review/);
        assert.equal(model.revertRequest(lib!, context), undefined, "nothing was written");
        assert.equal(model.revertRequest(files(model, reverted!)[0]!, context), undefined, "already reverted");
    });

    test("an edit: its writeId; the files that cannot be reverted are named", () => {
        const request = model.revertRequest(batch!, context);
        assert.deepEqual(request?.params, { ids: ["18c3-41233-7"] });
        assert.equal(request?.question, "Revert the edit “Rename run to start” by codex (2 files, 7m ago)?");
        assert.match(request?.detail ?? "", /1 change cannot be reverted and will be left as they are \(nothing was written\)\./);
        assert.deepEqual(model.revertRequest(revert!, context)?.params, { ids: ["18c4-41233-9"] }, "a revert can be reverted (redo)");
        assert.equal(model.revertRequest(reverted!, context), undefined);
    });

    test("a turn and a session: by id", () => {
        assert.deepEqual(model.revertRequest(second!, context)?.params, { turn: "01a23bcb-3138-4a6e-8f00-000000000002" });
        assert.equal(model.revertRequest(second!, context)?.question, "Revert the whole turn of codex (3 edits to 2 files, 5m ago)?");
        assert.equal(model.revertRequest(first!, context), undefined);
        assert.deepEqual(model.revertRequest(codex!, context)?.params, { session: "01a23bcb-7d1e-4c55-9a3f-5f5b1c2d3e4f" });
        assert.equal(model.revertRequest(codex!, context)?.question, "Revert every change of the codex session (4 edits to 2 files, since 8m ago)?");
        assert.equal(model.revertRequest(claude!, context), undefined, "too large to keep");
    });
});

describe("a long level shows a page at a time", () => {
    test("a turn of 10,000 edits: the newest 200, then Show more", () => {
        const pageSizes = new Map<string, number>();
        const model = new TimelineModel(generatedTimeline(ONE_TURN), {}, pageSizes);
        const [turn] = turns(model, sessions(model)[0]!);
        const page = model.children(turn!);
        assert.equal(page.length, PAGE_SIZE + 1);
        const more = page.at(-1) as MoreNode;
        assert.equal(more.kind, "more");
        assert.deepEqual([more.shown, more.total, more.id], [200, 10_000, `more/${turn!.id}`]);
        assert.deepEqual(model.view(more, context), {
            label: "Show 200 more…",
            description: "9800 of 10000 not shown",
            contextValue: "more",
            icon: { id: "ellipsis" },
            collapsible: "none",
        });
        assert.equal(model.revertRequest(more, context), undefined);
        assert.equal(model.parent(more), turn);
        assert.match(model.tooltip(more, context), /holds 10000 items; the newest 200 show above/);

        assert.equal(model.showMore(more), turn, "the turn's children changed");
        const longer = model.children(turn!);
        assert.equal(longer.length, 401);
        assert.deepEqual(longer.slice(0, 200), page.slice(0, 200), "the rows shown before are the same nodes");
        assert.equal(model.view(longer.at(-1)!, context).label, "Show 400 more…");
        assert.equal(pageSizes.get(turn!.id), 400, "kept by the view across reloads");
        // A reload (a new model over a new result) shows as many.
        const reloaded = new TimelineModel(generatedTimeline(ONE_TURN), {}, pageSizes);
        assert.equal(reloaded.children(turns(reloaded, sessions(reloaded)[0]!)[0]!).length, 401);
    });

    test("the last page shows the rest", () => {
        const model = new TimelineModel(generatedTimeline({ sessions: 1, turnsPerSession: 1, editsPerTurn: 250, filesPerEdit: 1 }));
        const [turn] = turns(model, sessions(model)[0]!);
        const more = model.children(turn!).at(-1) as MoreNode;
        assert.equal(model.view(more, context).label, "Show 50 more…");
        model.showMore(more);
        assert.equal(model.children(turn!).length, 250);
    });
});

describe("a budget of edits (maxEdits)", () => {
    /** SPREAD (5,000 edits, 100 a session, 10 a turn) cut at 255: two sessions whole, then five turns, then 5 of the sixth turn's 10 edits. */
    const cut = () => new TimelineModel(withMaxEdits(generatedTimeline(SPREAD), 255), {}, new Map(), 255);

    test("the view asks for its budget, and for every edit while a filter is set", () => {
        const budget = new EditBudget(() => 500);
        assert.deepEqual(budget.params(200, {}), { limit: 200, maxEdits: 500 });
        assert.deepEqual(budget.params(200, { agent: "codex" }), { limit: 200 }, "older edits of codex must not be missed");
        assert.deepEqual(budget.params(200, { uri: "file:///p/a.txt" }), { limit: 200 });
        assert.deepEqual(budget.params(200, { agent: "", uri: "file:///p/a.txt" }), { limit: 200 }, "the unknown agent is a filter too");
        assert.deepEqual(budget.params(50, { agent: undefined, uri: undefined }), { limit: 50, maxEdits: 500 }, "a cleared filter: the budget again");
    });

    test("Load older changes doubles what the shown result was asked for; a change of the setting starts again", () => {
        let setting = 500;
        const budget = new EditBudget(() => setting);
        const model = cut();
        const asked = (maxEdits: number) => new TimelineModel(withMaxEdits(generatedTimeline(SPREAD), maxEdits), {}, new Map(), maxEdits);
        budget.loadOlder(asked(500));
        assert.equal(budget.current, 1000);
        budget.loadOlder(asked(500));
        assert.equal(budget.current, 1000, "a second click before the larger result is there asks for no more");
        budget.loadOlder(asked(1000));
        assert.deepEqual(budget.params(200, {}), { limit: 200, maxEdits: 2000 });
        assert.deepEqual(budget.params(200, { agent: "codex" }), { limit: 200 }, "a filter still asks for everything");
        assert.equal(budget.current, 2000, "and keeps the budget for when it is cleared");
        budget.loadOlder(model);
        assert.equal(budget.current, 510);
        setting = 100;
        budget.reset();
        assert.equal(budget.current, 100);
    });

    test("a result the budget cut ends with Load older changes", () => {
        const model = cut();
        assert.equal(model.loadedEdits, 255);
        assert.equal(model.cutByMaxEdits, true);
        const top = model.children();
        assert.deepEqual(top.slice(0, -1), sessions(model), "the sessions, then the node");
        assert.equal(sessions(model).length, 3);
        const older = top.at(-1) as OlderNode;
        assert.deepEqual(older, { kind: "older", id: "older", shown: 255, total: 5000 });
        assert.deepEqual(model.view(older, context), {
            label: "Load older changes (255 of 5000 edits shown)",
            description: "",
            contextValue: "older",
            icon: { id: "fold-down" },
            collapsible: "none",
        });
        assert.deepEqual(model.children(older), []);
        assert.equal(model.parent(older), undefined);
        assert.equal(model.revertRequest(older, context), undefined);
        assert.match(model.tooltip(older, context), /The newest 255 of 5000 edits were read .*twice as many/);
        assert.equal(walk(model).filter((node) => node.kind === "edit").length, 255);
    });

    test("a turn cut short says how many of its edits show", () => {
        const model = cut();
        const last = sessions(model)[2]!;
        const lastTurns = turns(model, last);
        assert.equal(lastTurns.length, 6);
        assert.match(model.view(lastTurns[4]!, context).description, /^10 edits · /, "a whole turn");
        const short = lastTurns[5]!;
        assert.match(model.view(short, context).description, /^5 of 10 edits · /);
        assert.equal(edits(model, short).length, 5);
        assert.match(model.tooltip(short, context), /- … and 5 earlier edits \(5 not read: Load older changes, at the end\)/);
        // Reverting the turn or the session reverts what was not read too: the question counts it.
        assert.match(model.revertRequest(short, context)?.question ?? "", /^Revert the whole turn of Gemini CLI \(10 edits to \d+ files, /);
        assert.match(model.revertRequest(last, context)?.question ?? "", /^Revert every change of the Gemini CLI session \(60 edits to \d+ files read here, and any older ones, since /);
        const whole = new TimelineModel(withMaxEdits(generatedTimeline(SPREAD), 6000), {}, new Map(), 6000);
        assert.doesNotMatch(whole.revertRequest(sessions(whole)[2]!, context)?.question ?? "", /older ones/, "every edit read");
        assert.match(model.tooltip(last, context), /6 turns, 60 edits read; older ones may be left out/);
    });

    test("the message above the tree says how many edits show", () => {
        assert.equal(treeMessage(cut(), context.workspaceFolders), "Showing the newest 255 of 5000 edits; “Load older changes”, at the end, reads more.");
        // Sessions left out by `limit`, no edit by the budget: the sessions are named.
        const bySessions = new TimelineModel({ ...smallTimeline(), entries: 1234, truncated: true }, {}, new Map(), 500);
        assert.equal(bySessions.cutByMaxEdits, false);
        assert.equal(treeMessage(bySessions, context.workspaceFolders), "Showing the newest 3 sessions (1234 journal entries read); older sessions are left out.");
        assert.equal(bySessions.children().at(-1)?.kind, "session");
    });

    test("nothing is cut when every edit fits, when every edit was asked for, or when the server is older than maxEdits", () => {
        const whole = new TimelineModel(withMaxEdits(smallTimeline(), 500), {}, new Map(), 500);
        assert.equal(whole.cutByMaxEdits, false);
        assert.equal(whole.result.truncated, false);
        assert.equal(treeMessage(whole, context.workspaceFolders), undefined);
        const exactly = new TimelineModel(withMaxEdits(smallTimeline(), 6), {}, new Map(), 6);
        assert.equal(exactly.cutByMaxEdits, false, "the budget reached with nothing older");
        const unbounded = new TimelineModel({ ...smallTimeline(), edits: 600 }, {}, new Map(), undefined);
        assert.equal(unbounded.cutByMaxEdits, false);
        // A server older than maxEdits sends every edit, and neither `edits` nor `editCount`.
        const { edits: _, ...older } = smallTimeline();
        for (const session of older.sessions) for (const turn of session.turns) delete turn.editCount;
        const fromOlderServer = new TimelineModel(older, {}, new Map(), 2);
        assert.equal(fromOlderServer.cutByMaxEdits, false);
        assert.match(fromOlderServer.view(turns(fromOlderServer, sessions(fromOlderServer)[0]!)[0]!, context).description, /^3 edits · /);
    });

    test("a filter on a cut result needs the server again; on a whole one it does not", () => {
        const model = cut();
        assert.equal(model.needsReloadFor({}), false);
        assert.equal(model.needsReloadFor({ agent: "codex" }), true);
        assert.equal(model.needsReloadFor({ uri: "file:///p/src/dir_0/module_0_0_0.rs" }), true);
        const whole = new TimelineModel(smallTimeline(), {}, new Map(), 500);
        assert.equal(whole.needsReloadFor({ agent: "codex" }), false);
        assert.equal(whole.withFilter({ agent: "codex" }).maxEdits, 500, "the filtered model keeps what its result was asked for");
    });
});

describe("reviewed marks", () => {
    test("marking one file of a turn redraws every item of that file in the turn, and only those", () => {
        const model = new TimelineModel(smallTimeline());
        const [second] = turns(model, sessions(model)[0]!);
        const nodes = edits(model, second!).flatMap((edit) => files(model, edit));
        const aFiles = nodes.filter((node) => node.file.uri === "file:///p/a.txt");
        assert.equal(aFiles.length, 3);
        const redraw = model.setReviewed(aFiles[0]!, true);
        assert.deepEqual(new Set(redraw), new Set(aFiles));
        assert.ok(aFiles.every((node) => model.isReviewed(node) && model.view(node, context).contextValue.endsWith(" reviewed")));
        assert.equal(model.view(second!, context).description, "3 edits · 2 files · 2/2 reviewed · 5m ago");
        // The mark belongs to the turn: the same file in another session's turn is untouched.
        const disk = sessions(model)[2]!;
        const diskFile = files(model, edits(model, turns(model, disk)[0]!)[0]!)[0]!;
        assert.equal(model.isReviewed(diskFile), false);
        model.setReviewed(aFiles[2]!, false);
        assert.ok(aFiles.every((node) => !model.isReviewed(node)));
    });

    test("a file the turn's list lacks is added to it; URIs are compared in one spelling", () => {
        const result = smallTimeline();
        const turn = result.sessions[0]!.turns[0]!;
        turn.files = [{ uri: "file:///p/A%2Etxt".replace("A%2E", "a."), reviewed: true }];
        const model = new TimelineModel(result);
        const [second] = turns(model, sessions(model)[0]!);
        const batch = edits(model, second!)[2]!;
        const [a, lib] = files(model, batch);
        assert.equal(model.isReviewed(a!), true);
        assert.equal(model.isReviewed(lib!), false);
        model.setReviewed(lib!, true);
        assert.deepEqual(turn.files.map((file) => file.uri), ["file:///p/a.txt", "file:///p/src/lib.rs"]);
        assert.equal(model.isReviewed(lib!), true);
        // Another filter over the same result keeps the marks.
        const refiltered = model.withFilter({ agent: "codex" });
        const libAgain = files(refiltered, edits(refiltered, turns(refiltered, sessions(refiltered)[0]!)[0]!)[2]!)[1]!;
        assert.equal(refiltered.isReviewed(libAgain), true);
    });
});

describe("filters", () => {
    const model = new TimelineModel(smallTimeline());

    test("by agent: only that agent's sessions, turns and edits", () => {
        const claude = model.withFilter({ agent: "Claude Code" });
        assert.deepEqual(sessions(claude).map((node) => node.session.agent), ["Claude Code"]);
        assert.equal(filterDescription(claude.filter, context.workspaceFolders), "agent Claude Code");
        assert.ok(claude.filtered);
        assert.equal(treeMessage(claude, context.workspaceFolders), "Filtered: agent Claude Code.");
    });

    test("by file: only the edits touching it, and under them only that file", () => {
        const lib = model.withFilter({ uri: "file:///p/src/lib.rs" });
        assert.deepEqual(sessions(lib).map((node) => node.session.agent), ["codex"]);
        const [second, first] = turns(lib, sessions(lib)[0]!);
        assert.ok(second && first);
        const [batch] = edits(lib, second);
        assert.deepEqual(edits(lib, second).map((node) => node.edit.writeId), ["18c3-41233-7"]);
        assert.deepEqual(files(lib, batch!).map((node) => node.file.id), ["18c3-41233-7.1"]);
        assert.equal(lib.view(batch!, context).description, "partly kept · 1 of 2 files · 7m ago");
        assert.equal(lib.view(sessions(lib)[0]!, context).description, "2 turns · 5m ago");
        assert.equal(filterDescription(lib.filter, context.workspaceFolders), "file src/lib.rs");
        // A revert still reverts the whole edit: the request does not depend on the filter.
        assert.deepEqual(lib.revertRequest(batch!, context)?.params, { ids: ["18c3-41233-7"] });
    });

    test("by file, spelled as VS Code spells it", () => {
        const result = smallTimeline();
        result.sessions[0]!.turns[0]!.edits[2]!.files[0]!.uri = "file:///C:/p/a.txt";
        const windows = new TimelineModel(result, { uri: "file:///c%3A/p/a.txt" });
        assert.deepEqual(sessions(windows).map((node) => node.session.session), ["01a23bcb-7d1e-4c55-9a3f-5f5b1c2d3e4f"]);
    });

    test("both, and nothing left", () => {
        const none = model.withFilter({ agent: "Claude Code", uri: "file:///p/a.txt" });
        assert.deepEqual(sessions(none), []);
        assert.equal(treeMessage(none, context.workspaceFolders), "Filtered: agent Claude Code · file a.txt. No change matches the filter.");
        assert.equal(filterDescription(none.filter, context.workspaceFolders), "agent Claude Code · file a.txt");
        assert.equal(filterDescription({}, context.workspaceFolders), "");
    });

    test("the server's lists of every agent and file come first, older than the loaded edits too; one file spelled two ways is one", () => {
        const result = smallTimeline();
        result.agents = [
            { value: "codex", edits: 40, latest: "2026-12-03T10:04:40Z" },
            { value: "gemini", edits: 3, latest: "2026-11-01T09:00:00Z" },
        ];
        result.files = [
            { value: "file:///c%3A/p/a.txt", edits: 30, latest: "2026-12-03T10:04:40Z" },
            { value: "file:///p/old.txt", edits: 2, latest: "2026-11-01T09:00:00Z" },
            { value: "file:///C:/p/a.txt", edits: 5, latest: "2026-11-01T08:00:00Z" },
        ];
        const listed = new TimelineModel(result, { agent: "codex" });
        assert.deepEqual(
            listed.agentChoices(context).map((choice) => [choice.value, choice.description]),
            [
                ["codex", "40 edits, the latest 5m ago"],
                ["gemini", "3 edits, the latest 2026-11-01"],
            ],
        );
        assert.deepEqual(
            listed.fileChoices(context.workspaceFolders).map((choice) => [choice.value, choice.label, choice.description.split(" · ")[1]]),
            [
                ["file:///c%3A/p/a.txt", "a.txt", "35 edits"],
                ["file:///p/old.txt", "old.txt", "2 edits"],
            ],
        );
    });

    test("the choices come from the whole result, whatever the filter", () => {
        const filtered = model.withFilter({ agent: "codex" });
        assert.deepEqual(
            filtered.agentChoices(context).map((choice) => [choice.value, choice.label, choice.description]),
            [
                ["codex", "codex", "4 edits, the latest 5m ago"],
                ["Claude Code", "Claude Code", "1 edit, the latest 18h ago"],
                ["", "unknown agent", "1 edit, the latest 2026-11-20"],
            ],
        );
        assert.deepEqual(
            filtered.fileChoices(context.workspaceFolders).map((choice) => [choice.value, choice.label, choice.description]),
            [
                ["file:///p/a.txt", "a.txt", "a.txt · 4 edits"],
                ["file:///p/src/lib.rs", "lib.rs", "src/lib.rs · 2 edits"],
                ["file:///p/data/big.json", "big.json", "data/big.json · 1 edit"],
            ],
        );
    });
});

describe("the diff of one entry", () => {
    const entry = (before: string | null, after: string | null, diff: string, newUri: string | null = null): TimelineEntryResult => ({
        id: "18c3-41233-7.0",
        uri: "file:///p/src/a.rs",
        newUri,
        before,
        after,
        diff,
    });

    test("both texts: a diff editor", () => {
        assert.deepEqual(entryPresentation(entry("a\n", "b\n", "")), { kind: "sides", before: "a\n", after: "b\n" });
    });

    test("a created or deleted file: a diff editor with that side empty", () => {
        assert.deepEqual(entryPresentation(entry(null, "new\n", "--- /dev/null\n+++ b/src/a.rs\n@@ -0,0 +1 @@\n+new\n")), { kind: "sides", before: "", after: "new\n" });
        assert.deepEqual(entryPresentation(entry("old\n", null, "--- a/src/a.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\n")), { kind: "sides", before: "old\n", after: "" });
    });

    test("a text not kept: the journal's unified diff", () => {
        const diff = "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-a\n+b\n";
        assert.deepEqual(entryPresentation(entry(null, null, diff)), { kind: "unified", text: diff });
        assert.deepEqual(entryPresentation(entry("a\n", null, diff)), { kind: "unified", text: diff }, "after too large, but the file still exists");
    });

    test("the title names a move", () => {
        assert.equal(entryTitle(entry("a", "a", "", "file:///p/src/b.rs"), "Move a.rs"), "a.rs → b.rs (Move a.rs)");
        assert.equal(entryTitle(entry("a", "b", ""), undefined), "a.rs");
    });
});

describe("small helpers", () => {
    test("relativeTime", () => {
        const at = (iso: string) => relativeTime(iso, NOW);
        assert.equal(at("2026-12-03T10:09:58Z"), "just now");
        assert.equal(at("2026-12-03T10:09:00Z"), "1m ago");
        assert.equal(at("2026-12-03T07:10:00Z"), "3h ago");
        assert.equal(at("2026-12-02T09:00:00Z"), "yesterday");
        assert.equal(at("2026-11-29T10:10:00Z"), "4 days ago");
        assert.equal(at("2026-11-20T08:00:00Z"), "2026-11-20");
        assert.equal(at("not a time"), "not a time");
    });

    test("paths relative to the workspace folder; several folders name theirs", () => {
        assert.equal(displayPath("file:///p/src/a%20b.rs", ["file:///p"]), "src/a b.rs");
        assert.equal(displayPath("file:///q/x.rs", ["file:///p"]), "/q/x.rs");
        assert.equal(displayPath("file:///q/x.rs", ["file:///p", "file:///q/"]), "q/x.rs");
        assert.equal(displayPath("file:///p2/x.rs", ["file:///p"]), "/p2/x.rs", "a folder's name is not a prefix of another's");
    });

    test("URIs in one spelling", () => {
        assert.equal(normalizedUri("file:///C:/Users/a%20b.txt"), "file:/c:/Users/a b.txt");
        assert.ok(sameUri("file:///c%3A/x", "file:///C:/x"));
        assert.ok(!sameUri("file:///p/a.txt", "file:///p/A.txt"));
        assert.ok(sameUri("untitled:Untitled-1", "untitled:Untitled-1"));
    });

    test("line counts use a real minus sign", () => {
        assert.equal(lineCounts(3, 1), "+3 \u22121");
    });

    test("a truncated timeline says what is left out; an empty one says what will show", () => {
        const truncated = { ...smallTimeline(), entries: 1234, truncated: true };
        assert.equal(treeMessage(new TimelineModel(truncated), context.workspaceFolders), "Showing the newest 3 sessions (1234 journal entries read); older sessions are left out.");
        assert.match(treeMessage(new TimelineModel({ sessions: [], entries: 0, truncated: false }), context.workspaceFolders) ?? "", /^No change has been journaled yet/);
    });
});

describe("10,000 journal entries", () => {
    for (const [name, shape] of [
        ["spread over 50 sessions", SPREAD],
        ["in one turn", ONE_TURN],
    ] as const) {
        test(`${name}: the first screen makes only what it shows`, (t) => {
            const result = generatedTimeline(shape);
            const text = JSON.stringify(result);
            const workspace: ViewContext = { now: new Date("2026-12-03T12:05:00Z"), workspaceFolders: ["file:///p"] };

            // What the view does when the result arrives: the language client parses it, the view builds
            // the model, VS Code asks for the roots and their items, then the children of the expanded session.
            const started = performance.now();
            const parsed = JSON.parse(text) as TimelineResult;
            const parsedAt = performance.now();
            const model = new TimelineModel(parsed);
            const roots = model.roots();
            const rootViews = roots.map((node) => model.view(node, workspace));
            const expanded = roots.filter((_, index) => rootViews[index]?.collapsible === "expanded");
            const children = expanded.flatMap((node) => model.children(node));
            for (const child of children) model.view(child, workspace);
            const shownAt = performance.now();
            const made = model.madeNodes;
            const all = walk(model);
            for (const node of all) model.view(node, workspace);
            const walkedAt = performance.now();

            assert.equal(parsed.entries, entriesOf(shape));
            assert.equal(all.filter((node) => node.kind === "file").length, 10_000);
            assert.equal(roots.length, shape.sessions);
            assert.equal(expanded.length, 1, "only the newest session opens by itself");
            assert.equal(made, shape.sessions + shape.turnsPerSession, "nothing below the open session's turns is made before it is asked for");
            t.diagnostic(
                `${name} (${text.length} bytes of JSON): JSON.parse ${(parsedAt - started).toFixed(1)} ms, ` +
                    `model and first screen ${(shownAt - parsedAt).toFixed(1)} ms (${made} nodes), ` +
                    `every node made and drawn ${(walkedAt - shownAt).toFixed(1)} ms (${all.length} nodes)`,
            );
        });
    }
});
