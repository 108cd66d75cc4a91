/**
 * Verbatim's custom protocol, mirrored from `docs/protocol.md` (the single
 * source of truth). `test/unit/lsp_ext.test.ts` checks this file against that
 * page: method names, error kinds and codes, and the field names of every
 * params and result type. Change the page first, then this file.
 *
 * This module imports only `vscode-languageserver-protocol`, not `vscode`, so
 * the unit tests and the end-to-end test's agent can use it outside an editor.
 */

// LSP's own `Range` (and its `Position`) are used as they are; the check
// against the page knows their fields (`LSP_TYPES` in lsp_ext.test.ts).
import { NotificationType, RequestType, RequestType0, type Range } from "vscode-languageserver-protocol";

export const PROTOCOL_VERSION = 1;

// --- Editor connection -------------------------------------------------------

/** `initializationOptions` an editor may send in `initialize`. */
export interface InitializationOptions {
    /** The value of `needsConfirmation` on every change annotation (default `true`). */
    needsConfirmation?: boolean;
    /** Send `verbatim/statusChanged` notifications to the editor (default `false`). */
    statusNotifications?: boolean;
    /** How long to wait for the `didChange` that carries an applied edit (default 5000). */
    syncTimeoutMs?: number;
    /** How long to wait for the editor's answer to `workspace/applyEdit`; `null` waits forever. */
    applyTimeoutMs?: number | null;
    /** The access of agents on the main socket (default `"readWrite"`). */
    agentAccess?: Access;
    /** Paths agents may not write nor read from disk; `null` keeps the server's defaults. */
    writeDenyList?: string[] | null;
    /** Let agents write open documents outside every workspace folder (default `false`). */
    allowWritesOutsideWorkspace?: boolean;
    /** What to do when an open file changes on disk outside the editor (default `"review"`). */
    externalChanges?: ExternalChanges;
    /** The editor answers `verbatim/diagnostics` (default `false`). */
    diagnostics?: boolean;
    /** The editor reports which hunks it applied in its answers to `workspace/applyEdit` (informational). */
    hunkOutcomes?: boolean;
    /** Serve Claude Code's IDE protocol for this editor: a WebSocket endpoint and a lock file (default `true`). */
    claudeCode?: boolean;
    /** Serve Gemini CLI's and Qwen Code's IDE companion interface: an MCP endpoint over HTTP and discovery files (default `true`). */
    geminiCli?: boolean;
    /** The editor reads Verbatim's additions: `verbatim` in `workspace/applyEdit` params and `verbatim/externalChange` (default `false`). */
    verbatimExtensions?: boolean;
}

/** What an agent connection may do. */
export type Access = "readWrite" | "readOnly";

/** The discovery file `<runtime dir>/<pid>.json` that tells agents where the socket is. */
export interface DiscoveryFile {
    pid: number;
    socket: string;
    /** Agents connected through this socket may only read. */
    readOnlySocket: string;
    workspaceFolders: string[];
    clientInfo: { name: string; version?: string } | null;
    protocolVersion: number;
    serverVersion: string;
    startedAt: string;
}

/** `capabilities.experimental.verbatim` in the server's `initialize` result for agents. */
export interface ServerExperimentalCapabilities {
    verbatim: {
        protocolVersion: number;
        methods: string[];
        /** Write methods a read-only connection may still call with `dryRun: true`. */
        dryRunOnly: string[];
        access: Access;
    };
}

/** `capabilities.experimental` in the server's `initialize` result for the editor. */
export interface EditorExperimentalCapabilities {
    verbatim?: {
        /** Present when the server serves Claude Code's IDE protocol: the port of its WebSocket endpoint on 127.0.0.1. */
        claudeCode?: { port: number };
        /** Present when the server serves Gemini CLI's and Qwen Code's IDE companion interface. */
        geminiCli?: GeminiCliEndpoint;
    };
}

/** `capabilities.experimental.verbatim.geminiCli`: the MCP endpoint `http://127.0.0.1:<port>/mcp` and what terminals need to find it. */
export interface GeminiCliEndpoint {
    port: number;
    /** The Bearer token of every request. */
    authToken: string;
    /** The workspace folders joined by `:`. */
    workspacePath: string;
    /** The PID in the discovery file's name. */
    idePid: number;
    /** The variables for the terminals the editor starts (GEMINI_CLI_IDE_*, QWEN_CODE_IDE_*). */
    env: Record<string, string>;
}

