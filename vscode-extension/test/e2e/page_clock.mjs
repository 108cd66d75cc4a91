// When something shows on the page, and when the person pressed a key, by the
// page's own clock (the machine's wall clock, to a fraction of a millisecond:
// the server's log and Node's Date.now() are on the same clock).
//
// Playwright's waitFor and click cannot time these: waitFor looks again after
// ever longer pauses (up to 500 ms), so what it returns says when it looked,
// not when the element drew; click first waits for the element to be stable
// over two frames. The figures in BENCHMARKS.md for the review of Claude
// Code's and Gemini CLI's openDiff come from here.

/**
 * Arms a watch for `selector` (its text matching `text`, when given) before
 * the action that shows it: `at()` resolves with the time of the frame in
 * which a matching element was first in the layout. With `afterGone`, one
 * shown now counts only once it has gone (the next review's button, armed
 * while the last one's is still there).
 */
export async function watchShown(page, name, selector, text, { afterGone = false } = {}) {
    await page.evaluate(
        ({ name, selector, text, afterGone }) => {
            const stamp = () => performance.timeOrigin + performance.now();
            const pattern = text === undefined ? undefined : new RegExp(text);
            const shown = () =>
                [...document.querySelectorAll(selector)].some(
                    (node) => (pattern === undefined || pattern.test(node.textContent ?? "")) && node.getClientRects().length > 0,
                );
            window.verbatimShown ??= {};
            window.verbatimShown[name] = new Promise((resolve) => {
                // The frame that paints the element: its animation-frame callback runs just before that paint.
                const onFrame = () => requestAnimationFrame(() => resolve(stamp()));
                let gone = !afterGone;
                if (gone && shown()) return onFrame();
                const observer = new MutationObserver(() => {
                    const now = shown();
                    if (!now) gone = true;
                    if (!now || !gone) return;
                    observer.disconnect();
                    onFrame();
                });
                observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
            });
        },
        { name, selector, text, afterGone },
    );
    return { at: () => page.evaluate((name) => window.verbatimShown[name], name) };
}

/**
 * Presses `keys` (Playwright's notation, such as "Control+Alt+Shift+Y") and
 * returns when the page received the key down of its last key (not a
 * modifier's): the moment the person's keypress starts.
 */
export async function pressTimed(page, keys) {
    await page.evaluate(() => {
        if (window.verbatimKeyDowns !== undefined) return;
        window.verbatimKeyDowns = [];
        window.addEventListener(
            "keydown",
            (event) => {
                if (!["Control", "Alt", "Shift", "Meta"].includes(event.key)) window.verbatimKeyDowns.push(performance.timeOrigin + event.timeStamp);
            },
            true,
        );
    });
    const before = await page.evaluate(() => window.verbatimKeyDowns.length);
    await page.keyboard.press(keys);
    const at = await page.evaluate((before) => window.verbatimKeyDowns[before], before);
    if (at === undefined) throw new Error(`the page received no key down for ${keys}`);
    return at;
}
