/**
 * Owns the language client: finds the binary, starts `verbatim lsp`, keeps the
 * server state and the last `verbatim/status`, and restarts on demand. A
 * restart builds a new client so that a changed server path or log level is
 * picked up. Starts and restarts go through one {@link RestartQueue}, so only
 * one runs at a time; the extension's `deactivate` owns shutdown and calls
 * {@link Server.shutdown}.
 */

import * as os from "node:os";
import * as readline from "node:readline";
import type { Readable } from "node:stream";
import * as vscode from "vscode";
import type { RequestParam } from "vscode-languageserver-protocol";
import {
    ApplyWorkspaceEditRequest,
    type RequestType,
    type ApplyWorkspaceEditParams,
    type ApplyWorkspaceEditResult,
    type CancellationToken,
    LanguageClient,
    type LanguageClientOptions,
    type ServerOptions,
    State,
} from "vscode-languageclient/node";

import { claudeCodeEndpoint, geminiCliVariables, type ClaudeCodeEndpoint } from "./claude_code";
import { ClaudeCodeEditor } from "./claude_code_editor";
import { DiskChanges } from "./disk_changes";
import { EditorDiagnostics } from "./editor_diagnostics";
import { bundledServerPath, findServer, nodeBootstrapHost, ServerNotFoundError, type FoundServer } from "./bootstrap";
import { errorMessage } from "./errors";
import { initializationOptions, readConfig, SECTION, serverEnvironment, type Config, type ReviewMode } from "./config";
import * as lsp_ext from "./lsp_ext";
import { InlineReview } from "./inline_review";
import { opensPreview, withReviewMode } from "./review";
import { RestartQueue } from "./restarts";
import { parseServerLogLine } from "./server_log";
import { StalePreviews } from "./stale_previews";
import type { ServerState } from "./status";