// --- verbatim/documents --------------------------------------------------------

export interface OpenDocument {
    uri: string;
    rev: string;
    languageId: string;
    lineCount: number;
}

export const documents = new RequestType0<OpenDocument[], void>("verbatim/documents");

// --- verbatim/read -------------------------------------------------------------

export interface ReadParams {
    uri: string;
}

export type LineEnding = "lf" | "crlf" | "cr" | "mixed";

export interface ReadResult {
    uri: string;
    rev: string;
    text: string;
    lineEnding: LineEnding;
    source: "editor" | "disk";
    /** Only while the editor still owes a change it made (a reload, or an edit it has not sent). */
    note?: string;
}

export const read = new RequestType<ReadParams, ReadResult, void>("verbatim/read");

// --- Edits ---------------------------------------------------------------------

export interface StrReplaceParams {
    uri: string;
    oldStr: string;
    newStr: string;
    summary: string;
    baseRev?: string;
    after?: string;
    before?: string;
    occurrence?: number;
    replaceAll?: boolean;
    /** Match quotes exactly: no normalization ladder, no deletion nicety. */
    exact?: boolean;
    dryRun?: boolean;
    /** Report what the editor's language servers say after the edit; every write method takes it. */
    diagnostics?: DiagnosticsOption;
    diagnosticsTimeoutMs?: number;
}

export interface ReplaceRangeParams {
    uri: string;
    fromStr: string;
    toStr: string;
    newStr: string;
    summary: string;
    baseRev?: string;
    after?: string;
    before?: string;
    exact?: boolean;
    dryRun?: boolean;
    diagnostics?: DiagnosticsOption;
    diagnosticsTimeoutMs?: number;
}

/** One replacement, with its range in the document *before* the edit. */
export interface ReplacedSpan {
    range: Range;
    oldText: string;
    newText: string;
}

/** The outcome for one document: an `EditResult` without `applied` and `dryRun`. */
export interface DocumentResult {
    uri: string;
    baseRev: string | null;
    rev: string;
    /** Sorted and disjoint. */
    edits: ReplacedSpan[];
    replaced: string[];
    diff: string;
    modifiedByEditor: boolean;
    /** Set when `modifiedByEditor`: a unified diff from the proposal to the live text. */
    editorDiff?: string;
    /** What it took to find the quotes, in ladder order; empty when they matched exactly. */
    normalizations: Normalization[];
    /** Set when the file itself is created, deleted or moved. */
    operation?: "create" | "delete" | "move";
    /** Where a moved file goes. */
    newUri?: string;
    /**
     * Present (and `true`) when the edit was planned against an older revision,
     * `rebasedFrom` (the `baseRev` sent), and moved over the changes made since;
     * `baseRev` is then the revision it was applied to.
     */
    rebased?: true;
    rebasedFrom?: string;
}

export type Normalization =
    | "lineNumbers"
    | "typography"
    | "lineEndings"
    | "trailingWhitespace"
    | "indentation"
    | "deletedTrailingNewline"
    | "newTextKept"
    | "newTextReindented";

export interface EditResult extends DocumentResult {
    /** Only for an edit that went through the editor: what became of each hunk of the proposal. */
    hunks?: HunkOutcome[];
    /** Present (and `true`) when the person applied some hunks and left the others out. */
    partial?: true;
    /** Present (and `true`) when the editor applied the edit but has not sent its text yet (`rev` is then `null`). */
    pendingSync?: true;
    /** Why the person left hunks out, when they said. */
    reason?: string;
    applied: boolean;
    dryRun: boolean;
    /** Only when asked for: what the editor's language servers report after the edit. */
    diagnostics?: DiagnosticsReport;
}

export const strReplace = new RequestType<StrReplaceParams, EditResult, ErrorData>("verbatim/strReplace");
export const replaceRange = new RequestType<ReplaceRangeParams, EditResult, ErrorData>("verbatim/replaceRange");

