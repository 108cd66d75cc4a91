/**
 * The in-editor review (`verbatim.review.ui: "inline"`): the extension answers
 * the server's `workspace/applyEdit` itself, hunk by hunk, instead of handing
 * it to VS Code's Refactor Preview.
 *
 * Each edit is shown in a diff editor: on the left the live document, on the
 * right a read-only proposal (scheme `verbatim-proposal:`) that holds the text
 * the edit was planned against with every hunk applied that is not rejected.
 * A file of more than `verbatim.review.diffMaxLines` lines is reviewed in its
 * own editor instead (opening a copy of it and diffing is what makes a diff
 * slow): its hunks are marked with decorations computed from the edits alone
 * (`inline_marks.ts`), and an "Open diff" lens turns it to a diff.
 * CodeLenses on the proposal (or that editor) accept or reject each hunk, or all of them;
 * commands (with keybindings under the `verbatim.reviewing` context key) do
 * the same at the cursor. Nothing is applied until every hunk of every file of
 * the edit is decided; then the accepted hunks' edits, as sent, are applied
 * in one `workspace.applyEdit` (one undo step), and only if every document is
 * still at the version the server planned against.
 *
 * An edit that creates, moves or deletes files (`verbatim/applyPatch`,
 * `verbatim/write` of a new file) is reviewed the same way, each such file in
 * a diff of its text before (on the left, read-only: empty for a created file,
 * which is neither read nor opened) and after the edit (empty for a deleted
 * file). It is decided whole, by Accept All or Reject All: the server cannot
 * take a file created without its text. Accepted, its file operations and
 * text edits are applied in the server's order in one `workspace.applyEdit`,
 * and a created file is saved, since its text is nowhere else (except for
 * Claude Code's and Gemini CLI's, which write the file themselves once they
 * have the answer: a save of ours could meet their write, and stop at "The
 * content of the file is newer").
 *
 * Edits wait in a queue, shown one at a time in arrival order. When the
 * person types in a document under review, the edit is refused once the
 * typing has settled ("the document changed during review"): the server moves
 * it over the typing and offers it again with the same `verbatim.id`, and the
 * new offer takes the old one's place, with the decisions on unchanged hunks.
 * If the person had already decided every hunk, the new offer is applied at
 * once. If no new offer comes (the typing touched the edit's text, and the
 * agent got `stale`), the review is withdrawn with a message; so it is when
 * the agent cancels (`$/cancelRequest`).
 */

import * as vscode from "vscode";
import type { ApplyWorkspaceEditParams, ApplyWorkspaceEditResult } from "vscode-languageserver-protocol";

import { SECTION } from "./config";
import { errorMessage } from "./errors";
import {
    acceptedEdits,
    allDecided,
    answerFor,
    carryDecisions,
    decidedWhole,
    describeOperation,
    describeOperations,
    DOCUMENT_CHANGED,
    editSteps,
    fileName,
    fileView,
    hunkAt,
    hunkKeys,
    joinReasons,
    nextUndecided,
    noteHeadline,
    readProposal,
    sourceUri,
    targetUri,
    type Decision,
    type EditStep,
    type Proposal,
    type HunkLines,
    type ProposalView,
    type ReviewFile,
} from "./hunks";
import { hunkMarks, readDiffMaxLines, usesFastPath, type HunkMarks } from "./inline_marks";
import { LensRefetch } from "./lens_refetch";
import { writesTheFileItself, type ReviewDecidedParams } from "./lsp_ext";

export const PROPOSAL_SCHEME = "verbatim-proposal";
/** How long a document must be still after the person typed before its edit is refused, to be offered again. */
export const SETTLE_MS = 300;
/** How long to wait for the new offer of a refused edit before the review is withdrawn. */
export const REOFFER_TIMEOUT_MS = 5_000;
const CONTEXT_KEY = "verbatim.reviewing";
/** Set while the review shown is in the file's own editor (a large file): the hunk keys work there too. */
const IN_EDITOR_CONTEXT_KEY = "verbatim.reviewingInEditor";
/** The paths of the files whose review is shown in their own editor: their title bar shows Accept All and Reject All at once (CodeLenses come only after VS Code's fetch delay). */
const REVIEWED_PATHS_CONTEXT_KEY = "verbatim.reviewedPaths";

/** One edit under review, across its offers. */
interface Review {
    /** Its number in this window, from 1: names its proposal documents, the same for every offer. */
    readonly seq: number;
    proposal: Proposal;
    decisions: Decision[];
    /** For an edit decided whole (it creates, moves or deletes files): Accept All or Reject All, kept across offers. */
    whole: Decision;
    /** The person's reasons, per rejected hunk (and `-1` for Reject All), for the agent. */
    reasons: Map<number, string>;
    /**
     * Per file (`ReviewFile.uri`): the text the edit was planned against, as the document held it when the
     * offer came; for a file it creates, empty; for one it deletes or moves, its text then.
     */
    bases: Map<string, string>;
    /** Per open document the edit changes: the version the edit applies to. */
    versions: Map<string, number>;
    /** Which of its files (`Proposal.files`) the review shows. */
    file: number;
    /**
     * Per file index, where it is reviewed once decided (on first show):
     * in a diff, or in the file's own editor (more lines than
     * `verbatim.review.diffMaxLines`; "Open diff" turns it to a diff).
     */
    places: Map<number, "diff" | "editor">;
    /** Answers the current offer; `undefined` while the review waits for a new offer. */
    answer: ((result: ApplyWorkspaceEditResult) => void) | undefined;
    /** The person decided every hunk while the document had moved: apply the new offer as soon as it comes. */
    applyOnNewOffer: boolean;
    settleTimer: ReturnType<typeof setTimeout> | undefined;
    newOfferTimer: ReturnType<typeof setTimeout> | undefined;
    /** Cache of what the proposal documents show, per file index, until a decision changes. */
    views: Map<number, ProposalView>;
    arrivedAt: number;
    /** Tells the server the decision, just before the kept hunks are applied (`verbatim/reviewDecided`), through the connection of the current offer. */
    tellDecided: ((params: ReviewDecidedParams) => void) | undefined;
}

/** A hunk named by a CodeLens or a command argument. */
interface HunkTarget {
    seq: number;
    hunk: number;
}

