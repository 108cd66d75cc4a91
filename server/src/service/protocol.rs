//! The wire types of every custom method, as specified in `docs/protocol.md`.
//!
//! Params are parsed strictly (`deny_unknown_fields`): a misspelt field such as
//! `old_str` is refused with a message naming the fields that are expected, instead
//! of being silently ignored. Results are camelCase JSON. The params of the methods
//! the agents' front-ends send (the MCP tools, the CLI) are in [`params`], their one
//! declaration.

use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::Range;

pub mod params;
pub use params::*;

/// The protocol version in `initialize` results and discovery files.
pub const PROTOCOL_VERSION: u32 = 1;

/// Custom method names.
pub mod method {
    pub const DOCUMENTS: &str = "verbatim/documents";
    pub const READ: &str = "verbatim/read";
    pub const STR_REPLACE: &str = "verbatim/strReplace";
    pub const REPLACE_RANGE: &str = "verbatim/replaceRange";
    pub const BATCH_EDIT: &str = "verbatim/batchEdit";
    pub const WRITE: &str = "verbatim/write";
    pub const STATUS: &str = "verbatim/status";
    pub const STATUS_CHANGED: &str = "verbatim/statusChanged";
    pub const APPLY_PATCH: &str = "verbatim/applyPatch";
    /// Server → editor: a file that is open changed on disk outside the editor.
    pub const EXTERNAL_CHANGE: &str = "verbatim/externalChange";
    /// Editor → server: the selection (or cursor) in the focused document.
    pub const SELECTION_CHANGED: &str = "verbatim/selectionChanged";
    /// Editor → server: the person sends a file or lines to Claude Code.
    pub const AT_MENTION: &str = "verbatim/atMention";
    /// Editor → server: the person decided every hunk of an edit, and the editor is about
    /// to apply the ones they kept.
    pub const REVIEW_DECIDED: &str = "verbatim/reviewDecided";
    /// Server → editor: save an open document (Claude Code's `saveDocument`).
    pub const SAVE_DOCUMENT: &str = "verbatim/saveDocument";
    /// Agent → server: whole new texts an agent will write itself once the person has
    /// reviewed them (an agent's pre-write hook, `verbatim hook`).
    pub const PROPOSE: &str = "verbatim/propose";
    /// Editor or agent → server: every agent's changes, grouped by session and turn.
    pub const TIMELINE: &str = "verbatim/timeline";
    /// Editor or agent → server: one journal entry's texts before and after.
    pub const TIMELINE_ENTRY: &str = "verbatim/timelineEntry";
    /// Editor or agent → server: mark a file of a turn reviewed.
    pub const MARK_REVIEWED: &str = "verbatim/markReviewed";
    /// Editor or agent → server: undo recorded changes as a new, reviewed change.
    pub const REVERT: &str = "verbatim/revert";
    /// Server → editor: the journal grew.
    pub const JOURNAL_CHANGED: &str = "verbatim/journalChanged";

    /// The methods an agent may call, as announced in its `initialize` result.
    pub const AGENT_METHODS: [&str; 13] = [
        DOCUMENTS,
        READ,
        STR_REPLACE,
        REPLACE_RANGE,
        BATCH_EDIT,
        WRITE,
        STATUS,
        APPLY_PATCH,
        PROPOSE,
        TIMELINE,
        TIMELINE_ENTRY,
        MARK_REVIEWED,
        REVERT,
    ];
    /// The methods that change documents (refused on read-only connections, but for dry runs).
    pub const WRITE_METHODS: [&str; 8] =
        [STR_REPLACE, REPLACE_RANGE, BATCH_EDIT, WRITE, APPLY_PATCH, PROPOSE, MARK_REVIEWED, REVERT];
}

/// `verbatim/propose`: whole new texts of files an agent will write itself after the
/// person's review (the agents' pre-write hooks).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProposeParams {
    /// Every file the agent's tool would write: one review.
    pub files: Vec<ProposedFile>,
    pub summary: String,
    /// `always`: the agent would have asked the person, so the editor reviews the change
    /// whatever its own review setting; `editor` (the default): the agent would not
    /// have asked, so the editor's review setting decides.
    #[serde(default)]
    pub review: ProposeReview,
    /// The agent's session (a hook's `session_id`), for the journal.
    #[serde(default)]
    pub session: Option<String>,
    /// The agent's turn (Codex's `turn_id`, Claude Code's `prompt_id`), for the journal.
    #[serde(default)]
    pub turn: Option<String>,
}