export interface StrReplaceEntry {
    uri: string;
    oldStr: string;
    newStr: string;
    baseRev?: string;
    after?: string;
    before?: string;
    occurrence?: number;
    replaceAll?: boolean;
    exact?: boolean;
}

export interface ReplaceRangeEntry {
    uri: string;
    fromStr: string;
    toStr: string;
    newStr: string;
    baseRev?: string;
    after?: string;
    before?: string;
    exact?: boolean;
}

export interface BatchEditParams {
    summary: string;
    dryRun?: boolean;
    edits: (StrReplaceEntry | ReplaceRangeEntry)[];
    diagnostics?: DiagnosticsOption;
    diagnosticsTimeoutMs?: number;
}

export interface BatchResult {
    applied: boolean;
    dryRun: boolean;
    modifiedByEditor: boolean;
    /** One per document, in first-mention order. */
    documents: DocumentResult[];
    /** Only when asked for: for the whole write. */
    diagnostics?: DiagnosticsReport;
}

export const batchEdit = new RequestType<BatchEditParams, BatchResult, ErrorData>("verbatim/batchEdit");

export interface WriteParams {
    uri: string;
    text: string;
    summary: string;
    /** Absent to create a file; required to replace an existing document's text. */
    baseRev?: string;
    diagnostics?: DiagnosticsOption;
    diagnosticsTimeoutMs?: number;
}

export const write = new RequestType<WriteParams, EditResult, ErrorData>("verbatim/write");

// --- verbatim/applyPatch -------------------------------------------------------

export interface ApplyPatchParams {
    /** An OpenAI `apply_patch` patch (`*** Begin Patch` …) or SEARCH/REPLACE blocks. */
    patch: string;
    summary: string;
    dryRun?: boolean;
    /** Match hunks exactly: no normalization ladder. */
    exact?: boolean;
    diagnostics?: DiagnosticsOption;
    diagnosticsTimeoutMs?: number;
}

export interface ApplyPatchResult extends BatchResult {
    format: "applyPatch" | "searchReplace";
}

export const applyPatch = new RequestType<ApplyPatchParams, ApplyPatchResult, ErrorData>("verbatim/applyPatch");

// --- verbatim/propose ----------------------------------------------------------

/** One file of a proposal: its whole new text, or `null` to delete it. */
export interface ProposedFile {
    uri: string;
    text: string | null;
}

export interface ProposeParams {
    files: ProposedFile[];
    summary: string;
    /** `always`: the agent would have asked; `editor`: the editor's review setting decides. */
    review?: "always" | "editor";
    session?: string;
    turn?: string;
}

/** What one file of a proposal is to hold. */
export interface ProposedOutcome {
    uri: string;
    text: string | null;
    asProposed: boolean;
    leftOut?: string;
}

export interface ProposeResult {
    decision: "accepted" | "partial" | "rejected";
    files: ProposedOutcome[];
    reason?: string;
    message: string;
}

/** Agent → server: whole new texts an agent will write itself once the person has reviewed them. */
export const propose = new RequestType<ProposeParams, ProposeResult, ErrorData>("verbatim/propose");

// --- Status --------------------------------------------------------------------

export interface AgentInfo {
    id: number;
    name: string;
    access: Access;
    version: string | null;
    connectedAt: string;
    pendingEdits: number;
}

export interface PendingEdit {
    id: number;
    agentId: number;
    agent: string;
    summary: string;
    uris: string[];
    since: string;
}

export interface StatusResult {
    socket: string;
    readOnlySocket: string;
    discoveryFile: string;
    editorConnected: boolean;
    agents: AgentInfo[];
    pending: PendingEdit[];
}

export const status = new RequestType0<StatusResult, void>("verbatim/status");

/** Server → editor, only when `statusNotifications` was asked for. */
export const statusChanged = new NotificationType<StatusResult>("verbatim/statusChanged");

// --- Diagnostics after an edit ------------------------------------------------

/** A write's `diagnostics`: `true` is `"errors"`. */
export type DiagnosticsOption = boolean | "errors" | "warnings";

/** `settled`: fresh and quiet; `timedOut`: incomplete, never a clean bill; `unavailable`: nothing reports. */
export type DiagnosticsStatus = "settled" | "timedOut" | "unavailable";

