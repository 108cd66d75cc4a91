---@brief
--- One `workspace/applyEdit` from the server, as a proposal the person can
--- accept or reject: which documents it changes, at which versions, and the
--- text before and after.
---
--- Lifecycle: `build()` parses the params; `prepare()` finds (or loads) every
--- buffer and checks it is exactly at the version the server planned
--- against; `apply()` checks again and changes the buffers. Nothing is ever
--- written to disk.

local api = vim.api
local protocol = require("verbatim.protocol")
local text = require("verbatim.text")

local M = {}

--- Unchanged lines kept around every change, for the review.
M.CONTEXT = 3

---@class verbatim.Hunk A changed block of lines, from vim.diff() "indices".
---@field start_a integer first line in the current text (1-based; the line before an insertion)
---@field count_a integer
---@field start_b integer first line in the proposed text
---@field count_b integer
---@field indexes? integer[] the server's hunks it shows (0-based, numbered across the edit)
---@field edits? integer[] indexes into the document's `edits` (1-based) of those hunks
---@field note? string what to know before taking it (the server's `note`: a revert's conflict)

---@class verbatim.ServerHunk One hunk of `params.verbatim.hunks`.
---@field uri string
---@field edits integer[] 0-based indexes into the edits of that document
---@field note? string what to know before taking it, shown at the hunk

---@class verbatim.DocumentChange
---@field uri string
---@field edits lsp.TextEdit[]
---@field requested_version integer|nil the version the server named (nil: not open on its side)
---@field unversioned boolean the edit came as plain `changes`, without any version
---@field create? { overwrite?: boolean, ignoreIfExists?: boolean } a `create` operation precedes the edits
---@field bufnr? integer
---@field version? integer the buffer's LSP version when prepared
---@field changedtick? integer the buffer's changedtick when prepared
---@field empty_base? boolean the server planned against an empty text (new or empty file)
---@field after? string the proposed text, kept only for an empty base
---@field line_count? integer the number of lines the edits apply to
---@field before_lines? table<integer, string> lines of the current text (1-based): the changed ones and `M.CONTEXT` lines around them, not the others
---@field after_lines? table<integer, string> lines of the proposed text (1-based): the changed ones only
---@field hunks? verbatim.Hunk[] in order; they never touch

---@class verbatim.Proposal
---@field client_id integer
---@field encoding string the client's position encoding
---@field label string
---@field agent string
---@field summary string
---@field pending_id integer|nil the server's pending id (from the annotation id)
---@field origin "agent"|"disk" an agent's edit, or a change made on disk outside the editor merged into the buffer
---@field needs_confirmation boolean
---@field documents verbatim.DocumentChange[]
---@field offer? integer `verbatim.offer`: 1 for the first offer of an edit, then 2, 3… as the server moves it
---@field server_hunks? verbatim.ServerHunk[] `verbatim.hunks`; nil when the server sent none
---@field by_server_hunk? boolean every document's hunks are the server's: answers report `hunks`
local Proposal = {}
Proposal.__index = Proposal

---@param reason string
---@return nil, string
local function fail(reason)
  return nil, reason
end

