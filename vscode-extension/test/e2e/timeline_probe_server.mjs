// A stand-in for `verbatim lsp` that serves the timeline methods as
// docs/protocol.md documents them, so that test/e2e/timeline_view.test.mjs can
// drive the Verbatim Timeline view in a real VS Code whatever the real server
// does. It speaks LSP on stdio, like the server.
//
// The scenario lives in the JSON file TIMELINE_PROBE_FIXTURE, read again on
// every request, so the test can change it while the editor runs:
//   { "timeline": <verbatim/timeline result>,
//     "entries": { "<entry id>": <verbatim/timelineEntry result> },
//     "revert": { "edit": { "uri", "line", "oldText", "newText" }, "result": <verbatim/revert result> }
//            or { "error": { "code", "message", "data" } } }
// A revert with an `edit` is offered to the editor as an ordinary review
// (`workspace/applyEdit`, `needsConfirmation`, Verbatim's `verbatim` field):
// replacing line `line` (0-based) of `uri`, which holds `oldText`, with
// `newText`; the answer decides the result's outcome (`rejected` when nothing
// was applied). After the revert it sends `verbatim/journalChanged`; writing
// anything to the file TIMELINE_PROBE_FIXTURE + ".journal-changed" sends one too.
//
// A `maxEdits` in the params cuts the timeline as the server does
// (`withMaxEdits` of the unit tests' fixtures, bundled by the test into
// TIMELINE_PROBE_FIXTURES_MODULE).
//
// Every request, and when each answer was sent (`answeredAt`, epoch ms), is a
// line of JSON in TIMELINE_PROBE_LOG.
//
// `--version` prints a Verbatim-like version, so that the extension takes it.

import { appendFileSync, existsSync, readFileSync, unwatchFile, watchFile } from "node:fs";
import { pathToFileURL } from "node:url";

import { IDLE_STATUS, receive, request, send } from "./stdio_lsp.mjs";

if (process.argv.includes("--version")) {
    process.stdout.write("verbatim 0.0.0-timeline-probe\n");
    process.exit(0);
}

const fixtureFile = process.env.TIMELINE_PROBE_FIXTURE;
const logFile = process.env.TIMELINE_PROBE_LOG;
const fixturesModule = process.env.TIMELINE_PROBE_FIXTURES_MODULE;
if (!fixtureFile || !logFile || !fixturesModule) throw new Error("TIMELINE_PROBE_FIXTURE, TIMELINE_PROBE_LOG and TIMELINE_PROBE_FIXTURES_MODULE must be set");
const { withMaxEdits } = await import(pathToFileURL(fixturesModule).href);

function record(entry) {
    appendFileSync(logFile, `${JSON.stringify({ at: Date.now(), ...entry })}\n`);
}

function fixture() {
    return JSON.parse(readFileSync(fixtureFile, "utf8"));
}

/** The version of each open document, from didOpen and didChange. */
const versions = new Map();

function answer(id, result) {
    send({ id, result });
}

function journalChanged(uris) {
    send({ method: "verbatim/journalChanged", params: { uris } });
    record({ kind: "journalChanged", uris });
}

let reviewId = 1;

async function revert(id, params) {
    const scenario = fixture().revert ?? {};
    if (scenario.error) {
        send({ id, error: scenario.error });
        record({ kind: "revertAnswered", error: scenario.error });
        return;
    }
    const { edit, result } = scenario;
    let applied = true;
    if (edit) {
        const version = versions.get(edit.uri) ?? null;
        const summary = params.summary ?? "Revert";
        const annotation = `verbatim/${reviewId}`;
        const range = { start: { line: edit.line, character: 0 }, end: { line: edit.line, character: edit.oldText.length } };
        const answerOfEditor = await request("workspace/applyEdit", {
            label: `Verbatim: ${summary}`,
            edit: {
                documentChanges: [{ textDocument: { uri: edit.uri, version }, edits: [{ range, newText: edit.newText, annotationId: annotation }] }],
                changeAnnotations: { [annotation]: { label: `Verbatim: ${summary}`, needsConfirmation: true } },
            },
            verbatim: { id: reviewId, agent: "Verbatim", summary, origin: "agent", offer: 1, hunks: [{ uri: edit.uri, edits: [0] }] },
        }).catch((error) => ({ applied: false, failureReason: String(error?.message ?? error) }));
        reviewId += 1;
        record({ kind: "applyEditAnswered", answer: answerOfEditor });
        applied = answerOfEditor.applied === true;
    }
    const outcome = applied ? result.outcome : "rejected";
    send({ id, result: { ...result, outcome, writeId: applied ? result.writeId : null } });
    record({ kind: "revertAnswered", outcome });
    if (applied) journalChanged(result.files.map((file) => file.uri));
}

function onMessage(message) {
    if (message.id !== undefined) record({ kind: "request", method: message.method, params: message.params });
    switch (message.method) {
        case "initialize":
            record({ kind: "initialize", initializationOptions: message.params.initializationOptions });
            answer(message.id, {
                capabilities: { positionEncoding: "utf-16", textDocumentSync: { openClose: true, change: 2 } },
                serverInfo: { name: "verbatim", version: "0.0.0-timeline-probe" },
            });
            return;
        case "shutdown":
            answer(message.id, null);
            return;
        case "exit":
            process.exit(0);
            return;
        case "verbatim/status":
            answer(message.id, IDLE_STATUS);
            return;
        case "textDocument/didOpen":
            versions.set(message.params.textDocument.uri, message.params.textDocument.version);
            return;
        case "textDocument/didChange":
            versions.set(message.params.textDocument.uri, message.params.textDocument.version);
            return;
        case "verbatim/timeline": {
            const { timeline: whole } = fixture();
            const maxEdits = message.params?.maxEdits;
            const timeline = maxEdits === undefined ? whole : withMaxEdits(whole, maxEdits);
            answer(message.id, timeline);
            record({ kind: "answered", method: message.method, answeredAt: Date.now(), entries: timeline.entries });
            return;
        }
        case "verbatim/timelineEntry": {
            const entry = fixture().entries?.[message.params.id];
            if (entry) answer(message.id, entry);
            else {
                send({
                    id: message.id,
                    error: { code: -33020, message: `No journal entry ${message.params.id}.`, data: { kind: "unknownEntry", id: message.params.id } },
                });
            }
            return;
        }
        case "verbatim/markReviewed":
            answer(message.id, { reviewed: message.params.reviewed });
            return;
        case "verbatim/revert":
            void revert(message.id, message.params);
            return;
        default:
            if (message.id !== undefined) send({ id: message.id, error: { code: -32601, message: `the probe handles no ${message.method}` } });
    }
}

const trigger = `${fixtureFile}.journal-changed`;
watchFile(trigger, { interval: 50 }, () => {
    if (existsSync(trigger)) journalChanged([]);
});

receive(onMessage, () => {
    unwatchFile(trigger);
    process.exit(0);
});
