/**
 * The pure side of the in-editor review: what a `workspace/applyEdit` proposes
 * (documents, edits, hunks, files created, moved or deleted), the person's
 * decision on each hunk, the text of the proposal as the review shows it, the
 * edit to apply, the answer to the server, and how the decisions carry over
 * to the edit the server offers again after the person typed. No `vscode`
 * here, so all of it is unit-tested in plain Node.
 *
 * Positions are LSP positions in UTF-16 code units (the only encoding the
 * language client advertises), which are JavaScript string indexes.
 */

import type { ApplyWorkspaceEditParams, CreateFile, DeleteFile, Range, RenameFile, TextEdit } from "vscode-languageserver-protocol";

import type { ApplyEditVerbatim, HunkAnswer, ProposalHunk } from "./lsp_ext";

/** One document an edit changes, with the version it was planned against (`null`: any). */
export interface ProposedDocument {
    uri: string;
    version: number | null;
    /** As sent: `ProposalHunk.edits` indexes into this. */
    edits: TextEdit[];
}

/** A file the edit creates, moves (`rename`) or deletes, with the options the server sent. */
export interface FileOperation {
    kind: "create" | "rename" | "delete";
    uri: string;
    /** Where a renamed file goes. */
    newUri?: string;
    options?: { overwrite?: boolean; ignoreIfExists?: boolean; recursive?: boolean; ignoreIfNotExists?: boolean };
    /** Its index among `documentChanges`: the edit is applied in the server's order. */
    change: number;
}

/**
 * One file the review shows: a document the edit changes, a file it creates,
 * moves or deletes, or both (a created file and its text; a moved file and
 * its edits, made before or after the move).
 */
export interface ReviewFile {
    /** Its document's uri, else the operation's: the review keeps the file's base text under it. */
    uri: string;
    document: ProposedDocument | undefined;
    operation: FileOperation | undefined;
}

export interface Hunk extends ProposalHunk {
    /** Its number in the whole edit, from 0. */
    index: number;
}

/** An edit offered for review, read from the `workspace/applyEdit` params. */
export interface Proposal {
    /** Stays the same when the server offers the edit again (`verbatim.id`), so a new offer replaces the old one. */
    key: string;
    /** The server's number for the edit (`verbatim.id`), when it sent one. */
    id: number | undefined;
    /** Which offer of the edit this is, from 1 (0 when the server did not say). */
    offer: number;
    /** "<agent>: <summary>", as the server labels it. */
    label: string;
    origin: "agent" | "disk";
    /** The agent's name (`verbatim.agent`); absent for a change made on disk, or when the server did not say. */
    agent: string | undefined;
    /** The agent writes the reviewed text to disk itself (`verbatim.writesItself`). */
    writesItself: boolean;
    /** Every document with text edits, in `documentChanges` order (then `changes`). */
    documents: ProposedDocument[];
    /** The files it creates, moves or deletes, in `documentChanges` order. */
    operations: FileOperation[];
    /** What the review shows, file by file, in `documentChanges` order: every document, and every file an operation names. */
    files: ReviewFile[];
    /** Every text edit belongs to exactly one hunk; hunks of one document come in document order. */
    hunks: Hunk[];
}

export type Decision = "accepted" | "rejected" | undefined;

/** Why the extension refuses an edit whose document the person changed: the server then offers it again. */
export const DOCUMENT_CHANGED = "the document changed during review";

/**
 * Reads the params of a `workspace/applyEdit`. Returns `undefined` for an edit
 * this review cannot show: one that changes nothing, or holds a change it does
 * not know.
 */