--- The documents a workspace edit changes, in order, each with its edits,
--- and the ids of the annotations its changes carry.
---@param edit lsp.WorkspaceEdit
---@return verbatim.DocumentChange[]|nil documents
---@return string[]|string annotation_ids, or why the edit is refused
local function collect_documents(edit)
  local documents = {} ---@type verbatim.DocumentChange[]
  local by_uri = {} ---@type table<string, verbatim.DocumentChange>
  local creates = {} ---@type table<string, table>
  local annotation_ids = {} ---@type string[]

  ---@param uri string
  ---@param version integer|nil
  ---@param unversioned boolean
  ---@return verbatim.DocumentChange|nil, string|nil
  local function document(uri, version, unversioned)
    local doc = by_uri[uri]
    if doc then
      if doc.requested_version ~= version then
        return fail("two edits of " .. uri .. " name different versions")
      end
      return doc
    end
    doc = {
      uri = uri,
      edits = {},
      requested_version = version,
      unversioned = unversioned,
      create = creates[uri],
    }
    by_uri[uri] = doc
    table.insert(documents, doc)
    return doc
  end

  ---@param doc verbatim.DocumentChange
  ---@param edits table[]
  local function add_edits(doc, edits)
    for _, e in ipairs(edits or {}) do
      table.insert(doc.edits, { range = e.range, newText = e.newText or "" })
      if e.annotationId then
        table.insert(annotation_ids, e.annotationId)
      end
    end
  end

  if edit.documentChanges then
    for _, change in ipairs(edit.documentChanges) do
      if change.kind == "create" then
        creates[change.uri] = change.options or {}
        if change.annotationId then
          table.insert(annotation_ids, change.annotationId)
        end
      elseif change.kind then
        return fail(
          string.format("Verbatim for Neovim does not support %q operations", change.kind)
        )
      else
        local td = change.textDocument or {}
        local version = td.version
        if version == vim.NIL then
          version = nil
        end
        local doc, err = document(td.uri, version, false)
        if not doc then
          return fail(err --[[@as string]])
        end
        add_edits(doc, change.edits)
      end
    end
    -- A created file that gets no text still becomes a buffer.
    for uri in pairs(creates) do
      if not by_uri[uri] then
        document(uri, nil, false)
      end
    end
  elseif edit.changes then
    local uris = vim.tbl_keys(edit.changes)
    table.sort(uris)
    for _, uri in ipairs(uris) do
      local doc = document(uri, nil, true) --[[@as verbatim.DocumentChange]]
      add_edits(doc, edit.changes[uri])
    end
  end
  if #documents == 0 then
    return fail("the workspace edit changes no document")
  end
  return documents, annotation_ids
end

---@class verbatim.EditOrigin
---@field label string
---@field agent string
---@field summary string
---@field origin "agent"|"disk"
---@field pending_id integer|nil
---@field needs_confirmation boolean

--- Who proposes the edit and why: the first annotation the changes name
--- that the edit defines; any of them may ask for confirmation.
---@param params lsp.ApplyWorkspaceEditParams
---@param annotation_ids string[]
---@return verbatim.EditOrigin
local function describe(params, annotation_ids)
  local annotations = params.edit.changeAnnotations or {}
  local needs_confirmation = false
  local first ---@type lsp.ChangeAnnotation|nil
  local first_id ---@type string|nil
  for _, id in ipairs(annotation_ids) do
    local annotation = annotations[id]
    if annotation then
      first = first or annotation
      first_id = first_id or id
      if annotation.needsConfirmation then
        needs_confirmation = true
      end
    end
  end
  local label = (first and first.label) or params.label or "an edit"
  local origin = protocol.is_disk_annotation(first_id) and "disk" or "agent"
  local agent, summary
  if origin == "disk" then
    -- The label is the summary alone: "Changed on disk outside the editor: <file> (at <time>)…".
    agent, summary = "disk", label
  else
    agent, summary = protocol.split_label(label, first and first.description)
  end
  return {
    label = label,
    agent = agent,
    summary = summary,
    origin = origin,
    pending_id = protocol.pending_id(first_id),
    needs_confirmation = needs_confirmation,
  }
end

--- Parses `ApplyWorkspaceEditParams`.
---@param params lsp.ApplyWorkspaceEditParams
---@param client vim.lsp.Client
---@return verbatim.Proposal|nil
---@return string|nil failure reason
function M.build(params, client)
  if type(params and params.edit) ~= "table" then
    return fail("workspace/applyEdit without an edit")
  end
  local documents, annotation_ids = collect_documents(params.edit)
  if not documents then
    return fail(annotation_ids --[[@as string]])
  end
  local about = describe(params, annotation_ids --[[@as string[] ]])
  local extra = type(params.verbatim) == "table" and params.verbatim or {}
  return setmetatable({
    client_id = client.id,
    encoding = client.offset_encoding or "utf-16",
    label = about.label,
    agent = about.agent,
    summary = about.summary,
    pending_id = about.pending_id,
    origin = about.origin,
    needs_confirmation = about.needs_confirmation,
    documents = documents,
    offer = type(extra.offer) == "number" and extra.offer or nil,
    server_hunks = type(extra.hunks) == "table" and extra.hunks or nil,
  }, Proposal)
