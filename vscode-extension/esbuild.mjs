// Bundles the extension (dist/main.js) or, with --tests, the unit tests
// (dist/test/unit/*.test.js, run by `node --test`).
import * as esbuild from "esbuild";
import { readdirSync, rmSync } from "node:fs";

const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");

if (tests) {
    // `node --test` runs every bundle here: one left from a test file since
    // removed or renamed would still run, against code that no longer exists.
    rmSync("dist/test", { recursive: true, force: true });
    const entryPoints = readdirSync("test/unit")
        .filter((name) => name.endsWith(".test.ts"))
        .map((name) => `test/unit/${name}`);
    await esbuild.build({
        entryPoints,
        outdir: "dist/test/unit",
        bundle: true,
        platform: "node",
        format: "cjs",
        target: "node20",
        sourcemap: "inline",
        // Test dependencies (typescript's compiler API) load from node_modules.
        packages: "external",
        logLevel: "warning",
    });
} else {
    await esbuild.build({
        entryPoints: ["src/main.ts"],
        outfile: "dist/main.js",
        bundle: true,
        platform: "node",
        format: "cjs",
        target: "node20",
        external: ["vscode"],
        minify: production,
        sourcemap: !production,
        logLevel: "warning",
    });
}