export class InlineReview implements vscode.Disposable {
    private readonly reviews: Review[] = [];
    /** The review shown in the diff editor, if any. */
    private shown: Review | undefined;
    private nextSeq = 1;
    private readonly disposables: vscode.Disposable[] = [];
    private readonly contentChanged = new vscode.EventEmitter<vscode.Uri>();
    private readonly lensesChanged = new vscode.EventEmitter<void>();
    /** Asks for the shown review's lenses until VS Code has fetched them: it drops a fetch when the editor loses focus. */
    private readonly lensRefetch = new LensRefetch((uri, again) => {
        if (again) this.log.info(`[review] VS Code has not asked for the lenses of ${uri} yet: asking again`);
        this.lensesChanged.fire();
    });
    private readonly statusItem: vscode.StatusBarItem;
    /** In the file's own editor: the text a hunk removes. */
    private readonly removedDecoration: vscode.TextEditorDecorationType;
    /** In the file's own editor: the text a hunk inserts, shown after the removed text. */
    private readonly insertedDecoration: vscode.TextEditorDecorationType;
    /** The editors that hold the review's decorations, to clear them when it ends or moves on. */
    private readonly decorated = new Set<vscode.TextEditor>();

    constructor(private readonly log: vscode.LogOutputChannel) {
        this.removedDecoration = vscode.window.createTextEditorDecorationType({
            backgroundColor: new vscode.ThemeColor("diffEditor.removedTextBackground"),
            textDecoration: "line-through",
            rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
        });
        this.insertedDecoration = vscode.window.createTextEditorDecorationType({
            after: {
                backgroundColor: new vscode.ThemeColor("diffEditor.insertedTextBackground"),
                color: new vscode.ThemeColor("gitDecoration.addedResourceForeground"),
                margin: "0 0 0 0.25em",
            },
            rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
        });
        this.statusItem = vscode.window.createStatusBarItem("verbatim.review", vscode.StatusBarAlignment.Right, 101);
        this.statusItem.name = "Verbatim Review";
        this.statusItem.command = "verbatim.review.showQueue";
        this.statusItem.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
        this.disposables.push(
            this.statusItem,
            this.removedDecoration,
            this.insertedDecoration,
            this.contentChanged,
            this.lensesChanged,
            vscode.workspace.registerTextDocumentContentProvider(PROPOSAL_SCHEME, {
                onDidChange: this.contentChanged.event,
                provideTextDocumentContent: (uri) => this.proposalText(uri),
            }),
            vscode.languages.registerCodeLensProvider({ scheme: PROPOSAL_SCHEME }, {
                onDidChangeCodeLenses: this.lensesChanged.event,
                provideCodeLenses: (document) => this.codeLenses(document.uri),
            }),
            // The file's own editor, for a review shown there: every scheme, since any document can be under review.
            vscode.languages.registerCodeLensProvider({ scheme: "*" }, {
                onDidChangeCodeLenses: this.lensesChanged.event,
                provideCodeLenses: (document) => this.editorLenses(document.uri),
            }),
            vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
            vscode.workspace.onDidChangeTextDocument((event) => this.onDidChangeDocument(event)),
            vscode.window.tabGroups.onDidChangeTabs((event) => this.onDidChangeTabs(event.closed)),
            ...this.registerCommands(),
        );
    }

    /** Withdraws every review: the connection they came on is gone (the server stopped or restarts). */
    withdrawAll(): void {
        for (const review of [...this.reviews]) this.withdraw(review, undefined);
    }

    dispose(): void {
        this.withdrawAll();
        this.lensRefetch.dispose();
        for (const disposable of this.disposables) disposable.dispose();
    }

    /**
     * Reviews an edit; resolves with the answer to the server. `undefined`
     * when the edit is not one this review shows (it changes nothing, or holds
     * a change the review does not know): the caller hands it to VS Code.
     */
    async review(
        params: ApplyWorkspaceEditParams,
        token: vscode.CancellationToken,
        tellDecided?: (params: ReviewDecidedParams) => void,
    ): Promise<ApplyWorkspaceEditResult | undefined> {
        const arrivedAt = Date.now();
        const proposal = readProposal(params);
        if (proposal === undefined) return undefined;

        const bases = new Map<string, string>();
        const versions = new Map<string, number>();
        for (const file of proposal.files) {
            const base = await readBase(file);
            if ("failure" in base) {
                if (base.failure === DOCUMENT_CHANGED) {
                    // The person typed since the server planned the edit: it offers the edit again over the new text.
                    this.log.info(`[review] "${proposal.label}": ${DOCUMENT_CHANGED} before it arrived`);
                    const earlier = this.reviews.find((candidate) => candidate.proposal.key === proposal.key);
                    if (earlier !== undefined && earlier.answer === undefined) this.awaitNewOffer(earlier);
                }
                return { applied: false, failureReason: base.failure };
            }
            bases.set(file.uri, base.text);
            if (base.version !== undefined) versions.set(file.uri, base.version);
        }

        return new Promise<ApplyWorkspaceEditResult>((resolve) => {
            const earlier = this.reviews.find((candidate) => candidate.proposal.key === proposal.key);
            let review: Review;
            if (earlier !== undefined) {
                review = earlier;
                review.tellDecided = tellDecided;
                this.takeNewOffer(review, proposal, bases, versions, resolve);
            } else {
                review = {
                    seq: this.nextSeq++,
                    proposal,
                    decisions: [],
                    whole: undefined,
                    reasons: new Map(),
                    bases,
                    versions,
                    file: 0,
                    places: new Map(),
                    answer: resolve,
                    applyOnNewOffer: false,
                    settleTimer: undefined,
                    newOfferTimer: undefined,
                    views: new Map(),
                    arrivedAt,
                    tellDecided,
                };
                this.reviews.push(review);
                this.lensesChanged.fire(); // "Edit 1 of 2" on the review shown.
                this.log.info(
                    `[review] "${proposal.label}": ${proposal.hunks.length} hunk(s) in ${proposal.files.length} file(s)` +
                        `${decidedWhole(proposal) ? ` (${describeOperations(proposal)}: decided whole)` : ""}, ${this.reviews.length} edit(s) waiting`,
                );
            }
            token.onCancellationRequested(() => {
                if (review.answer !== resolve) return;
                this.withdraw(review, `Verbatim: ${review.proposal.label}: the agent withdrew the edit.`);
            });
            this.update();
            if (earlier === undefined && this.shown === undefined) void this.show(review);
            else if (review.applyOnNewOffer && isDecided(review)) void this.finish(review);
        });
    }

