---@brief
--- The Verbatim protocol as the Neovim plugin sees it: method names, error
--- codes and the shapes of the messages the plugin sends or receives.
---
--- docs/protocol.md is the single source of truth; tests/test_config.lua
--- ("protocol.lua mirrors docs/protocol.md") checks this module against it.

local M = {}

--- The protocol version this plugin was written against.
M.PROTOCOL_VERSION = 1

--- Custom methods.
M.methods = {
  documents = "verbatim/documents",
  read = "verbatim/read",
  str_replace = "verbatim/strReplace",
  replace_range = "verbatim/replaceRange",
  batch_edit = "verbatim/batchEdit",
  write = "verbatim/write",
  status = "verbatim/status",
  apply_patch = "verbatim/applyPatch",
  --- Agent to server: whole new texts an agent will write itself after review
  --- (the agents' pre-write hooks); the plugin never sends it.
  propose = "verbatim/propose",
  --- Server to editor notification, sent when `statusNotifications` is on.
  status_changed = "verbatim/statusChanged",
  --- Server to editor notification: an open file changed on disk outside the
  --- editor (sent unless `externalChanges` is "off").
  external_change = "verbatim/externalChange",
  --- Server to editor request, sent when `diagnostics` is on: the
  --- diagnostics the editor holds for documents, at once or once settled.
  diagnostics = "verbatim/diagnostics",
  --- Editor to server notification, for Claude Code: the person's selection
  --- (or cursor) in the focused document.
  selection_changed = "verbatim/selectionChanged",
  --- Editor to server notification, for Claude Code: the person sends a file
  --- (or some of its lines) into Claude Code's prompt.
  at_mention = "verbatim/atMention",
  --- Server to editor request, for Claude Code's `saveDocument` tool.
  save_document = "verbatim/saveDocument",
  --- Editor to server notification, optional: the person decided every hunk
  --- of an edit and the editor is about to apply the kept ones. This plugin
  --- applies an edit at once and does not send it (VS Code's extension does).
  review_decided = "verbatim/reviewDecided",
  --- Editor or agent to server: every agent's changes, grouped session ->
  --- turn -> edit -> file, newest first (`:Verbatim timeline`).
  timeline = "verbatim/timeline",
  --- What one journal entry changed: the texts before and after, or its diff.
  timeline_entry = "verbatim/timelineEntry",
  --- Marks (or unmarks) one file of a turn as reviewed.
  mark_reviewed = "verbatim/markReviewed",
  --- Undoes entries, a turn or a session as a new change, reviewed like any
  --- edit (the review reaches the plugin as an ordinary `workspace/applyEdit`).
  revert = "verbatim/revert",
  --- Server to editor notification: a journal was appended to.
  journal_changed = "verbatim/journalChanged",
}

--- Error codes by `data.kind`.
M.errors = {
  notFound = -33001,
  ambiguous = -33002,
  stale = -33003,
  emptyQuote = -33004,
  noChange = -33005,
  rangeOrder = -33006,
  overlap = -33007,
  rejected = -33008,
  editorUnavailable = -33009,
  unknownDocument = -33010,
  outsideWorkspace = -33011,
  invalidParams = -33012,
  timeout = -33013,
  notText = -33014,
  io = -33015,
  editorError = -33016,
  permissionDenied = -33017,
  notAnswered = -33018,
  notRevertible = -33019,
  unknownEntry = -33020,
}

--- Change annotations sent by the server carry ids `verbatim/<pending id>`,
--- or `verbatim/disk/<pending id>` for a change made on disk outside the
--- editor, merged into the buffer.
M.ANNOTATION_PREFIX = "verbatim/"
M.DISK_ANNOTATION_PREFIX = "verbatim/disk/"

---@class verbatim.InitializationOptions
---@field needsConfirmation? boolean value of `needsConfirmation` on every change annotation
---@field statusNotifications? boolean send `verbatim/statusChanged` to the editor
---@field syncTimeoutMs? integer wait for the `didChange` that carries an applied edit
---@field applyTimeoutMs? integer|vim.NIL wait for the editor's answer to `workspace/applyEdit`
---@field agentAccess? "readWrite"|"readOnly" access of agents on the main socket
---@field writeDenyList? string[]|vim.NIL paths agents may not write nor read from disk
---@field allowWritesOutsideWorkspace? boolean let agents write open documents outside the workspace
---@field externalChanges? "review"|"auto"|"off" what to do when an open file changes on disk
---@field diagnostics? boolean the editor answers `verbatim/diagnostics`
---@field hunkOutcomes? boolean the editor reports which hunks it applied
---@field claudeCode? boolean serve Claude Code's IDE protocol (a WebSocket endpoint and a lock file)
---@field geminiCli? boolean serve Gemini CLI's and Qwen Code's IDE companion interface (MCP over HTTP and discovery files)
---@field verbatimExtensions? boolean the editor reads the `verbatim` object in `workspace/applyEdit` params and `verbatim/externalChange`

---@class verbatim.ClaudeCodeCapability `capabilities.experimental.verbatim.claudeCode` of the editor's `initialize` result.
---@field port integer the WebSocket endpoint on 127.0.0.1 (CLAUDE_CODE_SSE_PORT)

---@class verbatim.GeminiCliCapability `capabilities.experimental.verbatim.geminiCli` of the editor's `initialize` result.
---@field port integer the MCP endpoint `http://127.0.0.1:<port>/mcp`
---@field authToken string the Bearer token
---@field workspacePath string the workspace folders joined by `:`
---@field idePid integer the PID in the discovery file's name
---@field env table<string, string> the variables for terminals the editor starts

---@class verbatim.SelectionChangedParams The params of `verbatim/selectionChanged`.
---@field uri string
---@field text string the selected text ("" for a cursor)
---@field range lsp.Range in the connection's position encoding; empty at the cursor

---@class verbatim.AtMentionParams The params of `verbatim/atMention`.
---@field uri string
---@field range? lsp.Range the lines sent; absent: the whole file

---@class verbatim.ReviewDecidedParams The params of `verbatim/reviewDecided`.
---@field id integer the edit's `verbatim.id`
---@field offer integer its `verbatim.offer`
---@field hunks { index: integer, accepted: boolean }[] every hunk of the edit

---@class verbatim.SaveDocumentParams The params of `verbatim/saveDocument`.
---@field uri string

---@class verbatim.SaveDocumentResult The result of `verbatim/saveDocument`.
---@field saved boolean
---@field message? string why it was not saved

---@class verbatim.ProposalInfo `params.verbatim` of `workspace/applyEdit`.
---@field id integer the pending edit's id, the same across offers
---@field offer? integer 1 for the first offer, then one more each time the server moves the edit
---@field agent? string absent for a change made on disk
---@field summary string
---@field origin "agent"|"disk"
---@field hunks? { uri: string, edits: integer[], note?: string }[] numbered from 0 across the edit; `note`: what to know before taking it (a revert's conflict)

---@class verbatim.HunkOutcome One entry of the answer's `hunks`.
---@field index integer
---@field accepted boolean

---@class verbatim.DiagnosticsWait
---@field versions table<string, integer> by URI: the version the edit made
---@field quietMs integer
---@field timeoutMs integer

---@class verbatim.DiagnosticsParams The params of `verbatim/diagnostics`.
---@field uris string[]
---@field minSeverity "error"|"warning"
---@field wait? verbatim.DiagnosticsWait absent: answer at once (the baseline)

---@alias verbatim.DiagnosticsStatus "settled"|"timedOut"|"unavailable"

---@class verbatim.DocumentDiagnostics
---@field uri string
---@field version integer|vim.NIL
---@field status verbatim.DiagnosticsStatus
---@field waitedMs integer
---@field sources string[]
---@field diagnostics lsp.Diagnostic[]

---@class verbatim.OtherDiagnostics
---@field uri string
---@field before lsp.Diagnostic[]
---@field after lsp.Diagnostic[]

---@class verbatim.DiagnosticsResult The result of `verbatim/diagnostics`.
---@field documents verbatim.DocumentDiagnostics[]
---@field others verbatim.OtherDiagnostics[]

---@class verbatim.ExternalConflict A region kept as the person has it (1-based, inclusive; an empty side has endLine = line - 1).
---@field line integer
---@field endLine integer
---@field diskLine integer
---@field diskEndLine integer

---@alias verbatim.ExternalChangeKind "reload"|"offered"|"conflict"|"synced"|"deleted"|"moved"

---@class verbatim.ExternalChangeParams The params of `verbatim/externalChange`.
---@field uri string the document, in the editor's own spelling
---@field kind verbatim.ExternalChangeKind
---@field time string RFC 3339
---@field conflicts verbatim.ExternalConflict[]
---@field movedTo? string for "moved": the file's new URI
---@field message string one sentence for the person

---@class verbatim.StatusAgent
---@field id integer
---@field name string
---@field access "readWrite"|"readOnly"
---@field version? string
---@field connectedAt string
---@field pendingEdits integer

---@class verbatim.StatusPending
---@field id integer
---@field agentId integer
---@field agent string
---@field summary string
---@field uris string[]
---@field since string

---@class verbatim.Status The result of `verbatim/status` and the params of `verbatim/statusChanged`.
---@field socket string
---@field readOnlySocket string agents connected here may only read
---@field discoveryFile string
---@field editorConnected boolean
---@field agents verbatim.StatusAgent[]
---@field pending verbatim.StatusPending[]

---@alias verbatim.TimelineOutcome "applied"|"modifiedByEditor"|"partial"|"rejected"|"error"|"reloaded"|"conflict"|"savedOver"|"deleted"|"moved"|"notAnswered"|"answeredLate"|"differsFromAnswer"

---@alias verbatim.NotRevertibleWhy "nothingWritten"|"tooLarge"|"pruned"|"legacy"

---@class verbatim.TimelineParams The params of `verbatim/timeline` (all optional).
---@field workspace? string the folder whose journal is read
---@field agent? string only this agent's edits
---@field uri? string only the edits touching this file
---@field limit? integer at most this many sessions (default 200)
---@field maxEdits? integer at most this many edits, the newest first (default: no bound)

---@class verbatim.TimelineFile One file (journal entry) of an edit.
---@field id string the entry's id, `<writeId>.<n>`
---@field uri string
---@field outcome verbatim.TimelineOutcome
---@field added integer lines added
---@field removed integer lines removed
---@field revertible boolean
---@field whyNot? verbatim.NotRevertibleWhy when not revertible
---@field operation? "create"|"delete"|"move" when the write created, deleted or moved the file
---@field newUri? string where a moved file went

---@class verbatim.TimelineEdit One write (the files of one request), newest first in its turn.
---@field writeId string
---@field time string RFC 3339
---@field agent? string
---@field summary? string
---@field outcome verbatim.TimelineOutcome the files' outcome when they agree, else "partial"
---@field reverts? string[] on a revert: the ids it reverts
---@field revertedBy? string the `writeId` of the applied revert that took back every revertible file
---@field files verbatim.TimelineFile[]

---@class verbatim.TimelineTurnFile A file of a turn, with the person's reviewed mark.
---@field uri string
---@field reviewed boolean marked reviewed for this turn, and unchanged since

---@class verbatim.TimelineTurn
---@field turn string the agent's turn id, or `auto:<writeId of its first write>`
---@field started string
---@field ended string
---@field editCount integer its edits in all (that pass the filters); fewer are in `edits` when `maxEdits` cut it
---@field files verbatim.TimelineTurnFile[] all its files, also when `maxEdits` cut its edits
---@field edits verbatim.TimelineEdit[]

---@class verbatim.TimelineSession
---@field session string opaque: an agent connection, a hook's session_id, `disk`, `legacy:<agent>`
---@field agent? string
---@field source "editor"|"headless"|"disk"
---@field started string
---@field ended string
---@field turns verbatim.TimelineTurn[]

---@class verbatim.TimelineResult The result of `verbatim/timeline`.
---@field sessions verbatim.TimelineSession[] newest first
---@field entries integer journal entries read
---@field edits integer edits that pass the filters, in all (shown or not)
---@field truncated boolean sessions, turns or edits were left out (by `limit` or `maxEdits`)
---@field agents? verbatim.TimelineChoice[] every agent of the journals read, whatever the filters and bounds, the latest first (absent from an older server)
---@field files? verbatim.TimelineChoice[] every file of the journals read (a move's new name too), as `agents`

---@class verbatim.TimelineChoice One agent or file a timeline can be filtered by.
---@field value string the agent's name, or the file's URI
---@field edits integer its edits (writes) in the journals read
---@field latest string RFC 3339, its latest edit

---@class verbatim.TimelineEntry The result of `verbatim/timelineEntry`.
---@field id string
---@field uri string
---@field newUri? string|vim.NIL
---@field before string|vim.NIL null: the file did not exist, or the text was not kept
---@field after string|vim.NIL
---@field diff? string|vim.NIL the journal's unified diff

---@class verbatim.MarkReviewedParams The params of `verbatim/markReviewed`.
---@field turn string
---@field uri string
---@field reviewed boolean

---@class verbatim.RevertParams The params of `verbatim/revert`: exactly one of ids, turn, session.
---@field ids? string[] entry ids or writeIds
---@field turn? string
---@field session? string
---@field dryRun? boolean
---@field summary? string

---@class verbatim.RevertConflict
---@field startLine integer
---@field endLine integer
---@field current string
---@field reverted string
---@field chosen "reverted"|"current"

---@class verbatim.RevertFile
---@field uri string
---@field via "editor"|"disk"
---@field action "edit"|"delete"|"create"|"move"
---@field newUri? string
---@field hunks integer
---@field outcome "applied"|"partial"|"rejected"|"unchanged"|"planned"
---@field conflicts verbatim.RevertConflict[]
---@field why? "fileGone"|"alreadyUndone" for a file with nothing to revert

---@class verbatim.RevertResult The result of `verbatim/revert`.
---@field writeId string|vim.NIL null for a dry run
---@field outcome "applied"|"partial"|"rejected"|"unchanged"|"planned" unchanged: nothing was written
---@field reverts string[]
---@field files verbatim.RevertFile[]
---@field message string one sentence for the person

---@class verbatim.JournalChangedParams The params of `verbatim/journalChanged`.
---@field uris string[] the documents whose entries were appended

--- The pending id of an annotation id (`verbatim/12` or `verbatim/disk/12`
--- -> 12), or nil when the annotation is not one of ours.
---@param annotation_id string|nil
---@return integer|nil
function M.pending_id(annotation_id)
  if type(annotation_id) ~= "string" then
    return nil
  end
  local digits = annotation_id:match("^" .. vim.pesc(M.DISK_ANNOTATION_PREFIX) .. "(%d+)$")
    or annotation_id:match("^" .. vim.pesc(M.ANNOTATION_PREFIX) .. "(%d+)$")
  return digits and tonumber(digits) or nil
end

--- Whether an annotation id marks a change made on disk outside the editor.
---@param annotation_id string|nil
---@return boolean
function M.is_disk_annotation(annotation_id)
  return type(annotation_id) == "string" and vim.startswith(annotation_id, M.DISK_ANNOTATION_PREFIX)
end

--- Splits an annotation label `<agent>: <summary>` into the agent's name and
--- the summary. The description carries the summary alone, which tells where
--- the agent's name ends even when the name holds ": ".
---@param label string|nil
---@param description string|nil
---@return string agent
---@return string summary
function M.split_label(label, description)
  label = label or ""
  if type(description) == "string" and description ~= "" then
    local suffix = ": " .. description
    if #label > #suffix and label:sub(-#suffix) == suffix then
      return label:sub(1, #label - #suffix), description
    end
  end
  local agent, summary = label:match("^(.-): (.*)$")
  if agent then
    return agent, summary
  end
  return "agent", label
end

return M
