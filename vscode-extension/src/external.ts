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

/** How long after an accepted edit of Claude Code's or Gemini CLI's the extension waits for the agent to write the file. */
export const EXPECTED_WRITE_MS = 60_000;

/**
 * The documents whose file an agent is about to write with the text the
 * person kept. Claude Code and Gemini CLI write the file themselves once the
 * person has accepted their edit (docs/protocol.md, "Claude Code's IDE
 * protocol", "Gemini CLI's IDE companion"), and the
 * server then sends `synced`, even when the buffer holds more than the file
 * (the person's other unsaved changes). VS Code's record of the file is out
 * of date all the same, so such a document is re-read whatever its buffer
 * holds; after VS Code's own save (the other source of `synced`) it is
 * re-read only if the file holds the buffer's text, as before.
 */
export class ExpectedWrites {
    /** Per document URI: until when its write is expected (a write that never comes is forgotten). */
    private readonly until = new Map<string, number>();

    constructor(private readonly now: () => number = Date.now) {}

    /** An agent will write the file of `uri`. */
    expect(uri: string, ms = EXPECTED_WRITE_MS): void {
        this.until.set(uri, this.now() + ms);
    }

    /** Whether a write of `uri` was expected; it is not expected any more. */
    take(uri: string): boolean {
        const until = this.until.get(uri);
        this.until.delete(uri);
        return until !== undefined && until >= this.now();
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
