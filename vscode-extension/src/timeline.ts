/**
 * The Verbatim Timeline view's model: a `verbatim/timeline` result turned into
 * tree nodes (session → turn → edit → file), what each node shows (label,
 * description, tooltip, icon, `contextValue`, reviewed state), what reverting
 * it asks the server, and the filters by agent and by file. No `vscode`
 * import: the view (`timeline_view.ts`) maps these plain values onto
 * `TreeItem`s, and the unit tests run it in plain Node.
 *
 * The server sends the grouped result at once, up to the view's budget of
 * edits (`maxEdits`, the newest; "Load older changes" at the end of the tree
 * doubles it); nodes are built lazily, one level at a time when VS Code asks
 * for a node's children, and kept, so a journal of 10,000 entries costs only
 * what is on screen and nothing is asked of the server again per node.
 */

import type {
    JournalOutcome,
    NotRevertibleReason,
    RevertParams,
    TimelineChoice,
    TimelineEdit,
    TimelineEntryResult,
    TimelineFile,
    TimelineParams,
    TimelineResult,
    TimelineSession,
    TimelineTurn,
    TimelineTurnFile,
} from "./lsp_ext";
import { plural, since } from "./status";

// --- Nodes -----------------------------------------------------------------------

/**
 * `id` is the tree item's id: unique in the tree and the same across refreshes
 * and filters, so VS Code keeps what the person expanded and selected.
 */
export interface SessionNode {
    readonly kind: "session";
    readonly id: string;
    readonly session: TimelineSession;
}

export interface TurnNode {
    readonly kind: "turn";
    readonly id: string;
    readonly parent: SessionNode;
    readonly turn: TimelineTurn;
}

export interface EditNode {
    readonly kind: "edit";
    readonly id: string;
    readonly parent: TurnNode;
    readonly edit: TimelineEdit;
}

export interface FileNode {
    readonly kind: "file";
    readonly id: string;
    readonly parent: EditNode;
    readonly file: TimelineFile;
}

/** The rest of a long level: a turn's 10,000 edits show 200 at a time, the newest first. */
export interface MoreNode {
    readonly kind: "more";
    readonly id: string;
    readonly parent: SessionNode | TurnNode | EditNode;
    /** How many of the level's items show above it. */
    readonly shown: number;
    readonly total: number;
}

/**
 * The end of a result that `maxEdits` cut: its command asks the server again
 * for twice as many edits. After the sessions, at the top level.
 */
export interface OlderNode {
    readonly kind: "older";
    readonly id: string;
    /** How many edits the result holds. */
    readonly shown: number;
    /** How many edits there are in all (the result's `edits`). */
    readonly total: number;
}

export type TimelineNode = SessionNode | TurnNode | EditNode | FileNode | MoreNode | OlderNode;

/** How many items of one level (a session's turns, a turn's edits, an edit's files) show at first. */
export const PAGE_SIZE = 200;

export interface TimelineFilter {
    /** Only the edits of this agent. */
    agent?: string;
    /** Only the edits touching this file (and, under them, only that file). */
    uri?: string;
}

export function isFiltered(filter: TimelineFilter): boolean {
    return filter.agent !== undefined || filter.uri !== undefined;
}

/**
 * How many edits the view asks the server for (`maxEdits`): the
 * `verbatim.timeline.maxEdits` setting, doubled by each "Load older changes",
 * back to the setting when the setting changes. A long journal then costs
 * what a screen shows, not what the journal holds.
 */
export class EditBudget {
    private doubled: number | undefined;

    constructor(private readonly setting: () => number) {}

    get current(): number {
        return this.doubled ?? this.setting();
    }

    /**
     * Twice the edits `model` was asked for: a second click on the same node,
     * before the larger result is there, asks for no more than the first.
     */
    loadOlder(model: TimelineModel): void {
        this.doubled = (model.maxEdits ?? this.current) * 2;
    }

    reset(): void {
        this.doubled = undefined;
    }

    /**
     * The view's `verbatim/timeline` params. The view filters on its side
     * ({@link TimelineModel.withFilter}), so with a filter it asks for every
     * edit: a budget would leave out older edits that match.
     */
    params(maxSessions: number, filter: TimelineFilter): TimelineParams {
        return isFiltered(filter) ? { limit: maxSessions } : { limit: maxSessions, maxEdits: this.current };
    }
}

// --- What a node shows ---------------------------------------------------------------

/** A codicon id and, optionally, a theme color id for it. */
export interface NodeIcon {
    id: string;
    color?: string;
}

export interface NodeView {
    label: string;
    description: string;
    /**
     * Space-separated words for `view/item/context` menus: the level first
     * (`session`, `turn`, `edit`, `file`), then `revertible` when Revert is
     * offered, then for a file `reviewed` or `unreviewed`.
     */
    contextValue: string;
    /** Absent for a file: it shows its own file icon through `resourceUri`. */
    icon?: NodeIcon;
    /** The file's URI, for its icon and for the `resourceUri` VS Code decorates. */
    resourceUri?: string;
    collapsible: "none" | "collapsed" | "expanded";
    /** A file's reviewed mark (the checkbox); absent on the other levels. */
    reviewed?: boolean;
}

