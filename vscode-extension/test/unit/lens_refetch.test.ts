import * as assert from "node:assert/strict";
import { describe, test } from "node:test";

import { LENS_REFETCH_INTERVAL_MS, LENS_REFETCH_TRIES, LensRefetch, type Timers } from "../../src/lens_refetch";

/** Timers run by hand: `tick()` runs what is due after `ms` more milliseconds. */
function manualTimers() {
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
        now += ms;
        for (const [handle, timer] of [...due].sort((a, b) => a[1].at - b[1].at)) {
            if (timer.at > now || !due.has(handle)) continue;
            due.delete(handle);
            timer.callback();
        }
    };
    return { timers, tick, pending: () => due.size };
}

describe("asking VS Code for a review's lenses again", () => {
    test("asks at once, and again each interval until the provider is called for that document", () => {
        const { timers, tick, pending } = manualTimers();
        let asks = 0;
        const refetch = new LensRefetch(() => asks++, timers);
        refetch.expect("proposal:a");
        assert.equal(asks, 1);
        tick(LENS_REFETCH_INTERVAL_MS - 1);
        assert.equal(asks, 1, "not before the interval");
        tick(1);
        assert.equal(asks, 2);
        refetch.provided("proposal:other");
        tick(LENS_REFETCH_INTERVAL_MS);
        assert.equal(asks, 3, "lenses of another document do not count");
        refetch.provided("proposal:a");
        assert.equal(refetch.waiting, undefined);
        assert.equal(pending(), 0, "no timer left");
        tick(10 * LENS_REFETCH_INTERVAL_MS);
        assert.equal(asks, 3, "no ask after VS Code asked");
    });

    test("gives up after a bounded number of asks when VS Code never asks (the tab was closed)", () => {
        const { timers, tick, pending } = manualTimers();
        let asks = 0;
        const refetch = new LensRefetch(() => asks++, timers);
        refetch.expect("proposal:a");
        tick(100 * LENS_REFETCH_INTERVAL_MS);
        for (let i = 0; i < 100; i++) tick(LENS_REFETCH_INTERVAL_MS);
        assert.equal(asks, LENS_REFETCH_TRIES);
        assert.equal(refetch.waiting, undefined);
        assert.equal(pending(), 0);
    });

    test("a new document shown replaces the one awaited, and dispose stops it", () => {
        const { timers, tick, pending } = manualTimers();
        let asks = 0;
        const refetch = new LensRefetch(() => asks++, timers);
        refetch.expect("proposal:a");
        refetch.expect("proposal:b");
        assert.equal(asks, 2);
        assert.equal(pending(), 1, "one timer, for the document shown last");
        refetch.provided("proposal:a");
        assert.equal(refetch.waiting, "proposal:b");
        refetch.dispose();
        assert.equal(pending(), 0);
        tick(10 * LENS_REFETCH_INTERVAL_MS);
        assert.equal(asks, 2);
    });
});
