// End-to-end test of the in-editor review (`verbatim.review.ui: "inline"`, the
// default) in a real VS Code: code-server in Chromium, an agent on the
// server's socket. Each agent edit opens a diff of the live document and the
// proposal, with Accept / Reject CodeLenses on every hunk; on a file of more
// than `verbatim.review.diffMaxLines` lines (5,000), the hunks are marked in
// the file's own editor instead, with the same lenses and an "Open diff".
//
// Needs: CODE_SERVER_BIN, VERBATIM_BIN, VERBATIM_TEST_OUTPUT (test/run.sh sets them).

import * as assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { after, before, describe } from "node:test";
import { pathToFileURL } from "node:url";

import { ResponseError } from "./agent.mjs";
import { extensionDir, launchEditor, numberedFile, numberedLine, requiredEnv, scenarioSteps, waitFor, withTimeout, writeAtomically } from "./harness.mjs";

const output = path.join(requiredEnv("VERBATIM_TEST_OUTPUT"), "inline-review");

const REVIEW = ["fn main() {", "    let x = 1;", "    let y = 2;", "    let z = 3;", "    let w = 4;", "    println!(\"{x} {y}\");", "}", ""].join("\n");
const OTHER = "first line of the other file\nsecond line\n";
const DISK_NAME = "disk.txt";
const DISK_ORIGINAL = Array.from({ length: 12 }, (_, i) => `disk line ${i + 1}`).join("\n") + "\n";
const LARGE_NAME = "large.txt";
const LARGE_LINES = 20_000;
const DOOMED_NAME = "doomed.txt";
const DOOMED = "a file an agent wants gone\n";
const MOVE_FROM = "move_me.txt";
const MOVE_TO = "moved.txt";
const MOVED = "a file an agent moves\nsecond line\n";
const MOVE_EDIT_FROM = "rename_me.txt";
const MOVE_EDIT_TO = "renamed.txt";
const MOVE_EDITED = "a file an agent moves and edits\nold line\n";