end

---@param path string
---@return string|nil
local function read_file(path)
  local fd = vim.uv.fs_open(path, "r", 438)
  if not fd then
    return nil
  end
  local stat = vim.uv.fs_fstat(fd)
  local data = stat and vim.uv.fs_read(fd, stat.size, 0) or nil
  vim.uv.fs_close(fd)
  return data
end

---@param bufnr integer
---@param client_id integer
---@return boolean
local function is_attached(bufnr, client_id)
  return vim.lsp.buf_is_attached(bufnr, client_id)
end

--- The loaded buffer the client reports as `uri`, if any. (Looking buffers
--- up by name would create one, or treat the name as a pattern.)
---@param client_id integer
---@param uri string
---@return integer|nil
function M.attached_buffer(client_id, uri)
  local client = vim.lsp.get_client_by_id(client_id)
  for bufnr in pairs(client and client.attached_buffers or {}) do
    if api.nvim_buf_is_loaded(bufnr) and vim.uri_from_bufnr(bufnr) == uri then
      return bufnr
    end
  end
  return nil
end

--- The buffer's version as Neovim reports it to language servers.
---@param bufnr integer
---@return integer
local function lsp_version(bufnr)
  return vim.lsp.util.buf_versions[bufnr]
end

--- Loads a document the server planned against the file on disk (version
--- null): the buffer must hold exactly the disk's text, or the edit's ranges
--- mean nothing.
---@param doc verbatim.DocumentChange
---@param client_id integer
---@return boolean ok
---@return string|nil reason
local function prepare_from_disk(doc, client_id)
  local fname = vim.uri_to_fname(doc.uri)
  local on_disk = read_file(fname)
  local bufnr = vim.fn.bufadd(fname)
  local was_loaded = api.nvim_buf_is_loaded(bufnr)
  if doc.create and not (doc.create.overwrite or doc.create.ignoreIfExists) then
    if on_disk or (was_loaded and api.nvim_buf_line_count(bufnr) > 1) then
      return false, fname .. " already exists"
    end
  end
  if not was_loaded then
    vim.fn.bufload(bufnr)
  end
  vim.bo[bufnr].buflisted = true
  local snapshot = text.snapshot(bufnr)
  local live = text.to_text(snapshot)
  local empty_buffer = text.line_count(snapshot) == 1 and snapshot.lines[1] == ""
  if doc.create and doc.create.overwrite then
    doc.empty_base = false
  elseif on_disk == nil then
    if not doc.create then
      return false, fname .. " does not exist"
    end
    if not empty_buffer then
      return false, fname .. " is open in Neovim with text that is not on disk"
    end
    doc.empty_base = true
  else
    if vim.bo[bufnr].bomb and on_disk:sub(1, 3) == "\239\187\191" then
      on_disk = on_disk:sub(4)
    end
    if on_disk == "" and empty_buffer then
      doc.empty_base = true
    elseif live ~= on_disk then
      return false,
        fname .. " has changes in Neovim that are not on disk; read it again and resend the edit"
    end
  end
  doc.bufnr = bufnr
  if doc.create and on_disk == nil then
    -- The file exists only as a buffer until the person writes it; its
    -- directory may not exist yet either.
    api.nvim_create_autocmd("BufWritePre", {
      buffer = bufnr,
      once = true,
      desc = "verbatim: create the directory of a file an agent created",
      callback = function()
        vim.fn.mkdir(vim.fs.dirname(fname), "p")
      end,
    })
  end
  if not is_attached(bufnr, client_id) then
    -- Attaching sends didOpen with the text the edit applies to; the didChange
    -- that carries the edit follows it.
    vim.lsp.buf_attach_client(bufnr, client_id)
  end
  return true
end