export class Server implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private readonly restarts = new RestartQueue();
    /** Set by {@link shutdown}: no client is started after it. */
    private shuttingDown = false;
    private stateValue: ServerState = { kind: "stopped" };
    private sessionReviewMode: ReviewMode | undefined;
    private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
    private readonly clientDisposables: vscode.Disposable[] = [];
    private readonly diskChanges: DiskChanges;
    private readonly stalePreviews: StalePreviews;
    private readonly inlineReview: InlineReview;
    /** Claude Code's IDE protocol, VS Code's side: terminals' variables, selections, mentions, saves. */
    private readonly claudeCode: ClaudeCodeEditor;
    /** Hears diagnostics changes from the extension's start, across restarts; answers `verbatim/diagnostics`. */
    private readonly editorDiagnostics = new EditorDiagnostics();

    /** Fires whenever the state or the status changes. */
    readonly onDidChangeState = this.stateEmitter.event;
    private readonly journalEmitter = new vscode.EventEmitter<lsp_ext.JournalChangedParams>();
    /** Fires on the server's `verbatim/journalChanged`: it appended to a journal (the timeline reloads). */
    readonly onDidChangeJournal = this.journalEmitter.event;

    constructor(
        private readonly context: vscode.ExtensionContext,
        readonly log: vscode.LogOutputChannel,
        private readonly traceLog: vscode.LogOutputChannel,
    ) {
        this.diskChanges = new DiskChanges(log);
        this.stalePreviews = new StalePreviews(log);
        this.inlineReview = new InlineReview(log);
        this.claudeCode = new ClaudeCodeEditor(context, log, this.diskChanges, () => {
            const status = this.stateValue.kind === "running" ? this.stateValue.status : undefined;
            return status?.agents.some((agent) => agent.name === lsp_ext.CLAUDE_CODE_AGENT);
        });
    }

    get state(): ServerState {
        return this.stateValue;
    }

    /** The endpoint Claude Code connects to, while the server serves one. */
    get claudeCodeEndpoint(): ClaudeCodeEndpoint | undefined {
        return this.claudeCode.endpoint;
    }

    /** The mode in force: the session's toggle if any, else the setting. */
    get reviewMode(): ReviewMode {
        return this.sessionReviewMode ?? this.config().reviewMode;
    }

    /** Sets the mode for this window only, without touching the setting. */
    setSessionReviewMode(mode: ReviewMode | undefined): void {
        this.sessionReviewMode = mode;
        this.stateEmitter.fire(this.stateValue);
    }

    config(): Config {
        const settings = vscode.workspace.getConfiguration(SECTION);
        const { config, problems } = readConfig((key) => settings.get(key), os.homedir());
        for (const problem of problems) this.log.warn(`[settings] ${problem}`);
        return config;
    }

    /** Starts the server, or restarts it if it runs; waits for a restart already under way first. */
    start(): Promise<void> {
        return this.restarts.request(() => this.startOrRestart());
    }

    /** The same as {@link start}: the name says what the caller means. */
    restart(): Promise<void> {
        this.log.info("Restart requested.");
        return this.start();
    }

    /**
     * Stops the server for good, after any start or restart under way. Only
     * the extension's `deactivate` calls it (VS Code awaits that), so the
     * server has one owner of shutdown; {@link dispose} does not stop it.
     */
    async shutdown(): Promise<void> {
        this.shuttingDown = true;
        await this.restarts.idle();
        await this.stopClient();
    }

    /** Run only through {@link restarts}: never two at once. */
    private async startOrRestart(): Promise<void> {
        if (this.shuttingDown) return;
        if (this.client !== undefined) {
            this.log.info("Restarting the server.");
            await this.stopClient();
        }
        if (this.shuttingDown) return;
        await this.startClient();
    }

    private async startClient(): Promise<void> {
        this.setState({ kind: "starting" });
        const config = this.config();

        const platform = process.platform;
        let found: FoundServer;
        try {
            found = await findServer(
                {
                    configuredPath: config.serverPath,
                    workspaceTrusted: vscode.workspace.isTrusted,
                    bundledPath: bundledServerPath(this.context.extensionPath, platform),
                    pathEnv: process.env["PATH"],
                    platform,
                },
                nodeBootstrapHost((line) => this.log.info(line)),
            );
        } catch (error) {
            const message = errorMessage(error);
            this.log.error(message);
            this.setState({ kind: "failed", message });
            if (error instanceof ServerNotFoundError) {
                void this.offerHelp(message);
                return;
            }
            throw error;
        }

        const serverOptions: ServerOptions = {
            command: found.path,
            // No `transport`: TransportKind.stdio would append `--stdio`, which `verbatim lsp` does not take.
            args: ["lsp"],
            options: { env: serverEnvironment(process.env, config.logLevel) },
        };
        const clientOptions: LanguageClientOptions = {
            documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
            initializationOptions: initializationOptions(this.reviewMode, config),
            outputChannel: this.log,
            stdioOptions: { stdout: forwardServerLog, stderr: forwardServerLog },
            traceOutputChannel: this.traceLog,
        };

        const client = new LanguageClient("verbatim", "Verbatim", serverOptions, clientOptions);
        this.client = client;
        this.clientDisposables.push(
            // In place of the client's own handler (installed before this one), to get the request's
            // cancellation: the server cancels an edit whose agent gave up, and its review is withdrawn.
            client.onRequest(ApplyWorkspaceEditRequest.type, (params, token) => this.handleApplyEdit(client, params, token)),
            client.onDidChangeState((event) => {
                if (this.client !== client) return;
                if (event.newState === State.Stopped) {
                    // The edits under review came on the connection that is gone; the server offers nothing again.
                    this.inlineReview.withdrawAll();
                    this.claudeCode.detach();
                    this.setState({ kind: "stopped" });
                } else if (event.newState === State.Running && this.stateValue.kind === "stopped") {
                    // The client restarted a server that crashed: a new process, with a new endpoint.
                    this.attachClaudeCode(client);
                    this.setState({ kind: "running", status: undefined });
                    void this.refreshStatus();
                }
            }),
            client.onNotification(lsp_ext.statusChanged, (status) => this.setState({ kind: "running", status })),
            client.onNotification(lsp_ext.externalChange, (params) => this.diskChanges.onExternalChange(params)),
            client.onNotification(lsp_ext.journalChanged, (params) => this.journalEmitter.fire(params)),
            client.onRequest(lsp_ext.saveDocument, (params) => this.claudeCode.saveDocument(params)),
            client.onRequest(lsp_ext.diagnostics, async (params) => {
                const result = await this.editorDiagnostics.tracker.handle(params);
                const outcome = result.documents.map((d) => `${d.uri} v${d.version}: ${d.status} after ${d.waitedMs} ms, ${d.diagnostics.length} problems`);
                this.log.debug(`verbatim/diagnostics (${params.wait ? "wait" : "baseline"}): ${outcome.join("; ")}`);
                return result;
            }),
        );

        try {
            await client.start();
        } catch (error) {
            const message = `the server failed to start: ${errorMessage(error)}`;
            this.log.error(message);
            this.setState({ kind: "failed", message });
            return;
        }
        this.attachClaudeCode(client);
        this.setState({ kind: "running", status: undefined });
        await this.refreshStatus();
    }

    /** Reads the Claude Code endpoint from the server's `initialize` result. */
    private attachClaudeCode(client: LanguageClient): void {
        if (this.client !== client) return;
        const experimental = client.initializeResult?.capabilities.experimental;
        const endpoint = claudeCodeEndpoint(experimental);
        const companion = this.config().geminiCli ? geminiCliVariables(experimental) : [];
        this.claudeCode.attach(client, endpoint, this.config().claudeCode, companion);
    }

    /**
     * Handles `workspace/applyEdit`: the in-editor review when the edit needs
     * confirmation and `verbatim.review.ui` is `inline`; else VS Code, which
     * applies it at once or opens the Refactor Preview.
     */
    private async handleApplyEdit(
        client: LanguageClient,
        params: ApplyWorkspaceEditParams,
        token: CancellationToken,
    ): Promise<ApplyWorkspaceEditResult> {
        const result = await this.diskChanges.handleApplyEdit(withReviewMode(params, this.reviewMode), async (edit) => {
            if (this.config().reviewUi === "inline" && opensPreview(edit)) {
                const answer = await this.inlineReview.review(edit, token, (decided) => {
                    client.sendNotification(lsp_ext.reviewDecided, decided).catch((error: unknown) => {
                        this.log.warn(`[review] telling the server the decision failed: ${errorMessage(error)}`);
                    });
                });
                if (answer !== undefined) return answer;
            }
            return this.stalePreviews.watch(edit, () => applyAsLanguageClient(client, edit));
        });
        if ("applied" in result) return result;
        throw result;
    }

    private async stopClient(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        for (const disposable of this.clientDisposables.splice(0)) disposable.dispose();
        this.inlineReview.withdrawAll();
        this.claudeCode.detach();
        if (client !== undefined) {
            try {
                await client.stop(5_000);
            } catch (error) {
                this.log.warn(`Stopping the server failed: ${errorMessage(error)}`);
            }
            await client.dispose().catch(() => undefined);
        }
        this.setState({ kind: "stopped" });
    }

    /** Whether a server runs and answers requests. */
    get isRunning(): boolean {
        return this.client?.isRunning() ?? false;
    }

    /**
     * Sends a request to the running server (the timeline view's requests go
     * through here, so they reach whichever client a restart made); rejects
     * when none runs.
     */
    async request<P, R>(type: RequestType<P, R, lsp_ext.ErrorData>, params: P): Promise<R> {
        const client = this.client;
        if (client === undefined || !client.isRunning()) throw new Error("the Verbatim server is not running");
        // Spelled out: the client's overload wants `RequestParam<P>` (`P`, or `undefined` for a null `P`), which a generic `P` does not meet.
        return client.sendRequest<P, R, lsp_ext.ErrorData>(type, params as RequestParam<P>);
    }

    /** Asks the server for `verbatim/status`; `undefined` when it is not running. */
    async refreshStatus(): Promise<lsp_ext.StatusResult | undefined> {
        const client = this.client;
        if (client === undefined || !client.isRunning()) return undefined;
        try {
            const status = await client.sendRequest(lsp_ext.status);
            if (this.client === client) this.setState({ kind: "running", status });
            return status;
        } catch (error) {
            this.log.warn(`verbatim/status failed: ${errorMessage(error)}`);
            return undefined;
        }
    }

    /** Releases what the server object holds; stopping the server is {@link shutdown}'s job. */
    dispose(): void {
        this.stalePreviews.dispose();
        this.inlineReview.dispose();
        this.claudeCode.dispose();
        this.editorDiagnostics.dispose();
        this.stateEmitter.dispose();
        this.journalEmitter.dispose();
    }

    private setState(state: ServerState): void {
        this.stateValue = state;
        this.stateEmitter.fire(state);
    }

    private async offerHelp(message: string): Promise<void> {
        const openSettings = "Open Settings";
        const showLog = "Show Log";
        const choice = await vscode.window.showErrorMessage(message, openSettings, showLog);
        if (choice === openSettings) {
            await vscode.commands.executeCommand("workbench.action.openSettings", "verbatim.server.path");
        } else if (choice === showLog) {
            this.log.show(true);
        }
    }
}

/**
 * Applies an edit as the language client does by itself: refused when an open
 * document is no longer at the version the edit names, else handed to VS Code
 * (which opens the Refactor Preview for an annotation that needs confirmation).
 */
async function applyAsLanguageClient(client: LanguageClient, params: ApplyWorkspaceEditParams): Promise<ApplyWorkspaceEditResult> {
    const converted = await client.protocol2CodeConverter.asWorkspaceEdit(params.edit);
    for (const change of params.edit.documentChanges ?? []) {
        if (!("textDocument" in change) || change.textDocument.version === null || change.textDocument.version < 0) continue;
        const open = vscode.workspace.textDocuments.find((document) => document.uri.toString() === change.textDocument.uri);
        if (open !== undefined && open.version !== change.textDocument.version) return { applied: false };
    }
    const applied = await vscode.workspace.applyEdit(converted, { isRefactoring: params.metadata?.isRefactoring ?? false });
    return { applied };
}

/** Sends each line the server logs to the channel at the level it names. */
function forwardServerLog(input: Readable, channel: vscode.LogOutputChannel): void {
    readline.createInterface({ input, crlfDelay: Infinity, terminal: false }).on("line", (line) => {
        const { level, message } = parseServerLogLine(line);
        channel[level](message);
    });
}