export function readProposal(params: ApplyWorkspaceEditParams): Proposal | undefined {
    const documents: ProposedDocument[] = [];
    const operations: FileOperation[] = [];
    const files: ReviewFile[] = [];
    for (const [index, change] of (params.edit.documentChanges ?? []).entries()) {
        if ("kind" in change) {
            const operation = readOperation(change, index);
            if (operation === undefined) return undefined;
            operations.push(operation);
            addOperation(files, operation);
            continue;
        }
        // A snippet edit (LSP 3.18) is only for the workspace edits of code actions, never in an applyEdit of ours.
        if (change.edits.some((edit) => !("newText" in edit))) return undefined;
        const document = { uri: change.textDocument.uri, version: change.textDocument.version, edits: change.edits as TextEdit[] };
        documents.push(document);
        addDocument(files, document);
    }
    for (const [uri, edits] of Object.entries(params.edit.changes ?? {})) {
        const document = { uri, version: null, edits };
        documents.push(document);
        addDocument(files, document);
    }
    if (operations.length === 0 && documents.every((document) => document.edits.length === 0)) return undefined;

    const verbatim = (params as { verbatim?: Partial<ApplyEditVerbatim> }).verbatim;
    const annotations = params.edit.changeAnnotations ?? {};
    const annotationId = Object.keys(annotations)[0];
    const label = params.label ?? (annotationId !== undefined ? annotations[annotationId]?.label : undefined) ?? "an edit";
    const origin = verbatim?.origin ?? (annotationId?.startsWith("verbatim/disk/") ? "disk" : "agent");
    const uris = files.map((file) => file.uri).join(" ");
    const hunks = validHunks(verbatim?.hunks, documents) ?? groupHunks(documents);
    return {
        key: typeof verbatim?.id === "number" ? `id ${verbatim.id}` : `label ${label} ${uris}`,
        id: typeof verbatim?.id === "number" ? verbatim.id : undefined,
        offer: typeof verbatim?.offer === "number" ? verbatim.offer : 0,
        label,
        origin,
        agent: typeof verbatim?.agent === "string" ? verbatim.agent : undefined,
        writesItself: verbatim?.writesItself === true,
        documents,
        operations,
        files,
        hunks,
    };
}

function readOperation(change: CreateFile | RenameFile | DeleteFile, index: number): FileOperation | undefined {
    const options = change.options === undefined ? {} : { options: { ...change.options } };
    switch (change.kind) {
        case "create":
        case "delete":
            return { kind: change.kind, uri: change.uri, ...options, change: index };
        case "rename":
            return { kind: "rename", uri: change.oldUri, newUri: change.newUri, ...options, change: index };
        default:
            return undefined;
    }
}

/**
 * A file operation joins the file of the text edits it goes with: the edits
 * of a file before it is moved away. Any other starts a file of its own.
 */
function addOperation(files: ReviewFile[], operation: FileOperation): void {
    const edited = files.find((file) => file.operation === undefined && file.uri === operation.uri);
    if (operation.kind === "rename" && edited !== undefined) edited.operation = operation;
    else files.push({ uri: operation.uri, document: undefined, operation });
}

/** A document joins the file created or moved to its uri earlier in the edit; any other is a file of its own. */
function addDocument(files: ReviewFile[], document: ProposedDocument): void {
    const target = files.find((file) => file.document === undefined && file.operation !== undefined && targetUri(file) === document.uri);
    if (target !== undefined && target.operation?.kind !== "delete") {
        target.document = document;
        target.uri = document.uri;
    } else {
        files.push({ uri: document.uri, document, operation: undefined });
    }
}

/** Where a file is once the edit is applied: a moved file's new uri, else its own. */
export function targetUri(file: ReviewFile): string {
    return file.operation?.newUri ?? file.uri;
}

/** Where a file's text comes from before the edit: a moved file's old uri, else its own. */
export function sourceUri(file: ReviewFile): string {
    return file.operation?.uri ?? file.uri;
}

/**
 * Whether the edit is accepted or rejected as a whole: one that creates, moves
 * or deletes files (the server cannot take "the file created, its text left out").
 */
export function decidedWhole(proposal: Proposal): boolean {
    return proposal.operations.length > 0;
}

/**
 * A hunk's note in a line, for its lens (the whole note shows on hover): its first
 * sentence, cut at 80 characters.
 */
export function noteHeadline(note: string): string {
    const line = note.split("\n")[0] ?? "";
    const end = line.search(/\.(\s|$)/);
    const sentence = (end === -1 ? line : line.slice(0, end)).trim();
    return sentence.length <= 80 ? sentence : `${sentence.slice(0, 79)}…`;
}