/** What a view needs besides the node: the clock and the workspace folders (URIs) paths are shown relative to. */
export interface ViewContext {
    now: Date;
    workspaceFolders: readonly string[];
}

/** What reverting a node asks the server, and how to say it in the confirmation. */
export interface RevertRequest {
    params: RevertParams;
    /** "Revert the edit “Shout beta” by codex?" */
    question: string;
    /** What will happen, and what will not. */
    detail: string;
}

export interface Choice {
    /** The agent's name, or the file's URI. */
    value: string;
    label: string;
    description: string;
}

const OUTCOME_TEXT: Record<JournalOutcome, string> = {
    applied: "applied",
    modifiedByEditor: "applied as the editor changed it",
    partial: "partly kept",
    rejected: "rejected",
    error: "failed",
    reloaded: "reloaded",
    conflict: "conflict, nothing offered",
    savedOver: "saved over",
    deleted: "deleted",
    moved: "moved",
    notAnswered: "not answered",
    answeredLate: "answered late",
    differsFromAnswer: "differs from the editor's answer",
};

const WHY_NOT_TEXT: Record<NotRevertibleReason, string> = {
    nothingWritten: "nothing was written",
    tooLarge: "its text was too large to keep",
    pruned: "its kept text was pruned",
    legacy: "it was journaled before texts were kept",
};

/** The words for an outcome; an outcome this extension does not know yet as the server spells it. */
export function outcomeText(outcome: string): string {
    return Object.prototype.hasOwnProperty.call(OUTCOME_TEXT, outcome) ? OUTCOME_TEXT[outcome as JournalOutcome] : outcome;
}

export function whyNotText(why: string | undefined): string {
    if (why === undefined) return "it cannot be reverted";
    return Object.prototype.hasOwnProperty.call(WHY_NOT_TEXT, why) ? WHY_NOT_TEXT[why as NotRevertibleReason] : why;
}

/** An edit's outcome as the person reads it: a reverted edit says so, whatever it was. */
export function editOutcomeText(edit: TimelineEdit): string {
    return edit.revertedBy !== undefined ? "reverted" : outcomeText(edit.outcome);
}

/** "just now", "5m ago", "3h ago", "yesterday", "4 days ago", then the date. */
export function relativeTime(timestamp: string, now: Date): string {
    const then = Date.parse(timestamp);
    if (Number.isNaN(then)) return timestamp;
    const hours = (now.getTime() - then) / 3_600_000;
    if (hours < 24) return since(timestamp, now);
    const days = Math.floor(hours / 24);
    if (days === 1) return "yesterday";
    if (days < 7) return `${days} days ago`;
    return timestamp.slice(0, 10);
}

