/**
 * The Verbatim Timeline view: every agent's changes in a tree in the Source
 * Control side bar, newest first (session → turn → edit → file), built from
 * `verbatim/timeline` by the pure model in `timeline.ts`. A file opens its
 * change in a diff editor of read-only documents (scheme `verbatim-timeline:`,
 * whose paths are the file's, so the language is the file's); Revert on any
 * level asks for confirmation, then `verbatim/revert`, whose change comes back
 * as an ordinary review through `workspace/applyEdit`; a file's checkbox marks
 * it reviewed for its turn (`verbatim/markReviewed`). The tree reloads on
 * `verbatim/journalChanged` and on Refresh, only while it is visible.
 *
 * It asks for the newest `verbatim.timeline.maxEdits` edits; "Load older
 * changes", at the end of a tree that bound cut, asks for twice as many. A
 * filter is applied here, on the result, so while one is set the view asks
 * for every edit.
 */

import * as vscode from "vscode";
import { ResponseError, type RequestType } from "vscode-languageclient/node";

import { SECTION, type Config } from "./config";
import { errorMessage } from "./errors";
import * as lsp_ext from "./lsp_ext";
import { plural } from "./status";
import {
    EditBudget,
    entryPresentation,
    entryTitle,
    filterDescription,
    isFiltered,
    TimelineModel,
    treeMessage,
    type FileNode,
    type TimelineFilter,
    type TimelineNode,
    type ViewContext,
} from "./timeline";

export const VIEW_ID = "verbatim.timeline";
export const TIMELINE_SCHEME = "verbatim-timeline";
/** True while a filter is set: the title bar shows Clear Filter. */
const FILTERED_CONTEXT_KEY = "verbatim.timeline.filtered";
/** How long to wait after a `verbatim/journalChanged` for more before reloading: a batch appends one line per file. */
const JOURNAL_SETTLE_MS = 300;
/** Descriptions say "5m ago": redraw them this often while the view is visible (no request to the server). */
const CLOCK_MS = 60_000;
/** Entries kept for the diff documents; an evicted one is asked for again. */
const KEPT_ENTRIES = 50;
/** JSON-RPC's "method not found": a server older than the timeline. */
const METHOD_NOT_FOUND = -32601;

/**
 * What the view needs of the server: the extension's one language client
 * (`Server` in server.ts), across restarts. `request` rejects while no server
 * runs.
 */
export interface TimelineServer {
    readonly isRunning: boolean;
    readonly onDidChangeState: vscode.Event<unknown>;
    readonly onDidChangeJournal: vscode.Event<lsp_ext.JournalChangedParams>;
    request<P, R>(type: RequestType<P, R, lsp_ext.ErrorData>, params: P): Promise<R>;
}

export class TimelineView implements vscode.TreeDataProvider<TimelineNode>, vscode.Disposable {
    private model: TimelineModel | undefined;
    private filter: TimelineFilter = {};
    /** Where the person asked to see more of a long level, by node id: kept across reloads. */
    private readonly pageSizes = new Map<string, number>();
    /** How many edits to ask for: kept across reloads, back to the setting when it changes. */
    private readonly budget: EditBudget;
    /** The tree must be read again from the server before it is next shown. */
    private stale = true;
    private loading: Promise<void> | undefined;
    private readonly changed = new vscode.EventEmitter<TimelineNode | TimelineNode[] | undefined>();
    readonly onDidChangeTreeData = this.changed.event;
    private readonly treeView: vscode.TreeView<TimelineNode>;
    private readonly documents: TimelineDocuments;
    private journalTimer: ReturnType<typeof setTimeout> | undefined;
    private clockTimer: ReturnType<typeof setInterval> | undefined;
    private readonly disposables: vscode.Disposable[] = [];
    private serverWasRunning: boolean;