/** One problem in a {@link DiagnosticsReport}: 1-based line and column (in characters). */
export interface ReportedProblem {
    location: string;
    path: string;
    line: number;
    column: number;
    severity: "error" | "warning";
    source: string;
    code: string;
    message: string;
    /** The source line, trimmed (for a resolved problem, as it was). */
    text: string;
}

/** The `diagnostics` field of an edit's result: what the edit changed. */
export interface DiagnosticsReport {
    status: DiagnosticsStatus;
    waitedMs: number;
    sources: string[];
    severity: "errors" | "warnings";
    introduced: ReportedProblem[];
    resolved: ReportedProblem[];
    existing: number;
    otherFiles: ReportedProblem[];
    omitted: number;
    /** Edited documents nothing reported on (no language server, or not open in the editor); absent when none. */
    unchecked?: string[];
    unsaved: boolean;
    note?: string;
}

export type MinSeverity = "error" | "warning";

/** An LSP `Diagnostic`, with the fields the editor sends (`code`: a VS Code `{ value, target }` code sends its value). */
export interface WireDiagnostic {
    range: Range;
    /** LSP's `DiagnosticSeverity`: 1 error, 2 warning, 3 information, 4 hint. */
    severity?: number;
    code?: number | string;
    source?: string;
    message: string;
}

export interface DiagnosticsWait {
    /** Per document: the version the edit reached; a diagnostics change at it or later counts as fresh. */
    versions: Record<string, number>;
    quietMs: number;
    timeoutMs: number;
}

export interface DiagnosticsParams {
    uris: string[];
    minSeverity: MinSeverity;
    /** Absent for the baseline: answer at once. */
    wait?: DiagnosticsWait;
}

export interface DocumentDiagnostics {
    uri: string;
    /** The document's version when answered; `null` when it is not open. */
    version: number | null;
    status: DiagnosticsStatus;
    waitedMs: number;
    sources: string[];
    diagnostics: WireDiagnostic[];
}

/** Another document whose diagnostics at `minSeverity` or worse changed during the wait. */
export interface OtherDocumentDiagnostics {
    uri: string;
    before: WireDiagnostic[];
    after: WireDiagnostic[];
}

export interface DiagnosticsResult {
    documents: DocumentDiagnostics[];
    others: OtherDocumentDiagnostics[];
}

/** Server → editor, only to an editor that set `diagnostics: true` in its `initializationOptions`. */
export const diagnostics = new RequestType<DiagnosticsParams, DiagnosticsResult, void>("verbatim/diagnostics");

// --- Changes made on disk outside the editor -----------------------------------

/** `review`: offer the merged change with `needsConfirmation: true`; `auto`: apply it; `off`: do not watch. */
export type ExternalChanges = "review" | "auto" | "off";

export type ExternalChangeKind = "reload" | "offered" | "conflict" | "synced" | "deleted" | "moved";

/** A region kept as the person has it: 1-based inclusive lines; an empty side has `endLine = line - 1`. */
export interface ExternalConflict {
    /** In the buffer. */
    line: number;
    endLine: number;
    /** In the file on disk. */
    diskLine: number;
    diskEndLine: number;
}

export interface ExternalChangeParams {
    /** The document, in the editor's own spelling. */
    uri: string;
    kind: ExternalChangeKind;
    time: string;
    conflicts: ExternalConflict[];
    /** For `moved`: the file's new URI. */
    movedTo?: string;
    /** One sentence for the person. */
    message: string;
}

/** Server → editor: a change on disk to an open document led to something (sent before its `workspace/applyEdit`). */
export const externalChange = new NotificationType<ExternalChangeParams>("verbatim/externalChange");

/** The change annotation id of a merged change on disk starts with this. */
export const DISK_ANNOTATION_PREFIX = "verbatim/disk/";

// --- Hunks: what the person kept ----------------------------------------------

