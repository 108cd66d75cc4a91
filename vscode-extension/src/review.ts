/**
 * The review mode applied to each `workspace/applyEdit` the server sends.
 *
 * The server puts `needsConfirmation` on every change annotation from the
 * `initializationOptions` it got at start. The person can toggle auto-apply
 * for the session without restarting the server (which would drop every
 * agent's connection and change the socket path): the client rewrites the
 * flag on the way in, so VS Code opens the Refactor Preview (`true`) or
 * applies at once (`false`) as the current mode says.
 *
 * VS Code shows an annotation as "label - description". The server's label is
 * "<agent>: <summary>" and its description the summary alone, so the summary
 * would show twice; a description that merely repeats the end of the label is
 * dropped.
 */

import type { ApplyWorkspaceEditParams, ChangeAnnotation } from "vscode-languageserver-protocol";
import type { ReviewMode } from "./config";

export function withReviewMode(params: ApplyWorkspaceEditParams, mode: ReviewMode): ApplyWorkspaceEditParams {
    const annotations = params.edit.changeAnnotations;
    if (annotations === undefined) return params;
    const needsConfirmation = mode === "confirm";
    const rewritten: { [id: string]: ChangeAnnotation } = {};
    for (const [id, annotation] of Object.entries(annotations)) {
        const { description, ...rest } = annotation;
        const repeatsLabel = description !== undefined && annotation.label.endsWith(description);
        rewritten[id] = repeatsLabel ? { ...rest, needsConfirmation } : { ...annotation, needsConfirmation };
    }
    return { ...params, edit: { ...params.edit, changeAnnotations: rewritten } };
}

/** The mode after "Toggle Auto-Apply for This Session". */
export function toggled(mode: ReviewMode): ReviewMode {
    return mode === "confirm" ? "auto" : "confirm";
}