    constructor(
        private readonly server: TimelineServer,
        private readonly log: vscode.LogOutputChannel,
        /** The settings, validated: `verbatim.timeline.maxSessions` and `verbatim.timeline.maxEdits`. */
        private readonly config: () => Pick<Config, "timelineMaxSessions" | "timelineMaxEdits">,
    ) {
        this.serverWasRunning = server.isRunning;
        this.budget = new EditBudget(() => this.config().timelineMaxEdits);
        this.documents = new TimelineDocuments(server);
        this.treeView = vscode.window.createTreeView(VIEW_ID, {
            treeDataProvider: this,
            showCollapseAll: true,
            // A file's checkbox is its own: nothing to carry up to its edit or down from it.
            manageCheckboxStateManually: true,
        });
        this.disposables.push(
            this.treeView,
            this.changed,
            this.documents,
            vscode.workspace.registerTextDocumentContentProvider(TIMELINE_SCHEME, this.documents),
            this.treeView.onDidChangeVisibility((event) => this.onDidChangeVisibility(event.visible)),
            this.treeView.onDidChangeCheckboxState((event) => this.onDidChangeCheckboxState(event)),
            server.onDidChangeJournal(() => this.onJournalChanged()),
            server.onDidChangeState(() => this.onServerStateChanged()),
            vscode.workspace.onDidChangeConfiguration((event) => {
                if (!event.affectsConfiguration(`${SECTION}.timeline`)) return;
                this.budget.reset();
                this.refresh();
            }),
            vscode.workspace.onDidChangeWorkspaceFolders(() => this.changed.fire(undefined)),
            ...this.registerCommands(),
        );
        this.onDidChangeVisibility(this.treeView.visible);
        void vscode.commands.executeCommand("setContext", FILTERED_CONTEXT_KEY, false);
    }

    dispose(): void {
        if (this.journalTimer !== undefined) clearTimeout(this.journalTimer);
        if (this.clockTimer !== undefined) clearInterval(this.clockTimer);
        for (const disposable of this.disposables.splice(0)) disposable.dispose();
    }

    // --- TreeDataProvider ---

    async getChildren(node?: TimelineNode): Promise<TimelineNode[]> {
        if (node !== undefined) return this.model?.children(node) ?? [];
        await this.loaded();
        return this.model?.children() ?? [];
    }

    getParent(node: TimelineNode): TimelineNode | undefined {
        return this.model?.parent(node);
    }

    getTreeItem(node: TimelineNode): vscode.TreeItem {
        const model = this.model;
        if (model === undefined) return new vscode.TreeItem("");
        const view = model.view(node, this.viewContext());
        const item = new vscode.TreeItem(
            view.label,
            view.collapsible === "expanded"
                ? vscode.TreeItemCollapsibleState.Expanded
                : view.collapsible === "collapsed"
                  ? vscode.TreeItemCollapsibleState.Collapsed
                  : vscode.TreeItemCollapsibleState.None,
        );
        item.id = node.id;
        item.description = view.description;
        item.contextValue = view.contextValue;
        if (view.icon !== undefined) {
            item.iconPath = new vscode.ThemeIcon(view.icon.id, view.icon.color === undefined ? undefined : new vscode.ThemeColor(view.icon.color));
        }
        if (view.resourceUri !== undefined) item.resourceUri = vscode.Uri.parse(view.resourceUri);
        if (view.reviewed !== undefined) {
            item.checkboxState = {
                state: view.reviewed ? vscode.TreeItemCheckboxState.Checked : vscode.TreeItemCheckboxState.Unchecked,
                tooltip: view.reviewed ? "Reviewed for this turn: uncheck to mark it not reviewed" : "Check to mark this file reviewed for this turn",
            };
        }
        if (node.kind === "file") item.command = { command: "verbatim.timeline.openChange", title: "Open Change", arguments: [node] };
        if (node.kind === "more") item.command = { command: "verbatim.timeline.showMore", title: "Show More", arguments: [node] };
        if (node.kind === "older") item.command = { command: "verbatim.timeline.loadOlder", title: "Load Older Changes" };
        return item;
    }

