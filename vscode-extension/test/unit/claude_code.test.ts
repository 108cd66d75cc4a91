import * as assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
    atMentionParams,
    claudeCodeEndpoint,
    endpointTooltip,
    environmentDescription,
    ideChoice,
    ideChoiceLog,
    ideChoiceMessage,
    SELECTION_DEBOUNCE_MS,
    SelectionReporter,
    terminalVariables,
} from "../../src/claude_code";
import type { SelectionChangedParams } from "../../src/lsp_ext";
import { manualTimers } from "./manual_timers";

const URI = "file:///p/src/app.ts";
const endpoint = { port: 50123 };

describe("the endpoint in the server's initialize result", () => {
    test("capabilities.experimental.verbatim.claudeCode.port", () => {
        assert.deepEqual(claudeCodeEndpoint({ verbatim: { claudeCode: { port: 50123 } } }), endpoint);
    });

    test("absent, or not a port: no endpoint", () => {
        for (const experimental of [
            undefined,
            null,
            {},
            { verbatim: {} },
            { verbatim: { protocolVersion: 1 } },
            { verbatim: { claudeCode: null } },
            { verbatim: { claudeCode: { port: "50123" } } },
            { verbatim: { claudeCode: { port: 0 } } },
            { verbatim: { claudeCode: { port: 70000 } } },
            { verbatim: { claudeCode: { port: 1.5 } } },
        ]) {
            assert.equal(claudeCodeEndpoint(experimental), undefined, JSON.stringify(experimental));
        }
    });
});

test("new terminals get the port and ENABLE_IDE_INTEGRATION, described", () => {
    assert.deepEqual(terminalVariables(endpoint), [
        ["CLAUDE_CODE_SSE_PORT", "50123"],
        ["ENABLE_IDE_INTEGRATION", "true"],
    ]);
    assert.match(environmentDescription(endpoint), /`claude` started in this terminal connects to Verbatim \(port 50123\)/);
});

test("the status tooltip names the endpoint, when there is one", () => {
    assert.equal(endpointTooltip(undefined), undefined);
    assert.match(endpointTooltip(endpoint) ?? "", /^Claude Code: ws:\/\/127\.0\.0\.1:50123 /);
});

describe("who Claude Code picks when Anthropic's extension is installed too", () => {
    test("from the port a new terminal gets", () => {
        assert.deepEqual(ideChoice("50123", endpoint), { kind: "verbatim" });
        assert.deepEqual(ideChoice(" 50123\n", endpoint), { kind: "verbatim" });
        assert.deepEqual(ideChoice("41999", endpoint), { kind: "anthropic", port: "41999" });
        assert.equal(ideChoice("", endpoint).kind, "unknown");
        assert.equal(ideChoice(undefined, endpoint).kind, "unknown");
    });

    test("the log says which, with both ports", () => {
        assert.match(ideChoiceLog({ kind: "verbatim" }, endpoint), /anthropic\.claude-code.*Verbatim's port 50123, so `claude` started there connects to Verbatim/);
        assert.match(ideChoiceLog({ kind: "anthropic", port: "41999" }, endpoint), /get port 41999, not Verbatim's 50123, so `claude` started there connects to Anthropic's extension/);
        assert.match(ideChoiceLog({ kind: "unknown", why: "no terminal" }, endpoint), /is not known \(no terminal\)/);
    });

    test("the message says which, and how to choose: the setting", () => {
        for (const choice of [{ kind: "verbatim" }, { kind: "anthropic", port: "41999" }, { kind: "unknown", why: "x" }] as const) {
            assert.match(ideChoiceMessage(choice), /the setting verbatim\.claudeCode\.enabled off, Claude Code is left to Anthropic's extension/);
        }
        assert.match(ideChoiceMessage({ kind: "verbatim" }), /connects to Verbatim/);
        assert.match(ideChoiceMessage({ kind: "anthropic", port: "41999" }), /connects to Anthropic's Claude Code extension, not to Verbatim/);
    });
});

test("an at-mention sends the selected lines, or the whole file for a cursor", () => {
    const lineLength = (line: number) => 10 + line;
    const cursor = { start: { line: 3, character: 4 }, end: { line: 3, character: 4 } };
    const lines = { start: { line: 3, character: 0 }, end: { line: 7, character: 2 } };
    assert.deepEqual(atMentionParams(URI, cursor, lineLength), { uri: URI });
    assert.deepEqual(atMentionParams(URI, lines, lineLength), { uri: URI, range: lines });
});

test("whole lines selected down to the start of the next one: the next line is not sent", () => {
    const lineLength = (line: number) => 10 + line;
    const wholeLines = { start: { line: 3, character: 0 }, end: { line: 6, character: 0 } };
    assert.deepEqual(atMentionParams(URI, wholeLines, lineLength), {
        uri: URI,
        range: { start: { line: 3, character: 0 }, end: { line: 5, character: 15 } },
    });
    // The line break at the end of one line alone is that line.
    const lineBreak = { start: { line: 3, character: 13 }, end: { line: 4, character: 0 } };
    assert.deepEqual(atMentionParams(URI, lineBreak, lineLength)?.range?.end, { line: 3, character: 13 });
});

describe("SelectionReporter", () => {
    const at = (line: number, character: number, text = ""): SelectionChangedParams => ({
        uri: URI,
        text,
        range: { start: { line, character: character - text.length }, end: { line, character } },
    });

    function reporter() {
        const clock = manualTimers();
        const reports: { at: number; params: SelectionChangedParams }[] = [];
        const selections = new SelectionReporter((params) => reports.push({ at: clock.now(), params }), clock.timers);
        return { selections, reports, tick: clock.tick };
    }

    test("reports once the selection has held still for the debounce time", () => {
        const { selections, reports, tick } = reporter();
        selections.update(at(1, 1));
        tick(SELECTION_DEBOUNCE_MS - 1);
        assert.equal(reports.length, 0);
        tick(1);
        assert.deepEqual(reports, [{ at: SELECTION_DEBOUNCE_MS, params: at(1, 1) }]);
    });

    test("a drag or a held arrow key gives one report, of where it ended", () => {
        const { selections, reports, tick } = reporter();
        for (let character = 1; character <= 20; character++) {
            selections.update(at(2, character, "x".repeat(character)));
            tick(30);
        }
        tick(SELECTION_DEBOUNCE_MS);
        assert.equal(reports.length, 1);
        assert.deepEqual(reports[0]?.params, at(2, 20, "x".repeat(20)));
    });

    test("the same selection again is not reported again, until a new connection", () => {
        const { selections, reports, tick } = reporter();
        selections.update(at(1, 1));
        tick(SELECTION_DEBOUNCE_MS);
        selections.update(at(1, 1));
        tick(SELECTION_DEBOUNCE_MS);
        assert.equal(reports.length, 1);
        selections.update(at(1, 2));
        tick(SELECTION_DEBOUNCE_MS);
        assert.equal(reports.length, 2);
        selections.reset();
        selections.update(at(1, 2));
        tick(SELECTION_DEBOUNCE_MS);
        assert.equal(reports.length, 3);
    });

    test("a report still waiting is dropped when the server goes", () => {
        const { selections, reports, tick } = reporter();
        selections.update(at(1, 1));
        selections.cancel();
        tick(SELECTION_DEBOUNCE_MS * 2);
        assert.equal(reports.length, 0);
    });
});