/// One file of a proposal.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProposedFile {
    pub uri: String,
    /// The whole new text; `null` when the file is to be deleted.
    pub text: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ProposeReview {
    Always,
    #[default]
    Editor,
}

/// The result of `verbatim/propose`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ProposeResult {
    /// `accepted` (every hunk kept as proposed), `partial` (some left out, or changed by
    /// the person) or `rejected` (nothing is to be written).
    pub decision: ProposeDecision,
    /// Per file, what the agent is to write (empty when rejected).
    pub files: Vec<ProposedOutcome>,
    /// The person's reason for what they left out or rejected, in their words.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// What happened, in words an agent's model can read.
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ProposeDecision {
    Accepted,
    Partial,
    Rejected,
}

/// What one file of a proposal is to hold.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ProposedOutcome {
    pub uri: String,
    /// The text the agent is to write: the file on disk plus the hunks the person kept
    /// (never the person's other unsaved changes); `null` for a deleted file.
    pub text: Option<String>,
    /// The text is exactly the proposal.
    pub as_proposed: bool,
    /// What the person left out, as a unified diff from `text` to the proposal.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub left_out: Option<String>,
}

/// One entry of `verbatim/documents`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct DocumentInfo {
    pub uri: String,
    pub rev: String,
    pub language_id: String,
    pub line_count: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ReadResult {
    pub uri: String,
    pub rev: String,
    pub text: String,
    /// `lf`, `crlf`, `cr` or `mixed`.
    pub line_ending: String,
    /// `editor` or `disk`.
    pub source: String,
    /// Something the reader should know about the text (the editor still owes a change).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
}

/// One requested replacement, with its range in the document before the edit.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct WireEdit {
    pub range: Range,
    pub old_text: String,
    pub new_text: String,
}

/// What happened (or would happen) to one document.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct DocumentResult {
    pub uri: String,
    /// The revision the plan was computed against; `null` for a created file.
    pub base_rev: Option<String>,
    /// The revision after the edit (the base revision for a dry run).
    pub rev: Option<String>,
    pub edits: Vec<WireEdit>,
    pub replaced: Vec<String>,
    pub diff: String,
    pub modified_by_editor: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub editor_diff: Option<String>,
    /// What it took to find the quotes (`lineNumbers`, `typography`, `lineEndings`,
    /// `trailingWhitespace`, `indentation`) and `deletedTrailingNewline`; empty when
    /// every quote matched exactly.
    #[serde(default)]
    pub normalizations: Vec<String>,
    /// `create`, `delete` or `move` when the file itself is created, deleted or moved.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub operation: Option<String>,
    /// Where a moved file goes.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub new_uri: Option<String>,
    /// The edit was planned against an older revision (`rebasedFrom`, the `baseRev`
    /// sent) and moved over the changes made since, which did not touch it; `baseRev`
    /// is then the revision it was applied to.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub rebased: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rebased_from: Option<String>,
    /// What became of each hunk of the proposal (an edit that went through the editor).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub hunks: Option<Vec<HunkOutcome>>,
    /// The person applied some hunks and left the others out.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub partial: bool,
    /// The editor said it applied the edit but has not sent the changed text yet (a
    /// plain LSP client that sends changes later, e.g. Eglot with the person's next
    /// keystroke or save): `rev` is then `null`, and a read of the document waits for it.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub pending_sync: bool,
}

/// One hunk of a proposal, and whether the person kept it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HunkOutcome {
    /// Numbered across the whole write.
    pub index: usize,
    pub accepted: bool,
    /// 1-based first line of the hunk in the text before the edit.
    pub line: usize,
    /// Lines it replaces (0: it only inserts, before `line`).
    pub old_lines: usize,
    /// Lines it puts in their place.
    pub new_lines: usize,
}

