/**
 * The pure side of the in-editor review's fast path for large files: instead
 * of a diff editor (which makes VS Code copy and diff the whole text), the
 * review marks the hunks in the file's own editor. Removed text is struck
 * through; inserted text shows as decoration text after it.
 *
 * Everything here is computed from the hunks' edits alone, never from the
 * document's text, so its cost does not grow with the file. No `vscode` here,
 * so it is unit-tested in plain Node.
 */

import type { Position, Range } from "vscode-languageserver-protocol";

import type { Decision, Hunk, HunkLines, ProposedDocument } from "./hunks";

/** `verbatim.review.diffMaxLines` when unset or invalid. */
export const DEFAULT_DIFF_MAX_LINES = 5000;

/** The setting's value: a whole number of lines, 0 or more; anything else is the default. */
export function readDiffMaxLines(value: unknown): number {
    return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : DEFAULT_DIFF_MAX_LINES;
}

/** Whether a document of `lineCount` lines is reviewed in its own editor rather than in a diff (`0`: always). */
export function usesFastPath(lineCount: number, diffMaxLines: number): boolean {
    return diffMaxLines === 0 || lineCount > diffMaxLines;
}

/** Text an edit inserts, as the editor shows it after the text the edit removes. */
export interface Insertion {
    /** Where the decoration lies: its text shows at the range's end (the end of the removed text). */
    range: Range;
    /** One line: the inserted text itself, or its first line and how many more follow. */
    label: string;
    /** The whole inserted text, when the label does not show all of it. */
    hover: string | undefined;
}

export interface HunkMarks extends HunkLines {
    /** The text this hunk removes, when it is shown (not rejected). */
    removed: Range[];
    /** The text it inserts, when it is shown. */
    inserted: Insertion[];
}

/** Past any line's end: the editor clamps a position to the end of its line. */
export const LINE_END = 1_000_000_000;

/**
 * The marks of one document's hunks, in document order. A rejected hunk keeps
 * its lines (for its CodeLens) but shows no change. Lines are the document's
 * own: in the fast path the proposal is not a separate text, so `proposalLine`
 * is `line`.
 */
export function hunkMarks(document: ProposedDocument, hunks: readonly Hunk[], decisions: readonly Decision[]): HunkMarks[] {
    const marks: HunkMarks[] = [];
    for (const hunk of hunks) {
        if (hunk.uri !== document.uri) continue;
        const shown = decisions[hunk.index] !== "rejected";
        let line = Number.MAX_SAFE_INTEGER;
        let endLine = 0;
        const removed: Range[] = [];
        const inserted: Insertion[] = [];
        for (const index of hunk.edits) {
            const edit = document.edits[index];
            if (edit === undefined) continue;
            const { start, end } = edit.range;
            line = Math.min(line, start.line);
            // A range that ends at the start of a line ends with the line break before it.
            endLine = Math.max(endLine, end.character === 0 && end.line > start.line ? end.line - 1 : end.line);
            if (!shown) continue;
            if (comparePositions(start, end) < 0) removed.push(edit.range);
            if (edit.newText !== "") inserted.push({ range: { start, end: insertionAnchor(edit.range) }, ...insertionLabel(edit.newText) });
        }
        if (line === Number.MAX_SAFE_INTEGER) continue;
        marks.push({ index: hunk.index, line, endLine, proposalLine: line, proposalEndLine: endLine, removed, inserted });
    }
    return marks.sort((a, b) => a.line - b.line || a.index - b.index);
}

/**
 * Where inserted text shows: after the removed text, but on the removed text's
 * last line when the range ends with a line break (else it would show at the
 * start of the next line, as if it belonged there).
 */
function insertionAnchor(range: Range): Position {
    const { start, end } = range;
    return end.character === 0 && end.line > start.line ? { line: end.line - 1, character: LINE_END } : end;
}

/**
 * How an insertion shows on one line: the text itself; a line break it ends
 * with as `⏎`; a multi-line insertion as its first line and "… (+N lines)",
 * with the whole text for the hover.
 */
export function insertionLabel(newText: string): { label: string; hover: string | undefined } {
    const lines = newText.split(/\r\n|\r|\n/);
    const endsWithBreak = lines.length > 1 && lines.at(-1) === "";
    if (endsWithBreak) lines.pop();
    const more = lines.length - 1;
    if (more === 0) return { label: endsWithBreak ? `${lines[0]} ⏎` : lines[0]!, hover: undefined };
    return { label: `${lines[0]} … (+${more} line${more === 1 ? "" : "s"})`, hover: newText };
}

function comparePositions(a: Position, b: Position): number {
    return a.line - b.line || a.character - b.character;
}