/** `verbatim` in the `workspace/applyEdit` params the server sends: who proposed the edit, and its hunks. */
export interface ApplyEditVerbatim {
    /** The pending edit's id (the `verbatim/<id>` of its annotation); the same for every offer of one edit. */
    id: number;
    /** Absent for a change made on disk. */
    agent?: string;
    summary: string;
    origin: "agent" | "disk";
    /** The agent writes the reviewed text to disk itself (`openDiff`, a pre-write hook's `verbatim/propose`). */
    writesItself?: boolean;
    /** Counts the offers of one edit, from 1: the server offers it again when the document moved during review. */
    offer: number;
    /** Numbered from 0 across the whole WorkspaceEdit; hunks of one document come in document order. */
    hunks: ProposalHunk[];
}

/** One group of neighbouring changed lines of one document. */
export interface ProposalHunk {
    uri: string;
    /** Indexes into the `edits` of that document's `TextDocumentEdit` (or of `changes[uri]`). */
    edits: number[];
    /** What the person should know before taking the hunk (a revert's conflict), shown at it. */
    note?: string;
}

/** What became of one hunk, in an agent's result: 1-based `line` in the text before the edit. */
export interface HunkOutcome {
    index: number;
    accepted: boolean;
    line: number;
    /** 0 for a pure insertion before `line`. */
    oldLines: number;
    newLines: number;
}

/** The person's decision on one hunk, in the answer to `workspace/applyEdit`. */
export interface HunkDecision {
    index: number;
    accepted: boolean;
}

/** What an editor that reviews hunk by hunk answers to `workspace/applyEdit`, besides LSP's own fields. */
export interface HunkAnswer {
    applied: boolean;
    /** Set when `applied` is false: the person's reason, or why nothing was applied. */
    failureReason?: string;
    /** One entry per hunk. */
    hunks?: HunkDecision[];
    /** The person's words for what they left out. */
    reason?: string;
}

/** `verbatim/reviewDecided`: the decision on an edit, sent just before the kept hunks are applied. */
export interface ReviewDecidedParams {
    /** The edit's `verbatim.id`. */
    id: number;
    /** Its `verbatim.offer`. */
    offer: number;
    /** Every hunk of the edit. */
    hunks: HunkDecision[];
    /** The person's words for what they left out. */
    reason?: string;
}

/**
 * Editor → server: the person decided every hunk of an edit, and the editor is
 * about to apply the kept ones. The server answers an agent that writes the
 * file itself (Claude Code's and Gemini CLI's `openDiff`) at once; the answer to
 * `workspace/applyEdit` still follows, as always.
 */
export const reviewDecided = new NotificationType<ReviewDecidedParams>("verbatim/reviewDecided");

// --- Claude Code's IDE protocol ------------------------------------------------

/** The agent name of a Claude Code connection to the server's IDE endpoint (`verbatim.agent` of its edits). */
export const CLAUDE_CODE_AGENT = "Claude Code";
/** The agent name of a Gemini CLI (or Qwen Code) connection to the server's IDE companion endpoint. */
export const GEMINI_CLI_AGENT = "Gemini CLI";

/**
 * Whether an edit's agent writes the file itself once the person has decided
 * (Claude Code's and Gemini CLI's `openDiff`): the extension then neither saves
 * a file it creates nor waits to see whether the disk agrees with the buffer.
 */
export function writesTheFileItself(agent: string | undefined, writesItself?: boolean): boolean {
    // `verbatim.writesItself` says it (every agent's pre-write hook); older servers said it by the agent's name.
    return writesItself === true || agent === CLAUDE_CODE_AGENT || agent === GEMINI_CLI_AGENT;
}

export interface SelectionChangedParams {
    uri: string;
    /** The selected text; empty for a cursor. */
    text: string;
    /** The selection, or the cursor as an empty range, in the connection's position encoding. */
    range: Range;
}

/** Editor → server: the selection in the editor's focused document changed (sent debounced, only for documents open with the server). */
export const selectionChanged = new NotificationType<SelectionChangedParams>("verbatim/selectionChanged");

export interface AtMentionParams {
    uri: string;
    /** These lines only; absent for the whole file. */
    range?: Range;
}

/** Editor → server: the person sends this file (or these lines) to Claude Code. */
export const atMention = new NotificationType<AtMentionParams>("verbatim/atMention");

export interface SaveDocumentParams {
    uri: string;
}

