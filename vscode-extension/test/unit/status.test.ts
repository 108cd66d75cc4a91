import * as assert from "node:assert/strict";
import { describe, test } from "node:test";

import type { StatusResult } from "../../src/lsp_ext";
import { makesStale, opensPreview, withReviewMode, toggled } from "../../src/review";
import { agentListItems, displayUri, sameStatusBarView, SettledView, since, statusBarView } from "../../src/status";

const idle: StatusResult = {
    socket: "/run/user/1000/verbatim/41233.sock",
    readOnlySocket: "/run/user/1000/verbatim/41233.ro.sock",
    discoveryFile: "/run/user/1000/verbatim/41233.json",
    editorConnected: true,
    agents: [],
    pending: [],
};

const busy: StatusResult = {
    ...idle,
    agents: [
        { id: 3, name: "claude-code", access: "readWrite", version: "2.1.0", connectedAt: "2026-11-30T09:13:02Z", pendingEdits: 1 },
        { id: 4, name: "agent #4", access: "readOnly", version: null, connectedAt: "2026-11-30T09:14:00Z", pendingEdits: 0 },
    ],
    pending: [
        {
            id: 12,
            agentId: 3,
            agent: "claude-code",
            summary: "Start x at 2",
            uris: ["file:///p/src/main%20file.rs"],
            since: "2026-11-30T09:13:05Z",
        },
    ],
};

describe("statusBarView", () => {
    test("starting, stopped and failed", () => {
        assert.equal(statusBarView({ kind: "starting" }, "confirm").text, "$(loading~spin) Verbatim");
        assert.equal(statusBarView({ kind: "stopped" }, "confirm").text, "$(debug-disconnect) Verbatim");
        const failed = statusBarView({ kind: "failed", message: "Verbatim could not find its server." }, "confirm");
        assert.equal(failed.text, "$(error) Verbatim");
        assert.equal(failed.highlight, "error");
        assert.match(failed.tooltip, /could not find its server/);
    });

    test("running with no agent", () => {
        const view = statusBarView({ kind: "running", status: idle }, "confirm");
        assert.equal(view.text, "$(plug) Verbatim");
        assert.equal(view.highlight, "none");
        assert.match(view.tooltip, /0 agents connected, 0 edits waiting for review/);
        assert.match(view.tooltip, /Agent socket: \/run\/user\/1000\/verbatim\/41233\.sock/);
    });

    test("agents and a pending edit", () => {
        const view = statusBarView({ kind: "running", status: busy }, "confirm");
        assert.equal(view.text, "$(bell-dot) Verbatim: 2 agents, 1 pending");
        assert.equal(view.highlight, "warning");
        assert.match(view.tooltip, /2 agents connected, 1 edit waiting for review/);
    });

    test("the tooltip names Claude Code's endpoint while the server serves one", () => {
        const endpoint = { port: 50123 };
        assert.match(statusBarView({ kind: "running", status: idle }, "confirm", endpoint).tooltip, /\nClaude Code: ws:\/\/127\.0\.0\.1:50123 /);
        assert.match(statusBarView({ kind: "running", status: undefined }, "confirm", endpoint).tooltip, /\nClaude Code: ws:\/\/127\.0\.0\.1:50123 /);
        assert.doesNotMatch(statusBarView({ kind: "running", status: idle }, "confirm").tooltip, /Claude Code/);
        assert.doesNotMatch(statusBarView({ kind: "stopped" }, "confirm", endpoint).tooltip, /Claude Code/);
    });

    test("one agent, nothing pending", () => {
        const status = { ...busy, agents: busy.agents.slice(0, 1), pending: [] };
        assert.equal(statusBarView({ kind: "running", status }, "confirm").text, "$(hubot) Verbatim: 1 agent");
    });

    test("auto-apply is visible", () => {
        assert.equal(statusBarView({ kind: "running", status: idle }, "auto").text, "$(plug) Verbatim (auto-apply)");
        const view = statusBarView({ kind: "running", status: busy }, "auto");
        assert.equal(view.text, "$(bell-dot) Verbatim: 2 agents, 1 pending (auto-apply)");
        assert.equal(view.highlight, "none");
        assert.match(view.tooltip, /Review mode: auto-apply/);
    });
});

test("agentListItems", () => {
    const now = new Date("2026-11-30T09:15:05Z");
    assert.deepEqual(agentListItems(busy, now), [
        { kind: "agent", label: "claude-code 2.1.0", description: "connected 2m ago", detail: "1 edit waiting for review" },
        { kind: "agent", label: "agent #4", description: "connected 1m ago", detail: "no edit waiting" },
        { kind: "pending", label: "claude-code: Start x at 2", description: "waiting 2m", detail: "/p/src/main file.rs" },
    ]);
    assert.deepEqual(agentListItems(idle, now), []);
});