/// The result of `strReplace`, `replaceRange` and `write`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct EditResult {
    pub applied: bool,
    pub dry_run: bool,
    #[serde(flatten)]
    pub document: DocumentResult,
    /// Why the person left hunks out, in their words.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub diagnostics: Option<DiagnosticsReport>,
}

/// The result of `batchEdit`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct BatchResult {
    pub applied: bool,
    pub dry_run: bool,
    pub modified_by_editor: bool,
    pub documents: Vec<DocumentResult>,
    /// Some document's hunks were left out.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub diagnostics: Option<DiagnosticsReport>,
}

/// The result of `applyPatch`: a `BatchResult` that also says how the patch was read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ApplyPatchResult {
    pub applied: bool,
    pub dry_run: bool,
    pub modified_by_editor: bool,
    /// `applyPatch` (OpenAI's format) or `searchReplace`.
    pub format: String,
    pub documents: Vec<DocumentResult>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub diagnostics: Option<DiagnosticsReport>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AgentStatus {
    pub id: u64,
    pub name: String,
    /// `readWrite` or `readOnly`.
    pub access: crate::service::access::Access,
    pub version: Option<String>,
    pub connected_at: String,
    pub pending_edits: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PendingStatus {
    pub id: u64,
    pub agent_id: u64,
    pub agent: String,
    pub summary: String,
    pub uris: Vec<String>,
    pub since: String,
}

/// The result of `verbatim/status` and the params of `verbatim/statusChanged`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct StatusResult {
    pub socket: Option<String>,
    #[serde(default)]
    pub read_only_socket: Option<String>,
    pub discovery_file: Option<String>,
    pub editor_connected: bool,
    pub agents: Vec<AgentStatus>,
    pub pending: Vec<PendingStatus>,
}

/// The editor's `initializationOptions`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct InitializationOptions {
    pub needs_confirmation: bool,
    pub status_notifications: bool,
    pub sync_timeout_ms: u64,
    pub apply_timeout_ms: Option<u64>,
    /// The access of agents on the main socket (the read-only socket is always read-only).
    pub agent_access: crate::service::access::Access,
    /// Path patterns agents may not write (nor read from disk); `None` keeps the defaults.
    pub write_deny_list: Option<Vec<String>>,
    pub allow_writes_outside_workspace: bool,
    /// What to do when an open file changes on disk outside the editor.
    pub external_changes: ExternalChanges,
    /// The editor answers `verbatim/diagnostics`.
    pub diagnostics: bool,
    /// The editor reports which hunks it applied (informational).
    pub hunk_outcomes: bool,
    /// Serve Claude Code's IDE protocol (a WebSocket endpoint and a lock file).
    pub claude_code: bool,
    /// Serve Gemini CLI's and Qwen Code's IDE companion interface (an MCP endpoint over
    /// HTTP and their discovery files).
    pub gemini_cli: bool,
    /// The editor reads Verbatim's additions to the protocol: the `verbatim` object in
    /// `workspace/applyEdit` params and `verbatim/externalChange`. Without it the editor
    /// gets only what the LSP specification defines (a plain client such as Eglot).
    pub verbatim_extensions: bool,
}

/// An agent's `initializationOptions`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentOptions {
    /// The default of every write's `diagnostics`.
    pub diagnostics: Option<DiagnosticsLevel>,
    /// The default of every write's `diagnosticsTimeoutMs`.
    pub diagnostics_timeout_ms: Option<u64>,
}

/// Whether the problems reported after an edit are complete.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum DiagnosticsStatus {
    /// Every edited document got fresh diagnostics, which then stayed quiet.
    Settled,
    /// The wait ended first: the lists may be incomplete.
    TimedOut,
    /// No language server reports for the document, or no editor answers.
    Unavailable,
}

/// One problem, as reported to an agent.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ProblemItem {
    /// `path:line:column`, 1-based.
    pub location: String,
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub severity: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub message: String,
    /// The source line, trimmed (for a resolved problem, as it was).
    pub text: String,
}

