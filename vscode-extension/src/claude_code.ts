/**
 * Claude Code's IDE protocol on the VS Code side, as pure decisions (no
 * `vscode` import, so they are unit-tested in plain Node): the endpoint the
 * server announces, the variables that make a `claude` started in the
 * integrated terminal connect to it, who Claude Code picks when Anthropic's
 * own extension sets those variables too, the selection reported to the
 * server (debounced, only when it changed), and what an at-mention sends.
 *
 * The server serves the protocol (docs/protocol.md, "Claude Code's IDE
 * protocol"); `claude_code_editor.ts` wires these decisions to VS Code.
 */

import type { Range } from "vscode-languageserver-protocol";

import type { Timers } from "./lens_refetch";
import type { AtMentionParams, EditorExperimentalCapabilities, SelectionChangedParams } from "./lsp_ext";

/** Anthropic's own VS Code extension, which serves the same protocol. */
export const ANTHROPIC_EXTENSION_ID = "anthropic.claude-code";
/** The port Claude Code connects to, set in the terminals an IDE opens. */
export const PORT_VARIABLE = "CLAUDE_CODE_SSE_PORT";
/** Makes a `claude` started with {@link PORT_VARIABLE} connect without `/ide`. */
export const ENABLE_VARIABLE = "ENABLE_IDE_INTEGRATION";
/** How long the selection must hold still before it is reported. */
export const SELECTION_DEBOUNCE_MS = 100;

export interface ClaudeCodeEndpoint {
    port: number;
}

/** The endpoint in the server's `initialize` result (`capabilities.experimental.verbatim.claudeCode`), if it serves one. */
export function claudeCodeEndpoint(experimental: unknown): ClaudeCodeEndpoint | undefined {
    const port = (experimental as EditorExperimentalCapabilities | undefined)?.verbatim?.claudeCode?.port;
    return typeof port === "number" && Number.isInteger(port) && port > 0 && port < 65536 ? { port } : undefined;
}

/** The variables every new integrated terminal gets, so that `claude` started there connects to the server. */
export function terminalVariables(endpoint: ClaudeCodeEndpoint): [name: string, value: string][] {
    return [
        [PORT_VARIABLE, String(endpoint.port)],
        [ENABLE_VARIABLE, "true"],
    ];
}

/**
 * The variables a terminal needs so that a `gemini` or `qwen` started there
 * connects to this server (`capabilities.experimental.verbatim.geminiCli.env`);
 * none when the server serves no IDE companion endpoint.
 */
export function geminiCliVariables(experimental: unknown): [name: string, value: string][] {
    const env = (experimental as EditorExperimentalCapabilities | undefined)?.verbatim?.geminiCli?.env;
    if (typeof env !== "object" || env === null) return [];
    return Object.entries(env).filter(
        (entry): entry is [string, string] => /^[A-Z_]+$/.test(entry[0]) && typeof entry[1] === "string",
    );
}

/** What VS Code shows for the variables (in the terminal's hover, and when it asks to relaunch a terminal). */
export function environmentDescription(endpoint: ClaudeCodeEndpoint): string {
    return `Verbatim: \`claude\` started in this terminal connects to Verbatim (port ${endpoint.port}), which shows its edits for review in the editor.`;
}

/** The status tooltip's line about the endpoint. */
export function endpointTooltip(endpoint: ClaudeCodeEndpoint | undefined): string | undefined {
    return endpoint === undefined
        ? undefined
        : `Claude Code: ws://127.0.0.1:${endpoint.port} (\`claude\` started in a new terminal connects by itself)`;
}

/** Who a `claude` started in a new integrated terminal connects to, when Anthropic's extension is installed too. */
export type IdeChoice = { kind: "verbatim" } | { kind: "anthropic"; port: string } | { kind: "unknown"; why: string };

/**
 * Reads the choice from the {@link PORT_VARIABLE} a new terminal gets (VS Code
 * gives it the value of the extension that set it first); `terminalPort` is
 * `undefined` when the probe could not read it.
 */
export function ideChoice(terminalPort: string | undefined, endpoint: ClaudeCodeEndpoint): IdeChoice {
    if (terminalPort === undefined) return { kind: "unknown", why: "a new terminal's environment could not be read" };
    const port = terminalPort.trim();
    if (port === String(endpoint.port)) return { kind: "verbatim" };
    if (port === "") return { kind: "unknown", why: `a new terminal gets no ${PORT_VARIABLE}` };
    return { kind: "anthropic", port };
}