    /** The tooltip, made when the person hovers the item: most never are. */
    resolveTreeItem(item: vscode.TreeItem, node: TimelineNode): vscode.TreeItem {
        if (this.model !== undefined) item.tooltip = new vscode.MarkdownString(this.model.tooltip(node, this.viewContext()));
        return item;
    }

    // --- Loading ---

    /** Reads the timeline again the next time it is shown, and now if it is visible. */
    refresh(): void {
        this.stale = true;
        if (this.treeView.visible) this.changed.fire(undefined);
    }

    /** Waits until the model reflects the newest request for it: a change during a load loads again. */
    private async loaded(): Promise<void> {
        while (this.stale) {
            if (this.loading === undefined) {
                this.stale = false;
                this.loading = this.load().finally(() => {
                    this.loading = undefined;
                });
            }
            await this.loading;
        }
    }

    private async load(): Promise<void> {
        if (!this.server.isRunning) {
            this.model = undefined;
            this.treeView.message = "The Verbatim server is not running.";
            return;
        }
        const params = this.budget.params(this.config().timelineMaxSessions, this.filter);
        const started = Date.now();
        try {
            const result = await this.server.request(lsp_ext.timeline, params);
            const received = Date.now();
            this.model = new TimelineModel(result, this.filter, this.pageSizes, params.maxEdits);
            // A filter set while the budgeted request ran: the newest edits alone may miss older matches.
            if (this.model.needsReloadFor(this.filter)) this.stale = true;
            this.treeView.message = treeMessage(this.model, this.viewContext().workspaceFolders);
            this.log.info(
                `[timeline] ${result.entries} journal entries, ${this.model.loadedEdits} of ${result.edits ?? "?"} edits (maxEdits ${params.maxEdits ?? "none"}) ` +
                    `in ${plural(result.sessions.length, "session")}: answered in ${received - started} ms, ` +
                    `${plural(this.model.roots().length, "session")} shown ${Date.now() - received} ms later`,
            );
        } catch (error) {
            this.model = undefined;
            this.treeView.message =
                error instanceof ResponseError && error.code === METHOD_NOT_FOUND
                    ? "This Verbatim server has no timeline (verbatim/timeline): update the server."
                    : `The timeline could not be read: ${errorMessage(error)}`;
            this.log.warn(`[timeline] verbatim/timeline failed: ${errorMessage(error)}`);
        }
    }

    private onDidChangeVisibility(visible: boolean): void {
        if (this.clockTimer !== undefined) clearInterval(this.clockTimer);
        this.clockTimer = undefined;
        if (!visible) return;
        // Redraw only: the relative times in the descriptions move on.
        this.clockTimer = setInterval(() => this.changed.fire(undefined), CLOCK_MS);
        if (this.stale) this.changed.fire(undefined);
    }

    private onJournalChanged(): void {
        if (this.journalTimer !== undefined) clearTimeout(this.journalTimer);
        this.journalTimer = setTimeout(() => {
            this.journalTimer = undefined;
            this.refresh();
        }, JOURNAL_SETTLE_MS);
    }

    private onServerStateChanged(): void {
        // Started, restarted or gone: either way what the tree shows may no longer hold.
        // (The state also changes with every status the server sends; those change nothing here.)
        if (this.serverWasRunning === this.server.isRunning) return;
        this.serverWasRunning = this.server.isRunning;
        this.refresh();
    }

    private viewContext(): ViewContext {
        return { now: new Date(), workspaceFolders: (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.toString()) };
    }

    // --- Commands ---

