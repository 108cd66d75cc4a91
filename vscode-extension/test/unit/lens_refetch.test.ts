import * as assert from "node:assert/strict";
import { describe, test } from "node:test";

import { LENS_REFETCH_DELAYS_MS, LensRefetch } from "../../src/lens_refetch";
import { manualTimers } from "./manual_timers";

/** A LensRefetch that records when it asked (on the manual clock) and whether it was again. */
function recorded() {
    const clock = manualTimers();
    const asks: { at: number; uri: string; again: boolean }[] = [];
    const refetch = new LensRefetch((uri, again) => asks.push({ at: clock.now(), uri, again }), clock.timers);
    return { refetch, asks, tick: clock.tick, pending: clock.pending };
}

describe("asking VS Code for a review's lenses again", () => {
    test("asks at once, then after 1 s, 2 s and 4 s more, then gives up (the tab may be gone)", () => {
        const { refetch, asks, tick, pending } = recorded();
        refetch.expect("proposal:a");
        tick(60_000);
        assert.deepEqual(
            asks.map((ask) => [ask.at, ask.again]),
            [
                [0, false],
                [1_000, true],
                [3_000, true],
                [7_000, true],
            ],
        );
        assert.equal(asks.length, LENS_REFETCH_DELAYS_MS.length + 1);
        assert.equal(refetch.waiting, undefined);
        assert.equal(pending(), 0, "no timer left");
    });

    test("stops once VS Code asks the provider for that document, and not for another", () => {
        const { refetch, asks, tick, pending } = recorded();
        refetch.expect("proposal:a");
        tick(1_000);
        refetch.provided("proposal:other");
        assert.equal(refetch.waiting, "proposal:a", "lenses of another document do not count");
        refetch.provided("proposal:a");
        assert.equal(refetch.waiting, undefined);
        assert.equal(pending(), 0);
        tick(60_000);
        assert.equal(asks.length, 2, "no ask after VS Code asked");
    });

    test("the asks are never closer than VS Code's shortest wait (250 ms), which each ask restarts", () => {
        const { refetch, asks, tick } = recorded();
        refetch.expect("proposal:a");
        tick(60_000);
        for (let i = 1; i < asks.length; i++) assert.ok(asks[i]!.at - asks[i - 1]!.at >= 1_000, JSON.stringify(asks));
    });

    test("a new document shown replaces the one awaited; cancel and dispose stop it", () => {
        const { refetch, asks, tick, pending } = recorded();
        refetch.expect("proposal:a");
        refetch.expect("proposal:b");
        assert.deepEqual(
            asks.map((ask) => ask.uri),
            ["proposal:a", "proposal:b"],
        );
        assert.equal(pending(), 1, "one timer, for the document shown last");
        refetch.provided("proposal:a");
        assert.equal(refetch.waiting, "proposal:b");
        refetch.cancel();
        assert.equal(pending(), 0);
        refetch.expect("proposal:c");
        refetch.dispose();
        assert.equal(pending(), 0);
        tick(60_000);
        assert.equal(asks.length, 3);
    });
});