export interface SaveDocumentResult {
    saved: boolean;
    /** Why it was not saved, or anything else the person should know. */
    message?: string;
}

/** Server → editor: save the open document (for Claude Code's `saveDocument`). */
export const saveDocument = new RequestType<SaveDocumentParams, SaveDocumentResult, void>("verbatim/saveDocument");

// --- Timeline and revert -------------------------------------------------------

/** Where a journaled write came from: through the editor, headless, or a change made on disk outside the editor. */
export type JournalSource = "editor" | "headless" | "disk";

/**
 * A journal entry's `outcome` (the `disk` and plain-client ones included). An
 * edit's outcome is its files' when they agree, else `partial`.
 */
export type JournalOutcome =
    | "applied"
    | "modifiedByEditor"
    | "partial"
    | "rejected"
    | "error"
    | "reloaded"
    | "conflict"
    | "savedOver"
    | "deleted"
    | "moved"
    | "notAnswered"
    | "answeredLate"
    | "differsFromAnswer";

/** Why an entry cannot be reverted (`whyNot` in the timeline, `why` in `notRevertible`). */
export type NotRevertibleReason = "nothingWritten" | "tooLarge" | "pruned" | "legacy";

export interface TimelineParams {
    /** The folder whose journal is read; default: every workspace folder of the editor. */
    workspace?: string;
    /** Keep only the edits of this agent. */
    agent?: string;
    /** Keep only the edits touching this file. */
    uri?: string;
    /** At most this many sessions, the newest (default 200). */
    limit?: number;
    /**
     * At most this many edits, the newest first (default: no bound). The turn
     * being filled when the bound is reached keeps what it got (its
     * `editCount` says how many it has); older turns and sessions are left out.
     */
    maxEdits?: number;
}

/** One file of one edit: one journal entry. */
export interface TimelineFile {
    /** The entry's id, `<writeId>.<n>`. */
    id: string;
    uri: string;
    outcome: JournalOutcome;
    added: number;
    removed: number;
    revertible: boolean;
    /** Set when `revertible` is false. */
    whyNot?: NotRevertibleReason;
    /** `create`, `delete` or `move` for a write that created, deleted or moved the file; absent for an edit. */
    operation?: "create" | "delete" | "move";
    /** Where a moved file went. */
    newUri?: string;
}

/** One write (a batch shares it), newest first in its turn. */
export interface TimelineEdit {
    writeId: string;
    time: string;
    agent: string;
    summary: string;
    outcome: JournalOutcome;
    /** On a revert: the ids it reverts. */
    reverts?: string[];
    /** On an edit whose every revertible file a later applied revert took back: that revert's `writeId`. */
    revertedBy?: string;
    files: TimelineFile[];
}

/** A file a turn touched, and whether the person marked it reviewed for this turn (cleared when it changes again). */
export interface TimelineTurnFile {
    uri: string;
    reviewed: boolean;
}

export interface TimelineTurn {
    /** The agent's turn id, or `auto:<writeId of its first write>`. */
    turn: string;
    started: string;
    ended: string;
    files: TimelineTurnFile[];
    /** Newest first; fewer than `editCount` when `maxEdits` cut the turn. */
    edits: TimelineEdit[];
    /** Its edits in all (that pass the filters). Absent from a server older than `maxEdits`, which sends every edit. */
    editCount?: number;
}

export interface TimelineSession {
    /** Opaque; `disk` for changes made on disk, `legacy:<agent>` for entries from before sessions. */
    session: string;
    agent: string;
    source: JournalSource;
    started: string;
    ended: string;
    /** Newest first. */
    turns: TimelineTurn[];
}

export interface TimelineResult {
    /** Newest first. */
    sessions: TimelineSession[];
    /** How many journal entries were read. */
    entries: number;
    /** How many edits pass the filters in all. Absent from a server older than `maxEdits`, which sends every edit. */
    edits?: number;
    /** Sessions, turns or edits were left out (by `limit` or `maxEdits`). */
    truncated: boolean;
    /** Every agent of the journals read, whatever the filters and bounds, the latest first: what a filter offers. Absent from an older server. */
    agents?: TimelineChoice[];
    /** Every file of the journals read (a move's new name too), as `agents`. */
    files?: TimelineChoice[];
}

