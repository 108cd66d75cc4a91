/**
 * Changes made on disk outside the editor, on the VS Code side: shows the
 * server's `verbatim/externalChange` messages with a "Compare with Disk" action,
 * and keeps VS Code's idea of each file up to date so that saving a merged
 * document just works (see `external.ts` for why a re-read is needed).
 *
 * The re-read ("resync") of a document runs when the person has decided on a
 * merged change (applied or discarded), and at once for `conflict` and
 * `synced` (for `synced` only when the file holds the buffer's text, or when
 * the agent (Claude Code, Gemini CLI) wrote it after the person accepted its edit: see
 * `ExpectedWrites`). It and the `workspace/applyEdit` requests for the same document
 * take turns: an agent's edit that arrives meanwhile waits until the buffer
 * holds the person's text again (and is refused as stale if it was planned
 * against the text before).
 */

import * as vscode from "vscode";
import type { ApplyWorkspaceEditParams, ApplyWorkspaceEditResult, ResponseError } from "vscode-languageserver-protocol";

import { errorMessage } from "./errors";
import { applyReplacement, ExpectedWrites, externalChangeAction, restoringEdit } from "./external";
import { writesTheFileItself, type ApplyEditVerbatim, type ExternalChangeParams } from "./lsp_ext";
import { editedDocuments, isDiskEdit } from "./review";

/** How long a revert may take to reach the extension host's copy of the document. */
const REVERT_TIMEOUT_MS = 5_000;
/**
 * How long a document the disk already agrees with may take to turn clean by
 * itself: after VS Code's own save the server can report `synced` before the
 * extension host hears of the save (the Settings editor's writes to
 * settings.json do), and a re-read then would bring the document to the front
 * for nothing.
 */
const OWN_SAVE_MS = 500;

export class DiskChanges {
    /** Per document URI: the resync running or queued, which edits of that document wait for. */
    private readonly lanes = new Map<string, Promise<void>>();
    /** The documents whose file an agent (Claude Code, Gemini CLI) is about to write, with the text the person kept of its edit. */
    private readonly expectedWrites = new ExpectedWrites();

    constructor(private readonly log: vscode.LogOutputChannel) {}

    /** Handles `verbatim/externalChange`. */
    onExternalChange(params: ExternalChangeParams): void {
        this.log.info(`[disk] ${params.kind}: ${params.message}`);
        const action = externalChangeAction(params);
        if (action.resync) {
            // `synced` also follows VS Code's own save, after which the person may have typed
            // again: VS Code's record of the file is then up to date and nothing is needed.
            // The agent's write of what the person kept is another matter: the file changed behind VS Code.
            const agentWrote = params.kind === "synced" && this.expectedWrites.take(params.uri);
            const why = agentWrote ? "the agent wrote the text you kept of its edit" : `the file changed on disk (${params.kind})`;
            this.queueResync(params.uri, why, params.kind === "synced" && !agentWrote);
        }
        if (action.show) void this.show(params, action.compare);
    }

    /**
     * Wraps the language client's handling of `workspace/applyEdit`: waits for a
     * resync of the same documents, and resyncs after a merged change on disk
     * once the person has decided on it.
     */
    async handleApplyEdit(
        params: ApplyWorkspaceEditParams,
        next: (params: ApplyWorkspaceEditParams) => Promise<ApplyWorkspaceEditResult | ResponseError<void>>,
    ): Promise<ApplyWorkspaceEditResult | ResponseError<void>> {
        const documents = editedDocuments(params);
        await Promise.all(documents.map((document) => this.lanes.get(document.uri)));
        const result = await next(params);
        const verbatim = (params as { verbatim?: Partial<ApplyEditVerbatim> }).verbatim;
        if ("applied" in result && result.applied && writesTheFileItself(verbatim?.agent, verbatim?.writesItself)) {
            // Before the answer leaves: the agent writes the file only once it has it.
            for (const { uri } of documents) this.expectedWrites.expect(uri);
        }
        if (isDiskEdit(params)) {
            const applied = "applied" in result && result.applied;
            for (const { uri, version } of documents) {
                const current = findDocument(uri);
                // Refused because the person typed meanwhile: the server merges again and offers anew.
                if (!applied && current !== undefined && version !== null && current.version !== version) continue;
                this.queueResync(uri, applied ? "a change on disk was applied" : "a change on disk was discarded");
            }
        }
        return result;
    }