/** A timestamp for a tooltip: "2026-12-03 10:01:02 UTC". */
function absoluteTime(timestamp: string): string {
    const then = Date.parse(timestamp);
    if (Number.isNaN(then)) return timestamp;
    return `${new Date(then).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** The decoded path of a URI (`file:///p/a%20b.txt` → `/p/a b.txt`); anything unreadable as it is. */
export function uriPath(uri: string): string {
    const match = /^[A-Za-z][A-Za-z0-9+.-]*:(?:\/\/[^/?#]*)?([^?#]*)/.exec(uri);
    const raw = match?.[1] ?? uri;
    try {
        return decodeURIComponent(raw);
    } catch {
        return raw;
    }
}

/**
 * One spelling per file, to compare URIs from the server with VS Code's: VS
 * Code writes `file:///c%3A/x`, a server may write `file:///C:/x`.
 */
export function normalizedUri(uri: string): string {
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1]?.toLowerCase() ?? "";
    let path = uriPath(uri);
    if (/^\/[A-Za-z]:/.test(path)) path = `/${path.charAt(1).toLowerCase()}${path.slice(2)}`;
    return `${scheme}:${path}`;
}

export function sameUri(a: string, b: string): boolean {
    return a === b || normalizedUri(a) === normalizedUri(b);
}

function baseName(path: string): string {
    const trimmed = path.replace(/\/+$/, "");
    return trimmed.slice(trimmed.lastIndexOf("/") + 1) || trimmed;
}

/** A file's path relative to the workspace folder holding it (the folder's name first when there are several), else its whole path. */
export function displayPath(uri: string, workspaceFolders: readonly string[]): string {
    const path = uriPath(uri);
    for (const folder of workspaceFolders) {
        const root = uriPath(folder).replace(/\/+$/, "");
        if (path.startsWith(`${root}/`)) {
            const relative = path.slice(root.length + 1);
            return workspaceFolders.length > 1 ? `${baseName(root)}/${relative}` : relative;
        }
    }
    return path;
}

/** The folder part of `displayPath`, "" for a file at the top. */
function displayFolder(uri: string, workspaceFolders: readonly string[]): string {
    const relative = displayPath(uri, workspaceFolders);
    const slash = relative.lastIndexOf("/");
    return slash < 0 ? "" : relative.slice(0, slash);
}

/** `+3 −1`, with a real minus sign, as the Source Control view's extensions show counts. */
export function lineCounts(added: number, removed: number): string {
    return `+${added} \u2212${removed}`;
}

/** Markdown text: no link, emphasis or HTML out of an agent's summary. */
function markdownText(text: string): string {
    return text.replace(/[\\`*_{}[\]()#+\-.!|<>~]/g, (character) => `\\${character}`);
}

function sessionTitle(session: TimelineSession): string {
    if (session.source === "disk" || session.session === "disk") return "Changes on disk";
    return session.agent || "unknown agent";
}

function sessionIcon(session: TimelineSession): NodeIcon {
    if (session.source === "disk" || session.session === "disk") return { id: "save" };
    if (session.source === "headless") return { id: "terminal" };
    return { id: "hubot" };
}

function editIcon(edit: TimelineEdit): NodeIcon {
    if (edit.revertedBy !== undefined) return { id: "discard", color: "disabledForeground" };
    if (edit.reverts !== undefined) return { id: "history" };
    switch (edit.outcome) {
        case "applied":
        case "reloaded":
            return { id: "check" };
        case "modifiedByEditor":
            return { id: "edit" };
        case "partial":
            return { id: "check", color: "charts.yellow" };
        case "rejected":
            return { id: "close", color: "charts.red" };
        case "error":
            return { id: "error", color: "errorForeground" };
        case "deleted":
            return { id: "trash" };
        case "moved":
            return { id: "arrow-right" };
        case "notAnswered":
            return { id: "question", color: "charts.yellow" };
        default:
            return { id: "warning", color: "charts.yellow" };
    }
}

// --- The model ------------------------------------------------------------------------

/**
 * One `verbatim/timeline` result, seen through a filter. Children are made on
 * first request and kept (VS Code asks again on every refresh of the tree);
 * reviewed marks are read from and written to the result's turns.
 */
export class TimelineModel {
    private rootNodes: SessionNode[] | undefined;
    /** The children shown under each node, made when first asked. */
    private readonly pages = new Map<TimelineNode, TimelineNode[]>();
    /** Every node made, by the result's object it shows: a longer page reuses them. */
    private readonly nodes = new Map<object, TurnNode | EditNode | FileNode>();
    /** Per turn (by object), its files by normalized URI: built when first asked. */
    private readonly turnFiles = new Map<TimelineTurn, Map<string, TimelineTurnFile>>();
    /** File nodes made so far, by `turnFileKey`: the nodes to redraw when a reviewed mark changes. */
    private readonly fileNodes = new Map<string, FileNode[]>();
    private readonly filterUri: string | undefined;
    private made = 0;
    /** `normalizedUri` of each URI seen: a journal names few files many times. */
    private readonly normalizedUris = new Map<string, string>();
    /** How many edits the result holds, counted when first asked. */
    private editsInResult: number | undefined;

    /**
     * `pageSizes`: how many children show under a node (by its id) where the
     * person asked for more than {@link PAGE_SIZE}; the view keeps it across
     * reloads, and this model adds to it. `maxEdits`: what the result was
     * asked for with (`undefined`: every edit).
     */
    constructor(
        readonly result: TimelineResult,
        readonly filter: TimelineFilter = {},
        private readonly pageSizes = new Map<string, number>(),
        readonly maxEdits?: number,
    ) {
        this.filterUri = filter.uri === undefined ? undefined : normalizedUri(filter.uri);
    }

    /**
     * The same result through another filter (nodes are made again; reviewed
     * marks are the result's). Of a result {@link cutByMaxEdits} this shows
     * only the matches among the newest edits: the view asks again instead.
     */
    withFilter(filter: TimelineFilter): TimelineModel {
        return new TimelineModel(this.result, filter, this.pageSizes, this.maxEdits);
    }

    /** How many nodes have been made so far: what laziness saves, for the tests and the benchmark. */
    get madeNodes(): number {
        return this.made;
    }

    get filtered(): boolean {
        return isFiltered(this.filter);
    }

    /** How many edits the result holds (whatever the filter). */
    get loadedEdits(): number {
        this.editsInResult ??= this.result.sessions.reduce((sum, session) => sum + session.turns.reduce((inSession, turn) => inSession + turn.edits.length, 0), 0);
        return this.editsInResult;
    }

    /**
     * Whether `maxEdits` left older edits out: the result holds as many edits
     * as were asked for, and there are more. (A server older than `maxEdits`
     * sends every edit and no `edits`: never cut.)
     */
    get cutByMaxEdits(): boolean {
        const { edits } = this.result;
        return this.maxEdits !== undefined && edits !== undefined && this.loadedEdits >= this.maxEdits && edits > this.loadedEdits;
    }

    roots(): SessionNode[] {
        if (this.rootNodes === undefined) {
            this.rootNodes = this.result.sessions
                .filter((session) => session.turns.some((turn) => this.turnMatches(turn)))
                .map((session): SessionNode => ({ kind: "session", id: `session/${session.session}`, session }));
            this.made += this.rootNodes.length;
        }
        return this.rootNodes;
    }

    /**
     * Whether showing this result through `filter` needs the server again:
     * with a filter the view asks for every edit, since the older edits that
     * `maxEdits` left out may match.
     */
    needsReloadFor(filter: TimelineFilter): boolean {
        return isFiltered(filter) && this.cutByMaxEdits;
    }

    /**
     * The node's children as shown: the first page of a long level, then a
     * {@link MoreNode}; at the top, the sessions, then an {@link OlderNode}
     * when `maxEdits` cut the result.
     */
    children(node?: TimelineNode): TimelineNode[] {
        if (node === undefined) {
            const roots: TimelineNode[] = this.roots();
            return this.cutByMaxEdits ? [...roots, this.olderNode()] : roots;
        }
        if (node.kind === "file" || node.kind === "more" || node.kind === "older") return [];
        let page = this.pages.get(node);
        if (page === undefined) {
            page = this.makePage(node);
            this.pages.set(node, page);
        }
        return page;
    }

    parent(node: TimelineNode): TimelineNode | undefined {
        return node.kind === "session" || node.kind === "older" ? undefined : node.parent;
    }

    private olderNode(): OlderNode {
        // The result's `edits` is there: the node shows only when `cutByMaxEdits`.
        return { kind: "older", id: "older", shown: this.loadedEdits, total: this.result.edits ?? this.loadedEdits };
    }

    /** Shows the next items of the level `more` ends (as many again as show, at least {@link PAGE_SIZE}); returns the node whose children changed. */
    showMore(more: MoreNode): SessionNode | TurnNode | EditNode {
        this.pageSizes.set(more.parent.id, more.shown + Math.max(PAGE_SIZE, more.shown));
        this.pages.delete(more.parent);
        return more.parent;
    }

    private makePage(node: SessionNode | TurnNode | EditNode): TimelineNode[] {
        const limit = this.pageSizes.get(node.id) ?? PAGE_SIZE;
        let page: TimelineNode[];
        let total: number;
        switch (node.kind) {
            case "session": {
                const turns = node.session.turns.filter((turn) => this.turnMatches(turn));
                total = turns.length;
                page = turns.slice(0, limit).map((turn) => this.nodeFor(turn, () => ({ kind: "turn", id: `turn/${node.session.session}/${turn.turn}`, parent: node, turn })));
                break;
            }
            case "turn": {
                const edits = node.turn.edits.filter((edit) => this.editMatches(edit));
                total = edits.length;
                page = edits.slice(0, limit).map((edit) => this.nodeFor(edit, () => ({ kind: "edit", id: `edit/${edit.writeId}`, parent: node, edit })));
                break;
            }
            case "edit": {
                const files = this.visibleFiles(node.edit);
                total = files.length;
                page = files.slice(0, limit).map((file) => this.nodeFor(file, () => this.makeFileNode(node, file)));
                break;
            }
        }
        if (total > limit) page.push({ kind: "more", id: `more/${node.id}`, parent: node, shown: limit, total });
        return page;
    }

    private nodeFor<Node extends TurnNode | EditNode | FileNode>(item: object, make: () => Node): Node {
        let node = this.nodes.get(item) as Node | undefined;
        if (node === undefined) {
            node = make();
            this.nodes.set(item, node);
            this.made += 1;
        }
        return node;
    }

    private makeFileNode(parent: EditNode, file: TimelineFile): FileNode {
        const made: FileNode = { kind: "file", id: `file/${file.id}`, parent, file };
        const key = this.turnFileKey(parent.parent.turn.turn, file.uri);
        const nodes = this.fileNodes.get(key);
        if (nodes === undefined) this.fileNodes.set(key, [made]);
        else nodes.push(made);
        return made;
    }

    private normalized(uri: string): string {
        let normalized = this.normalizedUris.get(uri);
        if (normalized === undefined) {
            normalized = normalizedUri(uri);
            this.normalizedUris.set(uri, normalized);
        }
        return normalized;
    }

    private editMatches(edit: TimelineEdit): boolean {
        if (this.filter.agent !== undefined && edit.agent !== this.filter.agent) return false;
        const uri = this.filterUri;
        return uri === undefined || edit.files.some((file) => this.normalized(file.uri) === uri);
    }

    private turnMatches(turn: TimelineTurn): boolean {
        return !this.filtered || turn.edits.some((edit) => this.editMatches(edit));
    }

    /** An edit's files, or under a file filter only that file. */
    private visibleFiles(edit: TimelineEdit): TimelineFile[] {
        const uri = this.filterUri;
        return uri === undefined ? edit.files : edit.files.filter((file) => this.normalized(file.uri) === uri);
    }

    // --- Reviewed marks ---

    private turnFile(turn: TimelineTurn, uri: string): TimelineTurnFile | undefined {
        let files = this.turnFiles.get(turn);
        if (files === undefined) {
            files = new Map(turn.files.map((file) => [this.normalized(file.uri), file]));
            this.turnFiles.set(turn, files);
        }
        return files.get(this.normalized(uri));
    }

    /** Whether the person marked this file reviewed for the turn the node is in. */
    isReviewed(node: FileNode): boolean {
        return this.turnFile(node.parent.parent.turn, node.file.uri)?.reviewed ?? false;
    }

    /**
     * Records a mark the person set (before the server has confirmed it, so the
     * tree answers at once) and returns every file node made so far that shows
     * the same file of the same turn: those need redrawing.
     */
    setReviewed(node: FileNode, reviewed: boolean): FileNode[] {
        const turn = node.parent.parent.turn;
        const existing = this.turnFile(turn, node.file.uri);
        if (existing !== undefined) existing.reviewed = reviewed;
        else {
            const added = { uri: node.file.uri, reviewed };
            turn.files.push(added);
            this.turnFiles.get(turn)?.set(this.normalized(node.file.uri), added);
        }
        return this.fileNodes.get(this.turnFileKey(turn.turn, node.file.uri)) ?? [node];
    }

    private turnFileKey(turn: string, uri: string): string {
        return `${turn}\n${this.normalized(uri)}`;
    }

    // --- Filters ---

    /**
     * Every agent of the journals, with how many edits each made and when the latest was: the server's
     * list (which counts what `maxEdits` left out too), else the agents of the loaded result.
     */
    agentChoices(context: ViewContext): Choice[] {
        return this.choices("agents").map(({ value, edits, latest }) => ({
            value,
            label: value || "unknown agent",
            description: `${plural(edits, "edit")}, the latest ${relativeTime(latest, context.now)}`,
        }));
    }

    /** Every file of the journals, the latest change first, with how many edits touched each (the server's list, else the loaded result's). */
    fileChoices(workspaceFolders: readonly string[]): Choice[] {
        // One file spelled two ways (`%3A` and `:`) is one choice, under its latest spelling.
        const merged = new Map<string, TimelineChoice>();
        for (const choice of this.choices("files")) {
            const key = normalizedUri(choice.value);
            const seen = merged.get(key);
            if (seen === undefined) merged.set(key, { ...choice });
            else seen.edits += choice.edits;
        }
        return [...merged.values()].map(({ value, edits }) => ({
            value,
            label: baseName(uriPath(value)),
            description: `${displayPath(value, workspaceFolders)} · ${plural(edits, "edit")}`,
        }));
    }

    private choices(kind: "agents" | "files"): TimelineChoice[] {
        const listed = this.result[kind];
        return listed !== undefined && listed.length > 0 ? listed : choicesOfResult(this.result, kind);
    }

    // --- Views ---

    view(node: TimelineNode, context: ViewContext): NodeView {
        switch (node.kind) {
            case "session":
                return this.sessionView(node, context);
            case "turn":
                return this.turnView(node, context);
            case "edit":
                return this.editView(node, context);
            case "file":
                return this.fileView(node, context);
            case "more":
                return moreView(node);
            case "older":
                return olderView(node);
        }
    }

    /** The node's tooltip (Markdown): asked for only when the person hovers it, so it may say more. */
    tooltip(node: TimelineNode, context: ViewContext): string {
        switch (node.kind) {
            case "session":
                // Sessions interleave in time: of a result `maxEdits` cut, any may have older turns left out.
                return sessionTooltip(node, this.cutByMaxEdits);
            case "turn":
                return turnTooltip(node);
            case "edit":
                return editTooltip(node, context);
            case "file":
                return this.fileTooltip(node, context);
            case "more":
                return `This level holds ${node.total} items; the newest ${node.shown} show above. A filter by agent or by file narrows it down.`;
            case "older":
                return `The newest ${node.shown} of ${plural(node.total, "edit")} were read from the journal (the setting \`verbatim.timeline.maxEdits\`). Click to read twice as many.`;
        }
    }

    private sessionView(node: SessionNode, context: ViewContext): NodeView {
        const session = node.session;
        // Unfiltered, every turn shows: no need to make the turn nodes before the session is opened.
        const turns = this.filtered ? session.turns.filter((turn) => this.turnMatches(turn)).length : session.turns.length;
        const source = session.source === "headless" ? "headless · " : "";
        return {
            label: sessionTitle(session),
            description: `${source}${plural(turns, "turn")} · ${relativeTime(session.ended, context.now)}`,
            contextValue: contextValue("session", this.sessionRevertible(session)),
            icon: sessionIcon(session),
            // The newest session is open: what the agents did last is what people come for.
            collapsible: this.roots()[0] === node ? "expanded" : "collapsed",
        };
    }

    private turnView(node: TurnNode, context: ViewContext): NodeView {
        const turn = node.turn;
        const count = editCount(turn);
        const parts = [count > turn.edits.length ? `${turn.edits.length} of ${plural(count, "edit")}` : plural(count, "edit"), plural(turn.files.length, "file")];
        const reviewed = turn.files.filter((file) => file.reviewed).length;
        if (reviewed > 0) parts.push(`${reviewed}/${turn.files.length} reviewed`);
        if (turn.edits.length > 0 && turn.edits.every((edit) => edit.revertedBy !== undefined)) parts.push("reverted");
        parts.push(relativeTime(turn.ended, context.now));
        return {
            label: turnTitle(turn),
            description: parts.join(" · "),
            contextValue: contextValue("turn", turn.edits.some((edit) => editRevertible(edit))),
            icon: { id: "comment-discussion" },
            // A turn shows only when it holds an edit the filter keeps.
            collapsible: "collapsed",
        };
    }

    private editView(node: EditNode, context: ViewContext): NodeView {
        const edit = node.edit;
        const sessionAgent = node.parent.parent.session.agent;
        const shown = this.visibleFiles(edit);
        const parts: string[] = [];
        if (edit.agent !== sessionAgent) parts.push(edit.agent);
        parts.push(editOutcomeText(edit));
        if (shown.length !== edit.files.length) parts.push(`${shown.length} of ${plural(edit.files.length, "file")}`);
        else if (edit.files.length > 1) parts.push(plural(edit.files.length, "file"));
        parts.push(relativeTime(edit.time, context.now));
        return {
            label: edit.summary || "(no summary)",
            description: parts.join(" · "),
            contextValue: contextValue("edit", editRevertible(edit)),
            icon: editIcon(edit),
            collapsible: shown.length > 0 ? "collapsed" : "none",
        };
    }

    private fileView(node: FileNode, context: ViewContext): NodeView {
        const file = node.file;
        const edit = node.parent.edit;
        const reviewed = this.isReviewed(node);
        const folder = displayFolder(file.uri, context.workspaceFolders);
        const parts = [lineCounts(file.added, file.removed)];
        if (file.outcome !== edit.outcome) parts.push(outcomeText(file.outcome));
        if (folder !== "") parts.push(folder);
        return {
            label: baseName(uriPath(file.uri)),
            description: parts.join(" · "),
            contextValue: `${contextValue("file", fileRevertible(file, edit))} ${reviewed ? "reviewed" : "unreviewed"}`,
            resourceUri: file.uri,
            collapsible: "none",
            reviewed,
        };
    }

    private fileTooltip(node: FileNode, context: ViewContext): string {
        const file = node.file;
        const edit = node.parent.edit;
        return [
            `**${markdownText(displayPath(file.uri, context.workspaceFolders))}** ${lineCounts(file.added, file.removed)}`,
            "",
            `${markdownText(edit.summary || "(no summary)")} · ${markdownText(edit.agent)} · ${outcomeText(file.outcome)} · ${absoluteTime(edit.time)}`,
            "",
            fileRevertible(file, edit)
                ? "Click to see the change; Revert undoes it, as a change you review."
                : `Click to see the change. Cannot be reverted: ${edit.revertedBy !== undefined ? "already reverted" : whyNotText(file.whyNot)}.`,
            "",
            this.isReviewed(node) ? "Marked reviewed for this turn." : "Not marked reviewed for this turn.",
            "",
            `Entry \`${file.id}\``,
        ].join("\n");
    }

    private sessionRevertible(session: TimelineSession): boolean {
        return session.turns.some((turn) => turn.edits.some((edit) => editRevertible(edit)));
    }

    // --- Revert ---

    /** What reverting the node asks the server; `undefined` when nothing under it can be reverted. */
    revertRequest(node: TimelineNode, context: ViewContext): RevertRequest | undefined {
        const detail =
            "The undo is offered for your review like any agent edit, moved over everything that changed since: lines changed again later are shown as conflicts, never reverted blindly.";
        switch (node.kind) {
            case "file": {
                const { file } = node;
                const edit = node.parent.edit;
                if (!fileRevertible(file, edit)) return undefined;
                return {
                    params: { ids: [file.id] },
                    question: `Revert the change to ${displayPath(file.uri, context.workspaceFolders)} made by “${edit.summary || "(no summary)"}” (${edit.agent}, ${relativeTime(edit.time, context.now)})?`,
                    detail,
                };
            }
            case "edit": {
                const { edit } = node;
                if (!editRevertible(edit)) return undefined;
                return {
                    params: { ids: [edit.writeId] },
                    question: `Revert the edit “${edit.summary || "(no summary)"}” by ${edit.agent} (${plural(edit.files.length, "file")}, ${relativeTime(edit.time, context.now)})?`,
                    detail: withSkipped(detail, edit.files.filter((file) => !file.revertible)),
                };
            }
            case "turn": {
                const { turn } = node;
                if (!turn.edits.some((edit) => editRevertible(edit))) return undefined;
                // The server reverts the whole turn, the edits `maxEdits` left out too: the question counts them.
                return {
                    params: { turn: turn.turn },
                    question: `Revert the whole turn of ${sessionTitle(node.parent.session)} (${plural(editCount(turn), "edit")} to ${plural(turn.files.length, "file")}, ${relativeTime(turn.ended, context.now)})?`,
                    detail: withSkipped(detail, turn.edits.flatMap((edit) => edit.files.filter((file) => !file.revertible))),
                };
            }
            case "session": {
                const { session } = node;
                if (!this.sessionRevertible(session)) return undefined;
                const edits = session.turns.flatMap((turn) => turn.edits);
                const files = new Set(session.turns.flatMap((turn) => turn.files.map((file) => normalizedUri(file.uri))));
                const count = session.turns.reduce((sum, turn) => sum + editCount(turn), 0);
                // The server reverts the whole session: where `maxEdits` may have left its older turns out, the question says so.
                const what = this.cutByMaxEdits
                    ? `${plural(count, "edit")} to ${plural(files.size, "file")} read here, and any older ones`
                    : `${plural(count, "edit")} to ${plural(files.size, "file")}`;
                return {
                    params: { session: session.session },
                    question: `Revert every change of the ${sessionTitle(session)} session (${what}, since ${relativeTime(session.started, context.now)})?`,
                    detail: withSkipped(detail, edits.flatMap((edit) => edit.files.filter((file) => !file.revertible))),
                };
            }
            case "more":
            case "older":
                return undefined;
        }
    }
}

function moreView(node: MoreNode): NodeView {
    const next = Math.min(Math.max(PAGE_SIZE, node.shown), node.total - node.shown);
    return {
        label: `Show ${next} more…`,
        description: `${node.total - node.shown} of ${node.total} not shown`,
        contextValue: "more",
        icon: { id: "ellipsis" },
        collapsible: "none",
    };
}

function olderView(node: OlderNode): NodeView {
    return {
        label: `Load older changes (${node.shown} of ${node.total} edits shown)`,
        description: "",
        contextValue: "older",
        icon: { id: "fold-down" },
        collapsible: "none",
    };
}

/** A turn's edits in all: more than it holds when `maxEdits` cut it (a server older than `maxEdits` sends them all). */
function editCount(turn: TimelineTurn): number {
    return turn.editCount ?? turn.edits.length;
}

/** How many of a turn's edits its tooltip lists. */
const TOOLTIP_EDITS = 10;

/** A turn is one request of the person: named by what the agent did first for it. */
function turnTitle(turn: TimelineTurn): string {
    const first = turn.edits[turn.edits.length - 1];
    return first === undefined ? "(no edit)" : first.summary || "(no summary)";
}

function sessionTooltip(node: SessionNode, cut: boolean): string {
    const session = node.session;
    const edits = session.turns.reduce((sum, turn) => sum + editCount(turn), 0);
    return [
        `**${markdownText(sessionTitle(session))}** · ${session.source}`,
        "",
        `${plural(session.turns.length, "turn")}, ${plural(edits, "edit")}${cut ? " read; older ones may be left out (Load older changes, at the end)" : ""}`,
        "",
        `From ${absoluteTime(session.started)} to ${absoluteTime(session.ended)}`,
        "",
        `Session \`${session.session}\``,
    ].join("\n");
}

function turnTooltip(node: TurnNode): string {
    const turn = node.turn;
    const listed = turn.edits.slice(0, TOOLTIP_EDITS).map((edit) => `- ${markdownText(edit.summary || "(no summary)")}: ${editOutcomeText(edit)}`);
    const earlier = editCount(turn) - listed.length;
    const notRead = editCount(turn) - turn.edits.length;
    if (earlier > 0) listed.push(`- … and ${plural(earlier, "earlier edit")}${notRead > 0 ? ` (${notRead} not read: Load older changes, at the end)` : ""}`);
    return [
        `**Turn** of ${markdownText(sessionTitle(node.parent.session))}`,
        "",
        ...listed,
        "",
        `From ${absoluteTime(turn.started)} to ${absoluteTime(turn.ended)}`,
        "",
        `Turn \`${turn.turn}\`${turn.turn.startsWith("auto:") ? " (edits of the session with no gap over 2 minutes)" : ""}`,
    ].join("\n");
}

function editTooltip(node: EditNode, context: ViewContext): string {
    const edit = node.edit;
    const notRevertible = edit.files.filter((file) => !file.revertible);
    const tooltip = [
        `**${markdownText(edit.summary || "(no summary)")}**`,
        "",
        `${markdownText(edit.agent)} · ${editOutcomeText(edit)}${edit.revertedBy !== undefined ? ` (was ${outcomeText(edit.outcome)})` : ""} · ${absoluteTime(edit.time)}`,
        "",
        ...edit.files.map((file) => `- ${markdownText(displayPath(file.uri, context.workspaceFolders))} ${lineCounts(file.added, file.removed)}`),
        "",
        `Write \`${edit.writeId}\``,
    ];
    if (edit.revertedBy !== undefined) tooltip.push("", `Reverted by \`${edit.revertedBy}\``);
    if (edit.reverts !== undefined) tooltip.push("", `Reverts ${edit.reverts.map((id) => `\`${id}\``).join(", ")}`);
    if (notRevertible.length > 0 && edit.revertedBy === undefined) {
        const reasons = notRevertible.map((file) => `${markdownText(displayPath(file.uri, context.workspaceFolders))} (${whyNotText(file.whyNot)})`);
        tooltip.push("", `Cannot be reverted: ${reasons.join(", ")}`);
    }
    return tooltip.join("\n");
}

function contextValue(kind: TimelineNode["kind"], revertible: boolean): string {
    return revertible ? `${kind} revertible` : kind;
}

/** Revert is offered on a file whose texts are kept, unless a revert already took its edit back (revert that revert instead). */
function fileRevertible(file: TimelineFile, edit: TimelineEdit): boolean {
    return file.revertible && edit.revertedBy === undefined;
}

function editRevertible(edit: TimelineEdit): boolean {
    return edit.revertedBy === undefined && edit.files.some((file) => file.revertible);
}

function withSkipped(detail: string, skipped: TimelineFile[]): string {
    if (skipped.length === 0) return detail;
    const reasons = [...new Set(skipped.map((file) => whyNotText(file.whyNot)))].join("; ");
    return `${detail}\n\n${plural(skipped.length, "change")} cannot be reverted and will be left as they are (${reasons}).`;
}

// --- The filter and the message above the tree ----------------------------------------

/** "agent codex · file src/a.rs"; "" without a filter. */
export function filterDescription(filter: TimelineFilter, workspaceFolders: readonly string[]): string {
    const parts: string[] = [];
    if (filter.agent !== undefined) parts.push(`agent ${filter.agent || "unknown"}`);
    if (filter.uri !== undefined) parts.push(`file ${displayPath(filter.uri, workspaceFolders)}`);
    return parts.join(" · ");
}

/**
 * The message above the tree: the filter (a view alone in its container has
 * no header to show its description in), then what is left out (older edits,
 * by the budget of edits; older sessions, by `limit`) or why nothing shows.
 */
export function treeMessage(model: TimelineModel, workspaceFolders: readonly string[]): string | undefined {
    const { result } = model;
    const lines: string[] = [];
    if (model.filtered) lines.push(`Filtered: ${filterDescription(model.filter, workspaceFolders)}.`);
    if (result.sessions.length === 0) lines.push("No change has been journaled yet: agents' edits, reverts and changes on disk show here.");
    else if (model.roots().length === 0) lines.push("No change matches the filter.");
    else if (model.cutByMaxEdits) {
        lines.push(`Showing the newest ${model.loadedEdits} of ${plural(result.edits ?? model.loadedEdits, "edit")}; “Load older changes”, at the end, reads more.`);
    } else if (result.truncated) {
        lines.push(`Showing the newest ${plural(result.sessions.length, "session")} (${result.entries} journal ${result.entries === 1 ? "entry" : "entries"} read); older sessions are left out.`);
    }
    return lines.length === 0 ? undefined : lines.join(" ");
}

// --- The diff of one entry --------------------------------------------------------------

export type EntryPresentation =
    /** A diff editor of the two texts (`""` for the side where the file did not exist). */
    | { kind: "sides"; before: string; after: string }
    /** The journal's unified diff alone, where a text was not kept. */
    | { kind: "unified"; text: string };

/**
 * How to show an entry. Both texts: a diff editor. One text missing because
 * the file did not exist on that side (a create's before, a delete's after,
 * which the journal's diff writes as `/dev/null`): a diff editor with that side
 * empty. Otherwise a text was not kept, and the unified diff is all there is.
 */
export function entryPresentation(entry: TimelineEntryResult): EntryPresentation {
    const { before, after } = entry;
    if (before !== null && after !== null) return { kind: "sides", before, after };
    const created = /^--- \/dev\/null$/m.test(entry.diff);
    const deleted = /^\+\+\+ \/dev\/null$/m.test(entry.diff);
    if (before === null && after !== null && created) return { kind: "sides", before: "", after };
    if (before !== null && after === null && deleted) return { kind: "sides", before, after: "" };
    return { kind: "unified", text: entry.diff };
}

/** The diff editor's title: "a.txt (Shout beta) before ↔ after". */
export function entryTitle(entry: TimelineEntryResult, summary: string | undefined): string {
    const name = baseName(uriPath(entry.uri));
    const moved = entry.newUri !== null && !sameUri(entry.newUri, entry.uri) ? ` → ${baseName(uriPath(entry.newUri))}` : "";
    const what = summary ? ` (${summary})` : "";
    return `${name}${moved}${what}`;
}

/**
 * The agents or files of a result from a server that does not list them: counted over the loaded
 * edits only (sessions, turns and edits come newest first, so the first edit seen of each is its latest).
 */
function choicesOfResult(result: TimelineResult, kind: "agents" | "files"): TimelineChoice[] {
    const counted = new Map<string, TimelineChoice>();
    const count = (value: string, time: string): void => {
        const seen = counted.get(value);
        if (seen === undefined) counted.set(value, { value, edits: 1, latest: time });
        else seen.edits += 1;
    };
    for (const session of result.sessions) {
        for (const turn of session.turns) {
            for (const edit of turn.edits) {
                if (kind === "agents") {
                    count(edit.agent, edit.time);
                    continue;
                }
                const uris = new Set(edit.files.flatMap((file) => (file.newUri === undefined ? [file.uri] : [file.uri, file.newUri])));
                for (const uri of uris) count(uri, edit.time);
            }
        }
    }
    return [...counted.values()];
}
