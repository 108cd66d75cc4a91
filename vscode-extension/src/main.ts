/**
 * The extension's entry point: starts the server, shows the status bar item
 * and the timeline view, and registers the commands. Everything it creates is disposed through
 * `context.subscriptions`.
 */

import * as vscode from "vscode";

import { needsRestart, SECTION } from "./config";
import { toggled } from "./review";
import { Server } from "./server";
import { TimelineView } from "./timeline_view";
import { agentListItems, sameStatusBarView, SettledView, statusBarView, type StatusBarView } from "./status";

/** How long the status must hold still before the status bar item shows it (see `SettledView`). */
const STATUS_SETTLE_MS = 150;

let server: Server | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const log = vscode.window.createOutputChannel("Verbatim", { log: true });
    const traceLog = vscode.window.createOutputChannel("Verbatim LSP Trace", { log: true });
    server = new Server(context, log, traceLog);
    const current = server;
    context.subscriptions.push(log, traceLog, current);

    const statusItem = vscode.window.createStatusBarItem("verbatim.status", vscode.StatusBarAlignment.Right, 100);
    statusItem.name = "Verbatim";
    statusItem.command = "verbatim.showAgents";
    const shownStatus = new SettledView<StatusBarView>(
        STATUS_SETTLE_MS,
        (view) => {
            statusItem.text = view.text;
            statusItem.tooltip = view.tooltip;
            statusItem.backgroundColor =
                view.highlight === "none" ? undefined : new vscode.ThemeColor(`statusBarItem.${view.highlight}Background`);
            statusItem.show();
        },
        sameStatusBarView,
    );
    const renderStatus = (): void => shownStatus.update(statusBarView(current.state, current.reviewMode, current.claudeCodeEndpoint));
    renderStatus();
    shownStatus.flush();
    context.subscriptions.push(statusItem, shownStatus, current.onDidChangeState(renderStatus));

    context.subscriptions.push(new TimelineView(current, log, () => current.config()));

    context.subscriptions.push(
        vscode.commands.registerCommand("verbatim.restartServer", () => current.restart()),
        vscode.commands.registerCommand("verbatim.showLog", () => current.log.show(true)),
        vscode.commands.registerCommand("verbatim.showAgents", () => showAgents(current)),
        vscode.commands.registerCommand("verbatim.toggleAutoApply", () => toggleAutoApply(current)),
        vscode.commands.registerCommand("verbatim.copyConnectionInfo", () => copyConnectionInfo(current)),
        vscode.workspace.onDidChangeConfiguration((event) => onConfigurationChanged(current, event)),
        vscode.workspace.onDidGrantWorkspaceTrust(() => onWorkspaceTrusted(current)),
    );

    await current.start();
}

/** The one owner of shutdown: VS Code awaits this before it disposes `context.subscriptions`. */
export async function deactivate(): Promise<void> {
    await server?.shutdown();
    server = undefined;
}

async function showAgents(server: Server): Promise<void> {
    if (server.state.kind === "failed") {
        server.log.show(true);
        return;
    }
    const status = await server.refreshStatus();
    if (status === undefined) {
        const restart = "Restart Server";
        const choice = await vscode.window.showWarningMessage("Verbatim: the server is not running.", restart, "Show Log");
        if (choice === restart) await server.restart();
        else if (choice !== undefined) server.log.show(true);
        return;
    }
    type Item = vscode.QuickPickItem & { action?: () => unknown };
    const entries = agentListItems(status);
    const items: Item[] = [];
    const agents = entries.filter((entry) => entry.kind === "agent");
    const pending = entries.filter((entry) => entry.kind === "pending");
    items.push({ label: "Connected agents", kind: vscode.QuickPickItemKind.Separator });
    if (agents.length === 0) items.push({ label: "$(info) No agent is connected", description: "agents connect through the socket below" });
    items.push(...agents.map((entry) => ({ label: `$(hubot) ${entry.label}`, description: entry.description, detail: entry.detail })));
    if (pending.length > 0) {
        items.push({ label: "Waiting for review", kind: vscode.QuickPickItemKind.Separator });
        items.push(
            ...pending.map((entry) => ({
                label: `$(diff) ${entry.label}`,
                description: entry.description,
                detail: entry.detail,
                action: () =>
                    vscode.commands.executeCommand(server.config().reviewUi === "inline" ? "verbatim.review.showQueue" : "refactorPreview.focus"),
            })),
        );
    }
    items.push({ label: "", kind: vscode.QuickPickItemKind.Separator });
    items.push({
        label: "$(copy) Copy Agent Connection Info",
        description: status.socket,
        action: () => copyConnectionInfo(server),
    });
    items.push({
        label: server.reviewMode === "confirm" ? "$(check-all) Auto-Apply Agent Edits for This Session" : "$(eye) Review Agent Edits Again",
        action: () => toggleAutoApply(server),
    });
    const choice = await vscode.window.showQuickPick(items, { title: "Verbatim", placeHolder: "Agents and edits waiting for review" });
    await choice?.action?.();
}

function toggleAutoApply(server: Server): void {
    const mode = toggled(server.reviewMode);
    server.setSessionReviewMode(mode);
    server.log.info(`Review mode for this session: ${mode}.`);
    const message =
        mode === "auto"
            ? "Verbatim: agent edits are now applied at once, each as one undo step (this window only, until you toggle again or reload)."
            : "Verbatim: every agent edit waits for your review again.";
    void vscode.window.showInformationMessage(message);
}

async function copyConnectionInfo(server: Server): Promise<void> {
    const status = await server.refreshStatus();
    if (status === undefined) {
        void vscode.window.showWarningMessage("Verbatim: the server is not running, so there is no socket to connect to.");
        return;
    }
    await vscode.env.clipboard.writeText(status.socket);
    void vscode.window.showInformationMessage(
        `Verbatim: copied the agent socket path ${status.socket}. Agents can also find it in the discovery file ${status.discoveryFile}.`,
    );
}

async function onConfigurationChanged(server: Server, event: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!event.affectsConfiguration(SECTION)) return;
    if (event.affectsConfiguration(`${SECTION}.reviewMode`)) {
        // The setting wins over an earlier toggle; it applies to the next edit.
        server.setSessionReviewMode(undefined);
        server.log.info(`[settings] verbatim.reviewMode is ${server.config().reviewMode}: it applies to the next edit.`);
    }
    if (event.affectsConfiguration(`${SECTION}.review.ui`)) {
        server.log.info(`[settings] verbatim.review.ui is ${server.config().reviewUi}: it applies to the next edit.`);
    }
    if (!needsRestart((key) => event.affectsConfiguration(key))) return;
    await restartOrOffer(server, "Verbatim: the new setting takes effect when the server restarts. Connected agents will have to reconnect.");
}

/** In a workspace trusted only now, the `verbatim.server.path` setting starts to count. */
async function onWorkspaceTrusted(server: Server): Promise<void> {
    if (server.config().serverPath === undefined) return;
    server.log.info("The workspace is now trusted, so the verbatim.server.path setting is used from the next start.");
    await restartOrOffer(
        server,
        "Verbatim: the workspace is trusted now, so the server from the verbatim.server.path setting runs once the server restarts. Connected agents will have to reconnect.",
    );
}

/** Restarts at once when nothing runs that a restart could disturb (the change may be the fix); else asks first. */
async function restartOrOffer(server: Server, message: string): Promise<void> {
    if (server.state.kind === "failed" || server.state.kind === "stopped") {
        await server.restart();
        return;
    }
    const restart = "Restart Server";
    const choice = await vscode.window.showInformationMessage(message, restart);
    if (choice === restart) await server.restart();
}
