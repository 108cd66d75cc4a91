// The real Claude Code CLI for the end-to-end tests, through the project's
// tests/agents/ (README.md there): the interactive CLI under tmux
// (claude_tmux.py), the scripted Anthropic API (model_server.py), and a HOME
// seeded so that Claude Code goes straight to its prompt. Every call is
// asynchronous: a blocking call would stall the browser the test drives.

import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";

import { extensionDir, waitFor } from "./harness.mjs";

const run = promisify(execFile);
export const agentsDir = path.resolve(extensionDir, "..", "tests", "agents");
const CLAUDE_TMUX = path.join(agentsDir, "claude_tmux.py");
const MODEL_SERVER = path.join(agentsDir, "model_server.py");

/** Installs Claude Code (pinned, from npm; quick once installed) and returns its native binary. */
export function installClaudeCode() {
    return execFileSync(path.join(agentsDir, "install.sh"), ["--print-bin"], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
}

/** The environment that points Claude Code at a scripted model on `port`, with nothing else sent anywhere. */
export function modelEnvironment(port) {
    return {
        ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
        ANTHROPIC_API_KEY: apiKey(),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
    };
}

let cachedKey;
function apiKey() {
    cachedKey ??= execFileSync("python3", ["-c", `import sys; sys.path.insert(0, sys.argv[1]); import claude_tmux; print(claude_tmux.DEFAULT_API_KEY)`, agentsDir], {
        encoding: "utf8",
    }).trim();
    return cachedKey;
}

/** Seeds `home` as claude_tmux.py does (onboarding done, the key approved, `folders` trusted, permission mode `default`). */
export function seedHome(home, folders) {
    const script = [
        "import json, sys",
        "sys.path.insert(0, sys.argv[1])",
        "import claude_tmux as c",
        "c.seed_home(sys.argv[2], json.loads(sys.argv[3]), c.DEFAULT_API_KEY, c.claude_version(c.find_binary()))",
    ].join("\n");
    execFileSync("python3", ["-c", script, agentsDir, home, JSON.stringify(folders)], { stdio: ["ignore", "inherit", "inherit"] });
}

/** Runs claude_tmux.py; its errors (with the screen and the last model requests) become the thrown message. */
async function claudeTmux(...args) {
    try {
        return (await run("python3", [CLAUDE_TMUX, ...args], { maxBuffer: 64 * 1024 * 1024 })).stdout;
    } catch (error) {
        throw new Error(`claude_tmux.py ${args[0]} failed: ${error.stderr || error.message}`);
    }
}

/** One interactive Claude Code under its own tmux server, against its own scripted model. */
export class ClaudeSession {
    static async start({ name, cwd, home, script, scriptFile, env = {}, args = [], timeout = 45 }) {
        writeFileSync(scriptFile, JSON.stringify(script, null, 2));
        const envArgs = Object.entries(env).flatMap(([key, value]) => ["--env", `${key}=${value}`]);
        const stdout = await claudeTmux(
            "start", "--name", name, "--cwd", cwd, "--home", home, "--script", scriptFile,
            "--timeout", String(timeout), ...envArgs, ...(args.length > 0 ? ["--", ...args] : []),
        );
        return new ClaudeSession(name, JSON.parse(stdout));
    }

    constructor(name, state) {
        this.name = name;
        this.state = state;
    }

    /** Types `text` in the prompt box and presses Enter. */
    send(text) {
        return claudeTmux("send", "--name", this.name, "--text", text);
    }

    /** Presses tmux keys (Enter, Escape, Down, "1", …). */
    keys(...keys) {
        return claudeTmux("send", "--name", this.name, ...keys);
    }

    /** Waits until `regex` (Python syntax) matches the screen. */
    async waitFor(regex, timeout = 30) {
        return JSON.parse(await claudeTmux("wait-for", "--name", this.name, "--regex", regex, "--timeout", String(timeout)));
    }

    /** Waits for the prompt box again: the turn is over. (After a turn Claude Code draws "❯" and a no-break space.) */
    waitForPrompt(timeout = 30) {
        return this.waitFor("(?m)^─{20,}\\n❯\\s", timeout);
    }

    /**
     * Waits until Claude Code counts the IDE named `ideName` as connected (its `/ide` dialog ticks it): a
     * prompt sent before that may go without `openDiff`, and notifications sent meanwhile are dropped.
     */
    waitIde(ideName, timeout = 30) {
        return claudeTmux("wait-ide", "--name", this.name, "--ide-name", ideName, "--timeout", String(timeout));
    }

    capture() {
        return claudeTmux("capture", "--name", this.name);
    }

    /** The `count`th request of Claude Code's main loop to the model (from 1), once it came. */
    async waitRequest(count, timeout = 30) {
        return JSON.parse(await claudeTmux("wait-request", "--name", this.name, "--count", String(count), "--timeout", String(timeout)));
    }

    /** The main-loop requests so far. */
    async requests() {
        return JSON.parse(await claudeTmux("requests", "--name", this.name, "--kind", "main"));
    }

    /** The model_server's expectation mismatches (a tool result that did not hold what the script expects). */
    async mismatches() {
        return JSON.parse(await claudeTmux("status", "--name", this.name)).mismatches;
    }

    stop({ keep = false } = {}) {
        return claudeTmux("stop", "--name", this.name, ...(keep ? ["--keep"] : [])).catch(() => undefined);
    }
}

/** A scripted model of its own, for a Claude Code that the test does not start under tmux (one in VS Code's terminal). */
export class ModelServer {
    static async start({ script, dir }) {
        const scriptFile = path.join(dir, "terminal-script.json");
        const log = path.join(dir, "terminal-requests.jsonl");
        const portFile = path.join(dir, "terminal-model.port");
        writeFileSync(scriptFile, JSON.stringify(script, null, 2));
        writeFileSync(log, "");
        const child = spawn("python3", [MODEL_SERVER, "--script", scriptFile, "--log", log, "--port-file", portFile], { stdio: ["ignore", "ignore", "inherit"] });
        const port = await waitFor("the scripted model to listen", () => existsSync(portFile) && Number(readFileSync(portFile, "utf8")), { timeout: 10_000, interval: 20 });
        return new ModelServer(child, port, log);
    }

    constructor(child, port, log) {
        this.child = child;
        this.port = port;
        this.log = log;
    }

    /** The main-loop requests so far, oldest first. */
    requests() {
        return readFileSync(this.log, "utf8")
            .split("\n")
            .filter((line) => line.trim() !== "")
            .map((line) => JSON.parse(line))
            .filter((record) => record.event === undefined && record.kind === "main");
    }

    stop() {
        this.child.kill("SIGTERM");
    }
}

/** The text of the tool results in the last user message of a logged model request. */
export function toolResults(record) {
    const messages = record?.body?.messages ?? [];
    const last = messages.at(-1);
    const blocks = Array.isArray(last?.content) ? last.content : [];
    return blocks
        .filter((block) => block.type === "tool_result")
        .map((block) => (typeof block.content === "string" ? block.content : (block.content ?? []).map((part) => part.text ?? "").join("")))
        .join("\n");
}

/**
 * Everything the messages of a logged request say (text and tool results): Claude Code puts what the IDE
 * told it (the selection, the file in front) in a message of role `system`.
 */
export function messageText(record) {
    return (record?.body?.messages ?? [])
        .flatMap((message) => (typeof message.content === "string" ? [message.content] : message.content))
        .map((block) => (typeof block === "string" ? block : (block.text ?? (typeof block.content === "string" ? block.content : JSON.stringify(block.content ?? "")))))
        .join("\n");
}
