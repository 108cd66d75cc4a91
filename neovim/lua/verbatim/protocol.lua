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
---@field hunks? { uri: string, edits: integer[] }[] numbered from 0 across the edit

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
