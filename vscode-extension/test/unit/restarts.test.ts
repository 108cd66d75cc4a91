import * as assert from "node:assert/strict";
import { describe, test } from "node:test";

import { RestartQueue } from "../../src/restarts";

/**
 * A model of the server's restart: stop the client if any, then start one,
 * with awaits in between as the real one has (finding the binary, spawning).
 * It records how many clients are alive at once and how many restarts overlap.
 */
function fakeServer() {
    const model = { clients: 0, maxClients: 0, running: 0, maxRunning: 0, starts: 0 };
    const tick = () => new Promise((resolve) => setTimeout(resolve, 1));
    const restart = async (): Promise<void> => {
        model.running++;
        model.maxRunning = Math.max(model.maxRunning, model.running);
        try {
            await tick();
            if (model.clients > 0) model.clients--;
            await tick();
            model.clients++;
            model.starts++;
            model.maxClients = Math.max(model.maxClients, model.clients);
            await tick();
        } finally {
            model.running--;
        }
    };
    return { model, restart };
}

describe("RestartQueue", () => {
    test("two restarts fired at once: one runs, the second is queued, never two clients", async () => {
        const queue = new RestartQueue();
        const { model, restart } = fakeServer();
        const first = queue.request(restart);
        const second = queue.request(restart);
        assert.notEqual(first, second);
        await Promise.all([first, second]);
        assert.deepEqual(model, { clients: 1, maxClients: 1, running: 0, maxRunning: 1, starts: 2 });
    });

    test("requests made while one is queued join it", async () => {
        const queue = new RestartQueue();
        const { model, restart } = fakeServer();
        const first = queue.request(restart);
        const queued = [queue.request(restart), queue.request(restart), queue.request(restart)];
        assert.ok(queued.every((promise) => promise === queued[0]));
        await Promise.all([first, ...queued]);
        assert.equal(model.starts, 2);
        assert.equal(model.maxRunning, 1);
        assert.equal(model.maxClients, 1);
    });

    test("a request after everything settled runs at once", async () => {
        const queue = new RestartQueue();
        const { model, restart } = fakeServer();
        await queue.request(restart);
        await queue.request(restart);
        assert.equal(model.starts, 2);
        assert.equal(model.clients, 1);
    });

    test("a failed restart rejects its own request and still lets the queued one run", async () => {
        const queue = new RestartQueue();
        const { model, restart } = fakeServer();
        const failing = queue.request(async () => {
            await new Promise((resolve) => setTimeout(resolve, 1));
            throw new Error("spawn failed");
        });
        const queued = queue.request(restart);
        await assert.rejects(failing, /spawn failed/);
        await queued;
        assert.equal(model.starts, 1);
    });

    test("a task that throws at once rejects, it does not throw from request()", async () => {
        const queue = new RestartQueue();
        const result = queue.request(() => {
            throw new Error("at once");
        });
        await assert.rejects(result, /at once/);
        await queue.idle();
    });

    test("idle waits for the running and the queued restart", async () => {
        const queue = new RestartQueue();
        const { model, restart } = fakeServer();
        void queue.request(restart);
        void queue.request(restart);
        await queue.idle();
        assert.equal(model.starts, 2);
        assert.equal(model.running, 0);
    });
});
