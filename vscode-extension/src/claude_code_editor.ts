/**
 * VS Code's side of Claude Code's IDE protocol, which the server serves
 * (docs/protocol.md, "Claude Code's IDE protocol"): Claude Code's Edit and
 * Write become ordinary reviews (`inline_review.ts`); this module does the
 * rest, with the decisions in `claude_code.ts`.
 *
 * - The terminals VS Code starts get `CLAUDE_CODE_SSE_PORT` and
 *   `ENABLE_IDE_INTEGRATION` (`context.environmentVariableCollection`), so a
 *   `claude` started there connects by itself; cleared when the server stops
 *   or serves no endpoint (`verbatim.claudeCode.enabled` off).
 * - When Anthropic's extension is installed too, both set the port, and VS
 *   Code gives a new terminal the value of the extension that set it first: a
 *   hidden terminal reads which one it gets, the log says so, and a one-time
 *   message says how to choose.
 * - They also get Gemini CLI's and Qwen Code's variables (`GEMINI_CLI_IDE_*`,
 *   `QWEN_CODE_IDE_*`) when the server serves their IDE companion interface,
 *   so a `gemini` or `qwen` started there connects to this window.
 * - The selection in the focused file editor goes to the server as
 *   `verbatim/selectionChanged` (debounced; never from a review's diff).
 * - **Verbatim: Send to Claude Code** (`verbatim.mentionInClaudeCode`) sends
 *   `verbatim/atMention`: the selected lines, or the whole file.
 * - `verbatim/saveDocument` (Claude Code's `saveDocument`) saves a document.
 */

