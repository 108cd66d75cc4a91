import * as assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, describe, test } from "node:test";

import { bundledServerPath, findServer, nodeBootstrapHost, searchPath, ServerNotFoundError, type BootstrapHost } from "../../src/bootstrap";

/** A fake file system: `files` maps an executable path to what its `--version` prints (or `Error` when it fails). */
function fakeHost(files: Record<string, string | Error>): BootstrapHost & { lines: string[] } {
    const lines: string[] = [];
    return {
        lines,
        isExecutableFile: async (file) => file in files,
        runVersion: async (file) => {
            const output = files[file];
            if (output === undefined) throw new Error(`ENOENT ${file}`);
            if (output instanceof Error) throw output;
            return output;
        },
        log: (line) => lines.push(line),
    };
}

const base = { bundledPath: "/ext/server/verbatim", pathEnv: "/usr/local/bin:/usr/bin", platform: "linux" as const, workspaceTrusted: true };

/** A host that records every file it was asked about or ran. */
function recordingHost(files: Record<string, string | Error>): ReturnType<typeof fakeHost> & { touched: string[] } {
    const host = fakeHost(files);
    const touched: string[] = [];
    return {
        ...host,
        touched,
        isExecutableFile: (file) => (touched.push(file), host.isExecutableFile(file)),
        runVersion: (file) => (touched.push(file), host.runVersion(file)),
    };
}