    // --- Offers ---------------------------------------------------------------

    /** A new offer of an edit under review takes the old offer's place, with the decisions on unchanged hunks. */
    private takeNewOffer(
        review: Review,
        proposal: Proposal,
        bases: Map<string, string>,
        versions: Map<string, number>,
        answer: (result: ApplyWorkspaceEditResult) => void,
    ): void {
        // An offer still waiting for its answer is answered: the server sends a new one only after that.
        review.answer?.({ applied: false, failureReason: DOCUMENT_CHANGED });
        const oldKeys = hunkKeys(review.proposal, (uri) => review.bases.get(uri));
        const newKeys = hunkKeys(proposal, (uri) => bases.get(uri));
        const whole = review.whole;
        review.decisions = whole === undefined ? carryDecisions(oldKeys, review.decisions, newKeys) : proposal.hunks.map(() => whole);
        const shownUri = review.proposal.files[review.file]?.uri;
        review.proposal = proposal;
        review.bases = bases;
        review.versions = versions;
        review.file = Math.max(0, proposal.files.findIndex((file) => file.uri === shownUri));
        review.answer = answer;
        clearTimeout(review.newOfferTimer);
        review.newOfferTimer = undefined;
        this.log.info(
            `[review] "${proposal.label}": offer ${proposal.offer || "again"}, over the new text; ` +
                `${review.decisions.filter((decision) => decision !== undefined).length} decision(s) kept`,
        );
        this.refresh(review);
    }

    /** The person typed in a document of an edit under review: once the typing settles, refuse the offer. */
    private onDidChangeDocument(event: vscode.TextDocumentChangeEvent): void {
        if (event.contentChanges.length === 0 || event.document.uri.scheme === PROPOSAL_SCHEME) return;
        const uri = event.document.uri.toString();
        for (const review of this.reviews) {
            const version = review.versions.get(uri);
            if (review.answer === undefined || version === undefined || version === event.document.version) continue;
            clearTimeout(review.settleTimer);
            review.settleTimer = setTimeout(() => this.refuseMoved(review), SETTLE_MS);
        }
    }

    /** Answers "the document changed" and waits for the server's new offer. */
    private refuseMoved(review: Review): void {
        review.settleTimer = undefined;
        const answer = review.answer;
        if (answer === undefined || !this.reviews.includes(review)) return;
        review.answer = undefined;
        this.log.info(`[review] "${review.proposal.label}": ${DOCUMENT_CHANGED}; waiting for the server to offer it over the new text`);
        answer({ applied: false, failureReason: DOCUMENT_CHANGED });
        this.awaitNewOffer(review);
        this.lensesChanged.fire(); // "updating…"
        this.update();
    }

    /** (Re)starts the wait for the server's next offer of a refused edit. */
    private awaitNewOffer(review: Review): void {
        clearTimeout(review.newOfferTimer);
        review.newOfferTimer = setTimeout(
            () =>
                this.withdraw(
                    review,
                    `Verbatim: ${review.proposal.label}: your typing changed the text this edit changes, so it was withdrawn; the agent was told.`,
                ),
            REOFFER_TIMEOUT_MS,
        );
    }

    // --- Decisions -------------------------------------------------------------

    private async decide(target: HunkTarget | undefined, decision: "accepted" | "rejected"): Promise<void> {
        const found = target ?? this.hunkAtCursor();
        const review = found && this.reviews.find((candidate) => candidate.seq === found.seq);
        if (found === undefined || review === undefined || review.proposal.hunks[found.hunk] === undefined) {
            void vscode.window.showInformationMessage("Verbatim: no hunk under review here.");
            return;
        }
        if (this.refusesHunks(review)) return;
        if (decision === "rejected") {
            const reason = await askReason(`Reject hunk ${found.hunk + 1} of ${review.proposal.hunks.length}: ${review.proposal.label}`);
            if (reason === undefined || !this.reviews.includes(review)) return;
            review.reasons.set(found.hunk, reason);
        }
        review.decisions[found.hunk] = decision;
        this.log.info(`[review] "${review.proposal.label}": hunk ${found.hunk} ${decision}`);
        await this.afterDecision(review, found.hunk);
    }

    private async decideAll(seq: number | undefined, decision: "accepted" | "rejected"): Promise<void> {
        const review = seq === undefined ? this.shown : this.reviews.find((candidate) => candidate.seq === seq);
        if (review === undefined) {
            void vscode.window.showInformationMessage("Verbatim: no edit is under review.");
            return;
        }
        if (decision === "rejected") {
            const reason = await askReason(`Reject: ${review.proposal.label}`);
            if (reason === undefined || !this.reviews.includes(review)) return;
            review.reasons.set(-1, reason);
        }
        if (decidedWhole(review.proposal)) review.whole = decision;
        for (let index = 0; index < review.proposal.hunks.length; index++) review.decisions[index] ??= decision;
        this.log.info(`[review] "${review.proposal.label}": every undecided hunk ${decision}`);
        await this.afterDecision(review, 0);
    }

    private undo(target: HunkTarget): void {
        const review = this.reviews.find((candidate) => candidate.seq === target.seq);
        if (review === undefined || this.refusesHunks(review)) return;
        review.decisions[target.hunk] = undefined;
        review.reasons.delete(target.hunk);
        this.refresh(review);
    }

    /** An edit decided whole has no decision per hunk: says so, and why, when one is asked for. */
    private refusesHunks(review: Review): boolean {
        if (!decidedWhole(review.proposal)) return false;
        void vscode.window.showInformationMessage(
            `Verbatim: ${review.proposal.label}: this edit ${describeOperations(review.proposal)}, so it is accepted or rejected whole, ` +
                "not hunk by hunk: use Accept All or Reject All.",
        );
        return true;
    }

    /** Finishes the review once every hunk is decided, else moves to the next undecided hunk. */
    private async afterDecision(review: Review, hunk: number): Promise<void> {
        if (isDecided(review)) {
            await this.finish(review);
            return;
        }
        this.refresh(review);
        const next = nextUndecided(review.decisions, review.proposal.hunks.length, hunk);
        if (next !== undefined) await this.revealHunk(review, next);
    }

