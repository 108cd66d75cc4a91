/**
 * Answers the server's `verbatim/diagnostics` request (docs/protocol.md,
 * "Diagnostics after an edit"): only the editor sees what other language
 * servers report, so the server asks it, once at once (the baseline) and once
 * after the edit, waiting for fresh diagnostics.
 *
 * The tracker hears every diagnostics change from the extension's start and
 * remembers, per document, when each change came and at which document
 * version. A wait then settles, per document, once a change was seen at the
 * version the edit reached or later (before the request arrived counts too)
 * and no change followed for `quietMs`; it ends at `timeoutMs` at the latest,
 * and what has not settled by then is `timedOut`, never `settled`.
 *
 * `unavailable` is what VS Code lets us know honestly. Its API does not say
 * which language servers look at a document, and a server that finds nothing
 * before and after an edit fires no change at all (an empty set replacing an
 * empty set is not an event). So a document counts as watched when, since the
 * extension started, a diagnostics change was seen for it or for another open
 * document of its language, or when it has diagnostics now. A document that
 * is not watched is `unavailable`: at once when it is `plaintext` or not open
 * (no language server would report on it), else when the wait ends without a
 * change. A watched document that got no fresh quiet change in time is
 * `timedOut`.
 *
 * The baseline (no wait) is `settled` only for a document whose diagnostics
 * can be trusted to be its own: it was reported on, or its language is
 * watched and it has been open for {@link OPEN_GRACE_MS} (long enough for its
 * language server to have checked it; a clean document gets no report at
 * all). Otherwise it is `unavailable`, and the server then claims nothing
 * about problems the edit introduced there, rather than calling a problem
 * that was already there but not yet reported new.
 *
 * This module does not import `vscode`: the clock and the editor's
 * diagnostics come in through {@link Clock} and {@link DiagnosticsSource}, so
 * the timing is unit-tested without an editor.
 */

import type {
    DiagnosticsParams,
    DiagnosticsResult,
    DiagnosticsStatus,
    DiagnosticsWait,
    DocumentDiagnostics,
    MinSeverity,
    OtherDocumentDiagnostics,
    WireDiagnostic,
} from "./lsp_ext";

export interface Clock {
    /** Milliseconds, monotonic. */
    now(): number;
    setTimeout(callback: () => void, ms: number): unknown;
    clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
    now: () => performance.now(),
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** What the editor holds now: VS Code's diagnostics and documents in the extension, a fake in tests. */
export interface DiagnosticsSource {
    /** The document's diagnostics, as LSP. */
    diagnostics(uri: string): WireDiagnostic[];
    /** Every document that has diagnostics. */
    all(): Iterable<[string, WireDiagnostic[]]>;
    /** The open document's version; `undefined` when it is not open. */
    version(uri: string): number | undefined;
    /** The open document's language id; `undefined` when it is not open. */
    languageId(uri: string): string | undefined;
}

/** The longest wait the editor grants, whatever `timeoutMs` asks: the answer is bounded. */
export const MAX_TIMEOUT_MS = 60_000;
/** The protocol's defaults, for a request that leaves them out. */
const DEFAULT_QUIET_MS = 300;
const DEFAULT_TIMEOUT_MS = 2500;
/** How long a document of a watched language must have been open before an empty baseline is believed. */
export const OPEN_GRACE_MS = 2000;
/** Changes remembered per document: a wait only looks for one at a recent version. */
const HISTORY_LENGTH = 16;
/** Languages no language server reports on unless it says so with a change. */
const UNWATCHED_LANGUAGES: ReadonlySet<string> = new Set(["plaintext"]);

interface Change {
    time: number;
    /** The document's version when the change came; `undefined` when it was not open. */
    version: number | undefined;
}

interface History {
    /** Oldest first, at most {@link HISTORY_LENGTH}. */
    changes: Change[];
    /** Every diagnostic source seen on the document. */
    sources: Set<string>;
}

interface Outcome {
    status: DiagnosticsStatus;
    waitedMs: number;
}

export class DiagnosticsTracker {
    private readonly history = new Map<string, History>();
    /** The language ids of open documents whose diagnostics changed: some language server reports on them. */
    private readonly languagesSeen = new Set<string>();
    private readonly listeners = new Set<(uris: readonly string[]) => void>();

    constructor(
        private readonly source: DiagnosticsSource,
        private readonly clock: Clock = systemClock,
    ) {}

