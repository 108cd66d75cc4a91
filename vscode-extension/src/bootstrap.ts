/**
 * Finds the `verbatim` binary, in a fixed order that is written to the log:
 *
 * 1. the `verbatim.server.path` setting (when set, it is the only candidate:
 *    the person asked for that binary, so a broken one is an error, not a
 *    reason to silently run another), but only in a trusted workspace: a
 *    repository's `.vscode/settings.json` can name any program, and the
 *    extension runs what it finds (`--version` at once, `lsp` after);
 * 2. the binary bundled in the extension (`server/verbatim`);
 * 3. the first `verbatim` on `PATH`.
 *
 * Each candidate is checked by running it with `--version`. This module does
 * not depend on `vscode`; the file system and process calls go through
 * {@link BootstrapHost} so that tests can replace them.
 */

import { execFile } from "node:child_process";
import { constants as fsConstants, promises as fs } from "node:fs";
import * as path from "node:path";

import { errorMessage } from "./errors";

export type ServerSource = "setting" | "bundled" | "PATH";

export interface FoundServer {
    path: string;
    /** The first line `verbatim --version` printed, e.g. `verbatim 0.1.0`. */
    version: string;
    source: ServerSource;
}

export interface BootstrapHost {
    isExecutableFile(file: string): Promise<boolean>;
    /** Runs `file --version` and resolves with its standard output; rejects when it fails. */
    runVersion(file: string): Promise<string>;
    log(line: string): void;
}

export interface FindServerOptions {
    configuredPath: string | undefined;
    /**
     * Whether VS Code trusts the workspace. When it does not, `configuredPath`
     * is ignored, wherever it was set: only the bundled binary and `PATH` are
     * looked at.
     */
    workspaceTrusted: boolean;
    /** Where the extension bundles a binary: `<extension>/server/verbatim[.exe]`. */
    bundledPath: string;
    /** The `PATH` environment variable. */
    pathEnv: string | undefined;
    platform: NodeJS.Platform;
}

/** Raised when no usable server exists; `message` says what to do. */
export class ServerNotFoundError extends Error {
    override name = "ServerNotFoundError";
}

export const INSTALL_HINT =
    "Install Verbatim so that `verbatim` is on your PATH (from the Verbatim repository: `cargo install --path server`), " +
    "or set the `verbatim.server.path` setting to the binary.";

export function binaryName(platform: NodeJS.Platform): string {
    return platform === "win32" ? "verbatim.exe" : "verbatim";
}

export function bundledServerPath(extensionPath: string, platform: NodeJS.Platform): string {
    return path.join(extensionPath, "server", binaryName(platform));
}

export async function findServer(options: FindServerOptions, host: BootstrapHost): Promise<FoundServer> {
    const ignoredPath = options.workspaceTrusted ? undefined : options.configuredPath;
    if (options.workspaceTrusted) {
        host.log("Looking for the verbatim server: the verbatim.server.path setting, then the bundled binary, then PATH.");
    } else {
        host.log(
            "Looking for the verbatim server: this workspace is not trusted, so only the bundled binary, then PATH " +
                "(the verbatim.server.path setting is not used, since a workspace's settings could name any program).",
        );
    }

    if (options.configuredPath !== undefined && options.workspaceTrusted) {
        const file = options.configuredPath;
        if (!(await host.isExecutableFile(file))) {
            throw new ServerNotFoundError(
                `The verbatim.server.path setting is "${file}", which is not an executable file. ` +
                    "Fix the setting, or clear it to use the bundled binary or the one on PATH.",
            );
        }
        const version = await checkVersion(file, host);
        if (version === undefined) {
            throw new ServerNotFoundError(
                `The verbatim.server.path setting is "${file}", but \`${file} --version\` failed (see the Verbatim log). ` +
                    "Point the setting at a working verbatim binary, or clear it.",
            );
        }
        host.log(`Using ${file} (${version}) from the verbatim.server.path setting.`);
        return { path: file, version, source: "setting" };
    }
    if (ignoredPath !== undefined) {
        host.log(`  1. verbatim.server.path: "${ignoredPath}" is ignored and not run: the workspace is not trusted`);
    } else {
        host.log("  1. verbatim.server.path: not set");
    }

    const bundled = options.bundledPath;
    if (await host.isExecutableFile(bundled)) {
        const version = await checkVersion(bundled, host);
        if (version !== undefined) {
            host.log(`Using the bundled ${bundled} (${version}).`);
            return { path: bundled, version, source: "bundled" };
        }
        host.log(`  2. bundled ${bundled}: present but --version failed, skipping it`);
    } else {
        host.log(`  2. bundled ${bundled}: not present`);
    }

    const onPath = await searchPath(binaryName(options.platform), options.pathEnv, options.platform, host);
    if (onPath !== undefined) {
        const version = await checkVersion(onPath, host);
        if (version !== undefined) {
            host.log(`Using ${onPath} (${version}) from PATH.`);
            return { path: onPath, version, source: "PATH" };
        }
        host.log(`  3. PATH: ${onPath} --version failed`);
    } else {
        host.log("  3. PATH: no verbatim found");
    }

    if (ignoredPath !== undefined) {
        throw new ServerNotFoundError(
            `Verbatim could not find its server. The verbatim.server.path setting ("${ignoredPath}") is not used ` +
                "because this workspace is not trusted: trust the workspace to use it, or install Verbatim so that " +
                "`verbatim` is on your PATH.",
        );
    }
    throw new ServerNotFoundError(`Verbatim could not find its server. ${INSTALL_HINT}`);
}

/** The first executable `name` in the directories of `pathEnv`. */
export async function searchPath(
    name: string,
    pathEnv: string | undefined,
    platform: NodeJS.Platform,
    host: Pick<BootstrapHost, "isExecutableFile">,
): Promise<string | undefined> {
    if (!pathEnv) return undefined;
    const separator = platform === "win32" ? ";" : ":";
    for (const dir of pathEnv.split(separator)) {
        if (dir === "") continue;
        const candidate = path.join(dir, name);
        if (await host.isExecutableFile(candidate)) return candidate;
    }
    return undefined;
}

/** Runs `--version`; the first line of its output when it looks like Verbatim's, else `undefined`. */
async function checkVersion(file: string, host: BootstrapHost): Promise<string | undefined> {
    let output: string;
    try {
        output = await host.runVersion(file);
    } catch (error) {
        host.log(`  \`${file} --version\` failed: ${errorMessage(error)}`);
        return undefined;
    }
    const firstLine = output.trim().split(/\r?\n/)[0] ?? "";
    if (!/^verbatim\b/i.test(firstLine)) {
        host.log(`  \`${file} --version\` printed ${JSON.stringify(firstLine)}, which is not Verbatim's version`);
        return undefined;
    }
    return firstLine;
}

/** The real file system and processes. */
export function nodeBootstrapHost(log: (line: string) => void): BootstrapHost {
    return {
        async isExecutableFile(file) {
            try {
                const stat = await fs.stat(file);
                if (!stat.isFile()) return false;
                await fs.access(file, fsConstants.X_OK);
                return true;
            } catch {
                return false;
            }
        },
        runVersion(file) {
            return new Promise((resolve, reject) => {
                execFile(file, ["--version"], { timeout: 10_000, windowsHide: true }, (error, stdout) => {
                    if (error) reject(error);
                    else resolve(stdout);
                });
            });
        },
        log,
    };
}