--- Finds every buffer, loading files that are not loaded, and checks every
--- version. Safe to call once, on arrival.
---@return boolean ok
---@return string|nil reason
function Proposal:prepare()
  for _, doc in ipairs(self.documents) do
    if doc.requested_version ~= nil then
      local bufnr = M.attached_buffer(self.client_id, doc.uri)
      if not bufnr then
        return false, doc.uri .. " is not open in Neovim any more"
      end
      local current = lsp_version(bufnr)
      if current ~= doc.requested_version then
        return false,
          string.format(
            "%s changed in the editor: it is at version %d, the edit was planned for version %d",
            vim.uri_to_fname(doc.uri),
            current,
            doc.requested_version
          )
      end
      doc.bufnr = bufnr
    else
      -- Version null: planned against the disk. Unversioned `changes`: use
      -- the buffer when the server sees it, else the disk.
      local bufnr = doc.unversioned and M.attached_buffer(self.client_id, doc.uri) or nil
      if bufnr then
        doc.bufnr = bufnr
      else
        local ok, reason = prepare_from_disk(doc, self.client_id)
        if not ok then
          return false, reason
        end
      end
    end
    local bufnr = doc.bufnr --[[@as integer]]
    doc.version = lsp_version(bufnr)
    doc.changedtick = api.nvim_buf_get_changedtick(bufnr)
    local snapshot = text.snapshot(bufnr)
    if doc.empty_base then
      local empty = { lines = { "" }, eol = false, line_ending = snapshot.line_ending }
      doc.after = text.apply_to_text(empty, doc.edits, self.encoding)
      doc.line_count = 0
      doc.before_lines = {}
      doc.after_lines = text.split_lines(doc.after)
      if doc.after_lines[#doc.after_lines] == "" then
        table.remove(doc.after_lines)
      end
      doc.hunks = M.hunks({}, doc.after_lines)
    else
      M.diff_changes(doc, snapshot, text.line_changes(snapshot, doc.edits, self.encoding))
    end
  end
  self:use_server_hunks()
  return true
end

--- The server's hunks of each document (`verbatim.hunks`), as lists of
--- 1-based edit indexes with the hunks' numbers; nil when they do not cover
--- every edit of every document exactly once.
---@return table<integer, { index: integer, edits: integer[], note?: string }[]>|nil by document index
function Proposal:server_groups()
  if type(self.server_hunks) ~= "table" or #self.server_hunks == 0 then
    return nil
  end
  local doc_index = {}
  for i, doc in ipairs(self.documents) do
    doc_index[doc.uri] = i
  end
  local groups, seen = {}, {}
  for i, hunk in ipairs(self.server_hunks) do
    local d = type(hunk) == "table" and doc_index[hunk.uri]
    if not d or type(hunk.edits) ~= "table" or #hunk.edits == 0 then
      return nil
    end
    local edits = {}
    for _, e in ipairs(hunk.edits) do
      local index = type(e) == "number" and e + 1 or nil
      if not index or not self.documents[d].edits[index] or seen[d .. ":" .. index] then
        return nil
      end
      seen[d .. ":" .. index] = true
      table.insert(edits, index)
    end
    table.sort(edits)
    groups[d] = groups[d] or {}
    local note = type(hunk.note) == "string" and hunk.note ~= "" and hunk.note or nil
    table.insert(groups[d], { index = i - 1, edits = edits, note = note })
  end
  for d, doc in ipairs(self.documents) do
    for index = 1, #doc.edits do
      if not seen[d .. ":" .. index] then
        return nil
      end
    end
    -- Hunks of one document come in document order; keep it even if not.
    table.sort(groups[d] or {}, function(a, b)
      return a.edits[1] < b.edits[1]
    end)
  end
  return groups
end

--- Makes the review's changes the server's hunks, when the server sent them:
--- one change per hunk, so that what the person leaves out is what the
--- answer reports. A file created or emptied by the edit is one change.
function Proposal:use_server_hunks()
  local groups = self:server_groups()
  if not groups then
    return
  end
  -- Every document's changes first, so that a failure leaves them all as they were.
  local layouts = {}
  for d, doc in ipairs(self.documents) do
    if not (doc.empty_base or #doc.edits == 0) then
      local snapshot = text.snapshot(doc.bufnr --[[@as integer]])
      layouts[d] = M.server_hunk_layout(snapshot, doc.edits, groups[d] or {}, self.encoding)
      if not layouts[d] then
        return
      end
    end
  end
  for d, doc in ipairs(self.documents) do
    local doc_groups = groups[d] or {}
    if doc.empty_base or #doc.edits == 0 then
      local indexes, edits, notes = {}, {}, {}
      for _, group in ipairs(doc_groups) do
        table.insert(indexes, group.index)
        vim.list_extend(edits, group.edits)
        table.insert(notes, group.note)
      end
      table.sort(edits)
      if #doc.hunks > 0 then
        local first, last = doc.hunks[1], doc.hunks[#doc.hunks]
        doc.hunks = {
          {
            start_a = first.start_a,
            count_a = last.start_a + last.count_a - first.start_a,
            start_b = first.start_b,
            count_b = last.start_b + last.count_b - first.start_b,
            indexes = indexes,
            edits = edits,
            note = #notes > 0 and table.concat(notes, "\n") or nil,
          },
        }
      end
    else
      local layout = layouts[d]
      doc.line_count = layout.line_count
      doc.before_lines = layout.before_lines
      doc.after_lines = layout.after_lines
      doc.hunks = layout.hunks
    end
  end
  self.by_server_hunk = true
end

--- Copies the snapshot's lines `first` to `last` (0-based, exclusive; clamped
--- to the text) into `into`, keyed 1-based.
---@param snapshot verbatim.Snapshot
---@param count integer the snapshot's line count
---@param into table<integer, string>
---@param first integer
---@param last integer
local function keep_lines(snapshot, count, into, first, last)
  first, last = math.max(first, 0), math.min(last, count)
  for k, line in ipairs(text.get_lines(snapshot, first, last)) do
    into[first + k] = line
  end
end

--- A document's lines and hunks from the server's hunks: each hunk becomes
--- one change, its lines those its edits touch, less the unchanged lines at
--- its start and end. Nil when a hunk changes no line.
---@param snapshot verbatim.Snapshot
---@param doc_edits lsp.TextEdit[] the document's edits
---@param groups { index: integer, edits: integer[], note?: string }[] in document order
---@param encoding string
---@return { line_count: integer, before_lines: table<integer, string>, after_lines: table<integer, string>, hunks: verbatim.Hunk[] }|nil
function M.server_hunk_layout(snapshot, doc_edits, groups, encoding)
  local count = text.line_count(snapshot)
  local before, after, hunks = {}, {}, {}
  local function keep_before(first, last)
    keep_lines(snapshot, count, before, first, last)
  end
  local delta = 0 -- lines added by the hunks so far
  for _, group in ipairs(groups) do
    local edits = {}
    for _, i in ipairs(group.edits) do
      table.insert(edits, doc_edits[i])
    end
    local changes = text.line_changes(snapshot, edits, encoding)
    if #changes == 0 then
      return nil
    end
    local first = changes[1].first
    local old, new = {}, {}
    local row = first
    for _, change in ipairs(changes) do
      -- Unchanged lines between two changes of one hunk.
      for _, line in ipairs(text.get_lines(snapshot, row, change.first)) do
        table.insert(old, line)
        table.insert(new, line)
      end
      vim.list_extend(old, change.before)
      vim.list_extend(new, change.after)
      row = change.first + #change.before
    end
    local head = 0
    while head < #old and head < #new and old[head + 1] == new[head + 1] do
      head = head + 1
    end
    local tail = 0
    while tail < #old - head and tail < #new - head and old[#old - tail] == new[#new - tail] do
      tail = tail + 1
    end
    local count_a, count_b = #old - head - tail, #new - head - tail
    local start = first + head -- 0-based first changed line
    keep_before(start - M.CONTEXT, start + count_a + M.CONTEXT)
    for k = 1, count_b do
      after[start + delta + k] = new[head + k]
    end
    table.insert(hunks, {
      -- vim.diff()'s convention: an empty side names the line before.
      start_a = count_a > 0 and start + 1 or start,
      count_a = count_a,
      start_b = count_b > 0 and start + delta + 1 or start + delta,
      count_b = count_b,
      indexes = { group.index },
      edits = group.edits,
      note = group.note,
    })
    delta = delta + count_b - count_a
  end
  return { line_count = count, before_lines = before, after_lines = after, hunks = hunks }
end

--- A hunk's note in two parts: its first sentence (at most 80 characters),
--- to show at the hunk, and the rest (what to know once), "" when none.
---@param note string
---@return string headline
---@return string rest
function M.note_parts(note)
  local line = note:match("^[^\n]*")
  local sentence, rest = line:match("^(.-)%.%s+(.*)$")
  if not sentence then
    sentence, rest = line:match("^(.-)%.$") or line, ""
  end
  sentence = vim.trim(sentence)
  if vim.fn.strchars(sentence) > 80 then
    sentence = vim.fn.strcharpart(sentence, 0, 79) .. "…"
  end
  return sentence, vim.trim(rest)
end

--- What became of each of the server's hunks, for the answer: nil when the
--- review's changes are not the server's hunks.
---@param skipped? table<integer, table<integer, boolean>> as for `apply`
---@return { index: integer, accepted: boolean }[]|nil
function Proposal:hunk_outcomes(skipped)
  if not self.by_server_hunk then
    return nil
  end
  skipped = skipped or {}
  local outcomes = {}
  for d, doc in ipairs(self.documents) do
    for i, hunk in ipairs(doc.hunks or {}) do
      for _, index in ipairs(hunk.indexes or {}) do
        table.insert(outcomes, { index = index, accepted = not (skipped[d] or {})[i] })
      end
    end
  end
  table.sort(outcomes, function(a, b)
    return a.index < b.index
  end)
  return outcomes
end

--- Fills a document's lines and hunks from the changed lines, reading only
--- those and the context around them: the server sends minimal edits, and
--- a file of 100,000 lines must not cost more than one of 100.
---@param doc verbatim.DocumentChange
---@param snapshot verbatim.Snapshot
---@param changes verbatim.LineChange[]
function M.diff_changes(doc, snapshot, changes)
  local count = text.line_count(snapshot)
  local before, after, hunks = {}, {}, {}
  local function keep_before(first, last)
    keep_lines(snapshot, count, before, first, last)
  end
  local delta = 0 -- lines added by the changes so far
  for _, change in ipairs(changes) do
    local first = change.first
    keep_before(first - M.CONTEXT, first + #change.before + M.CONTEXT)
    for k, line in ipairs(change.after) do
      after[first + delta + k] = line
    end
    -- The change's lines can hold unchanged ones (an edit inside a line
    -- that another edit splits); the diff finds the changed blocks.
    for _, h in ipairs(M.hunks(change.before, change.after)) do
      table.insert(hunks, {
        start_a = first + h.start_a,
        count_a = h.count_a,
        start_b = first + delta + h.start_b,
        count_b = h.count_b,
      })
    end
    delta = delta + #change.after - #change.before
  end
  doc.line_count = count
  doc.before_lines = before
  doc.after_lines = after
  doc.hunks = hunks
end

--- The changed blocks between two lists of lines.
---@param a string[]
---@param b string[]
---@return verbatim.Hunk[]
function M.hunks(a, b)
  local function joined(lines)
    if #lines == 0 then
      return ""
    end
    return table.concat(lines, "\n") .. "\n"
  end
  local indices = vim.diff(joined(a), joined(b), { result_type = "indices" }) --[[@as integer[][] ]]
  local hunks = {}
  for _, h in ipairs(indices) do
    table.insert(hunks, { start_a = h[1], count_a = h[2], start_b = h[3], count_b = h[4] })
  end
  return hunks
end

--- The first document whose buffer changed since `prepare()`, if any.
---@return string|nil reason
function Proposal:stale_reason()
  for _, doc in ipairs(self.documents) do
    local bufnr = doc.bufnr
    if not bufnr or not api.nvim_buf_is_loaded(bufnr) then
      return vim.uri_to_fname(doc.uri) .. " was closed in Neovim while the edit waited for review"
    end
    if
      api.nvim_buf_get_changedtick(bufnr) ~= doc.changedtick
      or lsp_version(bufnr) ~= doc.version
    then
      return vim.uri_to_fname(doc.uri)
        .. " changed in the editor while the edit waited for review; read it again"
    end
  end
  return nil
end

--- Whether the server can move the proposal over changes made in its
--- buffers and offer it again: an agent's edit of documents that are open
--- on both sides (see docs/protocol.md, Revisions).
---@return boolean
function Proposal:movable()
  if self.origin ~= "agent" or not self.pending_id then
    return false
  end
  for _, doc in ipairs(self.documents) do
    if doc.requested_version == nil or doc.create then
      return false
    end
    if not (doc.bufnr and api.nvim_buf_is_loaded(doc.bufnr)) then
      return false
    end
  end
  return true
end

--- Whether the proposal touches a buffer.
---@param bufnr integer
---@return boolean
function Proposal:touches(bufnr)
  for _, doc in ipairs(self.documents) do
    if doc.bufnr == bufnr then
      return true
    end
  end
  return false
end

---@param doc verbatim.DocumentChange
---@param skipped table<integer, boolean>
local function apply_hunks(doc, skipped)
  local bufnr = doc.bufnr --[[@as integer]]
  for i = #doc.hunks, 1, -1 do
    if not skipped[i] then
      local h = doc.hunks[i]
      local replacement = {}
      for j = h.start_b, h.start_b + h.count_b - 1 do
        table.insert(replacement, doc.after_lines[j])
      end
      if h.count_a == 0 then
        api.nvim_buf_set_lines(bufnr, h.start_a, h.start_a, true, replacement)
      else
        api.nvim_buf_set_lines(bufnr, h.start_a - 1, h.start_a - 1 + h.count_a, true, replacement)
      end
    end
  end
end

--- Applies the proposal to the buffers, each buffer's change as one undo
--- step. `skipped[doc_index][hunk_index] = true` leaves a change out: with
--- the server's hunks, the edits of the other hunks are applied as sent (the
--- answer says which, see `hunk_outcomes`); without them, the other changed
--- lines are, and the server finds what the buffer holds.
---@param skipped? table<integer, table<integer, boolean>>
---@return boolean applied
---@return string|nil reason
---@return boolean partial whether some change was left out
function Proposal:apply(skipped)
  skipped = skipped or {}
  local stale = self:stale_reason()
  if stale then
    return false, stale, false
  end
  local partial, applied_any = false, false
  for index, doc in ipairs(self.documents) do
    local doc_skipped = skipped[index] or {}
    local left_out = 0
    for i = 1, #doc.hunks do
      if doc_skipped[i] then
        left_out = left_out + 1
      end
    end
    local bufnr = doc.bufnr --[[@as integer]]
    if left_out > 0 then
      partial = true
    end
    if left_out == 0 or left_out < #doc.hunks then
      applied_any = true
      api.nvim_buf_call(bufnr, function()
        -- Start a new undo block, so the edit undoes in one step and never
        -- merges with what the person typed before.
        vim.cmd("let &l:undolevels = &l:undolevels")
        if left_out > 0 and self.by_server_hunk then
          -- The kept hunks' edits, as sent: the text the server expects.
          local kept = {}
          for i, hunk in ipairs(doc.hunks) do
            if not doc_skipped[i] then
              vim.list_extend(kept, hunk.edits or {})
            end
          end
          table.sort(kept)
          local edits = vim.tbl_map(function(k)
            return doc.edits[k]
          end, kept)
          if doc.empty_base then
            local empty = { lines = { "" }, eol = false, line_ending = "\n" }
            text.replace_empty_buffer(bufnr, text.apply_to_text(empty, edits, self.encoding))
          else
            text.apply_to_buffer(bufnr, edits, self.encoding)
          end
        elseif left_out > 0 then
          apply_hunks(doc, doc_skipped)
        elseif doc.empty_base then
          text.replace_empty_buffer(bufnr, doc.after)
        else
          text.apply_to_buffer(bufnr, doc.edits, self.encoding)
        end
      end)
    end
  end
  if not applied_any then
    return false, "the person left out every change of the edit", true
  end
  return true, nil, partial
end

M.Proposal = Proposal
return M