    private registerCommands(): vscode.Disposable[] {
        const command = (name: string, run: (...args: never[]) => unknown) => vscode.commands.registerCommand(`verbatim.timeline.${name}`, run);
        return [
            command("refresh", () => this.refresh()),
            command("filterByAgent", () => this.pickAgent()),
            command("filterByFile", (uri?: vscode.Uri) => this.pickFile(uri)),
            command("showFile", (uri?: vscode.Uri) => this.showFile(uri)),
            command("clearFilter", () => this.setFilter({})),
            command("openChange", (node?: TimelineNode) => this.openChange(this.target(node))),
            command("openFile", (node?: TimelineNode) => this.openFile(this.target(node))),
            command("revert", (node?: TimelineNode) => this.revert(this.target(node))),
            command("markReviewed", (node?: TimelineNode) => this.markReviewed(this.target(node), true)),
            command("markNotReviewed", (node?: TimelineNode) => this.markReviewed(this.target(node), false)),
            command("copyId", (node?: TimelineNode) => this.copyId(this.target(node))),
            command("showMore", (node?: TimelineNode) => this.showMore(this.target(node))),
            command("loadOlder", () => this.loadOlder()),
        ];
    }

    /** The node a command is about: the one it was invoked on (menus pass it), else the selection. */
    private target(node: TimelineNode | undefined): TimelineNode | undefined {
        return node ?? this.treeView.selection[0];
    }

    private setFilter(filter: TimelineFilter): void {
        this.filter = filter;
        const folders = this.viewContext().workspaceFolders;
        this.treeView.description = filterDescription(filter, folders) || undefined;
        void vscode.commands.executeCommand("setContext", FILTERED_CONTEXT_KEY, isFiltered(filter));
        if (this.model?.needsReloadFor(filter) === true) {
            // The result holds only the newest edits, and older ones may match: ask for every edit.
            this.stale = true;
        } else if (this.model !== undefined) {
            // The same result, seen through the new filter: no request to the server. (Cleared, a
            // filter's whole result stays; the next reload asks for the budget again.)
            this.model = this.model.withFilter(filter);
            this.treeView.message = treeMessage(this.model, this.viewContext().workspaceFolders);
        }
        this.changed.fire(undefined);
    }

    /** The model once loaded; `undefined`, after telling the person why, when the timeline cannot be read. */
    private async loadedModel(): Promise<TimelineModel | undefined> {
        await this.loaded();
        if (this.model === undefined) void vscode.window.showWarningMessage(`Verbatim: ${this.treeView.message ?? "the timeline is not available."}`);
        return this.model;
    }

    private async pickAgent(): Promise<void> {
        const model = await this.loadedModel();
        if (model === undefined) return;
        type Item = vscode.QuickPickItem & { agent?: string };
        const items: Item[] = [{ label: "$(clear-all) Every agent" }];
        for (const choice of model.agentChoices(this.viewContext())) {
            items.push({ label: `$(hubot) ${choice.label}`, description: choice.description, agent: choice.value, picked: choice.value === this.filter.agent });
        }
        const picked = await vscode.window.showQuickPick(items, { title: "Verbatim Timeline: Filter by Agent", placeHolder: "Show the changes of one agent" });
        if (picked === undefined) return;
        this.setFilter({ ...this.filter, agent: picked.agent });
    }

    private async pickFile(uri: vscode.Uri | undefined): Promise<void> {
        if (uri instanceof vscode.Uri) {
            this.setFilter({ ...this.filter, uri: uri.toString() });
            return;
        }
        const model = await this.loadedModel();
        if (model === undefined) return;
        type Item = vscode.QuickPickItem & { uri?: string };
        const items: Item[] = [{ label: "$(clear-all) Every file" }];
        const active = vscode.window.activeTextEditor?.document.uri;
        if (active !== undefined && active.scheme === "file") {
            items.push({ label: "$(file) The file in the active editor", description: vscode.workspace.asRelativePath(active), uri: active.toString() });
        }
        items.push({ label: "Changed files", kind: vscode.QuickPickItemKind.Separator });
        for (const choice of model.fileChoices(this.viewContext().workspaceFolders)) {
            items.push({ label: choice.label, description: choice.description, uri: choice.value, iconPath: vscode.ThemeIcon.File });
        }
        const picked = await vscode.window.showQuickPick(items, {
            title: "Verbatim Timeline: Filter by File",
            placeHolder: "Show the changes to one file",
            matchOnDescription: true,
        });
        if (picked === undefined) return;
        this.setFilter({ ...this.filter, uri: picked.uri });
    }