import { existsSync, promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";

import {
    ANTHROPIC_EXTENSION_ID,
    atMentionParams,
    environmentDescription,
    ideChoice,
    ideChoiceLog,
    ideChoiceMessage,
    PORT_VARIABLE,
    SelectionReporter,
    terminalVariables,
    type ClaudeCodeEndpoint,
} from "./claude_code";
import type { DiskChanges } from "./disk_changes";
import { errorMessage } from "./errors";
import { PROPOSAL_SCHEME } from "./inline_review";
import { realTimers } from "./lens_refetch";
import * as lsp_ext from "./lsp_ext";

/** Set while the server serves Claude Code's endpoint: the mention command shows then. */
const CONTEXT_KEY = "verbatim.claudeCode";
/** `globalState` key: the message about Anthropic's extension has been shown. */
const TOLD_ABOUT_ANTHROPIC = "verbatim.claudeCode.toldAboutAnthropicExtension";
/** How long to wait for Anthropic's extension to activate (it sets its port then), and for the hidden terminal. */
const ANTHROPIC_ACTIVATION_MS = 30_000;
const PROBE_TIMEOUT_MS = 10_000;

export class ClaudeCodeEditor implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private endpointValue: ClaudeCodeEndpoint | undefined;
    /** Gemini CLI's and Qwen Code's terminal variables, when the server serves their companion interface. */
    private companionVariables: [name: string, value: string][] = [];
    /** Counts attaches and detaches: a probe that outlives its server says nothing. */
    private generation = 0;
    private readonly selections: SelectionReporter;
    private readonly disposables: vscode.Disposable[] = [];

    constructor(
        private readonly context: vscode.ExtensionContext,
        private readonly log: vscode.LogOutputChannel,
        private readonly diskChanges: DiskChanges,
        /** Whether a Claude Code is connected, from the server's last status (`undefined`: not known). */
        private readonly claudeCodeConnected: () => boolean | undefined,
    ) {
        this.selections = new SelectionReporter((params) => this.sendSelection(params), realTimers);
        // A port of a server gone would send `claude` to nothing (or to another program's port).
        context.environmentVariableCollection.persistent = false;
        this.disposables.push(
            this.selections,
            vscode.window.onDidChangeTextEditorSelection((event) => this.onSelection(event.textEditor)),
            vscode.window.onDidChangeActiveTextEditor((editor) => {
                if (editor !== undefined) this.onSelection(editor);
            }),
            vscode.commands.registerCommand("verbatim.mentionInClaudeCode", () => this.mention()),
        );
    }

    /** The endpoint the running server serves, if any. */
    get endpoint(): ClaudeCodeEndpoint | undefined {
        return this.endpointValue;
    }

    /**
     * The server started (or the client restarted it): `experimentalEndpoint`
     * is what its `initialize` result announced; `enabled` the setting.
     */
    attach(
        client: LanguageClient,
        experimentalEndpoint: ClaudeCodeEndpoint | undefined,
        enabled: boolean,
        companionVariables: [name: string, value: string][] = [],
    ): void {
        const generation = ++this.generation;
        this.client = client;
        this.selections.reset();
        const endpoint = enabled ? experimentalEndpoint : undefined;
        this.endpointValue = endpoint;
        this.companionVariables = companionVariables;
        void vscode.commands.executeCommand("setContext", CONTEXT_KEY, endpoint !== undefined);
        const collection = this.context.environmentVariableCollection;
        collection.clear();
        for (const [name, value] of companionVariables) collection.replace(name, value);
        if (companionVariables.length > 0) {
            const port = companionVariables.find(([name]) => name === "GEMINI_CLI_IDE_SERVER_PORT")?.[1];
            this.log.info(`[gemini cli] serving the IDE companion interface on http://127.0.0.1:${port}/mcp; new terminals get its variables`);
            const editor = vscode.window.activeTextEditor;
            if (editor !== undefined) this.onSelection(editor);
        }
        if (endpoint === undefined) {
            this.log.info(
                enabled
                    ? "[claude code] the server serves no endpoint for Claude Code (a server without it, or it could not bind one: see its log above)"
                    : "[claude code] verbatim.claudeCode.enabled is off: Claude Code is not offered an IDE here",
            );
            return;
        }
        collection.description = environmentDescription(endpoint);
        for (const [name, value] of terminalVariables(endpoint)) collection.replace(name, value);
        this.log.info(
            `[claude code] serving Claude Code's IDE protocol on ws://127.0.0.1:${endpoint.port}; new terminals get ${PORT_VARIABLE}=${endpoint.port}`,
        );
        const editor = vscode.window.activeTextEditor;
        if (editor !== undefined) this.onSelection(editor);
        if (vscode.extensions.getExtension(ANTHROPIC_EXTENSION_ID) !== undefined) void this.checkAnthropicExtension(endpoint, generation);
    }

    /** The server stopped: nothing to connect to. */
    detach(): void {
        this.generation++;
        this.client = undefined;
        this.endpointValue = undefined;
        this.companionVariables = [];
        this.selections.cancel();
        this.context.environmentVariableCollection.clear();
        void vscode.commands.executeCommand("setContext", CONTEXT_KEY, false);
    }

    dispose(): void {
        this.detach();
        for (const disposable of this.disposables) disposable.dispose();
    }

    /** Answers `verbatim/saveDocument`. */
    async saveDocument(params: lsp_ext.SaveDocumentParams): Promise<lsp_ext.SaveDocumentResult> {
        const result = await this.save(params.uri);
        this.log.info(`[claude code] verbatim/saveDocument ${params.uri}: ${result.saved ? "saved" : "not saved"}${result.message ? ` (${result.message})` : ""}`);
        return result;
    }

    private async save(uri: string): Promise<lsp_ext.SaveDocumentResult> {
        const wanted = vscode.Uri.parse(uri).toString();
        const document = vscode.workspace.textDocuments.find((candidate) => candidate.uri.toString() === wanted);
        const name = path.basename(vscode.Uri.parse(uri).path);
        if (document === undefined || document.isClosed) return { saved: false, message: `${name} is not open in VS Code` };
        if (document.isUntitled) return { saved: false, message: `${name} is untitled: it needs a name, which only the person can give` };
        // A re-read of the document after a change on disk first, or the save would stop at "The content of the file is newer".
        await this.diskChanges.settled(document.uri.toString());
        // Saved whatever `isDirty` says here: the extension host hears of the person's typing after the
        // window does, so a document the window holds dirty can still read clean here for a moment. The
        // save is the window's, on the window's text; a document with nothing unsaved is left as it is.
        try {
            return (await document.save()) ? { saved: true } : { saved: false, message: `VS Code did not save ${name}` };
        } catch (error) {
            return { saved: false, message: `VS Code could not save ${name}: ${errorMessage(error)}` };
        }
    }

    // --- The selection ---------------------------------------------------------

    private onSelection(editor: vscode.TextEditor): void {
        const client = this.client;
        // The selection is Claude Code's, and Gemini CLI's context.
        if (client === undefined || (this.endpointValue === undefined && this.companionVariables.length === 0)) return;
        const document = editor.document;
        if (document.isClosed) return;
        // Either side of a review's diff: the person looks at a proposal, they do not select in their file.
        if (inReviewDiff(editor)) {
            this.log.debug(`[claude code] a selection in a review's diff is not the person's: not sent (${document.uri.toString()})`);
            return;
        }
        // Only the editor the person is in; a selection set in another (a review moving to a hunk) is not theirs.
        if (editor !== vscode.window.activeTextEditor) return;
        // The documents the server has open: the language client syncs every open `file:` document.
        if (document.uri.scheme !== "file") return;
        const selection = editor.selection;
        this.selections.update({
            uri: client.code2ProtocolConverter.asUri(document.uri),
            text: document.getText(selection),
            range: toLspRange(selection),
        });
    }

    private sendSelection(params: lsp_ext.SelectionChangedParams): void {
        const client = this.client;
        if (client === undefined || !client.isRunning()) return;
        const { start, end } = params.range;
        this.log.debug(`[claude code] selection ${params.uri} ${start.line + 1}:${start.character + 1}-${end.line + 1}:${end.character + 1}`);
        client.sendNotification(lsp_ext.selectionChanged, params).catch((error: unknown) => {
            this.log.warn(`[claude code] verbatim/selectionChanged failed: ${errorMessage(error)}`);
        });
    }

    // --- At-mentions -------------------------------------------------------------

    private async mention(): Promise<void> {
        const client = this.client;
        if (client === undefined || !client.isRunning() || this.endpointValue === undefined) {
            void vscode.window.showWarningMessage(
                "Verbatim: Claude Code has no IDE to connect to here: the server is not running, or `verbatim.claudeCode.enabled` is off.",
            );
            return;
        }
        const editor = vscode.window.activeTextEditor;
        if (editor === undefined || editor.document.uri.scheme !== "file") {
            void vscode.window.showInformationMessage("Verbatim: open a file (or select lines in it) to send it to Claude Code.");
            return;
        }
        if (this.claudeCodeConnected() === false) {
            void vscode.window.showWarningMessage("Verbatim: no Claude Code is connected. Start `claude` in a terminal of this window, then send the file again.");
            return;
        }
        const document = editor.document;
        const params = atMentionParams(client.code2ProtocolConverter.asUri(document.uri), toLspRange(editor.selection), (line) => document.lineAt(line).text.length);
        try {
            await client.sendNotification(lsp_ext.atMention, params);
            const lines = params.range === undefined ? "the whole file" : `lines ${params.range.start.line + 1}-${params.range.end.line + 1}`;
            this.log.info(`[claude code] sent ${params.uri} (${lines}) to Claude Code`);
        } catch (error) {
            void vscode.window.showErrorMessage(`Verbatim: could not send the file to Claude Code: ${errorMessage(error)}`);
        }
    }

    // --- Anthropic's extension -------------------------------------------------

    /** Finds out which extension's port new terminals get, logs it, and tells the person once how to choose. */
    private async checkAnthropicExtension(endpoint: ClaudeCodeEndpoint, generation: number): Promise<void> {
        const anthropic = vscode.extensions.getExtension(ANTHROPIC_EXTENSION_ID);
        if (anthropic === undefined) return;
        // It sets its port when it activates, at startup: wait for that, and a moment for its variables to reach VS Code.
        const deadline = Date.now() + ANTHROPIC_ACTIVATION_MS;
        while (!anthropic.isActive && Date.now() < deadline) await sleep(250);
        await sleep(1_000);
        if (generation !== this.generation) return;
        let port: string | undefined;
        try {
            port = await newTerminalPort();
        } catch (error) {
            this.log.warn(`[claude code] could not read a new terminal's ${PORT_VARIABLE}: ${errorMessage(error)}`);
        }
        if (generation !== this.generation) return;
        const choice = ideChoice(port, endpoint);
        this.log.info(ideChoiceLog(choice, endpoint));
        if (this.context.globalState.get<boolean>(TOLD_ABOUT_ANTHROPIC) === true) return;
        await this.context.globalState.update(TOLD_ABOUT_ANTHROPIC, true);
        const openSetting = "Open Setting";
        const picked = await vscode.window.showInformationMessage(ideChoiceMessage(choice), openSetting);
        if (picked === openSetting) await vscode.commands.executeCommand("workbench.action.openSettings", "verbatim.claudeCode.enabled");
    }
}

