/**
 * The server logs through `tracing` to its stderr, one event a line, e.g.
 * `2026-11-30T09:12:44.123Z  WARN verbatim::agent: agent went away`. VS Code's
 * log channel has its own timestamps and levels, so each line is sent at the
 * level it names; a line that names none (a panic message, a continuation)
 * stays at `info`.
 */

import type { LogLevel } from "./config";

const ANSI_ESCAPE = /\u001b\[[0-9;]*m/g;
const LEVEL = /^(?:\d{4}-\d\d-\d\d\S*\s+)?(ERROR|WARN|INFO|DEBUG|TRACE)\s+(.*)$/;

export interface ServerLogLine {
    level: LogLevel;
    /** The line without colour codes, timestamp and level. */
    message: string;
}

export function parseServerLogLine(line: string): ServerLogLine {
    const plain = line.replace(ANSI_ESCAPE, "").trimEnd();
    const match = LEVEL.exec(plain.trimStart());
    if (match === null) return { level: "info", message: plain };
    return { level: (match[1] ?? "INFO").toLowerCase() as LogLevel, message: match[2] ?? "" };
}
