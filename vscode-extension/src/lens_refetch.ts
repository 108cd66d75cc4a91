/**
 * Asks VS Code for a review's CodeLenses again until it has asked for them.
 *
 * VS Code's CodeLens controller fetches an editor's lenses some time after its
 * document appears (at least 250 ms, more when fetches have been slow), and
 * cancels that scheduled fetch when the editor loses focus; it schedules one
 * again only on focus, a change of the text or the provider's change event.
 * So a review that opens as the person clicks elsewhere (the diff's left side,
 * the explorer, another window) showed no Accept or Reject at all until they
 * clicked into it (seen in VS Code 1.93 and 1.139).
 *
 * Firing the change event again fixes that, but each firing also restarts
 * VS Code's wait: fired more often than that wait, it would hold the lenses
 * back instead. So the asks back off (1 s, 2 s, 4 s), and stop as soon as
 * VS Code calls the provider for the document shown. No `vscode` import: the
 * unit tests drive it with their own clock.
 */

/** The waits before each ask after the first: longer each time, so that VS Code's own wait can end in between. */
export const LENS_REFETCH_DELAYS_MS: readonly number[] = [1_000, 2_000, 4_000];

export interface Timers {
    set(callback: () => void, ms: number): unknown;
    clear(handle: unknown): void;
}

/** The Node timers, for everything outside the unit tests. */
export const realTimers: Timers = {
    set: (callback, ms) => setTimeout(callback, ms),
    clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class LensRefetch {
    private awaited: { uri: string; asks: number; timer: unknown } | undefined;

    /** `ask` fires the CodeLens providers' change event; `again` is true on the asks after the first. */
    constructor(
        private readonly ask: (uri: string, again: boolean) => void,
        private readonly timers: Timers = realTimers,
    ) {}

    /** The document `uri` (as a string) now shows a review: ask for its lenses now, and again until {@link provided} names it. */
    expect(uri: string): void {
        this.cancel();
        this.awaited = { uri, asks: 0, timer: undefined };
        this.askNow();
    }

    /** VS Code asked a provider for the lenses of `uri`: no need to ask for them again. */
    provided(uri: string): void {
        if (this.awaited?.uri === uri) this.cancel();
    }

    /** The document whose lenses are still awaited, if any. */
    get waiting(): string | undefined {
        return this.awaited?.uri;
    }

    /** No review shown any more: stop asking. */
    cancel(): void {
        if (this.awaited !== undefined) this.timers.clear(this.awaited.timer);
        this.awaited = undefined;
    }

    dispose(): void {
        this.cancel();
    }

    private askNow(): void {
        const awaited = this.awaited;
        if (awaited === undefined) return;
        const delay = LENS_REFETCH_DELAYS_MS[awaited.asks];
        const again = awaited.asks > 0;
        awaited.asks++;
        awaited.timer = delay === undefined ? undefined : this.timers.set(() => this.askNow(), delay);
        if (delay === undefined) this.awaited = undefined;
        this.ask(awaited.uri, again);
    }
}