/** The last part of a uri's path, decoded: what a person calls the file. */
export function fileName(uri: string): string {
    const path = uri.replace(/[?#].*$/, "");
    const name = path.slice(path.lastIndexOf("/") + 1);
    try {
        return decodeURIComponent(name);
    } catch {
        return name;
    }
}

/** What a file operation does, in words: "creates b.rs", "deletes old.txt", "moves a.txt → b.txt". */
export function describeOperation(operation: FileOperation): string {
    switch (operation.kind) {
        case "create":
            return `creates ${fileName(operation.uri)}`;
        case "delete":
            return `deletes ${fileName(operation.uri)}`;
        case "rename":
            return `moves ${fileName(operation.uri)} → ${fileName(operation.newUri ?? operation.uri)}`;
    }
}

/** Every file operation of an edit, in words, in order: "creates b.rs, deletes old.txt". */
export function describeOperations(proposal: Proposal): string {
    return proposal.operations.map(describeOperation).join(", ");
}

/** The server's hunks, if they cover every edit exactly once; else `undefined`. */
function validHunks(hunks: ProposalHunk[] | undefined, documents: ProposedDocument[]): Hunk[] | undefined {
    if (!Array.isArray(hunks)) return undefined;
    const seen = new Map(documents.map((document) => [document.uri, new Set<number>()]));
    for (const hunk of hunks) {
        const document = documents.find((candidate) => candidate.uri === hunk.uri);
        const used = seen.get(hunk.uri);
        if (document === undefined || used === undefined || !Array.isArray(hunk.edits) || hunk.edits.length === 0) return undefined;
        for (const edit of hunk.edits) {
            if (!Number.isInteger(edit) || edit < 0 || edit >= document.edits.length || used.has(edit)) return undefined;
            used.add(edit);
        }
    }
    if (documents.some((document) => seen.get(document.uri)?.size !== document.edits.length)) return undefined;
    return hunks.map((hunk, index) => ({
        index,
        uri: hunk.uri,
        edits: [...hunk.edits],
        ...(typeof hunk.note === "string" && hunk.note !== "" ? { note: hunk.note } : {}),
    }));
}

/**
 * Groups each document's edits into hunks as the server does, for a server
 * that does not list them: neighbouring changed lines form one hunk, and a
 * line left unchanged between two edits separates them.
 */
export function groupHunks(documents: ProposedDocument[]): Hunk[] {
    const hunks: Hunk[] = [];
    for (const document of documents) {
        const order = document.edits.map((_, index) => index).sort((a, b) => compareRanges(document.edits[a]!.range, document.edits[b]!.range));
        let current: Hunk | undefined;
        let lastLine = -2;
        for (const index of order) {
            const range = document.edits[index]!.range;
            if (current === undefined || range.start.line > lastLine + 1) {
                current = { index: hunks.length, uri: document.uri, edits: [] };
                hunks.push(current);
            }
            current.edits.push(index);
            lastLine = Math.max(lastLine, range.end.line);
        }
    }
    return hunks;
}

function compareRanges(a: Range, b: Range): number {
    return a.start.line - b.start.line || a.start.character - b.start.character || a.end.line - b.end.line || a.end.character - b.end.character;
}

// --- Texts ---------------------------------------------------------------------

/** The offset of the start of every line, as LSP counts lines (`\n`, `\r\n` and `\r` end one). */
export function lineStarts(text: string): number[] {
    const starts = [0];
    for (let i = 0; i < text.length; i++) {
        const code = text.charCodeAt(i);
        if (code === 10) starts.push(i + 1);
        else if (code === 13) {
            if (text.charCodeAt(i + 1) === 10) i++;
            starts.push(i + 1);
        }
    }
    return starts;
}

/** The offset of an LSP position; a line past the end is the end, a character past the line's end is clamped to it. */
export function offsetAt(text: string, starts: number[], position: { line: number; character: number }): number {
    if (position.line >= starts.length) return text.length;
    const start = starts[position.line]!;
    let end = position.line + 1 < starts.length ? starts[position.line + 1]! : text.length;
    if (end > start && text.charCodeAt(end - 1) === 10) end--;
    if (end > start && text.charCodeAt(end - 1) === 13) end--;
    return Math.min(start + Math.max(0, position.character), end);
}

/** The text with the edits applied (the edits are disjoint, as LSP requires). */
export function applyEdits(text: string, edits: readonly TextEdit[], starts: number[] = lineStarts(text)): string {
    const spans = edits
        .map((edit) => ({ start: offsetAt(text, starts, edit.range.start), end: offsetAt(text, starts, edit.range.end), newText: edit.newText }))
        .sort((a, b) => a.start - b.start || a.end - b.end);
    const parts: string[] = [];
    let at = 0;
    for (const span of spans) {
        parts.push(text.slice(at, span.start), span.newText);
        at = Math.max(at, span.end);
    }
    parts.push(text.slice(at));
    return parts.join("");
}

/** The text a range covers. */
export function textIn(text: string, starts: number[], range: Range): string {
    return text.slice(offsetAt(text, starts, range.start), offsetAt(text, starts, range.end));
}

function lineBreaks(text: string): number {
    return lineStarts(text).length - 1;
}

// --- What the review shows -----------------------------------------------------

/** Where a hunk lies, in 0-based lines, inclusive. */
export interface HunkLines {
    index: number;
    /** In the document as it is (the base text). */
    line: number;
    endLine: number;
    /** In the proposal as shown. */
    proposalLine: number;
    proposalEndLine: number;
}

export interface ProposalView {
    /** The base text with every hunk that is not rejected applied. */
    text: string;
    /** The document's hunks, in document order. */
    hunks: HunkLines[];
}

/** The proposal for one document as the review shows it: rejected hunks are left out. */
export function proposalView(base: string, document: ProposedDocument, hunks: readonly Hunk[], decisions: readonly Decision[]): ProposalView {
    const own = hunks.filter((hunk) => hunk.uri === document.uri);
    const hunkOf = new Map<number, Hunk>();
    for (const hunk of own) for (const edit of hunk.edits) hunkOf.set(edit, hunk);
    const order = document.edits.map((_, index) => index).sort((a, b) => compareRanges(document.edits[a]!.range, document.edits[b]!.range));
    const shown = (hunk: Hunk | undefined): boolean => hunk === undefined || decisions[hunk.index] !== "rejected";

    const lines = new Map<number, HunkLines>();
    let delta = 0;
    for (const index of order) {
        const edit = document.edits[index]!;
        const hunk = hunkOf.get(index);
        const start = edit.range.start.line + delta;
        if (shown(hunk)) delta += lineBreaks(edit.newText) - (edit.range.end.line - edit.range.start.line);
        const end = edit.range.end.line + delta;
        if (hunk === undefined) continue;
        const known = lines.get(hunk.index);
        if (known === undefined) {
            lines.set(hunk.index, { index: hunk.index, line: edit.range.start.line, endLine: edit.range.end.line, proposalLine: start, proposalEndLine: end });
        } else {
            known.endLine = Math.max(known.endLine, edit.range.end.line);
            known.proposalEndLine = Math.max(known.proposalEndLine, end);
        }
    }
    const edits = document.edits.filter((_, index) => shown(hunkOf.get(index)));
    return { text: applyEdits(base, edits), hunks: [...lines.values()].sort((a, b) => a.line - b.line) };
}

/**
 * The proposal for one file of the review: its document's, or what its
 * operation leaves (a deleted file: nothing; a file created or moved without
 * edits: `base`, its text as it is).
 */
export function fileView(base: string, file: ReviewFile, hunks: readonly Hunk[], decisions: readonly Decision[]): ProposalView {
    if (file.operation?.kind === "delete") return { text: "", hunks: [] };
    return file.document === undefined ? { text: base, hunks: [] } : proposalView(base, file.document, hunks, decisions);
}

/** The hunk at a 0-based line (`side` says which text the line is in), else the next one below, else the last above. */
export function hunkAt(hunks: readonly HunkLines[], line: number, side: "base" | "proposal"): HunkLines | undefined {
    const from = (hunk: HunkLines): number => (side === "base" ? hunk.line : hunk.proposalLine);
    const to = (hunk: HunkLines): number => Math.max(from(hunk), side === "base" ? hunk.endLine : hunk.proposalEndLine);
    return hunks.find((hunk) => from(hunk) <= line && line <= to(hunk)) ?? hunks.find((hunk) => from(hunk) > line) ?? hunks.at(-1);
}

// --- Decisions and the answer ----------------------------------------------------

export function allDecided(decisions: readonly Decision[], count: number): boolean {
    for (let index = 0; index < count; index++) if (decisions[index] === undefined) return false;
    return true;
}

/** The first undecided hunk after `from` (wrapping around), else `undefined`. */
export function nextUndecided(decisions: readonly Decision[], count: number, from: number): number | undefined {
    for (let step = 1; step <= count; step++) {
        const index = (((from + step) % count) + count) % count;
        if (decisions[index] === undefined) return index;
    }
    return undefined;
}

/** The accepted hunks' edits of each document, all of them as sent. */
export function acceptedEdits(proposal: Proposal, decisions: readonly Decision[]): Map<string, TextEdit[]> {
    const result = new Map<string, TextEdit[]>();
    for (const hunk of proposal.hunks) {
        if (decisions[hunk.index] !== "accepted") continue;
        const document = proposal.documents.find((candidate) => candidate.uri === hunk.uri);
        if (document === undefined) continue;
        const edits = result.get(hunk.uri) ?? [];
        for (const index of hunk.edits) edits.push(document.edits[index]!);
        result.set(hunk.uri, edits);
    }
    return result;
}

/** The person's reasons as one text, or `undefined` when they gave none. */
export function joinReasons(reasons: readonly string[]): string | undefined {
    const kept = reasons.map((reason) => reason.trim()).filter((reason) => reason !== "");
    return kept.length === 0 ? undefined : kept.join("; ");
}

/** One step of the edit to apply: a file operation, or the accepted text edits of one document, as sent. */
export type EditStep = FileOperation | { kind: "edit"; uri: string; edits: TextEdit[] };

/**
 * The edit to apply, in the server's order: each file operation and each
 * document's accepted edits where `documentChanges` has them (documents of
 * `changes` last).
 */
export function editSteps(proposal: Proposal, decisions: readonly Decision[]): EditStep[] {
    const accepted = acceptedEdits(proposal, decisions);
    const steps: EditStep[] = [];
    let operation = 0;
    let change = 0;
    for (const document of proposal.documents) {
        while (proposal.operations[operation]?.change === change) {
            steps.push(proposal.operations[operation++]!);
            change++;
        }
        const edits = accepted.get(document.uri);
        accepted.delete(document.uri);
        if (edits !== undefined) steps.push({ kind: "edit", uri: document.uri, edits });
        change++;
    }
    steps.push(...proposal.operations.slice(operation));
    return steps;
}

/**
 * The answer once every hunk is decided and the accepted ones are applied:
 * one entry per hunk; `applied: false` when none was accepted (for an edit
 * decided whole, `whole`: when it was rejected), with the person's reason as
 * `failureReason`.
 */
export function answerFor(proposal: Proposal, decisions: readonly Decision[], reason: string | undefined, whole?: Decision): HunkAnswer {
    const hunks = proposal.hunks.map((hunk) => ({ index: hunk.index, accepted: decisions[hunk.index] === "accepted" }));
    if (whole === undefined ? hunks.some((hunk) => hunk.accepted) : whole === "accepted") {
        return reason === undefined ? { applied: true, hunks } : { applied: true, hunks, reason };
    }
    return { applied: false, failureReason: reason ?? "rejected in review", hunks };
}

// --- A new offer of the same edit ------------------------------------------------

/**
 * What identifies a hunk across offers: its document, and the text each of its
 * edits removes and inserts. The server moves an edit over the person's typing
 * without changing its hunks' text, only their positions.
 */
export function hunkKeys(proposal: Proposal, baseOf: (uri: string) => string | undefined): string[] {
    const starts = new Map<string, number[]>();
    return proposal.hunks.map((hunk) => {
        const document = proposal.documents.find((candidate) => candidate.uri === hunk.uri);
        const base = baseOf(hunk.uri);
        if (document === undefined || base === undefined) return `${hunk.uri}\u0000#${hunk.index}`;
        let lines = starts.get(hunk.uri);
        if (lines === undefined) starts.set(hunk.uri, (lines = lineStarts(base)));
        const parts = hunk.edits.map((index) => {
            const edit = document.edits[index]!;
            return `${textIn(base, lines!, edit.range)}\u0001${edit.newText}`;
        });
        return `${hunk.uri}\u0000${parts.join("\u0002")}`;
    });
}

/** The decisions for a new offer: a hunk with the same key as an old one keeps its decision (matched in order). */
export function carryDecisions(oldKeys: readonly string[], oldDecisions: readonly Decision[], newKeys: readonly string[]): Decision[] {
    const used = new Set<number>();
    return newKeys.map((key) => {
        const match = oldKeys.findIndex((candidate, index) => candidate === key && !used.has(index));
        if (match < 0) return undefined;
        used.add(match);
        return oldDecisions[match];
    });
}
