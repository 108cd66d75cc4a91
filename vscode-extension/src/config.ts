/**
 * The extension's settings, read through a getter so that this module does not
 * depend on `vscode` and can be unit-tested. Every value is validated: a
 * setting of the wrong type falls back to its default and is reported.
 */

import type { ExternalChanges, InitializationOptions } from "./lsp_ext";

export type { ExternalChanges };
export type ReviewMode = "confirm" | "auto";
export type LogLevel = "error" | "warn" | "info" | "debug" | "trace";
/** Where an edit is reviewed: in the editor, hunk by hunk, or in VS Code's Refactor Preview. */
export type ReviewUi = "inline" | "refactorPreview";

export const REVIEW_MODES: readonly ReviewMode[] = ["confirm", "auto"];
export const REVIEW_UIS: readonly ReviewUi[] = ["inline", "refactorPreview"];
export const LOG_LEVELS: readonly LogLevel[] = ["error", "warn", "info", "debug", "trace"];
export const EXTERNAL_CHANGES: readonly ExternalChanges[] = ["review", "auto", "off"];

/** The section all settings live under. */
export const SECTION = "verbatim";

export interface Config {
    /** `verbatim.server.path`: an explicit binary, `~` expanded; `undefined` when unset or empty. */
    serverPath: string | undefined;
    /** `verbatim.reviewMode`. */
    reviewMode: ReviewMode;
    /** `verbatim.review.ui`. */
    reviewUi: ReviewUi;
    /** `verbatim.logLevel`, passed to the server as `VERBATIM_LOG`. */
    logLevel: LogLevel;
    /** `verbatim.externalChanges`, passed to the server in `initializationOptions`. */
    externalChanges: ExternalChanges;
    /** `verbatim.claudeCode.enabled`: the server serves Claude Code's IDE protocol (`initializationOptions.claudeCode`). */
    claudeCode: boolean;
    /** `verbatim.geminiCli.enabled`: the server serves Gemini CLI's and Qwen Code's IDE companion interface (`initializationOptions.geminiCli`). */
    geminiCli: boolean;
    /** `verbatim.timeline.maxSessions`: the `limit` of the timeline view's `verbatim/timeline`. */
    timelineMaxSessions: number;
    /** `verbatim.timeline.maxEdits`: the timeline view's first `maxEdits` (it doubles with each Load Older Changes). */
    timelineMaxEdits: number;
}

export const DEFAULT_CONFIG: Config = {
    serverPath: undefined,
    reviewMode: "confirm",
    reviewUi: "inline",
    logLevel: "info",
    externalChanges: "review",
    claudeCode: true,
    geminiCli: true,
    timelineMaxSessions: 200,
    timelineMaxEdits: 500,
};

/** Settings whose change only takes effect when the server restarts. */
export const RESTART_SETTINGS = ["server.path", "logLevel", "externalChanges", "claudeCode.enabled", "geminiCli.enabled"] as const;

export interface ReadConfigResult {
    config: Config;
    /** One sentence per setting that had an invalid value and was ignored. */
    problems: string[];
}

/**
 * Reads the settings. `get` returns the raw value of a key relative to
 * `verbatim.` (for example `"server.path"`), or `undefined`.
 */
