/**
 * What the extension does with `verbatim/externalChange`, as pure decisions
 * (no `vscode` import, so they are unit-tested in plain Node), and the one edit
 * that puts the person's text back after the document is re-read from disk.
 *
 * Why re-read at all: VS Code remembers the file's modification time and etag
 * from when it last read or wrote the file, and a save of a document whose file
 * changed on disk since then stops with "The content of the file is newer".
 * Reverting the document re-reads the file and refreshes them; VS Code applies
 * the revert as an ordinary undoable edit of the buffer (`ModelService.updateModel`),
 * so the person's undo history survives. Applying `restoringEdit(disk, text)`
 * afterwards brings back what the buffer held, as one more undo step.
 */

import type { ExternalChangeKind, ExternalChangeParams } from "./lsp_ext";

/** What to do for one `verbatim/externalChange`. */
export interface ExternalChangeAction {
    /** Show `message` to the person. */
    show: boolean;
    /** What the "Compare with Disk" action compares the buffer with, if offered. */
    compare: "disk" | "movedTo" | undefined;
    /**
     * Re-read the (dirty) document from disk and put its text back, so that the
     * next save does not stop at a save conflict. For `offered`, this happens
     * once the person has decided on the merged edit, not on the notification.
     */
    resync: boolean;
}

export function externalChangeAction(params: Pick<ExternalChangeParams, "kind" | "conflicts" | "movedTo">): ExternalChangeAction {
    const kind: ExternalChangeKind = params.kind;
    switch (kind) {
        case "reload":
            // The buffer had no unsaved changes: VS Code reloads it by itself.
            return { show: false, compare: undefined, resync: false };
        case "synced":
            // The disk holds the buffer's text: only VS Code's idea of the file is out of date.
            return { show: false, compare: undefined, resync: true };
        case "offered":
            return { show: params.conflicts.length > 0, compare: params.conflicts.length > 0 ? "disk" : undefined, resync: false };
        case "conflict":
            return { show: true, compare: "disk", resync: true };
        case "deleted":
            // Nothing is left on disk to compare with; saving writes the file back.
            return { show: true, compare: undefined, resync: false };
        case "moved":
            return { show: true, compare: params.movedTo === undefined ? undefined : "movedTo", resync: false };
    }
}

/** One replacement: `text` replaces `from[start, end)` (UTF-16 offsets). */
export interface Replacement {
    start: number;
    end: number;
    text: string;
}

/**
 * The edit that turns `from` into `to`: one replacement of the whole lines
 * between their common prefix and suffix, or `undefined` when they are equal.
 * Whole lines, so that no offset falls inside a CRLF pair or a surrogate pair.
 */
export function restoringEdit(from: string, to: string): Replacement | undefined {
    if (from === to) return undefined;
    const limit = Math.min(from.length, to.length);
    let prefix = 0;
    while (prefix < limit && from.charCodeAt(prefix) === to.charCodeAt(prefix)) prefix++;
    prefix = from.lastIndexOf("\n", prefix - 1) + 1;

    let suffix = 0;
    while (suffix < limit - prefix && from.charCodeAt(from.length - 1 - suffix) === to.charCodeAt(to.length - 1 - suffix)) suffix++;
    // The common suffix must start at the beginning of a line (in both texts: it is the same text).
    const suffixStart = from.length - suffix;
    if (suffix > 0 && suffixStart > 0 && from[suffixStart - 1] !== "\n") {
        const nextLine = from.indexOf("\n", suffixStart);
        suffix = nextLine === -1 ? 0 : from.length - (nextLine + 1);
    }
    return { start: prefix, end: from.length - suffix, text: to.slice(prefix, to.length - suffix) };
}

/** `text` with `replacement` applied. */
export function applyReplacement(text: string, replacement: Replacement): string {
    return text.slice(0, replacement.start) + replacement.text + text.slice(replacement.end);
}
