/**
 * One restart at a time, as ruff-vscode's `requestRestart` does: while a
 * restart runs, a request queues one more (it must see the settings as they
 * are now), and every further request joins that queued one. So two commands
 * or setting changes fired together never build two language clients, and a
 * server process is never left behind unowned. No `vscode` import: the unit
 * tests drive it with fake tasks.
 */
export class RestartQueue {
    private running: Promise<void> | undefined;
    private queued: Promise<void> | undefined;

    /**
     * Runs `task` now if nothing runs, else once after the running one.
     * Resolves (or rejects) with the run that covers this request: the queued
     * run for a request made while another runs, whichever task it carries.
     */
    request(task: () => Promise<void>): Promise<void> {
        if (this.queued !== undefined) return this.queued;
        if (this.running === undefined) return this.run(task);
        const queued = this.running
            .catch(() => undefined)
            .then(() => {
                this.queued = undefined;
                return this.run(task);
            });
        this.queued = queued;
        return queued;
    }

    /** Resolves once nothing runs and nothing is queued. */
    async idle(): Promise<void> {
        for (let pending = this.queued ?? this.running; pending !== undefined; pending = this.queued ?? this.running) {
            await pending.catch(() => undefined);
        }
    }

    private run(task: () => Promise<void>): Promise<void> {
        const running = (async () => task())().finally(() => {
            if (this.running === running) this.running = undefined;
        });
        this.running = running;
        return running;
    }
}
