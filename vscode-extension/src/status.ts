/**
 * What the status bar item and the "connected agents" list say, computed from
 * the server's `verbatim/status` result. Pure functions, no `vscode`.
 */

import { endpointTooltip, type ClaudeCodeEndpoint } from "./claude_code";
import type { AgentInfo, PendingEdit, StatusResult } from "./lsp_ext";
import type { ReviewMode } from "./config";

/** Where the language client is. */
export type ServerState =
    | { kind: "starting" }
    | { kind: "running"; status: StatusResult | undefined }
    | { kind: "stopped" }
    | { kind: "failed"; message: string };

export interface StatusBarView {
    text: string;
    tooltip: string;
    /** Show the item in the warning colour (something waits for the person, or something broke). */
    highlight: "none" | "warning" | "error";
}

export function plural(count: number, noun: string): string {
    return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/** `claudeCode`: the endpoint Claude Code connects to, while the server serves one. */
export function statusBarView(state: ServerState, reviewMode: ReviewMode, claudeCode?: ClaudeCodeEndpoint): StatusBarView {
    const modeLine =
        reviewMode === "confirm"
            ? "Review mode: confirm (each agent edit waits for your review)"
            : "Review mode: auto-apply (agent edits are applied at once)";
    const autoSuffix = reviewMode === "auto" ? " (auto-apply)" : "";
    switch (state.kind) {
        case "starting":
            return { text: "$(loading~spin) Verbatim", tooltip: "Verbatim: starting the server…", highlight: "none" };
        case "stopped":
            return { text: "$(debug-disconnect) Verbatim", tooltip: "Verbatim: the server is stopped. Click to see why.", highlight: "none" };
        case "failed":
            return { text: "$(error) Verbatim", tooltip: `Verbatim: ${state.message}`, highlight: "error" };
        case "running": {
            const status = state.status;
            const claudeCodeLine = endpointTooltip(claudeCode);
            if (status === undefined) {
                const tooltip = ["Verbatim: server running", modeLine, ...(claudeCodeLine === undefined ? [] : [claudeCodeLine])].join("\n");
                return { text: `$(plug) Verbatim${autoSuffix}`, tooltip, highlight: "none" };
            }
            const agents = status.agents.length;
            const pending = status.pending.length;
            const parts = [plural(agents, "agent")];
            if (pending > 0) parts.push(`${pending} pending`);
            const icon = pending > 0 ? "$(bell-dot)" : agents > 0 ? "$(hubot)" : "$(plug)";
            const text = agents === 0 && pending === 0 ? `${icon} Verbatim${autoSuffix}` : `${icon} Verbatim: ${parts.join(", ")}${autoSuffix}`;
            const tooltip = [
                `Verbatim: ${plural(agents, "agent")} connected, ${plural(pending, "edit")} waiting for review`,
                modeLine,
                `Agent socket: ${status.socket}`,
                ...(claudeCodeLine === undefined ? [] : [claudeCodeLine]),
                "Click to show the connected agents.",
            ].join("\n");
            return { text, tooltip, highlight: pending > 0 && reviewMode === "confirm" ? "warning" : "none" };
        }
    }
}

/**
 * Shows a view once it has held still, and only when it differs from the one
 * shown. Each agent edit brings two status notifications (pending, then done);
 * in auto mode the edit is applied within milliseconds, so rendering each
 * would make the status bar item flicker and, worse, send the workbench two
 * status bar updates per edit while it is applying that edit. Edits waiting
 * for review last far longer than `settleMs` and still show.
 */
export class SettledView<View> {
    private latest: View | undefined;
    private shown: View | undefined;
    private timer: ReturnType<typeof setTimeout> | undefined;

    constructor(
        private readonly settleMs: number,
        private readonly show: (view: View) => void,
        private readonly same: (a: View, b: View) => boolean,
    ) {}

    /** Offers the newest view; it is shown after `settleMs` unless a newer one comes first. */
    update(view: View): void {
        this.latest = view;
        if (this.timer !== undefined) clearTimeout(this.timer);
        this.timer = setTimeout(() => this.flush(), this.settleMs);
    }

    /** Shows the newest view now (if it differs from the one shown). */
    flush(): void {
        if (this.timer !== undefined) clearTimeout(this.timer);
        this.timer = undefined;
        const view = this.latest;
        if (view === undefined || (this.shown !== undefined && this.same(this.shown, view))) return;
        this.shown = view;
        this.show(view);
    }

    dispose(): void {
        if (this.timer !== undefined) clearTimeout(this.timer);
        this.timer = undefined;
    }
}

export function sameStatusBarView(a: StatusBarView, b: StatusBarView): boolean {
    return a.text === b.text && a.tooltip === b.tooltip && a.highlight === b.highlight;
}

export interface AgentListItem {
    label: string;
    description: string;
    detail: string;
    kind: "agent" | "pending";
}

/** One line per connected agent, then one per edit that waits for review. */
export function agentListItems(status: StatusResult, now: Date = new Date()): AgentListItem[] {
    const agents = status.agents.map((agent: AgentInfo): AgentListItem => ({
        kind: "agent",
        label: agent.version ? `${agent.name} ${agent.version}` : agent.name,
        description: `connected ${since(agent.connectedAt, now)}`,
        detail: agent.pendingEdits > 0 ? `${plural(agent.pendingEdits, "edit")} waiting for review` : "no edit waiting",
    }));
    const pending = status.pending.map((edit: PendingEdit): AgentListItem => ({
        kind: "pending",
        label: `${edit.agent}: ${edit.summary}`,
        description: `waiting ${since(edit.since, now).replace(/ ago$/, "")}`,
        detail: edit.uris.map(displayUri).join(", "),
    }));
    return [...agents, ...pending];
}

/** "just now", "42s ago", "5m ago", "3h ago"; the raw text when it is not a date. */
export function since(timestamp: string, now: Date): string {
    const then = Date.parse(timestamp);
    if (Number.isNaN(then)) return timestamp;
    const seconds = Math.max(0, Math.round((now.getTime() - then) / 1000));
    if (seconds < 5) return "just now";
    if (seconds < 60) return `${seconds}s ago`;
    const minutes = Math.floor(seconds / 60);
    if (minutes < 60) return `${minutes}m ago`;
    return `${Math.floor(minutes / 60)}h ago`;
}

/** A `file:` URI as a path, anything else as it is. */
export function displayUri(uri: string): string {
    if (!uri.startsWith("file://")) return uri;
    try {
        return decodeURIComponent(new URL(uri).pathname);
    } catch {
        return uri;
    }
}