    /** Resolves once no re-read of `uri` runs or waits (a save before that could meet "The content of the file is newer"). */
    async settled(uri: string): Promise<void> {
        for (let lane = this.lanes.get(uri); lane !== undefined; lane = this.lanes.get(uri)) await lane;
    }

    private queueResync(uri: string, why: string, onlyIfDiskHoldsBuffer = false): void {
        const previous = this.lanes.get(uri) ?? Promise.resolve();
        const lane = previous.then(() => this.resync(uri, why, onlyIfDiskHoldsBuffer)).catch((error: unknown) => {
            this.log.warn(`[disk] could not re-read ${uri} from disk: ${errorMessage(error)}`);
        });
        this.lanes.set(uri, lane);
        void lane.finally(() => {
            if (this.lanes.get(uri) === lane) this.lanes.delete(uri);
        });
    }

    /**
     * Re-reads a dirty document from disk (which refreshes VS Code's record of
     * the file's timestamp) and puts the buffer's text back as one edit. A clean
     * document needs nothing: VS Code reloads it by itself and saves it freely.
     */
    private async resync(uri: string, why: string, onlyIfDiskHoldsBuffer: boolean): Promise<void> {
        const document = findDocument(uri);
        if (document === undefined || document.isClosed || !document.isDirty) return;
        if (onlyIfDiskHoldsBuffer && (await turnsClean(document, OWN_SAVE_MS))) return;
        const text = document.getText();
        if (onlyIfDiskHoldsBuffer && !(await diskHolds(document.uri, text))) return;

        // "Revert File" acts on the active editor only, so the document is shown first; afterwards the
        // tab the person was in comes back, or the one that came to the front meanwhile (a tab they
        // clicked, a review that opened): a diff as a diff.
        const ours = (tab: vscode.Tab): boolean => tab.input instanceof vscode.TabInputText && tab.input.uri.toString() === uri;
        const active = vscode.window.tabGroups.activeTabGroup.activeTab;
        let back = active === undefined || ours(active) ? undefined : tabToShow(active);
        const watch = vscode.window.tabGroups.onDidChangeTabs((event) => {
            for (const tab of [...event.opened, ...event.changed]) {
                if (tab.isActive && tab.group.isActive && !ours(tab)) back = tabToShow(tab);
            }
        });
        try {
            await this.reread(document, text, why);
        } finally {
            watch.dispose();
        }
        if (back !== undefined) await back();
    }

    /** Shows `document`, reverts it (it then holds the file's text) and puts `text` back. */
    private async reread(document: vscode.TextDocument, text: string, why: string): Promise<void> {
        const uri = document.uri.toString();
        const shown = vscode.window.visibleTextEditors.find((editor) => editor.document === document);
        await vscode.window.showTextDocument(document, { viewColumn: shown?.viewColumn, preserveFocus: false, preview: false });
        const active = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
        if (!(active instanceof vscode.TabInputText) || active.uri.toString() !== uri) {
            this.log.warn(`[disk] ${uri} is not the active editor, so it was not re-read; saving it may ask whether to overwrite the file`);
            return;
        }
        await vscode.commands.executeCommand("workbench.action.files.revert");
        await waitForClean(document);

        const disk = document.getText();
        const replacement = restoringEdit(disk, text);
        if (replacement !== undefined) {
            const edit = new vscode.WorkspaceEdit();
            edit.replace(
                document.uri,
                new vscode.Range(document.positionAt(replacement.start), document.positionAt(replacement.end)),
                replacement.text,
            );
            if (!(await vscode.workspace.applyEdit(edit))) {
                throw new Error("VS Code refused to put the buffer's text back; Undo (Ctrl+Z) brings it back");
            }
            if (document.getText() !== applyReplacement(disk, replacement)) {
                this.log.warn(`[disk] ${uri} changed while its text was put back; check it before saving`);
            }
        }
        this.log.info(`[disk] ${uri}: re-read from disk and the buffer's text put back (${why}); saving will not ask`);
    }