describe("the in-editor review (code-server)", { concurrency: false }, () => {
    let editor;
    let page;
    let agent;
    let workspace;
    const steps = scenarioSteps(() => page, output, () => editor?.userData);
    const step = (name, body) => steps.step(name, body);
    const uriOf = (name) => pathToFileURL(path.join(workspace, name)).href;

    before(async () => {
        rmSync(output, { recursive: true, force: true });
        editor = await launchEditor({
            fixture: path.join(extensionDir, "test", "fixtures", "workspace"),
            setup: (folder) => {
                writeFileSync(path.join(folder, "review.rs"), REVIEW);
                writeFileSync(path.join(folder, "other.txt"), OTHER);
                writeFileSync(path.join(folder, DISK_NAME), DISK_ORIGINAL);
                writeFileSync(path.join(folder, LARGE_NAME), numberedFile(LARGE_LINES));
                writeFileSync(path.join(folder, DOOMED_NAME), DOOMED);
                writeFileSync(path.join(folder, MOVE_FROM), MOVED);
                writeFileSync(path.join(folder, MOVE_EDIT_FROM), MOVE_EDITED);
            },
            settings: { "verbatim.logLevel": "debug" },
            output,
        });
        ({ page, workspace } = editor);
    });

    after(async () => {
        if (page) await page.screenshot({ path: path.join(output, "last.png") }).catch(() => undefined);
        await agent?.close().catch(() => undefined);
        await editor?.close();
        console.log(`# end-to-end artifacts in ${output} (last step: ${steps.last})`);
    });

    const read = (name, by = agent) => by.request("verbatim/read", { uri: uriOf(name) });
    /** Waits until the server holds `text` in the editor's buffer of `name` (until the editor's didOpen arrives, a read answers from the disk). */
    const waitForText = (name, text) =>
        waitFor(`the server to hold ${JSON.stringify(text)} in the editor's buffer of ${name}`, async () => {
            const result = await read(name);
            return result.source === "editor" && result.text === text ? result : undefined;
        });

    /** Sends an agent request whose answer comes when the person decides. */
    function send(method, params, by = agent) {
        const pending = by.request(method, params);
        pending.catch(() => undefined);
        return pending;
    }

    /** An agent's `verbatim/strReplace` in `name`, planned against `before` (a `verbatim/read`), pending on the person. */
    const replaceIn = (name, before, oldStr, newStr, summary) =>
        send("verbatim/strReplace", { uri: uriOf(name), oldStr, newStr, summary, baseRev: before.rev });

    const diff = () => page.locator(".monaco-diff-editor").first();
    /** The CodeLenses of the proposal (the diff's right side), top to bottom. */
    const lenses = (text) =>
        page.locator(".monaco-diff-editor .editor.modified .codelens-decoration a").filter({ hasText: new RegExp(`^\\W*${text}\\s*$`) });
    const statusBar = () => editor.statusBar();

    /** Waits for the review of `label` to show its proposal, holding `text`. */
    async function waitForReview(label, text) {
        await page.locator(".tabs-container .tab", { hasText: label }).first().waitFor({ state: "visible" });
        await diff().locator(".editor.modified .view-lines", { hasText: text }).first().waitFor({ state: "visible" });
        await lenses("Accept All").first().waitFor({ state: "visible" });
    }

    /** How many times the review of `label` took a new offer of its edit, by the extension's log. */
    const newOffers = (label) => {
        const taken = new RegExp(`\\[review\\] "${label}": offer \\S+, over the new text`);
        return editor.extensionLog().split("\n").filter((line) => taken.test(line)).length;
    };

    /** Answers the reason box: `reason` (may be empty) and Enter. */
    async function giveReason(reason) {
        const input = page.locator(".quick-input-widget .quick-input-box input");
        await input.waitFor({ state: "visible" });
        await input.fill(reason);
        await page.keyboard.press("Enter");
    }

    async function expectRejected(pending) {
        try {
            const result = await withTimeout(pending, "the agent's answer");
            assert.fail(`expected rejected, got ${JSON.stringify(result)}`);
        } catch (error) {
            if (!(error instanceof ResponseError)) throw error;
            return error;
        }
    }

    step("the agent connects; the person opens a file", async () => {
        agent = await editor.connectAgent("test-agent");
        await statusBar().getByText("Verbatim: 1 agent").first().waitFor({ state: "visible", timeout: 30_000 });
        await editor.openFromExplorer("review.rs", "let x = 1;");
        await waitForText("review.rs", REVIEW);
    });

    let twoHunks;
    step("an edit of two hunks: the proposal shows in a diff next to the live document, with Accept and Reject on each hunk", async () => {
        const before = await read("review.rs");
        const started = Date.now();
        twoHunks = replaceIn(
            "review.rs",
            before,
            "    let x = 1;\n    let y = 2;\n    let z = 3;\n    let w = 4;",
            "    let x = 10;\n    let y = 2;\n    let z = 3;\n    let w = 40;\n    let v = 5;",
            "Scale x and w",
        );
        await waitForReview("test-agent: Scale x and w", "let v = 5;");
        console.log(`# review shown ${Date.now() - started} ms after the agent sent the edit (6-line file)`);
        assert.equal(await lenses("Accept").count(), 2, "one Accept per hunk");
        assert.equal(await lenses("Reject").count(), 2, "one Reject per hunk");
        await statusBar().getByText("1 to review").first().waitFor({ state: "visible" });
        assert.equal((await read("review.rs")).text, REVIEW, "nothing applied yet");
        await page.screenshot({ path: path.join(output, "inline-review.png") });
    });

    step("accept one hunk of two: the buffer holds exactly that hunk, and the agent hears which was kept", async () => {
        await lenses("Accept").first().click();
        await lenses("Accepted · Undo").first().waitFor({ state: "visible" });
        await lenses("Reject").first().click();
        await giveReason("keep w as it is");
        const result = await withTimeout(twoHunks, "the agent's answer");
        assert.equal(result.applied, true);
        const expected = REVIEW.replace("let x = 1;", "let x = 10;");
        assert.equal((await waitForText("review.rs", expected)).text, expected);
        assert.equal(result.partial, true);
        assert.deepEqual(result.hunks.map(({ index, accepted }) => ({ index, accepted })), [
            { index: 0, accepted: true },
            { index: 1, accepted: false },
        ]);
        assert.equal(result.modifiedByEditor, false);
        assert.equal(result.reason, "keep w as it is");
        await diff().waitFor({ state: "detached" });
        await statusBar().getByText("to review").first().waitFor({ state: "detached" });
    });

    step("reject with a reason: the agent gets `rejected` with the reason", async () => {
        const before = await read("review.rs");
        const pending = replaceIn("review.rs", before, "let y = 2;", "let y = 20;", "Scale y");
        await waitForReview("test-agent: Scale y", "let y = 20;");
        await lenses("Reject All").first().click();
        await giveReason("keep y small");
        const error = await expectRejected(pending);
        assert.equal(error.data?.kind, "rejected");
        assert.equal(error.data?.reason, "keep y small");
        assert.equal((await read("review.rs")).text, before.text);
    });

    step("Accept All with one click: applied, nothing to tick first", async () => {
        const before = await read("review.rs");
        const pending = replaceIn("review.rs", before, "let z = 3;", "let z = 30;", "Scale z");
        await waitForReview("test-agent: Scale z", "let z = 30;");
        await lenses("Accept All").first().click();
        const result = await withTimeout(pending, "the agent's answer");
        assert.equal(result.applied, true);
        assert.equal(result.modifiedByEditor, false);
        assert.equal((await waitForText("review.rs", before.text.replace("let z = 3;", "let z = 30;"))).rev, result.rev);
    });

    step("typing elsewhere in the document during review, then Accept All: applied, and the typing kept", async () => {
        const before = await read("review.rs");
        const pending = replaceIn("review.rs", before, "let w = 4;", "let w = 400;", "Scale w");
        await waitForReview("test-agent: Scale w", "let w = 400;");
        // The person types at the end of the file, in the document's own tab.
        await editor.click(page.locator('.tabs-container .tab[aria-label="review.rs"]'));
        await page.locator(".monaco-editor:not(.monaco-diff-editor *) .view-lines", { hasText: "fn main" }).first().click();
        await page.keyboard.press("Control+End");
        await page.keyboard.type("// typed during review\n");
        const typed = `${before.text}// typed during review\n`;
        await waitForText("review.rs", typed);
        // Back to the review, which the server has offered again over the typing (or is about to).
        await editor.click(page.locator(".tabs-container .tab", { hasText: "test-agent: Scale w" }).first());
        await lenses("Accept All").first().click();
        const result = await withTimeout(pending, "the agent's answer");
        assert.equal(result.applied, true);
        assert.equal(result.rebased, true);
        const expected = typed.replace("let w = 4;", "let w = 400;");
        assert.equal((await waitForText("review.rs", expected)).text, expected);
    });

    /** Types in review.rs's own tab: `keys` move the cursor from the start of the file first. */
    async function typeInReviewFile(keys, text) {
        await editor.click(page.locator('.tabs-container .tab[aria-label="review.rs"]'));
        await page.locator(".monaco-editor:not(.monaco-diff-editor *) .view-lines", { hasText: "fn main" }).first().click();
        await page.keyboard.press("Control+Home");
        for (const key of keys) await page.keyboard.press(key);
        await page.keyboard.type(text);
    }

    step("typing during review, after one hunk of two was accepted: the new offer keeps the decision", async () => {
        const before = await read("review.rs");
        const pending = replaceIn(
            "review.rs",
            before,
            "    let x = 10;\n    let y = 2;\n    let z = 30;\n    let w = 400;\n    println!(\"{x} {y}\");",
            "    let x = 11;\n    let y = 2;\n    let z = 30;\n    let w = 400;\n    println!(\"{x} {y} {z}\");",
            "Print z",
        );
        await waitForReview("test-agent: Print z", "{x} {y} {z}");
        await lenses("Accept").first().click();
        await lenses("Accepted · Undo").first().waitFor({ state: "visible" });
        const offers = newOffers("test-agent: Print z");
        await typeInReviewFile(["Control+End"], "// typed while one hunk was accepted\n");
        const typed = `${before.text}// typed while one hunk was accepted\n`;
        await waitForText("review.rs", typed);
        // The typing settles, the edit is refused, and the server offers it again over the typing.
        await waitFor("the review to take the new offer", () => newOffers("test-agent: Print z") > offers);
        await editor.click(page.locator(".tabs-container .tab", { hasText: "test-agent: Print z" }).first());
        await lenses("Accepted · Undo").first().waitFor({ state: "visible" });
        assert.equal(await lenses("Accept").count(), 1, "only the second hunk waits");
        await lenses("Accept").first().click();
        const result = await withTimeout(pending, "the agent's answer");
        assert.equal(result.applied, true);
        assert.equal(result.rebased, true);
        assert.deepEqual(result.hunks.map((hunk) => hunk.accepted), [true, true]);
        const expected = typed.replace("let x = 10;", "let x = 11;").replace('println!("{x} {y}");', 'println!("{x} {y} {z}");');
        assert.equal((await waitForText("review.rs", expected)).text, expected);
    });

    step("typing inside the hunk during review: the agent gets `stale`, and the review is withdrawn with a message", async () => {
        const before = await read("review.rs");
        const pending = replaceIn("review.rs", before, "let w = 400;", "let w = 4000;", "Scale w again");
        await waitForReview("test-agent: Scale w again", "let w = 4000;");
        // Line 5 is "    let w = 400;": type between "40" and "0;".
        await typeInReviewFile(["ArrowDown", "ArrowDown", "ArrowDown", "ArrowDown", "End", "ArrowLeft", "ArrowLeft"], "7");
        await waitForText("review.rs", before.text.replace("let w = 400;", "let w = 4070;"));
        const error = await expectRejected(pending);
        assert.equal(error.data?.kind, "stale");
        await diff().waitFor({ state: "detached", timeout: 15_000 });
        await page.locator(".notification-toast", { hasText: "Scale w again" }).first().waitFor({ state: "visible" });
        await statusBar().getByText("to review").first().waitFor({ state: "detached" });
        // Put the line back for the steps below.
        await typeInReviewFile(["ArrowDown", "ArrowDown", "ArrowDown", "ArrowDown", "End", "ArrowLeft", "ArrowLeft", "Backspace"], "");
        await waitForText("review.rs", before.text);
    });

    let second;
    step("two agents' edits queue up: reviewed in order, each agent gets its own answer", async () => {
        second = await editor.connectAgent("other-agent");
        await editor.openFromExplorer("other.txt", "second line");
        await waitForText("other.txt", OTHER);
        const reviewBefore = await read("review.rs");
        const first = replaceIn("review.rs", reviewBefore, "fn main() {", "pub fn main() {", "Make main public");
        await waitForReview("test-agent: Make main public", "pub fn main");
        const otherBefore = await read("other.txt", second);
        const secondPending = send(
            "verbatim/strReplace",
            { uri: uriOf("other.txt"), oldStr: "second line", newStr: "second line, edited", summary: "Edit the other file", baseRev: otherBefore.rev },
            second,
        );
        await statusBar().getByText("2 to review").first().waitFor({ state: "visible" });
        await lenses("Edit 1 of 2: next edit").first().waitFor({ state: "visible" });
        await page.screenshot({ path: path.join(output, "queue.png") });

        await lenses("Accept All").first().click();
        const firstResult = await withTimeout(first, "the first agent's answer");
        assert.equal(firstResult.applied, true);
        // The next edit shows by itself.
        await waitForReview("other-agent: Edit the other file", "second line, edited");
        await lenses("Reject All").first().click();
        await giveReason("not this one");
        const error = await expectRejected(secondPending);
        assert.equal(error.data?.reason, "not this one");
        assert.equal((await read("other.txt", second)).text, OTHER);
        assert.equal((await read("review.rs")).text, reviewBefore.text.replace("fn main() {", "pub fn main() {"));
        await statusBar().getByText("to review").first().waitFor({ state: "detached" });
    });

    step("a multi-file batch is reviewed as one: nothing applied until all is decided, then all at once", async () => {
        const reviewBefore = await read("review.rs");
        const otherBefore = await read("other.txt");
        const pending = send("verbatim/batchEdit", {
            summary: "Touch both files",
            edits: [
                { uri: uriOf("review.rs"), oldStr: "let y = 2;", newStr: "let y = 2; // checked", baseRev: reviewBefore.rev },
                { uri: uriOf("other.txt"), oldStr: "first line", newStr: "First line", baseRev: otherBefore.rev },
            ],
        });
        await waitForReview("test-agent: Touch both files", "// checked");
        await lenses("File 1 of 2: next file").first().click();
        await waitForReview("test-agent: Touch both files", "First line");
        await lenses("Accept").first().click();
        // The review moves on to the hunk still undecided, in the first file; one file decided, nothing is applied yet.
        await waitForReview("test-agent: Touch both files", "// checked");
        assert.equal((await read("other.txt")).text, otherBefore.text);
        await lenses("File 1 of 2: next file").first().waitFor({ state: "visible" });
        await page.screenshot({ path: path.join(output, "multi-file.png") });
        assert.equal(await page.locator(".tabs-container .tab", { hasText: "Touch both files" }).count(), 1, "one tab for the review");
        // The keyboard: the cursor is on the hunk the review moved to.
        await page.keyboard.press("Control+Alt+y");
        const result = await withTimeout(pending, "the agent's answer");
        assert.equal(result.applied, true);
        assert.equal((await read("review.rs")).text, reviewBefore.text.replace("let y = 2;", "let y = 2; // checked"));
        assert.equal((await read("other.txt")).text, otherBefore.text.replace("first line", "First line"));
    });

    step("the agent cancels: the review is withdrawn", async () => {
        const before = await read("other.txt");
        const pending = replaceIn("other.txt", before, "second line", "2nd line", "To be cancelled");
        await waitForReview("test-agent: To be cancelled", "2nd line");
        agent.notify("$/cancelRequest", { id: agent.lastRequestId });
        await assert.rejects(withTimeout(pending, "the cancelled request"));
        await diff().waitFor({ state: "detached" });
        await statusBar().getByText("to review").first().waitFor({ state: "detached" });
        assert.equal((await read("other.txt")).text, before.text);
    });

    /** The CodeLenses in a file's own editor (not a diff), top to bottom. */
    const fileLenses = (text) =>
        page.locator(".monaco-editor:not(.monaco-diff-editor *) .codelens-decoration a").filter({ hasText: new RegExp(`^\\W*${text}\\s*$`) });

    /**
     * Waits for a review in the file's own editor: `inserted` shown as
     * decoration text (VS Code draws it as a CSS pseudo-element's content), and
     * the lenses. Resolves to when the marks were seen (the lenses come later).
     */
    async function waitForReviewInEditor(inserted) {
        await page.waitForFunction(
            (text) =>
                [...document.querySelectorAll(".monaco-editor .view-lines span")].some(
                    (span) => !span.closest(".monaco-diff-editor") && getComputedStyle(span, "::after").content.includes(text),
                ),
            inserted,
            { timeout: 60_000 },
        );
        const marked = Date.now();
        await fileLenses("Accept All").first().waitFor({ state: "visible" });
        return marked;
    }

    step("a 20,000-line file: the review shows in the file's own editor, the hunks marked; typing meanwhile, one hunk of two accepted", async () => {
        const largeUri = uriOf(LARGE_NAME);
        const original = readFileSync(path.join(workspace, LARGE_NAME), "utf8");
        await editor.openFromExplorer(LARGE_NAME, numberedLine(1));
        const before = await waitForText(LARGE_NAME, original);
        const first = numberedLine(LARGE_LINES - 9);
        const last = numberedLine(LARGE_LINES - 6);
        const quoted = [LARGE_LINES - 9, LARGE_LINES - 8, LARGE_LINES - 7, LARGE_LINES - 6].map(numberedLine).join("\n");
        const replaced = quoted.replace(first, `${first} (edited)`).replace(last, `${last} (also edited)`);
        const started = Date.now();
        const pending = send("verbatim/strReplace", { uri: largeUri, oldStr: quoted, newStr: replaced, summary: "Edit near the end", baseRev: before.rev });
        const shownMs = (await waitForReviewInEditor("(edited)")) - started;
        console.log(`# review of a ${LARGE_LINES}-line file marked in its own editor ${shownMs} ms after the agent sent the edit (debug server; the lenses later)`);
        writeFileSync(path.join(output, "large-review-ms.txt"), `${shownMs}\n`);
        assert.equal(await diff().count(), 0, "no diff editor");
        assert.equal(await fileLenses("Accept").count(), 2, "one Accept per hunk");
        assert.equal(await fileLenses("Reject").count(), 2, "one Reject per hunk");
        await fileLenses("Open diff").first().waitFor({ state: "visible" });
        await fileLenses("test-agent: Edit near the end · 0 of 2 hunks decided").first().waitFor({ state: "visible" });
        await page.screenshot({ path: path.join(output, "large-file-review.png") });
        assert.equal((await read(LARGE_NAME)).text, original, "nothing applied yet");

        await fileLenses("Accept").first().click();
        await fileLenses("Accepted · Undo").first().waitFor({ state: "visible" });
        const offers = newOffers("test-agent: Edit near the end");
        // Typing at the top of the file meanwhile: the edit is offered again below it, the decision kept.
        await page.locator(".monaco-editor:not(.monaco-diff-editor *) .view-lines", { hasText: numberedLine(LARGE_LINES) }).first().click();
        await page.keyboard.press("Control+Home");
        await page.keyboard.type("typed at the top\n");
        const typed = `typed at the top\n${original}`;
        await waitForText(LARGE_NAME, typed);
        await waitFor("the review to take the new offer", () => newOffers("test-agent: Edit near the end") > offers);
        await page.keyboard.press("Control+End");
        await fileLenses("Accepted · Undo").first().waitFor({ state: "visible" });
        assert.equal(await fileLenses("Reject").count(), 1, "only the second hunk waits");
        // The keyboard, in the file's own editor: the cursor is below the last hunk, the one still undecided.
        await page.keyboard.press("Control+Alt+n");
        await giveReason("");
        const result = await withTimeout(pending, "the agent's answer");
        assert.equal(result.applied, true);
        assert.equal(result.partial, true);
        assert.equal(result.rebased, true);
        assert.deepEqual(result.hunks.map(({ index, accepted }) => ({ index, accepted })), [
            { index: 0, accepted: true },
            { index: 1, accepted: false },
        ]);
        const expected = typed.replace(first, `${first} (edited)`);
        const live = await waitForText(LARGE_NAME, expected);
        assert.ok(live.text === expected, "the original with exactly the accepted hunk");
        await fileLenses("Accept All").first().waitFor({ state: "detached" });
        await statusBar().getByText("to review").first().waitFor({ state: "detached" });
        // The marks are gone with the review.
        const marked = await page.evaluate(() =>
            [...document.querySelectorAll(".monaco-editor .view-lines span")].some((span) => getComputedStyle(span, "::after").content.includes("also edited")),
        );
        assert.equal(marked, false, "no decoration left");
    });

    step("a 20,000-line file: Open diff shows the diff, and Accept All there leaves the buffer exact", async () => {
        const before = await read(LARGE_NAME);
        const target = numberedLine(LARGE_LINES - 3);
        const pending = replaceIn(LARGE_NAME, before, target, `${target} (in the diff)`, "Edit in the diff");
        await waitForReviewInEditor("(in the diff)");
        await fileLenses("Open diff").first().click();
        await waitForReview("test-agent: Edit in the diff", "(in the diff)");
        await lenses("Accept All").first().click();
        const result = await withTimeout(pending, "the agent's answer");
        assert.equal(result.applied, true);
        assert.equal(result.modifiedByEditor, false);
        const live = await read(LARGE_NAME);
        assert.ok(live.text === before.text.replace(target, `${target} (in the diff)`), "the text with one line replaced");
        await diff().waitFor({ state: "detached" });
    });

    step("a batch over a 20,000-line file and a small one: the large one in its own editor, the small one in a diff", async () => {
        const largeBefore = await read(LARGE_NAME);
        const otherBefore = await read("other.txt");
        const target = numberedLine(LARGE_LINES - 1);
        const pending = send("verbatim/batchEdit", {
            summary: "Touch a large and a small file",
            edits: [
                { uri: uriOf(LARGE_NAME), oldStr: target, newStr: `${target} (batch)`, baseRev: largeBefore.rev },
                { uri: uriOf("other.txt"), oldStr: "second line", newStr: "second line (batch)", baseRev: otherBefore.rev },
            ],
        });
        await waitForReviewInEditor("(batch)");
        assert.equal(await diff().count(), 0, "no diff for the large file");
        await fileLenses("File 1 of 2: next file").first().click();
        await waitForReview("test-agent: Touch a large and a small file", "second line (batch)");
        await lenses("Accept").first().click();
        // Back to the large file's own editor, at its undecided hunk; no diff tab of the review stays.
        await waitForReviewInEditor("(batch)");
        await diff().waitFor({ state: "detached" });
        assert.equal((await read("other.txt")).text, otherBefore.text, "nothing applied before all is decided");
        await page.keyboard.press("Control+Alt+y");
        const result = await withTimeout(pending, "the agent's answer");
        assert.equal(result.applied, true);
        assert.ok((await read(LARGE_NAME)).text === largeBefore.text.replace(target, `${target} (batch)`), "the large file with one line replaced");
        assert.equal((await read("other.txt")).text, otherBefore.text.replace("second line", "second line (batch)"));
    });

    step("a change made on disk to a file with unsaved changes is reviewed in the editor too", async () => {
        await editor.openFromExplorer(DISK_NAME, "disk line 1");
        await waitForText(DISK_NAME, DISK_ORIGINAL);
        await page.locator(".monaco-editor .view-lines", { hasText: "disk line 1" }).first().click();
        await page.keyboard.press("Control+Home");
        await page.keyboard.type("typed by the person\n");
        const typed = `typed by the person\n${DISK_ORIGINAL}`;
        await waitForText(DISK_NAME, typed);

        const onDisk = DISK_ORIGINAL.replace("disk line 10", "disk line 10, changed on disk");
        writeAtomically(path.join(workspace, DISK_NAME), onDisk);
        await waitForReview("Changed on disk outside the editor: disk.txt", "changed on disk");
        assert.equal((await read(DISK_NAME)).text, typed, "nothing applied before the person decides");
        await lenses("Accept All").first().click();
        await waitForText(DISK_NAME, `typed by the person\n${onDisk}`);
        await diff().waitFor({ state: "detached" });
    });

    /** A CodeLens of the proposal that is a label, not a link: what an edit decided whole does to files. */
    const operationsLens = (text) => page.locator(".monaco-diff-editor .editor.modified .codelens-decoration span", { hasText: text });
    const onDisk = (name) => path.join(workspace, name);

    step("a patch that adds a file and changes an open one: both files in the review, decided whole; Accept All creates the file and applies the change", async () => {
        const before = await read("other.txt");
        const lastLine = before.text.trimEnd().split("\n").at(-1);
        const patch = [
            "*** Begin Patch",
            "*** Add File: added.txt",
            "+added by the patch",
            "+second line",
            "*** Update File: other.txt",
            "@@",
            `-${lastLine}`,
            `+${lastLine} (patched)`,
            "*** End Patch",
            "",
        ].join("\n");
        const pending = send("verbatim/applyPatch", { patch, summary: "Add a file" });
        await page.locator(".tabs-container .tab", { hasText: "creates added.txt (file 1 of 2)" }).first().waitFor({ state: "visible" });
        await diff().locator(".editor.modified .view-lines", { hasText: "added by the patch" }).first().waitFor({ state: "visible" });
        await operationsLens("This edit creates added.txt: accept or reject it whole").first().waitFor({ state: "visible" });
        assert.equal(await lenses("Accept").count(), 0, "no Accept per hunk");
        assert.equal(await lenses("Reject").count(), 0, "no Reject per hunk");
        assert.equal(existsSync(onDisk("added.txt")), false, "showing the new file does not create it");
        await page.screenshot({ path: path.join(output, "create-file-review.png") });

        await lenses("File 1 of 2: next file").first().click();
        await waitForReview("test-agent: Add a file", `${lastLine} (patched)`);
        assert.equal(await lenses("Accept").count(), 0, "no Accept per hunk in the changed file either");
        // The keyboard's Accept at the cursor says why it does nothing here.
        await diff().locator(".editor.modified .view-lines", { hasText: "(patched)" }).first().click();
        await page.keyboard.press("Control+Alt+y");
        await page.locator(".notification-toast", { hasText: "accepted or rejected whole" }).first().waitFor({ state: "visible" });
        assert.equal(existsSync(onDisk("added.txt")), false, "nothing applied yet");

        await lenses("Accept All").first().click();
        const accepted = Date.now();
        const result = await withTimeout(pending, "the agent's answer");
        // Well under the server's syncTimeoutMs (5 s) when the new file's text reached it from the editor's buffer.
        console.log(`# the agent's answer ${Date.now() - accepted} ms after Accept All on a patch that creates a file`);
        assert.equal(result.applied, true);
        assert.deepEqual(
            result.documents.map((document) => [path.basename(new URL(document.uri).pathname), document.operation ?? null]),
            [
                ["added.txt", "create"],
                ["other.txt", null],
            ],
        );
        // Saved just after the answer, which the server gives once the text is in the new file's buffer.
        const added = "added by the patch\nsecond line\n";
        await waitFor("the new file on disk with the patch's lines", () => existsSync(onDisk("added.txt")) && readFileSync(onDisk("added.txt"), "utf8") === added);
        assert.equal((await read("added.txt")).text, added);
        const expected = before.text.replace(lastLine, `${lastLine} (patched)`);
        assert.equal((await waitForText("other.txt", expected)).text, expected);
        await diff().waitFor({ state: "detached" });
        await statusBar().getByText("to review").first().waitFor({ state: "detached" });
    });

    step("a patch that deletes a file: its text on the left, nothing on the right; Reject All with a reason keeps it", async () => {
        const pending = send("verbatim/applyPatch", { patch: `*** Begin Patch\n*** Delete File: ${DOOMED_NAME}\n*** End Patch\n`, summary: "Drop a file" });
        await page.locator(".tabs-container .tab", { hasText: `deletes ${DOOMED_NAME}` }).first().waitFor({ state: "visible" });
        // The person clicks the left side as the review opens. VS Code cancels a CodeLens fetch still pending when
        // its editor loses focus: the lenses come only because the review asks for them again (lens_refetch.ts).
        await diff().locator(".editor.original .view-lines", { hasText: "a file an agent wants gone" }).first().click();
        await operationsLens(`This edit deletes ${DOOMED_NAME}: accept or reject it whole`).first().waitFor({ state: "visible" });
        await page.screenshot({ path: path.join(output, "delete-file-review.png") });
        await lenses("Reject All").first().click();
        await giveReason("keep that file");
        const error = await expectRejected(pending);
        assert.equal(error.data?.kind, "rejected");
        assert.equal(error.data?.reason, "keep that file");
        assert.equal(readFileSync(onDisk(DOOMED_NAME), "utf8"), DOOMED, "the file is still on disk");
        await diff().waitFor({ state: "detached" });
    });

    /** Accept All on a move under review: the agent hears of the move, the old name is gone, the review closes. */
    async function acceptMove(pending, from) {
        await lenses("Accept All").first().click();
        const result = await withTimeout(pending, "the agent's answer");
        assert.equal(result.applied, true);
        assert.equal(result.documents[0]?.operation, "move");
        assert.equal(existsSync(onDisk(from)), false, "the old name is gone");
        await diff().waitFor({ state: "detached" });
        await statusBar().getByText("to review").first().waitFor({ state: "detached" });
    }

    step("a patch that moves a file: Accept All moves it, its text kept", async () => {
        const patch = `*** Begin Patch\n*** Update File: ${MOVE_FROM}\n*** Move to: ${MOVE_TO}\n*** End Patch\n`;
        const pending = send("verbatim/applyPatch", { patch, summary: "Move a file" });
        await page.locator(".tabs-container .tab", { hasText: `moves ${MOVE_FROM} → ${MOVE_TO}` }).first().waitFor({ state: "visible" });
        await diff().locator(".editor.modified .view-lines", { hasText: "a file an agent moves" }).first().waitFor({ state: "visible" });
        await acceptMove(pending, MOVE_FROM);
        assert.equal(readFileSync(onDisk(MOVE_TO), "utf8"), MOVED, "the new name holds the text");
    });

    step("a patch that moves a file and changes it: old text on the left, the new text under the new name; Accept All", async () => {
        const patch = [
            "*** Begin Patch",
            `*** Update File: ${MOVE_EDIT_FROM}`,
            `*** Move to: ${MOVE_EDIT_TO}`,
            "@@",
            "-old line",
            "+new line",
            "*** End Patch",
            "",
        ].join("\n");
        const pending = send("verbatim/applyPatch", { patch, summary: "Move and edit" });
        await page.locator(".tabs-container .tab", { hasText: `moves ${MOVE_EDIT_FROM} → ${MOVE_EDIT_TO}` }).first().waitFor({ state: "visible" });
        await diff().locator(".editor.original .view-lines", { hasText: "old line" }).first().waitFor({ state: "visible" });
        await diff().locator(".editor.modified .view-lines", { hasText: "new line" }).first().waitFor({ state: "visible" });
        await acceptMove(pending, MOVE_EDIT_FROM);
        // The edit is in the buffer under the new name, unsaved, as every agent edit is.
        const edited = MOVE_EDITED.replace("old line", "new line");
        assert.equal((await waitForText(MOVE_EDIT_TO, edited)).text, edited);
    });

    step("back to the Refactor Preview through the setting: it still works", async () => {
        // As a person does it: the Settings editor, its search box, the setting's drop-down.
        await editor.runCommand("Preferences: Open Settings (UI)");
        const search = page.locator(".settings-editor .settings-header .monaco-editor").first();
        await search.waitFor({ state: "visible" });
        await search.click();
        await page.keyboard.type("verbatim.review.ui");
        const select = page.locator('.settings-editor select[aria-label="verbatim.review.ui"]');
        await select.waitFor({ state: "visible" });
        await select.selectOption("refactorPreview");
        // VS Code writes settings.json, and the extension host hears of it, a while later (more than a second under load).
        await waitFor("the extension to take the new setting", () => editor.extensionLog().includes("verbatim.review.ui is refactorPreview"));
        // VS Code 1.139 shows the Settings editor in a modal; 1.93 in a tab.
        await page.keyboard.press("Escape");
        await page.locator(".monaco-modal-editor-block").waitFor({ state: "detached" });
        const before = await read("other.txt");
        const pending = replaceIn("other.txt", before, "second line", "SECOND LINE", "Through the preview");
        await editor.waitForPreview("test-agent: Through the preview", { pending });
        await editor.tickAllChanges();
        await editor.pressApply();
        const result = await withTimeout(pending, "the agent's answer");
        assert.equal(result.applied, true);
        assert.equal((await read("other.txt")).text, before.text.replace("second line", "SECOND LINE"));
        await second?.close().catch(() => undefined);
    });
});