    /**
     * Applies the accepted hunks (and, for an edit accepted whole, its file
     * operations) and answers. When a document has moved since the offer (the
     * person typed, and the offer has not been refused yet), nothing is
     * applied: the decisions wait for the new offer.
     */
    private async finish(review: Review): Promise<void> {
        const answer = review.answer;
        const reason = joinReasons([...review.reasons.values()]);
        const keepsAnything = review.whole === undefined ? acceptedEdits(review.proposal, review.decisions).size > 0 : review.whole === "accepted";
        if (!keepsAnything && answer !== undefined) {
            this.complete(review, answerFor(review.proposal, review.decisions, reason, review.whole));
            return;
        }
        if (answer === undefined || this.moved(review)) {
            review.applyOnNewOffer = true;
            this.log.info(`[review] "${review.proposal.label}": decided while the document changed; applying the new offer when it comes`);
            if (answer !== undefined) {
                clearTimeout(review.settleTimer);
                this.refuseMoved(review);
            }
            this.refresh(review);
            return;
        }
        const edit = new vscode.WorkspaceEdit();
        const steps = editSteps(review.proposal, review.decisions);
        for (const step of steps) addStep(edit, step);
        const decided = answerFor(review.proposal, review.decisions, reason, review.whole);
        // An agent that writes the file itself needs only the decision: it is answered before VS Code applies the edit.
        if (review.proposal.id !== undefined && decided.hunks !== undefined && decided.hunks.length > 0) {
            review.tellDecided?.({
                id: review.proposal.id,
                offer: review.proposal.offer,
                hunks: decided.hunks,
                ...(decided.reason !== undefined ? { reason: decided.reason } : {}),
            });
        }
        // Taken off the queue first: the change this applies is not the person's typing.
        review.answer = undefined;
        this.remove(review);
        let applied = false;
        let failure: string | undefined;
        try {
            // VS Code refuses the edit if a document changed between the check above and now.
            applied = await vscode.workspace.applyEdit(edit);
        } catch (error) {
            failure = errorMessage(error);
            this.log.warn(`[review] "${review.proposal.label}": applying failed: ${failure}`);
        }
        this.log.info(`[review] "${review.proposal.label}": ${applied ? "applied" : "could not apply"} the accepted hunks`);
        if (!applied) {
            answer({ applied: false, failureReason: this.applyFailure(review, failure) });
            return;
        }
        answer(decided);
        // Only after the answer: the server checks a created file's text in its buffer, which VS Code closes once it is saved.
        await this.saveCreated(review, steps);
    }

    /** Why VS Code did not apply an edit: a document changed (the server then offers it again), else what VS Code said. */
    private applyFailure(review: Review, error: string | undefined): string {
        if (this.moved(review) || !decidedWhole(review.proposal)) return DOCUMENT_CHANGED;
        const operations = describeOperations(review.proposal);
        return error === undefined
            ? `VS Code did not apply the edit that ${operations}: a file to create or move to may exist already, or one to move or delete may be gone`
            : `VS Code did not apply the edit that ${operations}: ${error}`;
    }

    /**
     * Saves the files the edit created, once their text is in: VS Code creates
     * a file empty on disk and leaves its text unsaved, and a new file's text
     * is nowhere else (the agent, and any tool, reads the disk).
     */
    private async saveCreated(review: Review, steps: readonly EditStep[]): Promise<void> {
        if (writesTheFileItself(review.proposal.agent, review.proposal.writesItself)) {
            // Its write comes back as `synced`, and the re-read leaves the document clean (disk_changes.ts).
            if (steps.some((step) => step.kind === "create")) this.log.info(`[review] "${review.proposal.label}": ${review.proposal.agent} writes the new file itself`);
            return;
        }
        for (const step of steps) {
            if (step.kind !== "create") continue;
            const document = findDocument(step.uri);
            if (document === undefined || !document.isDirty) continue;
            let failure: string | undefined;
            try {
                if (!(await document.save())) failure = "VS Code did not save it";
            } catch (error) {
                failure = errorMessage(error);
            }
            if (failure === undefined) continue;
            this.log.warn(`[review] "${review.proposal.label}": could not save ${step.uri}: ${failure}`);
            // Its text is only in the unsaved buffer: show it, so that it is not lost unseen.
            void vscode.window.showTextDocument(document, { preview: false });
            void vscode.window.showWarningMessage(
                `Verbatim: ${review.proposal.label}: the new file ${fileName(step.uri)} could not be saved (${failure}); ` +
                    "its text is in the editor, unsaved.",
            );
        }
    }

    /** Whether a document of the review is no longer at the version of the offer. */
    private moved(review: Review): boolean {
        for (const [uri, version] of review.versions) {
            if (findDocument(uri)?.version !== version) return true;
        }
        return false;
    }

    private complete(review: Review, result: ApplyWorkspaceEditResult): void {
        const answer = review.answer;
        review.answer = undefined;
        this.remove(review);
        this.log.info(`[review] "${review.proposal.label}": answered ${JSON.stringify(result)}`);
        answer?.(result);
    }

    /** Takes a review off the queue (answering its offer as withdrawn, if any) and tells the person why, if `message`. */
    private withdraw(review: Review, message: string | undefined): void {
        if (!this.reviews.includes(review)) return;
        this.log.info(`[review] "${review.proposal.label}": withdrawn${message ? ` (${message})` : ""}`);
        const answer = review.answer;
        review.answer = undefined;
        this.remove(review);
        answer?.({ applied: false, failureReason: "the review was withdrawn" });
        if (message !== undefined) void vscode.window.showWarningMessage(message);
    }

    private remove(review: Review): void {
        clearTimeout(review.settleTimer);
        clearTimeout(review.newOfferTimer);
        const index = this.reviews.indexOf(review);
        if (index < 0) return;
        this.reviews.splice(index, 1);
        const wasShown = this.shown === review;
        if (wasShown) {
            this.shown = undefined;
            this.lensRefetch.cancel();
        }
        void this.closeTabs(review);
        this.lensesChanged.fire();
        this.update();
        if (wasShown) {
            const next = this.reviews[Math.min(index, this.reviews.length - 1)];
            if (next !== undefined) void this.show(next);
        }
    }

    // --- Showing ----------------------------------------------------------------