/// What the editor's language servers report after an edit.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsReport {
    pub status: DiagnosticsStatus,
    pub waited_ms: u64,
    pub sources: Vec<String>,
    /// `errors` or `warnings`.
    pub severity: String,
    pub introduced: Vec<ProblemItem>,
    pub resolved: Vec<ProblemItem>,
    pub existing: usize,
    pub other_files: Vec<ProblemItem>,
    /// Items left out to keep the lists short.
    pub omitted: usize,
    /// Edited documents nothing reported on (no language server, or written on
    /// disk, not open in the editor), by workspace label; only when `status` is not
    /// `unavailable`, which covers every document.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked: Vec<String>,
    pub unsaved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What to do when an open file changes on disk outside the editor.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum ExternalChanges {
    /// Offer the merged change for review (`needsConfirmation: true`).
    #[default]
    Review,
    /// Apply the merged change without asking (`needsConfirmation: false`).
    Auto,
    /// Do not watch the disk.
    Off,
}

/// What a change on disk was, in `verbatim/externalChange`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum ExternalChangeKind {
    /// The buffer had no unsaved changes: the editor should reload the file.
    Reload,
    /// Merged with the unsaved changes and offered as a `workspace/applyEdit`,
    /// which follows this notification.
    Offered,
    /// Every changed line overlaps the person's unsaved changes: nothing is offered.
    Conflict,
    /// The disk now holds what the buffer holds (nothing to merge); the editor
    /// should take note of the file's new timestamp.
    Synced,
    /// The file was deleted; the buffer is left as it is.
    Deleted,
    /// The file was moved to `movedTo`; the buffer is left as it is.
    Moved,
}

/// A region both the person and the change on disk touched (1-based, inclusive).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ExternalConflict {
    /// The first line of the person's version (in the buffer).
    pub line: usize,
    /// The last line in the buffer; `line - 1` when the person's side is empty.
    pub end_line: usize,
    /// The first line of the version on disk.
    pub disk_line: usize,
    /// The last line on disk; `disk_line - 1` when the disk's side is empty.
    pub disk_end_line: usize,
}

/// Params of `verbatim/externalChange` (server → editor notification).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ExternalChangeParams {
    /// The document, in the editor's own spelling.
    pub uri: String,
    pub kind: ExternalChangeKind,
    /// When the change was seen (RFC 3339).
    pub time: String,
    /// Regions left as the person has them.
    pub conflicts: Vec<ExternalConflict>,
    /// For `moved`: where the file went.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub moved_to: Option<String>,
    /// One sentence for the person.
    pub message: String,
}

impl Default for InitializationOptions {
    fn default() -> Self {
        Self {
            needs_confirmation: true,
            status_notifications: false,
            sync_timeout_ms: 5000,
            apply_timeout_ms: None,
            agent_access: crate::service::access::Access::ReadWrite,
            write_deny_list: None,
            allow_writes_outside_workspace: false,
            external_changes: ExternalChanges::Review,
            diagnostics: false,
            hunk_outcomes: false,
            claude_code: true,
            gemini_cli: true,
            verbatim_extensions: false,
        }
    }
}

/// `verbatim/selectionChanged`: the selection in the editor's focused document, in the
/// editor's position encoding (an empty range is the cursor).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectionChangedParams {
    pub uri: String,
    #[serde(default)]
    pub text: String,
    pub range: Range,
}

/// `verbatim/reviewDecided`: the decision on offer `offer` of edit `id` (its
/// `verbatim.id` and `verbatim.offer`), sent just before the editor applies the kept hunks.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewDecidedParams {
    pub id: u64,
    pub offer: u32,
    /// Every hunk of the edit, by its number in the whole edit.
    pub hunks: Vec<HunkDecision>,
    /// The person's words for what they left out or rejected.
    #[serde(default)]
    pub reason: Option<String>,
}

/// One hunk of a decision: kept or left out.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HunkDecision {
    pub index: usize,
    pub accepted: bool,
}

/// `verbatim/atMention`: a file, or lines of it, sent to Claude Code.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AtMentionParams {
    pub uri: String,
    #[serde(default)]
    pub range: Option<Range>,
}

/// `verbatim/saveDocument` (server → editor).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveDocumentParams {
    pub uri: String,
}

/// The editor's answer to `verbatim/saveDocument`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveDocumentResult {
    pub saved: bool,
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClientInfo {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub version: Option<String>,
}