    /** From the Explorer or an editor's title: this file's changes, in the view. */
    private async showFile(uri: vscode.Uri | undefined): Promise<void> {
        const target = uri instanceof vscode.Uri ? uri : vscode.window.activeTextEditor?.document.uri;
        if (target === undefined) return;
        this.setFilter({ agent: this.filter.agent, uri: target.toString() });
        await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    }

    private async openChange(node: TimelineNode | undefined): Promise<void> {
        if (node?.kind !== "file") return;
        try {
            const entry = await this.documents.entry(node.file.id);
            const title = entryTitle(entry, node.parent.edit.summary);
            const presentation = entryPresentation(entry);
            if (presentation.kind === "sides") {
                await vscode.commands.executeCommand(
                    "vscode.diff",
                    this.documents.uri(entry, "before"),
                    this.documents.uri(entry, "after"),
                    `${title} before ↔ after`,
                    { preview: true, preserveFocus: true } satisfies vscode.TextDocumentShowOptions,
                );
            } else {
                const document = await vscode.workspace.openTextDocument(this.documents.uri(entry, "diff"));
                await vscode.window.showTextDocument(document, { preview: true, preserveFocus: true });
            }
        } catch (error) {
            void vscode.window.showErrorMessage(`Verbatim: the change could not be shown: ${errorMessage(error)}`);
        }
    }

    private async openFile(node: TimelineNode | undefined): Promise<void> {
        if (node?.kind !== "file") return;
        try {
            await vscode.window.showTextDocument(vscode.Uri.parse(node.file.uri), { preview: true });
        } catch (error) {
            void vscode.window.showErrorMessage(`Verbatim: ${errorMessage(error)}`);
        }
    }

    private async revert(node: TimelineNode | undefined): Promise<void> {
        const model = this.model;
        if (node === undefined || model === undefined) return;
        const request = model.revertRequest(node, this.viewContext());
        if (request === undefined) {
            void vscode.window.showInformationMessage("Verbatim: nothing here can be reverted.");
            return;
        }
        const revert = "Revert";
        const choice = await vscode.window.showWarningMessage(request.question, { modal: true, detail: request.detail }, revert);
        if (choice !== revert) return;
        await this.sendRevert(request.params);
    }

    /** Sends the revert; the server offers its change for review, and answers once the person has decided. */
    private async sendRevert(params: lsp_ext.RevertParams): Promise<void> {
        this.log.info(`[timeline] verbatim/revert ${JSON.stringify(params)}`);
        try {
            const result = await vscode.window.withProgress(
                { location: vscode.ProgressLocation.Window, title: "Verbatim: reverting (review the change)" },
                () => this.server.request(lsp_ext.revert, params),
            );
            this.log.info(`[timeline] revert ${result.writeId ?? "(none)"}: ${result.outcome}: ${result.message}`);
            const message = `Verbatim: ${result.message}`;
            if (result.outcome === "partial") void vscode.window.showWarningMessage(message);
            else void vscode.window.showInformationMessage(message);
        } catch (error) {
            const kind = error instanceof ResponseError ? (error.data as lsp_ext.ErrorData | undefined)?.kind : undefined;
            this.log.warn(`[timeline] verbatim/revert failed (${kind ?? "no kind"}): ${errorMessage(error)}`);
            if (kind === "stale") {
                const again = "Try Again";
                const choice = await vscode.window.showWarningMessage(`Verbatim: ${errorMessage(error)}`, again);
                if (choice === again) await this.sendRevert(params);
            } else if (kind === "rejected") {
                void vscode.window.showInformationMessage(`Verbatim: ${errorMessage(error)}`);
            } else {
                void vscode.window.showErrorMessage(`Verbatim: ${errorMessage(error)}`);
            }
        }
        // The server announces the revert's journal line too; this covers one that does not.
        this.refresh();
    }

    private onDidChangeCheckboxState(event: vscode.TreeCheckboxChangeEvent<TimelineNode>): void {
        for (const [node, state] of event.items) {
            if (node.kind === "file") void this.setReviewed(node, state === vscode.TreeItemCheckboxState.Checked);
        }
    }