export function readConfig(get: (key: string) => unknown, homeDir?: string): ReadConfigResult {
    const problems: string[] = [];

    const oneOf = <T extends string>(key: string, allowed: readonly T[], fallback: T): T => {
        const value = get(key);
        if (value === undefined || value === null) return fallback;
        if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
        problems.push(
            `\`${SECTION}.${key}\` is ${JSON.stringify(value)}; expected one of ${allowed.map((a) => `"${a}"`).join(", ")}. Using "${fallback}".`,
        );
        return fallback;
    };

    const flag = (key: string, fallback: boolean): boolean => {
        const value = get(key);
        if (value === undefined || value === null) return fallback;
        if (typeof value === "boolean") return value;
        problems.push(`\`${SECTION}.${key}\` is ${JSON.stringify(value)}; expected true or false. Using ${fallback}.`);
        return fallback;
    };

    const positiveInteger = (key: string, fallback: number): number => {
        const value = get(key);
        if (value === undefined || value === null) return fallback;
        if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
        problems.push(`\`${SECTION}.${key}\` is ${JSON.stringify(value)}; expected a whole number above 0. Using ${fallback}.`);
        return fallback;
    };

    let serverPath: string | undefined;
    const rawPath = get("server.path");
    if (typeof rawPath === "string") {
        const trimmed = rawPath.trim();
        serverPath = trimmed === "" ? undefined : expandHome(trimmed, homeDir);
    } else if (rawPath !== undefined && rawPath !== null) {
        problems.push(`\`${SECTION}.server.path\` must be a string; ignoring ${JSON.stringify(rawPath)}.`);
    }

    return {
        config: {
            serverPath,
            reviewMode: oneOf("reviewMode", REVIEW_MODES, DEFAULT_CONFIG.reviewMode),
            reviewUi: oneOf("review.ui", REVIEW_UIS, DEFAULT_CONFIG.reviewUi),
            logLevel: oneOf("logLevel", LOG_LEVELS, DEFAULT_CONFIG.logLevel),
            externalChanges: oneOf("externalChanges", EXTERNAL_CHANGES, DEFAULT_CONFIG.externalChanges),
            claudeCode: flag("claudeCode.enabled", DEFAULT_CONFIG.claudeCode),
            geminiCli: flag("geminiCli.enabled", DEFAULT_CONFIG.geminiCli),
            timelineMaxSessions: positiveInteger("timeline.maxSessions", DEFAULT_CONFIG.timelineMaxSessions),
            timelineMaxEdits: positiveInteger("timeline.maxEdits", DEFAULT_CONFIG.timelineMaxEdits),
        },
        problems,
    };
}

/** Expands a leading `~` or `~/` to the home directory, when one is known. */
export function expandHome(path: string, homeDir: string | undefined): string {
    if (homeDir === undefined) return path;
    if (path === "~") return homeDir;
    if (path.startsWith("~/")) return homeDir.replace(/\/+$/, "") + path.slice(1);
    return path;
}

/** Whether changing `verbatim.<key>` (one of `affected`) needs a server restart. */
export function needsRestart(affected: (key: string) => boolean): boolean {
    return RESTART_SETTINGS.some((key) => affected(`${SECTION}.${key}`));
}

/** The `initializationOptions` the extension sends to the server (it always answers `verbatim/diagnostics`). */
export function initializationOptions(
    reviewMode: ReviewMode,
    config: Pick<Config, "externalChanges" | "reviewUi" | "claudeCode"> & Partial<Pick<Config, "geminiCli">>,
): Required<Pick<InitializationOptions, "needsConfirmation" | "statusNotifications" | "externalChanges" | "diagnostics" | "hunkOutcomes" | "claudeCode" | "geminiCli" | "verbatimExtensions">> {
    // The in-editor review answers with the hunks it kept; the Refactor Preview does not, and the server copes.
    // (Informational only: the server reads `hunks` from any answer that has it, so changing the setting needs no restart.)
    return {
        needsConfirmation: reviewMode === "confirm",
        statusNotifications: true,
        externalChanges: config.externalChanges,
        diagnostics: true,
        hunkOutcomes: config.reviewUi === "inline",
        claudeCode: config.claudeCode,
        geminiCli: config.geminiCli ?? DEFAULT_CONFIG.geminiCli,
        // The extension reads `verbatim` in workspace/applyEdit params and verbatim/externalChange.
        verbatimExtensions: true,
    };
}

/** The environment of the server process: the extension host's, plus the log level. */
export function serverEnvironment(base: NodeJS.ProcessEnv, logLevel: LogLevel): NodeJS.ProcessEnv {
    return { ...base, VERBATIM_LOG: logLevel };
}
