/**
 * The review mode applied to each `workspace/applyEdit` the server sends.
 *
 * The server puts `needsConfirmation` on every change annotation from the
 * `initializationOptions` it got at start. The person can toggle auto-apply
 * for the session without restarting the server (which would drop every
 * agent's connection and change the socket path): the client rewrites the
 * flag on the way in, so VS Code opens the Refactor Preview (`true`) or
 * applies at once (`false`) as the current mode says. A change made on disk
 * outside the editor (annotation `verbatim/disk/<id>`) is left as the server
 * marked it: it follows `verbatim.externalChanges`, not the agents' review mode.
 *
 * VS Code shows an annotation as "label - description". The server's label is
 * "<agent>: <summary>" and its description the summary alone, so the summary
 * would show twice; a description that merely repeats the end of the label is
 * dropped.
 */

import type { ApplyWorkspaceEditParams, ChangeAnnotation } from "vscode-languageserver-protocol";
import type { ReviewMode } from "./config";
import { DISK_ANNOTATION_PREFIX } from "./lsp_ext";

export function withReviewMode(params: ApplyWorkspaceEditParams, mode: ReviewMode): ApplyWorkspaceEditParams {
    const annotations = params.edit.changeAnnotations;
    if (annotations === undefined) return params;
    const needsConfirmation = mode === "confirm";
    const rewritten: { [id: string]: ChangeAnnotation } = {};
    for (const [id, annotation] of Object.entries(annotations)) {
        const { description, ...rest } = annotation;
        const repeatsLabel = description !== undefined && annotation.label.endsWith(description);
        const kept = repeatsLabel ? rest : annotation;
        rewritten[id] = isDiskAnnotation(id) ? kept : { ...kept, needsConfirmation };
    }
    return { ...params, edit: { ...params.edit, changeAnnotations: rewritten } };
}

/** The mode after "Toggle Auto-Apply for This Session". */
export function toggled(mode: ReviewMode): ReviewMode {
    return mode === "confirm" ? "auto" : "confirm";
}

export function isDiskAnnotation(id: string): boolean {
    return id.startsWith(DISK_ANNOTATION_PREFIX);
}

/** Whether the edit is a change made on disk outside the editor, merged into the buffer by the server. */
export function isDiskEdit(params: ApplyWorkspaceEditParams): boolean {
    return Object.keys(params.edit.changeAnnotations ?? {}).some(isDiskAnnotation);
}

/** The documents an edit changes, with the version it was planned against when it names one. */
export function editedDocuments(params: ApplyWorkspaceEditParams): { uri: string; version: number | null }[] {
    const documents: { uri: string; version: number | null }[] = [];
    for (const change of params.edit.documentChanges ?? []) {
        if ("textDocument" in change) documents.push({ uri: change.textDocument.uri, version: change.textDocument.version });
    }
    for (const uri of Object.keys(params.edit.changes ?? {})) documents.push({ uri, version: null });
    return documents;
}

/** Whether VS Code shows the edit in the Refactor Preview (after `withReviewMode`) rather than applying it at once. */
export function opensPreview(params: ApplyWorkspaceEditParams): boolean {
    return Object.values(params.edit.changeAnnotations ?? {}).some((annotation) => annotation.needsConfirmation === true);
}

/**
 * Whether a change to the document `uri`, now at `version`, makes an edit
 * planned against `documents` stale: VS Code refuses a versioned edit once
 * its document has moved on. An edit without a version never goes stale.
 */
export function makesStale(documents: { uri: string; version: number | null }[], uri: string, version: number): boolean {
    return documents.some((document) => document.uri === uri && document.version !== null && document.version !== version);
}