    /** When each open document was opened (or the tracker started, for those open before). */
    private readonly openedAt = new Map<string, number>();

    /** Records that the editor opened `uri` (VS Code's `onDidOpenTextDocument`). */
    didOpen(uri: string): void {
        if (!this.openedAt.has(uri)) this.openedAt.set(uri, this.clock.now());
    }

    /** Records that the editor closed `uri`. */
    didClose(uri: string): void {
        this.openedAt.delete(uri);
    }

    /** Records a diagnostics change of `uris` (VS Code's `onDidChangeDiagnostics`). */
    didChange(uris: readonly string[]): void {
        const time = this.clock.now();
        for (const uri of uris) {
            let history = this.history.get(uri);
            if (history === undefined) {
                history = { changes: [], sources: new Set() };
                this.history.set(uri, history);
            }
            history.changes.push({ time, version: this.source.version(uri) });
            const language = this.source.languageId(uri);
            if (language !== undefined) this.languagesSeen.add(language);
            if (history.changes.length > HISTORY_LENGTH) history.changes.shift();
            for (const diagnostic of this.source.diagnostics(uri)) {
                if (diagnostic.source) history.sources.add(diagnostic.source);
            }
        }
        for (const listener of [...this.listeners]) listener(uris);
    }

    /** Answers `verbatim/diagnostics`. */
    handle(params: DiagnosticsParams): Promise<DiagnosticsResult> {
        const minSeverity = params.minSeverity === "warning" ? "warning" : "error";
        if (params.wait === undefined) {
            const documents = params.uris.map((uri) =>
                this.document(uri, minSeverity, { status: this.hasTrustedBaseline(uri) ? "settled" : "unavailable", waitedMs: 0 }),
            );
            return Promise.resolve({ documents, others: [] });
        }
        return this.wait(params.uris, minSeverity, params.wait);
    }

    private wait(uris: readonly string[], minSeverity: MinSeverity, wait: DiagnosticsWait): Promise<DiagnosticsResult> {
        const quietMs = clamp(wait.quietMs, DEFAULT_QUIET_MS);
        const start = this.clock.now();
        const deadline = start + clamp(wait.timeoutMs, DEFAULT_TIMEOUT_MS);
        const before = new Map<string, WireDiagnostic[]>();
        for (const [uri, diagnostics] of this.source.all()) before.set(uri, atLeast(diagnostics, minSeverity));
        const changed = new Set<string>();
        const outcomes = new Map<string, Outcome>();
        for (const uri of uris) {
            const language = this.source.languageId(uri);
            if (!this.isWatched(uri) && (language === undefined || UNWATCHED_LANGUAGES.has(language))) {
                outcomes.set(uri, { status: "unavailable", waitedMs: 0 });
            }
        }

        return new Promise((resolve) => {
            let timer: unknown;
            const listener = (changedUris: readonly string[]): void => {
                for (const uri of changedUris) changed.add(uri);
                evaluate();
            };
            const finish = (): void => {
                this.listeners.delete(listener);
                if (timer !== undefined) this.clock.clearTimeout(timer);
                const waitedMs = Math.round(this.clock.now() - start);
                const documents = uris.map((uri) =>
                    this.document(uri, minSeverity, outcomes.get(uri) ?? { status: this.isWatched(uri) ? "timedOut" : "unavailable", waitedMs }),
                );
                const requested = new Set(uris);
                const others: OtherDocumentDiagnostics[] = [];
                for (const uri of changed) {
                    if (requested.has(uri)) continue;
                    const earlier = before.get(uri) ?? [];
                    const now = atLeast(this.source.diagnostics(uri), minSeverity);
                    if (!sameDiagnostics(earlier, now)) others.push({ uri, before: earlier, after: now });
                }
                resolve({ documents, others });
            };
            const evaluate = (): void => {
                if (timer !== undefined) this.clock.clearTimeout(timer);
                timer = undefined;
                const now = this.clock.now();
                let wakeAt = deadline;
                for (const uri of uris) {
                    if (outcomes.has(uri)) continue;
                    const last = this.freshChange(uri, wait.versions[uri], start);
                    if (last === undefined) continue;
                    const quietAt = last + quietMs;
                    if (now >= quietAt) outcomes.set(uri, { status: "settled", waitedMs: Math.round(now - start) });
                    else wakeAt = Math.min(wakeAt, quietAt);
                }
                if (outcomes.size === uris.length || now >= deadline) {
                    finish();
                    return;
                }
                // At least 1 ms: a timer may fire a fraction early, and must not spin.
                timer = this.clock.setTimeout(evaluate, Math.max(1, wakeAt - now));
            };
            this.listeners.add(listener);
            evaluate();
        });
    }