    private async show(params: ExternalChangeParams, compare: "disk" | "movedTo" | undefined): Promise<void> {
        const compareAction = "Compare with Disk";
        const choice = await (compare === undefined
            ? vscode.window.showWarningMessage(`Verbatim: ${params.message}`)
            : vscode.window.showWarningMessage(`Verbatim: ${params.message}`, compareAction));
        if (choice !== compareAction) return;
        const documentUri = vscode.Uri.parse(params.uri);
        if (compare === "movedTo" && params.movedTo !== undefined) {
            const movedTo = vscode.Uri.parse(params.movedTo);
            await vscode.commands.executeCommand("vscode.diff", movedTo, documentUri, `${basename(movedTo)} (on disk) ↔ ${basename(documentUri)}`);
        } else {
            // VS Code's own "Compare Active File with Saved": the file as it is on disk, left, and the buffer, right.
            await vscode.commands.executeCommand("workbench.files.action.compareWithSaved", documentUri);
        }
    }
}

function findDocument(uri: string): vscode.TextDocument | undefined {
    return vscode.workspace.textDocuments.find((document) => document.uri.toString() === uri);
}

function basename(uri: vscode.Uri): string {
    return uri.path.slice(uri.path.lastIndexOf("/") + 1);
}

/**
 * How to bring `tab` to the front again, if it is a text editor or a diff
 * (and is still open by then); `undefined` for any other tab.
 */
function tabToShow(tab: vscode.Tab): (() => Promise<void>) | undefined {
    const viewColumn = tab.group.viewColumn;
    const input = tab.input;
    const key = tabKey(input);
    if (key === undefined) return undefined;
    return async () => {
        if (!vscode.window.tabGroups.all.some((group) => group.tabs.some((candidate) => tabKey(candidate.input) === key))) return;
        if (input instanceof vscode.TabInputText) {
            await vscode.window.showTextDocument(input.uri, { viewColumn, preserveFocus: false, preview: tab.isPreview });
        } else if (input instanceof vscode.TabInputTextDiff) {
            await vscode.commands.executeCommand("vscode.diff", input.original, input.modified, tab.label, { viewColumn, preview: tab.isPreview });
        }
    };
}

/** What a text or diff tab shows, as one string; `undefined` for any other tab. */
function tabKey(input: unknown): string | undefined {
    if (input instanceof vscode.TabInputText) return input.uri.toString();
    if (input instanceof vscode.TabInputTextDiff) return `${input.original.toString()} ↔ ${input.modified.toString()}`;
    return undefined;
}

/** Resolves once the extension host sees the document clean (the revert has reached it). */
async function waitForClean(document: vscode.TextDocument): Promise<void> {
    const deadline = Date.now() + REVERT_TIMEOUT_MS;
    while (document.isDirty) {
        if (Date.now() > deadline) throw new Error(`reverting it did not finish within ${REVERT_TIMEOUT_MS} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
    }
}

/** Whether the document turns clean within `ms` (VS Code's own save reaching the extension host). */
async function turnsClean(document: vscode.TextDocument, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (document.isDirty && !document.isClosed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    return !document.isDirty;
}

/** Whether the file on disk holds `text` (read as UTF-8; any other encoding answers no). */
async function diskHolds(uri: vscode.Uri, text: string): Promise<boolean> {
    try {
        const bytes = await vscode.workspace.fs.readFile(uri);
        return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes) === text;
    } catch {
        return false;
    }
}
