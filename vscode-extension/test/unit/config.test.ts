import * as assert from "node:assert/strict";
import { describe, test } from "node:test";

import { DEFAULT_CONFIG, expandHome, initializationOptions, needsRestart, readConfig, serverEnvironment } from "../../src/config";

const settings = (values: Record<string, unknown>) => (key: string) => values[key];

describe("readConfig", () => {
    test("defaults", () => {
        assert.deepEqual(readConfig(settings({})), { config: DEFAULT_CONFIG, problems: [] });
    });

    test("valid values", () => {
        const { config, problems } = readConfig(
            settings({
                "server.path": " ~/bin/verbatim ",
                reviewMode: "auto",
                "review.ui": "refactorPreview",
                logLevel: "trace",
                externalChanges: "auto",
                "claudeCode.enabled": false,
                "geminiCli.enabled": false,
                "timeline.maxSessions": 50,
                "timeline.maxEdits": 2000,
            }),
            "/home/ada",
        );
        assert.deepEqual(config, {
            serverPath: "/home/ada/bin/verbatim",
            reviewMode: "auto",
            reviewUi: "refactorPreview",
            logLevel: "trace",
            externalChanges: "auto",
            claudeCode: false,
            geminiCli: false,
            timelineMaxSessions: 50,
            timelineMaxEdits: 2000,
        });
        assert.deepEqual(problems, []);
    });

    test("an empty path means unset", () => {
        assert.equal(readConfig(settings({ "server.path": "   " })).config.serverPath, undefined);
        assert.equal(readConfig(settings({ "server.path": null })).config.serverPath, undefined);
    });

    test("invalid values fall back to the default and are reported", () => {
        const { config, problems } = readConfig(
            settings({
                "server.path": 42,
                reviewMode: "yolo",
                "review.ui": "panel",
                logLevel: 3,
                externalChanges: "merge",
                "claudeCode.enabled": "yes",
                "timeline.maxSessions": 0,
                "timeline.maxEdits": 2.5,
            }),
        );
        assert.deepEqual(config, DEFAULT_CONFIG);
        assert.equal(problems.length, 8);
        assert.match(problems[1] ?? "", /`verbatim.reviewMode` is "yolo"; expected one of "confirm", "auto". Using "confirm"./);
        assert.match(problems[5] ?? "", /`verbatim.claudeCode.enabled` is "yes"; expected true or false. Using true./);
        assert.match(problems[6] ?? "", /`verbatim.timeline.maxSessions` is 0; expected a whole number above 0. Using 200./);
        assert.match(problems[7] ?? "", /`verbatim.timeline.maxEdits` is 2.5; expected a whole number above 0. Using 500./);
    });
});

test("expandHome", () => {
    assert.equal(expandHome("~", "/home/ada"), "/home/ada");
    assert.equal(expandHome("~/x", "/home/ada/"), "/home/ada/x");
    assert.equal(expandHome("~bob/x", "/home/ada"), "~bob/x");
    assert.equal(expandHome("~/x", undefined), "~/x");
});

test("initializationOptions follow the review mode and the externalChanges and claudeCode.enabled settings", () => {
    assert.deepEqual(initializationOptions("confirm", { externalChanges: "review", reviewUi: "inline", claudeCode: true }), {
        needsConfirmation: true,
        statusNotifications: true,
        externalChanges: "review",
        diagnostics: true,
        hunkOutcomes: true,
        claudeCode: true,
        geminiCli: true,
        verbatimExtensions: true,
    });
    assert.deepEqual(initializationOptions("auto", { externalChanges: "off", reviewUi: "refactorPreview", claudeCode: false }), {
        needsConfirmation: false,
        statusNotifications: true,
        externalChanges: "off",
        diagnostics: true,
        hunkOutcomes: false,
        claudeCode: false,
        geminiCli: true,
        verbatimExtensions: true,
    });
});

test("the server inherits the environment and gets the log level", () => {
    const env = serverEnvironment({ PATH: "/bin", VERBATIM_RUNTIME_DIR: "/tmp/rt" }, "debug");
    assert.deepEqual(env, { PATH: "/bin", VERBATIM_RUNTIME_DIR: "/tmp/rt", VERBATIM_LOG: "debug" });
});

test("only the server path, the log level, externalChanges and claudeCode.enabled need a restart", () => {
    const changed = (key: string) => (candidate: string) => candidate === key;
    assert.equal(needsRestart(changed("verbatim.server.path")), true);
    assert.equal(needsRestart(changed("verbatim.logLevel")), true);
    assert.equal(needsRestart(changed("verbatim.externalChanges")), true);
    assert.equal(needsRestart(changed("verbatim.claudeCode.enabled")), true);
    assert.equal(needsRestart(changed("verbatim.reviewMode")), false);
    assert.equal(needsRestart(changed("verbatim.trace.server")), false);
});