    /**
     * A read-only document of a review: the proposal of a file (named as the
     * edit leaves it), or, for a file the edit creates, moves or deletes, its
     * `base` text (named as it was), the left side of its diff.
     */
    private proposalUri(review: Review, file: number, side: "proposal" | "base" = "proposal"): vscode.Uri {
        const reviewFile = review.proposal.files[file]!;
        const named = vscode.Uri.parse(side === "base" ? sourceUri(reviewFile) : targetUri(reviewFile));
        const query = `review=${review.seq}&file=${file}${side === "base" ? "&side=base" : ""}`;
        return vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: named.path, query });
    }

    private fromProposalUri(uri: vscode.Uri): { review: Review; file: number; side: "proposal" | "base" } | undefined {
        const query = new URLSearchParams(uri.query);
        const seq = Number(query.get("review"));
        const file = Number(query.get("file"));
        const review = this.reviews.find((candidate) => candidate.seq === seq);
        if (review === undefined || review.proposal.files[file] === undefined) return undefined;
        return { review, file, side: query.get("side") === "base" ? "base" : "proposal" };
    }

    private view(review: Review, file: number): ProposalView {
        let view = review.views.get(file);
        if (view === undefined) {
            const reviewFile = review.proposal.files[file]!;
            view = fileView(review.bases.get(reviewFile.uri) ?? "", reviewFile, review.proposal.hunks, review.decisions);
            review.views.set(file, view);
        }
        return view;
    }

    private proposalText(uri: vscode.Uri): string {
        const started = Date.now();
        const found = this.fromProposalUri(uri);
        const text =
            found === undefined
                ? ""
                : found.side === "base"
                  ? (found.review.bases.get(found.review.proposal.files[found.file]!.uri) ?? "")
                  : this.view(found.review, found.file).text;
        this.log.debug(`[review] proposal ${uri.query}: ${text.length} characters in ${Date.now() - started} ms (at +${Date.now() - (found?.review.arrivedAt ?? 0)} ms)`);
        return text;
    }

    /**
     * Shows one file of a review: in a diff (the live document on the left,
     * the proposal on the right) or, for a large file, in its own editor. A
     * file the edit creates, moves or deletes has its text before the edit on
     * the left (empty for a created file), never a document of the file.
     */
    private async show(review: Review, file = review.file): Promise<void> {
        if (!this.reviews.includes(review)) return;
        this.shown = review;
        review.file = file;
        this.update();
        if (this.inEditor(review, file)) {
            await this.showInEditor(review, file);
            return;
        }
        const reviewFile = review.proposal.files[file]!;
        const left = reviewFile.operation === undefined ? vscode.Uri.parse(reviewFile.uri) : this.proposalUri(review, file, "base");
        const files = review.proposal.files.length;
        const title = `${review.proposal.label} · ${fileTitle(reviewFile)}${files > 1 ? ` (file ${file + 1} of ${files})` : ""}`;
        const first = this.view(review, file).hunks.find((hunk) => review.decisions[hunk.index] === undefined) ?? this.view(review, file).hunks[0];
        const line = first?.proposalLine ?? 0;
        const right = this.proposalUri(review, file);
        const started = Date.now();
        await vscode.commands.executeCommand("vscode.diff", left, right, title, {
            preview: false,
            selection: new vscode.Range(line, 0, line, 0),
        } satisfies vscode.TextDocumentShowOptions);
        this.lensRefetch.expect(right.toString());
        // One tab per review: the diff of the file shown before goes.
        await this.closeTabs(review, file);
        this.log.info(
            `[review] "${review.proposal.label}": shown in ${Date.now() - started} ms (${Date.now() - review.arrivedAt} ms after it arrived)`,
        );
    }

    /**
     * Shows one file of a review in its own editor, the hunks marked there
     * (see {@link decorate}), at the first undecided hunk.
     */
    private async showInEditor(review: Review, file: number): Promise<void> {
        const started = Date.now();
        const uri = review.proposal.files[file]!.uri;
        const marks = this.marks(review, file);
        const first = marks.find((hunk) => review.decisions[hunk.index] === undefined) ?? marks[0];
        const position = new vscode.Position(first?.line ?? 0, 0);
        const options: vscode.TextDocumentShowOptions = { preview: false, selection: new vscode.Range(position, position) };
        const open = findDocument(uri);
        const editor = await (open !== undefined ? vscode.window.showTextDocument(open, options) : vscode.window.showTextDocument(vscode.Uri.parse(uri), options));
        editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
        this.decorate();
        this.lensRefetch.expect(editor.document.uri.toString());
        // One place per review: a diff of it shown before goes.
        await this.closeTabs(review);
        this.log.info(
            `[review] "${review.proposal.label}": shown in its own editor in ${Date.now() - started} ms (${Date.now() - review.arrivedAt} ms after it arrived)`,
        );
    }

    /**
     * Whether a file of a review is reviewed in its own editor rather than in
     * a diff; decided when first asked. A file created, moved or deleted is
     * always shown in a diff: its own editor cannot show that.
     */
    private inEditor(review: Review, file: number): boolean {
        let place = review.places.get(file);
        if (place === undefined) {
            const reviewFile = review.proposal.files[file]!;
            const lineCount = findDocument(reviewFile.uri)?.lineCount ?? 0;
            const diffMaxLines = readDiffMaxLines(vscode.workspace.getConfiguration(SECTION).get("review.diffMaxLines"));
            place = reviewFile.operation === undefined && usesFastPath(lineCount, diffMaxLines) ? "editor" : "diff";
            review.places.set(file, place);
        }
        return place === "editor";
    }

    /** Where a file's hunks lie in the document, and what they remove and insert: from the edits alone. */
    private marks(review: Review, file: number): HunkMarks[] {
        const document = review.proposal.files[file]?.document;
        return document === undefined ? [] : hunkMarks(document, review.proposal.hunks, review.decisions);
    }

    /**
     * Marks the hunks of the review shown, if it is shown in the file's own
     * editor, in every editor of that file; clears them everywhere else.
     * While the review waits for a new offer, the marks already there stay:
     * the editor has moved them with the person's typing.
     */
    private decorate(): void {
        const review = this.shown;
        const uri = review !== undefined && this.inEditor(review, review.file) ? review.proposal.files[review.file]!.uri : undefined;
        const visible = vscode.window.visibleTextEditors;
        for (const editor of this.decorated) if (!visible.includes(editor)) this.decorated.delete(editor);
        let removed: vscode.Range[] = [];
        let inserted: vscode.DecorationOptions[] = [];
        if (review !== undefined && uri !== undefined) {
            const marks = this.marks(review, review.file);
            removed = marks.flatMap((hunk) => hunk.removed.map(toRange));
            inserted = marks.flatMap((hunk) =>
                hunk.inserted.map((insertion) => ({
                    range: toRange(insertion.range),
                    renderOptions: { after: { contentText: insertion.label } },
                    hoverMessage: insertion.hover === undefined ? undefined : new vscode.MarkdownString().appendCodeblock(insertion.hover),
                })),
            );
        }
        for (const editor of visible) {
            const here = editor.document.uri.toString() === uri;
            if (here && review?.answer === undefined && this.decorated.has(editor)) continue;
            if (!here && !this.decorated.has(editor)) continue;
            editor.setDecorations(this.removedDecoration, here ? removed : []);
            editor.setDecorations(this.insertedDecoration, here ? inserted : []);
            if (here) this.decorated.add(editor);
            else this.decorated.delete(editor);
        }
    }

    /** "Open diff" on a review shown in the file's own editor: that file is reviewed in a diff from now on. */
    private async openDiff(seq: number | undefined, file: number | undefined): Promise<void> {
        const review = seq === undefined ? this.shown : this.reviews.find((candidate) => candidate.seq === seq);
        if (review === undefined) return;
        const index = file ?? review.file;
        if (review.proposal.files[index] === undefined) return;
        review.places.set(index, "diff");
        this.lensesChanged.fire();
        await this.show(review, index);
    }

    /**
     * The person closed the shown review's diff: it still waits (the status bar
     * lists it), and the next edit to arrive is shown.
     */
    private onDidChangeTabs(closed: readonly vscode.Tab[]): void {
        const shown = this.shown;
        if (shown === undefined) return;
        const closedShown = closed.some((tab) => {
            const input = tab.input;
            if (!(input instanceof vscode.TabInputTextDiff) || input.modified.scheme !== PROPOSAL_SCHEME) return false;
            const query = new URLSearchParams(input.modified.query);
            return query.get("review") === String(shown.seq) && query.get("file") === String(shown.file);
        });
        if (closedShown) {
            this.shown = undefined;
            this.lensRefetch.cancel();
            this.update();
        }
    }

    /** Shows a new state of a review: its proposal text, its lenses, the status bar. */
    private refresh(review: Review): void {
        review.views.clear();
        for (let file = 0; file < review.proposal.files.length; file++) {
            this.contentChanged.fire(this.proposalUri(review, file));
            if (review.proposal.files[file]!.operation !== undefined) this.contentChanged.fire(this.proposalUri(review, file, "base"));
        }
        this.lensesChanged.fire();
        this.update();
    }

    /** Closes the diff tabs of a review, but for the one of file `keep`. */
    private async closeTabs(review: Review, keep?: number): Promise<void> {
        const tabs = vscode.window.tabGroups.all
            .flatMap((group) => group.tabs)
            .filter((tab) => {
                const input = tab.input;
                if (!(input instanceof vscode.TabInputTextDiff) || input.modified.scheme !== PROPOSAL_SCHEME) return false;
                const query = new URLSearchParams(input.modified.query);
                return query.get("review") === String(review.seq) && query.get("file") !== String(keep);
            });
        if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true).then(undefined, () => undefined);
    }

    /** The status bar item and the context key. */
    private update(): void {
        const count = this.reviews.length;
        void vscode.commands.executeCommand("setContext", CONTEXT_KEY, count > 0);
        const shownInEditor = this.shown !== undefined && this.inEditor(this.shown, this.shown.file);
        void vscode.commands.executeCommand("setContext", IN_EDITOR_CONTEXT_KEY, shownInEditor);
        const shownUri = shownInEditor ? this.shown?.proposal.files[this.shown.file]?.uri : undefined;
        void vscode.commands.executeCommand("setContext", REVIEWED_PATHS_CONTEXT_KEY, shownUri ? [vscode.Uri.parse(shownUri).fsPath] : []);
        this.decorate();
        if (count === 0) {
            this.statusItem.hide();
            return;
        }
        const review = this.shown ?? this.reviews[0]!;
        const position = this.reviews.indexOf(review) + 1;
        const files = review.proposal.files.length;
        const fileNote = files > 1 ? ` · file ${review.file + 1} of ${files}` : "";
        const waiting = review.answer === undefined ? " (updating…)" : "";
        this.statusItem.text = `$(git-compare) ${count} to review`;
        this.statusItem.tooltip = [
            `Verbatim: ${count} edit${count === 1 ? "" : "s"} waiting for review`,
            `Edit ${position} of ${count}: ${review.proposal.label}${fileNote}${waiting}`,
            `${review.decisions.filter((decision) => decision !== undefined).length} of ${review.proposal.hunks.length} hunks decided`,
            "Click to list them.",
        ].join("\n");
        this.statusItem.show();
    }

    // --- CodeLenses and commands ------------------------------------------------

    private codeLenses(uri: vscode.Uri): vscode.CodeLens[] {
        this.lensRefetch.provided(uri.toString());
        const found = this.fromProposalUri(uri);
        if (found === undefined || found.side === "base") return [];
        return this.lenses(found.review, found.file, this.view(found.review, found.file).hunks, false);
    }

    /** The lenses in the file's own editor, when the review shown is there. */
    private editorLenses(uri: vscode.Uri): vscode.CodeLens[] {
        this.lensRefetch.provided(uri.toString());
        const review = this.shown;
        if (review === undefined || uri.scheme === PROPOSAL_SCHEME) return [];
        const file = review.file;
        if (review.proposal.files[file]?.uri !== uri.toString() || !this.inEditor(review, file)) return [];
        return this.lenses(review, file, this.marks(review, file), true);
    }

    /**
     * The lenses of one file of a review: `hunks` at their lines in the
     * proposal (in the file's own editor: the document). An edit decided whole
     * has no lens per hunk, and one that says what it does to files.
     */
    private lenses(review: Review, file: number, hunks: readonly HunkLines[], inEditor: boolean): vscode.CodeLens[] {
        const whole = decidedWhole(review.proposal);
        // Just above the file's first hunk, so that a hunk far down a long file has them in sight.
        const headerLine = whole ? 0 : Math.max(0, (hunks[0]?.proposalLine ?? 0) - 1);
        const top = new vscode.Range(headerLine, 0, headerLine, 0);
        const seq = review.seq;
        const hunkCount = review.proposal.hunks.length;
        const decided = review.decisions.filter((decision) => decision !== undefined).length;
        const lenses = [
            new vscode.CodeLens(top, { title: "$(check-all) Accept All", command: "verbatim.review.acceptAll", arguments: [seq] }),
            new vscode.CodeLens(top, { title: "$(close-all) Reject All", command: "verbatim.review.rejectAll", arguments: [seq] }),
        ];
        if (whole) {
            // Not a link: there is nothing to do but accept or reject.
            lenses.push(new vscode.CodeLens(top, { title: `This edit ${describeOperations(review.proposal)}: accept or reject it whole`, command: "" }));
        }
        if (inEditor) {
            lenses.push(new vscode.CodeLens(top, { title: "$(diff) Open diff", command: "verbatim.review.openDiff", arguments: [seq, file] }));
        }
        const files = review.proposal.files.length;
        if (files > 1) {
            lenses.push(new vscode.CodeLens(top, { title: `File ${file + 1} of ${files}: next file`, command: "verbatim.review.nextFile" }));
        }
        const position = this.reviews.indexOf(review);
        if (this.reviews.length > 1) {
            lenses.push(
                new vscode.CodeLens(top, { title: `Edit ${position + 1} of ${this.reviews.length}: next edit`, command: "verbatim.review.nextEdit" }),
            );
        }
        // Last on the line, where a narrow editor cuts it off.
        const progress = whole ? "" : ` · ${decided} of ${hunkCount} hunk${hunkCount === 1 ? "" : "s"} decided`;
        lenses.push(
            new vscode.CodeLens(top, {
                title: `${review.proposal.label}${progress}${review.answer === undefined ? " · updating…" : ""}`,
                command: "verbatim.review.showQueue",
            }),
        );
        if (whole) return lenses;
        const hunkLenses: vscode.CodeLens[] = [];
        for (const hunk of hunks) {
            const at = new vscode.Range(hunk.proposalLine, 0, hunk.proposalLine, 0);
            const target: HunkTarget = { seq, hunk: hunk.index };
            const decision = review.decisions[hunk.index];
            if (decision === undefined) {
                hunkLenses.push(
                    new vscode.CodeLens(at, { title: "$(check) Accept", command: "verbatim.review.acceptHunk", arguments: [target] }),
                    new vscode.CodeLens(at, { title: "$(close) Reject", command: "verbatim.review.rejectHunk", arguments: [target] }),
                );
            } else {
                const title = decision === "accepted" ? "$(check) Accepted · Undo" : "$(close) Rejected (left out) · Undo";
                hunkLenses.push(new vscode.CodeLens(at, { title, command: "verbatim.review.undoDecision", arguments: [target] }));
            }
            const note = review.proposal.hunks[hunk.index]?.note;
            // Not a link: what to know before deciding (a revert's conflict), in full on hover.
            if (note !== undefined) hunkLenses.push(new vscode.CodeLens(at, { title: `$(warning) ${noteHeadline(note)}`, tooltip: note, command: "" }));
        }
        // A hunk on the first line shares the header's line: its own actions go first, before the long label.
        return hunks[0]?.proposalLine === headerLine ? [...hunkLenses, ...lenses] : [...lenses, ...hunkLenses];
    }

    private registerCommands(): vscode.Disposable[] {
        const command = (name: string, run: (...args: never[]) => unknown) => vscode.commands.registerCommand(`verbatim.review.${name}`, run);
        return [
            command("acceptHunk", (target?: HunkTarget) => this.decide(asTarget(target), "accepted")),
            command("rejectHunk", (target?: HunkTarget) => this.decide(asTarget(target), "rejected")),
            command("undoDecision", (target?: HunkTarget) => {
                const found = asTarget(target) ?? this.hunkAtCursor();
                if (found !== undefined) this.undo(found);
            }),
            command("acceptAll", (seq?: number) => this.decideAll(typeof seq === "number" ? seq : undefined, "accepted")),
            command("rejectAll", (seq?: number) => this.decideAll(typeof seq === "number" ? seq : undefined, "rejected")),
            command("nextHunk", () => this.moveHunk(1)),
            command("previousHunk", () => this.moveHunk(-1)),
            command("nextFile", () => this.moveFile(1)),
            command("previousFile", () => this.moveFile(-1)),
            command("nextEdit", () => this.moveEdit(1)),
            command("previousEdit", () => this.moveEdit(-1)),
            command("showQueue", () => this.showQueue()),
            command("openDiff", (seq?: number, file?: number) =>
                this.openDiff(typeof seq === "number" ? seq : undefined, typeof file === "number" ? file : undefined),
            ),
        ];
    }

    /** The hunk at the cursor of the active editor, on either side of the shown review's diff. */
    private hunkAtCursor(): HunkTarget | undefined {
        const editor = vscode.window.activeTextEditor;
        const line = editor?.selection.active.line ?? 0;
        const found = editor ? this.fromProposalUri(editor.document.uri) : undefined;
        if (found !== undefined) {
            // The left side of a file created, moved or deleted is the file's text before the edit.
            const hunk = hunkAt(this.view(found.review, found.file).hunks, line, found.side);
            return hunk && { seq: found.review.seq, hunk: hunk.index };
        }
        const review = this.shown;
        if (review === undefined) return undefined;
        const file = editor ? review.proposal.files.findIndex((candidate) => candidate.uri === editor.document.uri.toString()) : -1;
        // The hunks' lines in the document come from the edits alone: no proposal text needed.
        const hunks = this.marks(review, file >= 0 ? file : review.file);
        const hunk = file >= 0 ? hunkAt(hunks, line, "base") : hunks.find((candidate) => review.decisions[candidate.index] === undefined);
        return hunk && { seq: review.seq, hunk: hunk.index };
    }

    private async moveHunk(step: 1 | -1): Promise<void> {
        const review = this.shown;
        if (review === undefined) return;
        const current = this.hunkAtCursor()?.hunk ?? -1;
        const count = review.proposal.hunks.length;
        const next = (((current + step) % count) + count) % count;
        await this.revealHunk(review, next);
    }

    /** Moves the cursor to a hunk in the proposal, showing its file. */
    private async revealHunk(review: Review, index: number): Promise<void> {
        const hunk = review.proposal.hunks[index];
        if (hunk === undefined) return;
        const file = review.proposal.files.findIndex((candidate) => candidate.document?.uri === hunk.uri);
        if (file !== review.file || this.shown !== review) await this.show(review, file);
        const inEditor = this.inEditor(review, file);
        const lines = (inEditor ? this.marks(review, file) : this.view(review, file).hunks).find((candidate) => candidate.index === index);
        const uri = inEditor ? hunk.uri : this.proposalUri(review, file).toString();
        const editor =
            (inEditor && vscode.window.activeTextEditor?.document.uri.toString() === uri ? vscode.window.activeTextEditor : undefined) ??
            vscode.window.visibleTextEditors.find((candidate) => candidate.document.uri.toString() === uri);
        if (lines === undefined || editor === undefined) return;
        const position = new vscode.Position(lines.proposalLine, 0);
        editor.selection = new vscode.Selection(position, position);
        editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }

    private async moveFile(step: 1 | -1): Promise<void> {
        const review = this.shown;
        if (review === undefined) return;
        const count = review.proposal.files.length;
        await this.show(review, (((review.file + step) % count) + count) % count);
    }

    private async moveEdit(step: 1 | -1): Promise<void> {
        if (this.reviews.length === 0) return;
        const current = this.shown === undefined ? -1 : this.reviews.indexOf(this.shown);
        const count = this.reviews.length;
        await this.show(this.reviews[(((current + step) % count) + count) % count]!);
    }

    private async showQueue(): Promise<void> {
        if (this.reviews.length === 0) {
            void vscode.window.showInformationMessage("Verbatim: no edit is waiting for review.");
            return;
        }
        type Item = vscode.QuickPickItem & { review: Review; file: number };
        const items: Item[] = this.reviews.flatMap((review, position) =>
            review.proposal.files.map((reviewFile, file) => ({
                label: `${position + 1}. ${review.proposal.label}`,
                description: `${fileTitle(reviewFile)}${review.proposal.files.length > 1 ? ` (file ${file + 1} of ${review.proposal.files.length})` : ""}`,
                detail: `${review.proposal.hunks.filter((hunk) => hunk.uri === reviewFile.document?.uri).length} hunk(s)${review === this.shown && file === review.file ? " · shown" : ""}`,
                review,
                file,
            })),
        );
        const choice = await vscode.window.showQuickPick(items, { title: "Verbatim: edits waiting for review", placeHolder: "Pick an edit to review" });
        if (choice !== undefined) await this.show(choice.review, choice.file);
    }
}