test("since", () => {
    const now = new Date("2026-11-30T12:00:00Z");
    assert.equal(since("2026-11-30T11:59:58Z", now), "just now");
    assert.equal(since("2026-11-30T11:59:18Z", now), "42s ago");
    assert.equal(since("2026-11-30T09:00:00Z", now), "3h ago");
    assert.equal(since("not a date", now), "not a date");
    assert.equal(since("2026-11-30T12:00:10Z", now), "just now", "a clock slightly ahead is not negative");
});

test("displayUri", () => {
    assert.equal(displayUri("file:///home/ada/a%20b.rs"), "/home/ada/a b.rs");
    assert.equal(displayUri("untitled:Untitled-1"), "untitled:Untitled-1");
});

describe("review mode", () => {
    const params = {
        label: "claude-code: Start x at 2",
        edit: {
            documentChanges: [],
            changeAnnotations: {
                "verbatim/12": { label: "claude-code: Start x at 2", description: "Start x at 2", needsConfirmation: true },
            },
        },
    };

    test("auto clears needsConfirmation without touching the rest", () => {
        const rewritten = withReviewMode(params, "auto");
        assert.deepEqual(rewritten.edit.changeAnnotations, {
            "verbatim/12": { label: "claude-code: Start x at 2", needsConfirmation: false },
        });
        assert.equal(rewritten.label, params.label);
        assert.equal(params.edit.changeAnnotations["verbatim/12"].needsConfirmation, true, "the input is not mutated");
    });

    test("confirm sets it even if the server was started in auto mode", () => {
        const started = withReviewMode(params, "auto");
        assert.equal(withReviewMode(started, "confirm").edit.changeAnnotations?.["verbatim/12"]?.needsConfirmation, true);
    });

    test("a description that says something the label does not is kept", () => {
        const other = { ...params, edit: { ...params.edit, changeAnnotations: { "verbatim/12": { label: "claude-code: x", description: "more", needsConfirmation: true } } } };
        assert.equal(withReviewMode(other, "auto").edit.changeAnnotations?.["verbatim/12"]?.description, "more");
    });

    test("an edit without annotations passes through", () => {
        const plain = { edit: { changes: {} } };
        assert.equal(withReviewMode(plain, "auto"), plain);
    });

    test("toggled", () => {
        assert.equal(toggled("confirm"), "auto");
        assert.equal(toggled("auto"), "confirm");
    });

    test("an edit opens the Refactor Preview when the review mode asks for confirmation", () => {
        assert.equal(opensPreview(withReviewMode(params, "confirm")), true);
        assert.equal(opensPreview(withReviewMode(params, "auto")), false);
        assert.equal(opensPreview({ edit: { changes: {} } }), false);
    });

    test("only a change that moves a versioned document of the edit makes it stale", () => {
        const documents = [
            { uri: "file:///w/a.txt", version: 7 },
            { uri: "file:///w/b.txt", version: null },
        ];
        assert.equal(makesStale(documents, "file:///w/a.txt", 8), true);
        assert.equal(makesStale(documents, "file:///w/a.txt", 7), false, "the version the edit was planned against");
        assert.equal(makesStale(documents, "file:///w/b.txt", 3), false, "an edit without a version is applied to any");
        assert.equal(makesStale(documents, "file:///w/c.txt", 1), false, "another document");
    });
});

describe("SettledView", () => {
    const running = (status: StatusResult) => statusBarView({ kind: "running", status }, "auto");

    test("an edit applied at once (pending, then done) never reaches the status bar item", (t) => {
        t.mock.timers.enable({ apis: ["setTimeout"] });
        const shown: string[] = [];
        const view = new SettledView(150, (v) => shown.push(v.text), sameStatusBarView);
        view.update(running(idle));
        view.flush();
        assert.deepEqual(shown, ["$(plug) Verbatim (auto-apply)"]);

        view.update(running({ ...idle, pending: busy.pending }));
        t.mock.timers.tick(20);
        view.update(running(idle));
        t.mock.timers.tick(1000);
        assert.deepEqual(shown, ["$(plug) Verbatim (auto-apply)"], "the same view is not shown twice");
    });

    test("a state that holds still is shown once, after the settle time", (t) => {
        t.mock.timers.enable({ apis: ["setTimeout"] });
        const shown: string[] = [];
        const view = new SettledView(150, (v) => shown.push(v.text), sameStatusBarView);
        view.update(running(busy));
        t.mock.timers.tick(149);
        assert.deepEqual(shown, []);
        t.mock.timers.tick(1);
        assert.deepEqual(shown, ["$(bell-dot) Verbatim: 2 agents, 1 pending (auto-apply)"]);
        view.update(running(busy));
        t.mock.timers.tick(1000);
        assert.equal(shown.length, 1);
    });

    test("dispose cancels a view not yet shown", (t) => {
        t.mock.timers.enable({ apis: ["setTimeout"] });
        const shown: string[] = [];
        const view = new SettledView(150, (v) => shown.push(v.text), sameStatusBarView);
        view.update(running(busy));
        view.dispose();
        t.mock.timers.tick(1000);
        assert.deepEqual(shown, []);
    });
});
