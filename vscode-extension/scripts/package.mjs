// `npm run package`: a platform package with the server inside it.
//
// Builds the release server (`cargo build --release -p verbatim`, a no-op when
// it is up to date), copies it to `server/verbatim` (`verbatim.exe` on
// Windows) with its debug info stripped, and runs
// `vsce package --target <platform>`, which writes `dist/verbatim.vsix` (the
// file install.sh installs). The extension finds the bundled binary
// when the `verbatim.server.path` setting is not set (src/bootstrap.ts).
// `server/` is removed afterwards, so that a package made without a binary
// (`npm run package:universal`, which the tests install) never picks up a
// stale one.
//
// Options:
//   --target T      the vsce target (default: this machine's, e.g. linux-x64,
//                   linux-arm64, darwin-arm64; alpine-* on musl); also
//                   VERBATIM_VSCE_TARGET
//   --server PATH   bundle this binary instead of building one (needed for a
//                   target other than this machine's); also VERBATIM_SERVER_BIN
//   --out FILE      where the package goes (default dist/verbatim.vsix)
//   --no-strip      keep the binary's debug info

import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const extensionDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const repo = path.resolve(extensionDir, "..");

function log(line) {
    process.stderr.write(`[package] ${line}\n`);
}

/** Stops the script with `message`: thrown, so that `server/` is still removed. */
function fail(message) {
    throw new PackageError(message);
}

class PackageError extends Error {}

function option(name, environment) {
    const index = process.argv.indexOf(name);
    if (index >= 0) {
        const value = process.argv[index + 1];
        if (value === undefined || value.startsWith("--")) fail(`${name} needs a value`);
        return value;
    }
    return process.env[environment] || undefined;
}

/** Whether this Linux uses musl (Alpine): its Node reports no glibc version. */
function isMusl() {
    return process.platform === "linux" && !process.report?.getReport()?.header?.glibcVersionRuntime;
}

/** The vsce target of this machine. */
function hostTarget() {
    const arch = { x64: "x64", arm64: "arm64", arm: "armhf" }[process.arch];
    const platform = { linux: isMusl() ? "alpine" : "linux", darwin: "darwin", win32: "win32" }[process.platform];
    if (!arch || !platform) fail(`no vsce target for ${process.platform}-${process.arch}: pass --target`);
    return `${platform}-${arch}`;
}

try {
    packageWithServer();
} catch (error) {
    if (!(error instanceof PackageError)) throw error;
    log(error.message);
    process.exitCode = 1;
}

function packageWithServer() {
    const host = hostTarget();
    const target = option("--target", "VERBATIM_VSCE_TARGET") ?? host;
    const windows = target.startsWith("win32-");
    const binaryName = windows ? "verbatim.exe" : "verbatim";

    let source = option("--server", "VERBATIM_SERVER_BIN");
    if (source === undefined) {
        if (target !== host) fail(`the target ${target} is not this machine's (${host}): build the server for it and pass --server PATH`);
        log("cargo build --release -p verbatim");
        const build = spawnSync("cargo", ["build", "--release", "--locked", "-p", "verbatim"], { cwd: repo, stdio: "inherit" });
        if (build.status !== 0) fail("cargo build failed");
        const targetDir = process.env.CARGO_TARGET_DIR ? path.resolve(repo, process.env.CARGO_TARGET_DIR) : path.join(repo, "target");
        source = path.join(targetDir, "release", binaryName);
    }
    if (!existsSync(source)) fail(`no server binary at ${source}`);

    const serverDir = path.join(extensionDir, "server");
    const bundled = path.join(serverDir, binaryName);
    rmSync(serverDir, { recursive: true, force: true });
    mkdirSync(serverDir, { recursive: true });
    try {
        copyFileSync(source, bundled);
        chmodSync(bundled, 0o755);
        if (!process.argv.includes("--no-strip") && !windows) {
            // -S (debug info only) means the same to GNU and to Apple strip; the
            // symbol table stays, so a panic's backtrace still names functions.
            const strip = spawnSync("strip", ["-S", bundled], { stdio: "inherit" });
            if (strip.error || strip.status !== 0) log("strip failed or is missing: the binary keeps its debug info");
        }
        const size = (statSync(bundled).size / 1024 / 1024).toFixed(1);
        log(`bundling ${source} as server/${binaryName} (${size} MiB)`);
        if (target === host) {
            const version = execFileSync(bundled, ["--version"], { encoding: "utf8" }).trim();
            log(`server/${binaryName} --version: ${version}`);
        }
        const output = option("--out", "VERBATIM_VSIX") ?? path.join("dist", "verbatim.vsix");
        const vsce = spawnSync(
            path.join(extensionDir, "node_modules", ".bin", process.platform === "win32" ? "vsce.cmd" : "vsce"),
            ["package", "--target", target, "--no-dependencies", "--allow-missing-repository", "--skip-license", "--no-rewrite-relative-links", "-o", output],
            { cwd: extensionDir, stdio: "inherit" },
        );
        if (vsce.status !== 0) fail("vsce package failed");
        log(`wrote ${path.resolve(extensionDir, output)} (${target})`);
    } finally {
        rmSync(serverDir, { recursive: true, force: true });
    }
}
