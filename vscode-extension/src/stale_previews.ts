/**
 * Withdraws an edit from the Refactor Preview once the person has changed its
 * document, so that the server offers it again over the new text.
 *
 * VS Code keeps a previewed edit as it was offered: once the person types in
 * its document, Apply can only fail, in a modal "has changed in the meantime"
 * dialog. When the server hears `applied: false` and sees that the document
 * moved, it moves the same edit over the person's changes and offers it again
 * (or answers the agent `stale` when the changes touched the edit's text). So
 * the extension discards the stale preview itself (`refactorPreview.discard`:
 * VS Code answers `applied: false`), and the fresh offer replaces it without
 * a dialog.
 *
 * It waits until the document has been still for a moment: every offer opens
 * the preview and takes the keyboard focus, and the server offers one edit
 * again only a few times, so a refresh at each keystroke would pull the
 * person out of the editor and soon give up. The wait is short because the
 * Refactor Preview shows one edit at a time and the command discards
 * whichever is shown: if the person presses Apply on the stale preview first,
 * VS Code's dialog answers for it, and a discard while that dialog is open
 * could reach the next offer.
 */

import * as vscode from "vscode";
import type { ApplyWorkspaceEditParams } from "vscode-languageserver-protocol";

import { errorMessage } from "./errors";
import { editedDocuments, makesStale, opensPreview } from "./review";

/** How long a document must be still before a stale preview of it is withdrawn. */
export const WITHDRAW_AFTER_MS = 500;

/** An edit shown in the Refactor Preview, waiting for the person. */
interface Previewed {
    label: string;
    documents: { uri: string; version: number | null }[];
    timer: ReturnType<typeof setTimeout> | undefined;
}

export class StalePreviews implements vscode.Disposable {
    private readonly previewed = new Set<Previewed>();
    private readonly listener: vscode.Disposable;

    constructor(private readonly log: vscode.LogOutputChannel) {
        this.listener = vscode.workspace.onDidChangeTextDocument((event) => this.onDidChange(event));
    }

    /** Hands an edit to VS Code through `apply`, watching its documents while it waits in the preview. */
    async watch<T>(params: ApplyWorkspaceEditParams, apply: () => Promise<T>): Promise<T> {
        const documents = editedDocuments(params).filter((document) => document.version !== null);
        if (!opensPreview(params) || documents.length === 0) return apply();
        const previewed: Previewed = { label: params.label ?? "an edit", documents, timer: undefined };
        this.previewed.add(previewed);
        try {
            return await apply();
        } finally {
            clearTimeout(previewed.timer);
            this.previewed.delete(previewed);
        }
    }

    dispose(): void {
        this.listener.dispose();
        for (const previewed of this.previewed) clearTimeout(previewed.timer);
        this.previewed.clear();
    }

    private onDidChange(event: vscode.TextDocumentChangeEvent): void {
        // VS Code also reports a change of the dirty flag alone, with no content change.
        if (event.contentChanges.length === 0) return;
        const uri = event.document.uri.toString();
        for (const previewed of this.previewed) {
            if (!makesStale(previewed.documents, uri, event.document.version)) continue;
            clearTimeout(previewed.timer);
            previewed.timer = setTimeout(() => void this.withdraw(previewed), WITHDRAW_AFTER_MS);
        }
    }

    private async withdraw(previewed: Previewed): Promise<void> {
        if (!this.previewed.has(previewed)) return;
        this.log.info(
            `[review] "${previewed.label}": the document changed while the edit waited in the Refactor Preview; ` +
                "withdrawing it so that it is offered again over the new text",
        );
        try {
            await vscode.commands.executeCommand("refactorPreview.discard");
        } catch (error) {
            this.log.warn(`[review] could not withdraw the stale preview: ${errorMessage(error)}`);
        }
    }
}