/// The discovery file written beside the agent socket.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct DiscoveryFile {
    pub pid: u32,
    pub socket: String,
    /// A second socket whose agents may only read (hand it to agents you trust less).
    #[serde(default)]
    pub read_only_socket: Option<String>,
    pub workspace_folders: Vec<String>,
    pub client_info: Option<ClientInfo>,
    pub protocol_version: u32,
    pub server_version: String,
    pub started_at: String,
}

/// `verbatim/timeline` result: sessions, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineResult {
    pub sessions: Vec<TimelineSession>,
    /// How many journal entries were read.
    pub entries: usize,
    /// How many edits pass the filters, in all.
    pub edits: usize,
    /// Sessions, turns or edits were left out (`limit`, `maxEdits`).
    pub truncated: bool,
    /// Every agent of the journals read, whatever the filters and bounds: what a
    /// filter by agent offers. The latest first.
    #[serde(default)]
    pub agents: Vec<TimelineChoice>,
    /// Every file of the journals read (a move's new name too), as `agents`.
    #[serde(default)]
    pub files: Vec<TimelineChoice>,
}

/// One agent or file a timeline can be filtered by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineChoice {
    /// The agent's name, or the file's URI.
    pub value: String,
    /// How many edits (writes) of the journals are its.
    pub edits: usize,
    /// The time of the latest of them.
    pub latest: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineSession {
    pub session: String,
    /// The agent of its newest edit.
    pub agent: String,
    pub source: String,
    pub started: String,
    pub ended: String,
    /// Newest first.
    pub turns: Vec<TimelineTurn>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineTurn {
    pub turn: String,
    pub started: String,
    pub ended: String,
    /// Its edits in all; `edits` has fewer when `maxEdits` cut the turn.
    pub edit_count: usize,
    /// Every file the turn touched, with the person's reviewed mark.
    pub files: Vec<TurnFile>,
    /// Newest first.
    pub edits: Vec<TimelineEdit>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnFile {
    pub uri: String,
    pub reviewed: bool,
}

/// One write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEdit {
    pub write_id: String,
    pub time: String,
    pub agent: String,
    pub summary: String,
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverted_by: Option<String>,
    pub files: Vec<TimelineFile>,
}

/// One document of a write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineFile {
    pub id: String,
    pub uri: String,
    pub outcome: String,
    pub added: usize,
    pub removed: usize,
    pub revertible: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_uri: Option<String>,
}

/// `verbatim/timelineEntry` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimelineEntryParams {
    pub id: String,
}

/// `verbatim/timelineEntry` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEntryResult {
    pub id: String,
    pub uri: String,
    pub new_uri: Option<String>,
    pub before: Option<String>,
    pub after: Option<String>,
    pub diff: String,
}

/// `verbatim/markReviewed` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MarkReviewedParams {
    pub turn: String,
    pub uri: String,
    #[serde(default = "yes")]
    pub reviewed: bool,
}

fn yes() -> bool {
    true
}

/// `verbatim/markReviewed` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MarkReviewedResult {
    pub reviewed: bool,
}

/// `verbatim/revert` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RevertResult {
    /// The revert's own write id (`null` for a dry run).
    pub write_id: Option<String>,
    /// `applied`, `partial`, `rejected` or `planned`.
    pub outcome: String,
    pub reverts: Vec<String>,
    pub files: Vec<RevertedFile>,
    /// Entries named that could not be reverted, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedEntry>,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkippedEntry {
    pub id: String,
    pub why: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RevertedFile {
    pub uri: String,
    /// `editor` or `disk`.
    pub via: String,
    /// `edit`, `delete`, `create` or `move`.
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_uri: Option<String>,
    /// How many regions go back (conflicts not counted).
    pub hunks: usize,
    /// `applied`, `partial`, `rejected`, `unchanged` or `planned`.
    pub outcome: String,
    pub conflicts: Vec<RevertConflictReport>,
    /// Why there is nothing to revert in the file: `fileGone` (it no longer exists) or
    /// `alreadyUndone` (it already reads as the revert would leave it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RevertConflictReport {
    /// 1-based lines of the file as it was when the revert was planned.
    pub start_line: usize,
    pub end_line: usize,
    pub current: String,
    pub reverted: String,
    /// `reverted` or `current`: what the file holds there now.
    pub chosen: String,
}