/** One line for the log. */
export function ideChoiceLog(choice: IdeChoice, endpoint: ClaudeCodeEndpoint): string {
    const both = `Anthropic's Claude Code extension (${ANTHROPIC_EXTENSION_ID}) is installed too, and both set ${PORT_VARIABLE} for new terminals`;
    switch (choice.kind) {
        case "verbatim":
            return `[claude code] ${both}: new terminals get Verbatim's port ${endpoint.port}, so \`claude\` started there connects to Verbatim.`;
        case "anthropic":
            return `[claude code] ${both}: new terminals get port ${choice.port}, not Verbatim's ${endpoint.port}, so \`claude\` started there connects to Anthropic's extension.`;
        case "unknown":
            return `[claude code] ${both}; which one \`claude\` started in a new terminal connects to is not known (${choice.why}).`;
    }
}

/** The one-time message: who Claude Code picks, and how to choose. */
export function ideChoiceMessage(choice: IdeChoice): string {
    // A notification shows its text as it is: no Markdown.
    const how =
        "To choose: with the setting verbatim.claudeCode.enabled off, Claude Code is left to Anthropic's extension; " +
        "with Anthropic's extension disabled in this workspace, it connects to Verbatim. In Claude Code, /ide picks either.";
    switch (choice.kind) {
        case "verbatim":
            return `Verbatim: Claude Code started in a new terminal connects to Verbatim, which reviews its edits hunk by hunk, not to Anthropic's Claude Code extension. ${how}`;
        case "anthropic":
            return `Verbatim: Claude Code started in a new terminal connects to Anthropic's Claude Code extension, not to Verbatim (VS Code gives terminals the port of the extension that set it first). ${how}`;
        case "unknown":
            return `Verbatim: Anthropic's Claude Code extension is installed too; Claude Code connects to only one of them. ${how}`;
    }
}

/**
 * What an at-mention sends: the selection's lines, or the whole file when
 * nothing is selected. A selection that ends at the start of a line (whole
 * lines, selected down to the next one) ends at the end of the line before,
 * so that the next line is not sent too; `lineLength` gives a line's length.
 */
export function atMentionParams(uri: string, selection: Range, lineLength: (line: number) => number): AtMentionParams {
    const { start, end } = selection;
    if (start.line === end.line && start.character === end.character) return { uri };
    if (end.character > 0 || end.line === start.line) return { uri, range: selection };
    return { uri, range: { start, end: { line: end.line - 1, character: lineLength(end.line - 1) } } };
}

function sameSelection(a: SelectionChangedParams, b: SelectionChangedParams): boolean {
    return (
        a.uri === b.uri &&
        a.text === b.text &&
        a.range.start.line === b.range.start.line &&
        a.range.start.character === b.range.start.character &&
        a.range.end.line === b.range.end.line &&
        a.range.end.character === b.range.end.character
    );
}

/**
 * Reports the selection once it has held still for {@link SELECTION_DEBOUNCE_MS}
 * (a drag or held arrow key gives one report, not hundreds), and only when it
 * differs from the one reported last.
 */
export class SelectionReporter {
    private latest: SelectionChangedParams | undefined;
    private reported: SelectionChangedParams | undefined;
    private timer: unknown;

    constructor(
        private readonly report: (params: SelectionChangedParams) => void,
        private readonly timers: Timers,
        private readonly debounceMs = SELECTION_DEBOUNCE_MS,
    ) {}

    /** The selection changed to `params`: report it once it holds still. */
    update(params: SelectionChangedParams): void {
        this.latest = params;
        if (this.timer !== undefined) this.timers.clear(this.timer);
        this.timer = this.timers.set(() => this.flush(), this.debounceMs);
    }

    /** A new connection to the server: the next selection is reported even if it is the one reported before. */
    reset(): void {
        this.cancel();
        this.latest = undefined;
        this.reported = undefined;
    }

    /** Drops a report still waiting. */
    cancel(): void {
        if (this.timer !== undefined) this.timers.clear(this.timer);
        this.timer = undefined;
    }

    dispose(): void {
        this.cancel();
    }

    private flush(): void {
        this.timer = undefined;
        const latest = this.latest;
        if (latest === undefined || (this.reported !== undefined && sameSelection(this.reported, latest))) return;
        this.reported = latest;
        this.report(latest);
    }
}