/** Asks why, for the agent: `undefined` when the person pressed Escape (the hunk stays undecided), `""` for no reason. */
async function askReason(title: string): Promise<string | undefined> {
    return vscode.window.showInputBox({
        title,
        prompt: "Why? Optional: the agent gets your words. Enter to reject, Escape to keep it undecided.",
        placeHolder: "for example: keep the old name in the public API",
        ignoreFocusOut: true,
    });
}

function asTarget(value: unknown): HunkTarget | undefined {
    if (typeof value !== "object" || value === null) return undefined;
    const { seq, hunk } = value as Partial<HunkTarget>;
    return typeof seq === "number" && typeof hunk === "number" ? { seq, hunk } : undefined;
}

function toRange(range: { start: { line: number; character: number }; end: { line: number; character: number } }): vscode.Range {
    return new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
}

function findDocument(uri: string): vscode.TextDocument | undefined {
    return vscode.workspace.textDocuments.find((document) => document.uri.toString() === uri);
}

/** A file of a review, as its diff's title names it: what the edit does to it, or its name. */
function fileTitle(file: ReviewFile): string {
    return file.operation === undefined ? fileName(file.uri) : describeOperation(file.operation);
}

/** Whether the person decided every hunk of a review; for an edit decided whole, the edit. */
function isDecided(review: Review): boolean {
    return decidedWhole(review.proposal) ? review.whole !== undefined : allDecided(review.decisions, review.proposal.hunks.length);
}

