/**
 * Asks VS Code for a review's CodeLenses again until it has asked for them.
 *
 * VS Code's CodeLens controller fetches an editor's lenses at least 250 ms
 * after its document appears, and cancels that scheduled fetch when the
 * editor loses focus; it schedules one again only on focus, a change of the
 * text or the provider's change event. So a review that opens as the person
 * clicks elsewhere (the diff's left side, the explorer, another window) showed
 * no Accept or Reject at all until they clicked into it (seen in VS Code 1.93
 * and 1.139). The provider's change event is cheap: fire it until VS Code
 * calls the provider for the document shown. No `vscode` import: the unit
 * tests drive it with their own clock.
 */

/** How often to ask again: past VS Code's 250 ms delay, so that each ask can run. */
export const LENS_REFETCH_INTERVAL_MS = 400;
/** How many times to ask before giving up (about 8 s): VS Code may never ask for a tab closed meanwhile. */
export const LENS_REFETCH_TRIES = 20;

export interface Timers {
    set(callback: () => void, ms: number): unknown;
    clear(handle: unknown): void;
}

const realTimers: Timers = {
    set: (callback, ms) => setTimeout(callback, ms),
    clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class LensRefetch {
    private awaited: { uri: string; tries: number; timer: unknown } | undefined;

    /** `ask` fires the CodeLens providers' change event. */
    constructor(
        private readonly ask: () => void,
        private readonly timers: Timers = realTimers,
    ) {}

    /** The document `uri` (as a string) now shows a review: ask for its lenses now, and again until {@link provided} names it. */
    expect(uri: string): void {
        this.stop();
        this.awaited = { uri, tries: 0, timer: undefined };
        this.askAgain();
    }

    /** VS Code asked a provider for the lenses of `uri`: no need to ask for them again. */
    provided(uri: string): void {
        if (this.awaited?.uri === uri) this.stop();
    }

    /** Whether lenses of a document are still awaited (for the tests). */
    get waiting(): string | undefined {
        return this.awaited?.uri;
    }

    /** No review shown any more: stop asking. */
    cancel(): void {
        this.stop();
    }

    dispose(): void {
        this.stop();
    }

    private askAgain(): void {
        const awaited = this.awaited;
        if (awaited === undefined) return;
        if (awaited.tries >= LENS_REFETCH_TRIES) {
            this.awaited = undefined;
            return;
        }
        awaited.tries++;
        awaited.timer = this.timers.set(() => this.askAgain(), LENS_REFETCH_INTERVAL_MS);
        this.ask();
    }

    private stop(): void {
        if (this.awaited !== undefined) this.timers.clear(this.awaited.timer);
        this.awaited = undefined;
    }
}