/** Whether an editor is a side of a review's diff: its group shows a diff with a proposal (`verbatim-proposal:`). */
function inReviewDiff(editor: vscode.TextEditor): boolean {
    const uri = editor.document.uri.toString();
    return vscode.window.tabGroups.all.some((group) => {
        const input = group.activeTab?.input;
        if (!(input instanceof vscode.TabInputTextDiff)) return false;
        if (input.modified.scheme !== PROPOSAL_SCHEME && input.original.scheme !== PROPOSAL_SCHEME) return false;
        const side = input.original.toString() === uri || input.modified.toString() === uri;
        // The left side of a diff may have no column of its own; a document in another group is not in this diff.
        return side && (editor.viewColumn === undefined || editor.viewColumn === group.viewColumn);
    });
}

function toLspRange(selection: vscode.Selection): lsp_ext.SelectionChangedParams["range"] {
    return {
        start: { line: selection.start.line, character: selection.start.character },
        end: { line: selection.end.line, character: selection.end.character },
    };
}

function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The `CLAUDE_CODE_SSE_PORT` a new integrated terminal gets, read by a hidden
 * one: VS Code has no API for the environment its terminals get.
 */
async function newTerminalPort(): Promise<string> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "verbatim-terminal-"));
    const file = path.join(dir, "port");
    const terminal = vscode.window.createTerminal({
        name: "Verbatim: which IDE Claude Code picks",
        shellPath: "/bin/sh",
        // `$0` is the file; written whole, then renamed, so a half-written file is never read.
        shellArgs: ["-c", `printf '%s' "\${${PORT_VARIABLE}-}" > "$0.tmp" && mv "$0.tmp" "$0"`, file],
        hideFromUser: true,
        isTransient: true,
    });
    try {
        const deadline = Date.now() + PROBE_TIMEOUT_MS;
        while (!existsSync(file)) {
            if (Date.now() > deadline) throw new Error(`the hidden terminal wrote nothing within ${PROBE_TIMEOUT_MS} ms`);
            await sleep(50);
        }
        return await fs.readFile(file, "utf8");
    } finally {
        terminal.dispose();
        await fs.rm(dir, { recursive: true, force: true });
    }
}