describe("findServer", () => {
    test("the setting wins over the bundled binary and PATH", async () => {
        const host = fakeHost({
            "/opt/verbatim": "verbatim 0.2.0\n",
            "/ext/server/verbatim": "verbatim 0.1.0\n",
            "/usr/bin/verbatim": "verbatim 0.1.0\n",
        });
        const found = await findServer({ ...base, configuredPath: "/opt/verbatim" }, host);
        assert.deepEqual(found, { path: "/opt/verbatim", version: "verbatim 0.2.0", source: "setting" });
        assert.match(host.lines.at(-1) ?? "", /Using \/opt\/verbatim \(verbatim 0\.2\.0\) from the verbatim\.server\.path setting/);
    });

    test("a broken setting is an error, not a silent fallback", async () => {
        const host = fakeHost({ "/usr/bin/verbatim": "verbatim 0.1.0" });
        await assert.rejects(findServer({ ...base, configuredPath: "/nope/verbatim" }, host), (error: unknown) => {
            assert.ok(error instanceof ServerNotFoundError);
            assert.match(error.message, /verbatim\.server\.path setting is "\/nope\/verbatim", which is not an executable file/);
            return true;
        });
    });

    test("a setting whose --version fails is an error", async () => {
        const host = fakeHost({ "/opt/verbatim": new Error("exit 1"), "/usr/bin/verbatim": "verbatim 0.1.0" });
        await assert.rejects(findServer({ ...base, configuredPath: "/opt/verbatim" }, host), /--version` failed/);
        assert.ok(host.lines.some((line) => line.includes("exit 1")));
    });

    test("the bundled binary comes before PATH", async () => {
        const host = fakeHost({ "/ext/server/verbatim": "verbatim 0.1.0", "/usr/bin/verbatim": "verbatim 0.0.9" });
        const found = await findServer({ ...base, configuredPath: undefined }, host);
        assert.equal(found.source, "bundled");
        assert.equal(found.path, "/ext/server/verbatim");
    });

    test("PATH is searched in order when nothing else is there", async () => {
        const host = fakeHost({ "/usr/local/bin/verbatim": "verbatim 0.1.0", "/usr/bin/verbatim": "verbatim 0.0.9" });
        const found = await findServer({ ...base, configuredPath: undefined }, host);
        assert.deepEqual(found, { path: "/usr/local/bin/verbatim", version: "verbatim 0.1.0", source: "PATH" });
        assert.deepEqual(host.lines.slice(0, 3), [
            "Looking for the verbatim server: the verbatim.server.path setting, then the bundled binary, then PATH.",
            "  1. verbatim.server.path: not set",
            "  2. bundled /ext/server/verbatim: not present",
        ]);
    });

    test("a bundled binary that fails --version is skipped", async () => {
        const host = fakeHost({ "/ext/server/verbatim": new Error("wrong architecture"), "/usr/bin/verbatim": "verbatim 0.1.0" });
        const found = await findServer({ ...base, configuredPath: undefined }, host);
        assert.equal(found.source, "PATH");
        assert.ok(host.lines.some((line) => line.includes("present but --version failed")));
    });

    test("a binary that is not Verbatim is not taken", async () => {
        const host = fakeHost({ "/usr/bin/verbatim": "something else 1.0" });
        await assert.rejects(findServer({ ...base, configuredPath: undefined }, host), ServerNotFoundError);
    });

    test("nothing found says what to do", async () => {
        const host = fakeHost({});
        await assert.rejects(findServer({ ...base, configuredPath: undefined, pathEnv: undefined }, host), (error: unknown) => {
            assert.ok(error instanceof ServerNotFoundError);
            assert.match(error.message, /could not find its server/);
            assert.match(error.message, /cargo install --path server/);
            assert.match(error.message, /verbatim\.server\.path/);
            return true;
        });
    });
});

describe("findServer in an untrusted workspace", () => {
    const untrusted = { ...base, workspaceTrusted: false };

    test("the setting is never looked at nor run: the bundled binary is used, and the log says why", async () => {
        const host = recordingHost({ "/repo/evil.sh": "verbatim 6.6.6", "/ext/server/verbatim": "verbatim 0.1.0" });
        const found = await findServer({ ...untrusted, configuredPath: "/repo/evil.sh" }, host);
        assert.deepEqual(found, { path: "/ext/server/verbatim", version: "verbatim 0.1.0", source: "bundled" });
        assert.ok(!host.touched.includes("/repo/evil.sh"), `touched ${host.touched.join(", ")}`);
        assert.match(host.lines[0] ?? "", /not trusted/);
        assert.ok(host.lines.some((line) => /"\/repo\/evil\.sh" is ignored and not run: the workspace is not trusted/.test(line)));
    });

    test("PATH is used when nothing is bundled", async () => {
        const host = recordingHost({ "/repo/evil.sh": "verbatim 6.6.6", "/usr/bin/verbatim": "verbatim 0.1.0" });
        const found = await findServer({ ...untrusted, configuredPath: "/repo/evil.sh" }, host);
        assert.equal(found.source, "PATH");
        assert.ok(!host.touched.includes("/repo/evil.sh"));
    });

    test("nothing else found: the error says the setting is ignored until the workspace is trusted", async () => {
        const host = recordingHost({ "/repo/evil.sh": "verbatim 6.6.6" });
        await assert.rejects(findServer({ ...untrusted, configuredPath: "/repo/evil.sh", pathEnv: undefined }, host), (error: unknown) => {
            assert.ok(error instanceof ServerNotFoundError);
            assert.match(error.message, /not used because this workspace is not trusted: trust the workspace/);
            return true;
        });
        assert.ok(!host.touched.includes("/repo/evil.sh"));
    });

    test("without a setting, the search is the usual one", async () => {
        const host = recordingHost({ "/usr/bin/verbatim": "verbatim 0.1.0" });
        const found = await findServer({ ...untrusted, configuredPath: undefined }, host);
        assert.equal(found.source, "PATH");
        assert.ok(host.lines.some((line) => line === "  1. verbatim.server.path: not set"));
    });
});

describe("the bundled binary", () => {
    test("is server/verbatim inside the extension (verbatim.exe on Windows), where npm run package puts it", () => {
        assert.equal(bundledServerPath("/ext", "linux"), path.join("/ext", "server", "verbatim"));
        assert.equal(bundledServerPath("/ext", "darwin"), path.join("/ext", "server", "verbatim"));
        assert.equal(bundledServerPath("/ext", "win32"), path.join("/ext", "server", "verbatim.exe"));
    });

    test("lookup order: the setting, then the bundled binary, then PATH, each looked at only when the one before is absent", async () => {
        const setting = "/opt/verbatim";
        const bundled = base.bundledPath;
        const onPath = "/usr/local/bin/verbatim";
        const cases: { files: Record<string, string>; configuredPath: string | undefined; source: string; touched: string[] }[] = [
            { files: { [setting]: "verbatim 0.3.0", [bundled]: "verbatim 0.2.0", [onPath]: "verbatim 0.1.0" }, configuredPath: setting, source: "setting", touched: [setting, setting] },
            { files: { [bundled]: "verbatim 0.2.0", [onPath]: "verbatim 0.1.0" }, configuredPath: undefined, source: "bundled", touched: [bundled, bundled] },
            { files: { [onPath]: "verbatim 0.1.0" }, configuredPath: undefined, source: "PATH", touched: [bundled, onPath, onPath] },
        ];
        for (const { files, configuredPath, source, touched } of cases) {
            const host = recordingHost(files);
            const found = await findServer({ ...base, configuredPath }, host);
            assert.equal(found.source, source);
            assert.deepEqual(host.touched, touched, `${source}: what was looked at, in order`);
        }
    });
});

describe("searchPath", () => {
    test("skips empty entries and uses ; on Windows", async () => {
        const host = fakeHost({ "C:\\tools/verbatim.exe": "verbatim 0.1.0" });
        // path.join on a POSIX test machine joins with "/", which is what the fake file system holds.
        assert.equal(await searchPath("verbatim.exe", ";C:\\tools", "win32", host), path.join("C:\\tools", "verbatim.exe"));
        assert.equal(await searchPath("verbatim", "", "linux", host), undefined);
    });
});

describe("nodeBootstrapHost on real files", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "verbatim-bootstrap-"));
    after(() => rmSync(dir, { recursive: true, force: true }));

    test("finds an executable script on PATH and runs --version", async () => {
        const bin = path.join(dir, "bin");
        mkdirSync(bin);
        const script = path.join(bin, "verbatim");
        writeFileSync(script, '#!/bin/sh\n[ "$1" = --version ] && echo "verbatim 9.9.9" && exit 0\nexit 2\n');
        chmodSync(script, 0o755);
        writeFileSync(path.join(dir, "not-executable"), "");
        const lines: string[] = [];
        const host = nodeBootstrapHost((line) => lines.push(line));
        assert.equal(await host.isExecutableFile(path.join(dir, "not-executable")), false);
        assert.equal(await host.isExecutableFile(bin), false, "a directory is not a binary");
        const found = await findServer(
            { configuredPath: undefined, bundledPath: path.join(dir, "server", "verbatim"), pathEnv: `/nonexistent:${bin}`, platform: "linux", workspaceTrusted: true },
            host,
        );
        assert.deepEqual(found, { path: script, version: "verbatim 9.9.9", source: "PATH" });
    });
});