/** One agent or file a timeline can be filtered by. */
export interface TimelineChoice {
    /** The agent's name, or the file's URI. */
    value: string;
    /** How many edits (writes) of the journals are its. */
    edits: number;
    /** The time of its latest edit. */
    latest: string;
}

/** Every agent's changes, grouped session → turn → edit → file, newest first. */
export const timeline = new RequestType<TimelineParams, TimelineResult, ErrorData>("verbatim/timeline");

export interface TimelineEntryParams {
    /** An entry id, `<writeId>.<n>`. */
    id: string;
}

export interface TimelineEntryResult {
    id: string;
    uri: string;
    /** Where a moved file went; `null` otherwise. */
    newUri: string | null;
    /** `null` where the file did not exist or the text was not kept. */
    before: string | null;
    after: string | null;
    /** The journal's unified diff of the entry. */
    diff: string;
}

/** What one entry changed: the texts before and after, to show as a diff in the file's language. */
export const timelineEntry = new RequestType<TimelineEntryParams, TimelineEntryResult, ErrorData>("verbatim/timelineEntry");

export interface MarkReviewedParams {
    turn: string;
    uri: string;
    reviewed: boolean;
}

export interface MarkReviewedResult {
    reviewed: boolean;
}

/** Marks (or unmarks) one file of a turn as reviewed. */
export const markReviewed = new RequestType<MarkReviewedParams, MarkReviewedResult, ErrorData>("verbatim/markReviewed");

/** Exactly one of `ids`, `turn` and `session`. */
export interface RevertParams {
    /** Entry ids (one file of a write) or `writeId`s (every file of that write). */
    ids?: string[];
    /** Every revertible entry of this turn. */
    turn?: string;
    /** Every revertible entry of this session. */
    session?: string;
    /** Plan and report; change nothing. */
    dryRun?: boolean;
    /** The review's title and the journal's (default: `Revert <summary of what it reverts>`). */
    summary?: string;
    /** The turn to journal the revert under. */
    asTurn?: string;
}

/** `planned`: a dry run; `unchanged`: nothing to write (a file's `why` says why). */
export type RevertOutcome = "applied" | "partial" | "rejected" | "unchanged" | "planned";

/** A region a later change also touched: never reverted blindly. 1-based lines. */
export interface RevertConflict {
    startLine: number;
    endLine: number;
    current: string;
    reverted: string;
    /** What the file holds now (`current` on disk and in a dry run). */
    chosen: "reverted" | "current";
}

export interface RevertedFile {
    uri: string;
    via: "editor" | "disk";
    action: "edit" | "delete" | "create" | "move";
    /** For a `move`: where the file goes back to. */
    newUri?: string;
    hunks: number;
    outcome: RevertOutcome;
    conflicts: RevertConflict[];
    /** For a file with nothing to revert: it no longer exists, or already reads as the revert would leave it. */
    why?: "fileGone" | "alreadyUndone";
}

export interface RevertResult {
    /** The revert's own write id (one for every file, on disk or reviewed); `null` for a dry run or when nothing was written. */
    writeId: string | null;
    outcome: RevertOutcome;
    reverts: string[];
    files: RevertedFile[];
    /** One sentence for the person. */
    message: string;
}

/** Undoes recorded changes as a new, reviewed change moved over everything that happened since. */
export const revert = new RequestType<RevertParams, RevertResult, ErrorData>("verbatim/revert");

export interface JournalChangedParams {
    uris: string[];
}

/** Server → editor (with `verbatimExtensions`): the server appended to a journal. */
export const journalChanged = new NotificationType<JournalChangedParams>("verbatim/journalChanged");

/** Every custom method, in the order `docs/protocol.md` lists them. */
export const METHODS = [
    documents.method,
    read.method,
    strReplace.method,
    replaceRange.method,
    batchEdit.method,
    write.method,
    status.method,
    applyPatch.method,
    propose.method,
] as const;

// --- Errors --------------------------------------------------------------------