    private async markReviewed(node: TimelineNode | undefined, reviewed: boolean): Promise<void> {
        if (node?.kind === "file") await this.setReviewed(node, reviewed);
    }

    /** Shows the mark at once on every item of that file in that turn, then tells the server; puts it back if the server refuses. */
    private async setReviewed(node: FileNode, reviewed: boolean): Promise<void> {
        const model = this.model;
        if (model === undefined) return;
        const turn = node.parent.parent.turn.turn;
        const uri = node.file.uri;
        const was = model.isReviewed(node);
        this.changed.fire(model.setReviewed(node, reviewed));
        try {
            await this.server.request(lsp_ext.markReviewed, { turn, uri, reviewed });
        } catch (error) {
            if (this.model === model) this.changed.fire(model.setReviewed(node, was));
            void vscode.window.showErrorMessage(`Verbatim: the reviewed mark could not be kept: ${errorMessage(error)}`);
        }
    }

    private showMore(node: TimelineNode | undefined): void {
        if (node?.kind !== "more" || this.model === undefined) return;
        this.changed.fire(this.model.showMore(node));
    }

    /** Asks for twice as many edits as the tree shows; what is expanded stays so (the ids are the same). */
    private loadOlder(): void {
        if (this.model?.cutByMaxEdits !== true) return;
        this.budget.loadOlder(this.model);
        this.refresh();
    }

    private async copyId(node: TimelineNode | undefined): Promise<void> {
        if (node === undefined || node.kind === "more" || node.kind === "older") return;
        const id =
            node.kind === "session" ? node.session.session : node.kind === "turn" ? node.turn.turn : node.kind === "edit" ? node.edit.writeId : node.file.id;
        await vscode.env.clipboard.writeText(id);
        void vscode.window.setStatusBarMessage(`Verbatim: copied ${id}`, 3000);
    }
}

type Side = "before" | "after" | "diff";

/**
 * The read-only documents of the diff editor: `verbatim-timeline:<the file's
 * path>?id=<entry>&side=before|after`, so that VS Code picks the file's
 * language from its extension; the unified diff of an entry whose texts were
 * not kept is `<path>.diff` (language `diff`). Entries are asked for once and
 * kept (a few dozen), since an entry never changes.
 */
class TimelineDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
    private readonly entries = new Map<string, Promise<lsp_ext.TimelineEntryResult>>();

    constructor(private readonly server: TimelineServer) {}

    entry(id: string): Promise<lsp_ext.TimelineEntryResult> {
        const kept = this.entries.get(id);
        if (kept !== undefined) {
            // Most recently used last.
            this.entries.delete(id);
            this.entries.set(id, kept);
            return kept;
        }
        const asked = this.server.request(lsp_ext.timelineEntry, { id });
        this.entries.set(id, asked);
        asked.catch(() => this.entries.delete(id));
        for (const oldest of this.entries.keys()) {
            if (this.entries.size <= KEPT_ENTRIES) break;
            this.entries.delete(oldest);
        }
        return asked;
    }

    uri(entry: lsp_ext.TimelineEntryResult, side: Side): vscode.Uri {
        const file = side === "after" && entry.newUri !== null ? entry.newUri : entry.uri;
        const path = vscode.Uri.parse(file).path;
        const query = new URLSearchParams({ id: entry.id, side }).toString();
        return vscode.Uri.from({ scheme: TIMELINE_SCHEME, path: side === "diff" ? `${path}.diff` : path, query });
    }

    async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
        const query = new URLSearchParams(uri.query);
        const id = query.get("id");
        const side = query.get("side");
        if (id === null) return "";
        const entry = await this.entry(id);
        const presentation = entryPresentation(entry);
        if (side === "diff" || presentation.kind === "unified") return entry.diff;
        return side === "before" ? presentation.before : presentation.after;
    }

    dispose(): void {
        this.entries.clear();
    }
}