/** Adds one step of an edit to the WorkspaceEdit that applies it, with the options the server sent. */
function addStep(edit: vscode.WorkspaceEdit, step: EditStep): void {
    const uri = vscode.Uri.parse(step.uri);
    switch (step.kind) {
        case "create":
            edit.createFile(uri, { overwrite: step.options?.overwrite, ignoreIfExists: step.options?.ignoreIfExists });
            break;
        case "rename":
            edit.renameFile(uri, vscode.Uri.parse(step.newUri ?? step.uri), { overwrite: step.options?.overwrite, ignoreIfExists: step.options?.ignoreIfExists });
            break;
        case "delete":
            edit.deleteFile(uri, { recursive: step.options?.recursive, ignoreIfNotExists: step.options?.ignoreIfNotExists });
            break;
        case "edit":
            for (const textEdit of step.edits) edit.replace(uri, toRange(textEdit.range), textEdit.newText);
            break;
    }
}

type Base = { text: string; version?: number } | { failure: string };

/**
 * The text a file of an edit is planned against: an open document's, with
 * its version (a document the server sent no version for is opened first);
 * for a file the edit creates, nothing (it is not read: it need not exist);
 * for one it deletes, or moves and edits under the new name, the file's text
 * as it is, from its open document or the disk.
 */
async function readBase(file: ReviewFile): Promise<Base> {
    const operation = file.operation;
    if (operation?.kind === "create") return { text: "" };
    const document = file.document;
    if (document === undefined || (operation !== undefined && document.uri !== operation.uri)) {
        const uri = sourceUri(file);
        try {
            return { text: findDocument(uri)?.getText() ?? new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.parse(uri))) };
        } catch (error) {
            return { failure: `could not read ${uri} to ${operation?.kind === "delete" ? "delete" : "move"} it: ${errorMessage(error)}` };
        }
    }
    let open = findDocument(document.uri);
    if (open === undefined && document.version === null) {
        try {
            open = await vscode.workspace.openTextDocument(vscode.Uri.parse(document.uri));
        } catch (error) {
            return { failure: `could not open ${document.uri}: ${errorMessage(error)}` };
        }
    }
    if (open === undefined || (document.version !== null && open.version !== document.version)) return { failure: DOCUMENT_CHANGED };
    return { text: open.getText(), version: open.version };
}