/** `data.kind` of a Verbatim error and its stable JSON-RPC `code`. */
export const ERROR_CODES = {
    notFound: -33001,
    ambiguous: -33002,
    stale: -33003,
    emptyQuote: -33004,
    noChange: -33005,
    rangeOrder: -33006,
    overlap: -33007,
    rejected: -33008,
    editorUnavailable: -33009,
    unknownDocument: -33010,
    outsideWorkspace: -33011,
    invalidParams: -33012,
    timeout: -33013,
    notText: -33014,
    io: -33015,
    editorError: -33016,
    permissionDenied: -33017,
    notAnswered: -33018,
    notRevertible: -33019,
    unknownEntry: -33020,
} as const;

export type ErrorKind = keyof typeof ERROR_CODES;

export type QuoteField = "oldStr" | "fromStr" | "toStr" | "after" | "before" | "context" | "oldLines";

export interface Match {
    occurrence: number;
    /** 1-based, in characters. */
    line: number;
    /** 1-based, in characters. */
    column: number;
    range: Range;
    context: string;
}

/** `notFound`: the region of the document most like the quote. */
export interface NearMiss {
    /** 1-based. */
    startLine: number;
    endLine: number;
    /** 0 to 1. */
    similarity: number;
    range: Range;
    text: string;
    /** A unified diff from the quote to the region. */
    diff: string;
}

/** `data` of every Verbatim error; which fields are set depends on `kind`. */
export interface ErrorData {
    kind: ErrorKind;
    /** The failing entry of a batch (0-based). */
    edit?: number;
    quote?: QuoteField;
    matchCount?: number;
    matches?: Match[];
    hint?: string;
    /** `ambiguous`: what was ignored to find the matches. */
    normalizations?: Normalization[];
    /** `ambiguous` with `reason` `"indentation"`: the matched lines as the document has them. */
    matchedLines?: { line: number; text: string }[];
    /** `notFound`: the region most like the quote. */
    closest?: NearMiss;
    /** `notFound`: other regions nearly as close as `closest` (today at most one). */
    alsoClose?: NearMiss[];
    /** `notFound`: 1-based lines where the quote occurs outside the window. */
    outsideWindow?: number[];
    /** `notFound`: other open documents that hold the quote verbatim. */
    alsoIn?: string[];
    /** The encoding of the ranges in `matches`, `closest` and `alsoClose`. */
    positionEncoding?: "utf-8" | "utf-16" | "utf-32";
    baseRev?: string;
    currentRev?: string;
    /** `stale`: the 1-based lines `[first, last]` that changed under the edit's quote since `baseRev`. */
    changedLines?: [number, number];
    /** `overlap`: the indexes of the two overlapping entries. */
    edits?: [number, number];
    reason?: string | null;
    uri?: string;
    workspaceFolders?: string[];
    field?: string;
    /** `timeout`: `"answer"` or `"sync"`; `notAnswered`: `"typing"` or `"bound"`. */
    phase?: "answer" | "sync" | "typing" | "bound";
    /** `notAnswered`: how long the request waited, in milliseconds. */
    waitedMs?: number;
    editorError?: unknown;
    /** `permissionDenied`: the method a read-only connection may not call. */
    method?: string;
    /** `permissionDenied`: the deny-list pattern the path matches. */
    pattern?: string;
    /** A patch: the 1-based line of the patch the error is about. */
    line?: number;
    /** A patch: the file's path as the patch writes it. */
    path?: string;
    /** A patch: the patch lines of two overlapping hunks. */
    lines?: [number, number];
    /** A patch: every part that failed. */
    failures?: PatchFailure[];
    /** `notRevertible`: the entries named. */
    ids?: string[];
    /** `notRevertible`: why none of them can be reverted. */
    why?: NotRevertibleReason;
    /** `unknownEntry`: the entry id that was not found. */
    id?: string;
    /** `unknownEntry`: the turn that was not found. */
    turn?: string;
    /** `unknownEntry`: the session that was not found. */
    session?: string;
}

/** One failing part of a patch: where, why, and the data of that error. */
export interface PatchFailure extends Omit<ErrorData, "failures"> {
    line: number;
    path: string;
    message: string;
}

export function isErrorKind(value: unknown): value is ErrorKind {
    return typeof value === "string" && Object.prototype.hasOwnProperty.call(ERROR_CODES, value);
}
