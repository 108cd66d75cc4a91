/** Timers for the unit tests, run by hand on a clock of their own (no `node:test` here: imported by test files). */

import type { Timers } from "../../src/lens_refetch";

/** Timers run by hand: `tick(ms)` moves the clock on and runs what is then due. */
export function manualTimers() {
    let now = 0;
    let next = 1;
    const due = new Map<number, { at: number; callback: () => void }>();
    const timers: Timers = {
        set: (callback, ms) => {
            const handle = next++;
            due.set(handle, { at: now + ms, callback });
            return handle;
        },
        clear: (handle) => {
            due.delete(handle as number);
        },
    };
    const tick = (ms: number) => {
        const until = now + ms;
        for (;;) {
            const first = [...due].sort((a, b) => a[1].at - b[1].at)[0];
            if (first === undefined || first[1].at > until) break;
            due.delete(first[0]);
            now = first[1].at;
            first[1].callback();
        }
        now = until;
    };
    return { timers, tick, now: () => now, pending: () => due.size };
}