    /**
     * The time of the document's last diagnostics change when a change was
     * seen at `version` or later (without a version: since `since`), else
     * `undefined`: its diagnostics are not fresh yet.
     */
    private freshChange(uri: string, version: number | undefined, since: number): number | undefined {
        const changes = this.history.get(uri)?.changes ?? [];
        const fresh = changes.some((change) =>
            version === undefined ? change.time >= since : change.version !== undefined && change.version >= version,
        );
        return fresh ? changes.at(-1)?.time : undefined;
    }

    /** Whether the document's diagnostics now are its own: see the module's comment on the baseline. */
    private hasTrustedBaseline(uri: string): boolean {
        if (this.history.has(uri) || this.source.diagnostics(uri).length > 0) return true;
        const language = this.source.languageId(uri);
        const opened = this.openedAt.get(uri);
        return (
            language !== undefined &&
            this.languagesSeen.has(language) &&
            opened !== undefined &&
            this.clock.now() - opened >= OPEN_GRACE_MS
        );
    }

    /** Whether something reports on the document: a change was seen for it or its language, or it has diagnostics now. */
    private isWatched(uri: string): boolean {
        const language = this.source.languageId(uri);
        return (
            this.history.has(uri) ||
            (language !== undefined && this.languagesSeen.has(language)) ||
            this.source.diagnostics(uri).length > 0
        );
    }

    private document(uri: string, minSeverity: MinSeverity, outcome: Outcome): DocumentDiagnostics {
        const all = this.source.diagnostics(uri);
        const sources = new Set(this.history.get(uri)?.sources);
        for (const diagnostic of all) if (diagnostic.source) sources.add(diagnostic.source);
        return {
            uri,
            version: this.source.version(uri) ?? null,
            status: outcome.status,
            waitedMs: outcome.waitedMs,
            sources: [...sources].sort(),
            diagnostics: atLeast(all, minSeverity),
        };
    }
}

/** The diagnostics at `minSeverity` or worse; one without a severity counts as an error. */
export function atLeast(diagnostics: readonly WireDiagnostic[], minSeverity: MinSeverity): WireDiagnostic[] {
    const worst = minSeverity === "warning" ? 2 : 1;
    return diagnostics.filter((diagnostic) => (diagnostic.severity ?? 1) <= worst);
}

/** The same diagnostics, in any order. */
export function sameDiagnostics(a: readonly WireDiagnostic[], b: readonly WireDiagnostic[]): boolean {
    if (a.length !== b.length) return false;
    const key = (d: WireDiagnostic): string =>
        JSON.stringify([d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character, d.severity, d.code, d.source, d.message]);
    const left = a.map(key).sort();
    const right = b.map(key).sort();
    return left.every((value, index) => value === right[index]);
}

/** A VS Code `Diagnostic`, as far as the conversion reads it (its severity counts from 0, LSP's from 1). */
export interface EditorDiagnostic {
    range: { start: { line: number; character: number }; end: { line: number; character: number } };
    severity: number;
    code?: string | number | { value: string | number; target: unknown };
    source?: string;
    message: string;
}

/** VS Code's diagnostic as LSP: severity + 1, a `{ value, target }` code as its value, positions as they are (UTF-16). */
export function toWireDiagnostic(diagnostic: EditorDiagnostic): WireDiagnostic {
    const { start, end } = diagnostic.range;
    const wire: WireDiagnostic = {
        range: { start: { line: start.line, character: start.character }, end: { line: end.line, character: end.character } },
        severity: diagnostic.severity + 1,
        message: diagnostic.message,
    };
    const code = typeof diagnostic.code === "object" ? diagnostic.code.value : diagnostic.code;
    if (code !== undefined) wire.code = code;
    if (diagnostic.source) wire.source = diagnostic.source;
    return wire;
}

/** A wait's duration between 0 and {@link MAX_TIMEOUT_MS}; `fallback` when it is not a number. */
function clamp(value: number, fallback: number): number {
    return typeof value === "number" && Number.isFinite(value) ? Math.min(Math.max(value, 0), MAX_TIMEOUT_MS) : fallback;
}
