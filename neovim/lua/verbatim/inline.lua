---@brief
--- The inline review (`review_ui = "inline"`): the pending edit shown in the
--- document's own window, hunk by hunk, as gitsigns' inline preview and
--- mini.diff's overlay show a diff. The lines a hunk removes keep their
--- place and get a background (and, optionally, a strike through); the lines
--- it adds are virtual lines below them, coloured in the file's language;
--- where a hunk replaces lines one for one, the words that differ are
--- marked on both sides. Above the first hunk a virtual line names the agent,
--- the summary, how many edits wait and the keys.
---
--- The buffer's text does not change until the person decides: the marks are
--- extmarks, so they follow the text as the person types; once the server
--- offers the edit again over what was typed (queue.lua), they are drawn
--- again from the new offer. Every mark is computed from the hunks alone
--- (proposal.lua keeps only the changed lines and their context): a buffer
--- of 100,000 lines costs what one of 100 does.
---
--- Keys are buffer-local and mapped only while an edit of the buffer waits.
--- Decisions are kept per hunk; the edit is answered once every hunk is
--- decided, or on "done" (hunks not decided are left out), through the same
--- accept and reject as the review window: one undo step per buffer, and the
--- server told which hunks were kept and why the others were not.

local api = vim.api
local config = require("verbatim.config")
local highlight = require("verbatim.highlight")
local hunk_actions = require("verbatim.hunk_actions")
local notice = require("verbatim.notice")
local proposal_mod = require("verbatim.proposal")
local queue = require("verbatim.queue")

local M = {}

local ns = api.nvim_create_namespace("verbatim.inline")
M.ns = ns

---@class verbatim.InlineDecision
---@field accepted boolean
---@field reason? string

---@class verbatim.InlineState the person's decisions on one pending edit
---@field proposal verbatim.Proposal the offer they were made on
---@field hunks table<integer, table<integer, verbatim.InlineDecision>> by document, then hunk

---@class verbatim.InlineView what one buffer shows
---@field key integer the pending edit on display
---@field doc integer the document's index in its proposal
---@field proposal verbatim.Proposal the offer on display
---@field anchors table<integer, { hunk: integer, insertion: boolean }> by extmark id
---@field maps { mode: string, lhs: string, saved: table|nil }[] the keys mapped in the buffer

--- By buffer number.
---@type table<integer, verbatim.InlineView>
M.views = {}
--- The pending edit each buffer shows, when the person chose one (`:Verbatim next`).
---@type table<integer, integer>
local chosen = {}
--- Keys of the edits announced so far.
---@type table<integer, boolean>
local seen = {}
--- Decisions, by pending edit key.
---@type table<integer, verbatim.InlineState>
local states = {}

---@return boolean
local function enabled()
  return config.options.review_ui == "inline"
end

--- A key as the person types it: the leader keys spelled out.
---@param lhs string
---@return string
function M.show_key(lhs)
  local localleader = vim.g.maplocalleader or "\\"
  local leader = vim.g.mapleader or "\\"
  lhs = lhs:gsub("<[Ll]ocal[Ll]eader>", function()
    return localleader
  end)
  lhs = lhs:gsub("<[Ll]eader>", function()
    return leader
  end)
  return (lhs:gsub(" ", "<Space>"))
end

---@param item verbatim.PendingEdit
---@return verbatim.InlineState
local function state_of(item)
  local st = states[item.key]
  if st and st.proposal ~= item.proposal then
    -- A new offer (the person typed): decisions stay when it has the same
    -- hunks, as the changes left out in the review window do.
    for d, doc in ipairs(item.proposal.documents) do
      local old = st.proposal.documents[d]
      if not old or #(old.hunks or {}) ~= #(doc.hunks or {}) then
        st.hunks = {}
        break
      end
    end
    st.proposal = item.proposal
  end
  if not st then
    st = { proposal = item.proposal, hunks = {} }
    states[item.key] = st
  end
  return st
end

--- The document of `item` that `bufnr` holds.
---@param item verbatim.PendingEdit
---@param bufnr integer
---@return integer|nil
local function doc_index(item, bufnr)
  for d, doc in ipairs(item.proposal.documents) do
    if doc.bufnr == bufnr then
      return d
    end
  end
end

--- The pending edits of a buffer, oldest first.
---@param bufnr integer
---@return verbatim.PendingEdit[]
local function items_of(bufnr)
  local result = {}
  for _, item in ipairs(queue.items) do
    if doc_index(item, bufnr) then
      table.insert(result, item)
    end
  end
  return result
end

--- The 1-based line of the text before the edit where a hunk starts.
---@param h verbatim.Hunk
---@return integer
local function first_line(h)
  return h.count_a > 0 and h.start_a or h.start_a + 1
end

--- Chunks of one virtual line: `line` on the added background, each byte
--- with the highest-priority span over it, tabs expanded, padded to `width`.
---@param line string
---@param spans { first: integer, last: integer, hl: string, word?: boolean }[] 0-based byte ranges
---@param tabstop integer
---@param width integer
---@return table[] chunks
local function virt_line(line, spans, tabstop, width)
  local cuts = { [0] = true, [#line] = true }
  for _, span in ipairs(spans) do
    cuts[math.max(0, math.min(span.first, #line))] = true
    cuts[math.max(0, math.min(span.last, #line))] = true
  end
  local points = vim.tbl_keys(cuts)
  table.sort(points)
  local chunks, col = {}, 0
  -- Tabs as the window shows them: to the next tab stop.
  local function expand(piece)
    if not piece:find("\t", 1, true) then
      col = col + vim.fn.strdisplaywidth(piece)
      return piece
    end
    local out = {}
    for part, tab in piece:gmatch("([^\t]*)(\t?)") do
      if part ~= "" then
        table.insert(out, part)
        col = col + vim.fn.strdisplaywidth(part)
      end
      if tab ~= "" then
        local n = tabstop - (col % tabstop)
        table.insert(out, string.rep(" ", n))
        col = col + n
      end
    end
    return table.concat(out)
  end
  for k = 1, #points - 1 do
    local first, last = points[k], points[k + 1]
    local syntax, word
    for _, span in ipairs(spans) do
      if span.first <= first and span.last >= last then
        if span.word then
          word = true
        else
          syntax = span.hl
        end
      end
    end
    local piece = expand(line:sub(first + 1, last))
    local groups = { "VerbatimInlineAdd" }
    if syntax then
      table.insert(groups, syntax)
    end
    if word then
      table.insert(groups, "VerbatimInlineAddWord")
    end
    table.insert(chunks, { piece, groups })
  end
  if col < width then
    table.insert(chunks, { string.rep(" ", width - col), "VerbatimInlineAdd" })
  end
  return chunks
end

--- The header above the first hunk: who, why, how many wait, the keys.
---@param item verbatim.PendingEdit
---@param bufnr integer
---@return table[] virt_lines
local function header(item, bufnr)
  local proposal = item.proposal
  local position = queue.position(item) or 1
  local others = #items_of(bufnr) - 1
  local who = proposal.origin == "disk" and hunk_actions.DISK_CHANGE
    or (proposal.agent .. ": " .. proposal.summary)
  local keys = config.options.inline_keymaps
  local help = hunk_actions.key_help({
    { keys.accept, "accept" },
    { keys.reject, "reject" },
    { keys.accept_all, "accept all" },
    { keys.reject_all, "reject all" },
    { keys.done, "done" },
    { keys.next_hunk, "next" },
    { keys.open_window, "window" },
  }, M.show_key)
  -- One writer per document on the server's side: a buffer has one pending
  -- edit at a time, but other buffers may have theirs.
  local count = string.format("edit %d of %d", position, #queue.items)
  if others > 0 then
    count = count .. string.format(" (%d more here)", others)
  end
  if #proposal.documents > 1 then
    -- Their hunks are decided in their own buffers; "done" leaves out those not decided.
    local more = #proposal.documents - 1
    count = count .. string.format(" · %d more file%s", more, more == 1 and "" or "s")
  end
  if #queue.items > 1 then
    count = count .. " · :Verbatim next"
  end
  local status = item.moved
      and (item.accepted and " · accepted: applies once moved over your changes" or " · moving over your changes…")
    or ""
  local lines = {
    { { "Verbatim · " .. who, "VerbatimInlineHeader" } },
    {
      { count .. status .. " · ", "VerbatimInlineHelp" },
      { table.concat(help, "  "), "VerbatimInlineHelp" },
    },
  }
  -- What the hunks' notes say beyond their first sentence, once each.
  local doc = proposal.documents[doc_index(item, bufnr) or 0]
  local said = {}
  for _, h in ipairs(doc and doc.hunks or {}) do
    local rest = h.note and select(2, proposal_mod.note_parts(h.note)) or ""
    if rest ~= "" and not said[rest] then
      said[rest] = true
      table.insert(lines, { { "⚠ " .. rest, "VerbatimInlineNote" } })
    end
  end
  return lines
end

---@param bufnr integer
---@param lhs string
---@param mode string
---@return table|nil the buffer-local mapping there, to restore later
local function buffer_mapping(bufnr, lhs, mode)
  return api.nvim_buf_call(bufnr, function()
    local found = vim.fn.maparg(lhs, mode, false, true)
    if type(found) == "table" and found.buffer == 1 then
      return found
    end
    return nil
  end)
end

--- Maps the keys of the inline review in `bufnr`.
---@param bufnr integer
---@return { mode: string, lhs: string, saved: table|nil }[]
local function map_keys(bufnr)
  local keys = config.options.inline_keymaps
  local maps = {}
  ---@param modes string[]
  ---@param lhs string|false
  ---@param rhs string|function
  ---@param desc string
  ---@param extra? table
  local function map(modes, lhs, rhs, desc, extra)
    if not lhs then
      return
    end
    for _, mode in ipairs(modes) do
      table.insert(maps, { mode = mode, lhs = lhs, saved = buffer_mapping(bufnr, lhs, mode) })
      vim.keymap.set(
        mode,
        lhs,
        rhs,
        vim.tbl_extend(
          "force",
          { buffer = bufnr, nowait = true, silent = true, desc = "verbatim: " .. desc },
          extra or {}
        )
      )
    end
  end
  local function range_or_cursor(fn)
    return function()
      local mode = api.nvim_get_mode().mode
      if mode:match("^[vV\22]") then
        local first, last = hunk_actions.visual_lines()
        fn(first - 1, last - 1)
      else
        local row = api.nvim_win_get_cursor(0)[1] - 1
        fn(row, row)
      end
    end
  end
  map(
    { "n", "x" },
    keys.accept,
    range_or_cursor(function(first, last)
      M.decide(bufnr, first, last, true)
    end),
    "accept the hunk under the cursor"
  )
  map(
    { "n", "x" },
    keys.reject,
    range_or_cursor(function(first, last)
      M.reject_with_prompt(bufnr, first, last)
    end),
    "reject the hunk under the cursor"
  )
  map({ "n" }, keys.accept_all, function()
    M.accept_all(bufnr)
  end, "accept every hunk of the edit")
  map({ "n" }, keys.reject_all, function()
    M.reject_all_with_prompt(bufnr)
  end, "reject the edit")
  map({ "n" }, keys.done, function()
    M.done(bufnr)
  end, "send the decisions")
  map({ "n" }, keys.open_window, function()
    M.open_window(bufnr)
  end, "open the review window on this edit")
  map(
    { "x", "o" },
    keys.hunk_object,
    ":<C-U>lua require('verbatim.inline').select_hunk()<CR>",
    "the hunk under the cursor"
  )
  for _, nav in ipairs({ { keys.next_hunk, "next" }, { keys.prev_hunk, "prev" } }) do
    local lhs, direction = nav[1], nav[2]
    -- The person's own mapping of the key wins; so does diff mode.
    local own = lhs
      and api.nvim_buf_call(bufnr, function()
        return vim.fn.maparg(lhs, "n") ~= ""
      end)
    if lhs and not own then
      map({ "n" }, lhs, function()
        if vim.wo.diff then
          return lhs
        end
        return string.format(
          "<Cmd>lua require('verbatim.inline').goto_hunk(%q, %d)<CR>",
          direction,
          vim.v.count1
        )
      end, direction .. " hunk", { expr = true, replace_keycodes = true, remap = false })
    end
  end
  return maps
end

---@param bufnr integer
---@param maps { mode: string, lhs: string, saved: table|nil }[]
local function unmap_keys(bufnr, maps)
  for _, m in ipairs(maps) do
    pcall(vim.keymap.del, m.mode, m.lhs, { buffer = bufnr })
    if m.saved then
      api.nvim_buf_call(bufnr, function()
        pcall(vim.fn.mapset, m.mode, false, m.saved)
      end)
    end
  end
end

--- Removes a buffer's marks and keys.
---@param bufnr integer
local function clear(bufnr)
  local view = M.views[bufnr]
  M.views[bufnr] = nil
  if api.nvim_buf_is_valid(bufnr) then
    api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
    if view then
      unmap_keys(bufnr, view.maps)
    end
  end
end

---@param bufnr integer
---@param row integer
---@param col integer
---@param opts vim.api.keyset.set_extmark
---@return integer|nil id
local function set_mark(bufnr, row, col, opts)
  opts.strict = false
  local ok, id = pcall(api.nvim_buf_set_extmark, bufnr, ns, row, col, opts)
  return ok and id or nil
end

--- The first rows of a buffer's hunks, top to bottom, where their marks are now.
---@param bufnr integer
---@return { hunk: integer, first: integer, last: integer }[]
local function hunk_rows(bufnr)
  local view = M.views[bufnr]
  local rows = {}
  for id, anchor in pairs(view and view.anchors or {}) do
    local mark = api.nvim_buf_get_extmark_by_id(bufnr, ns, id, { details = true })
    if mark[1] then
      local last = mark[1]
      if not anchor.insertion and mark[3].end_row then
        last = math.max(mark[1], mark[3].end_col == 0 and mark[3].end_row - 1 or mark[3].end_row)
      end
      table.insert(rows, { hunk = anchor.hunk, first = mark[1], last = last })
    end
  end
  table.sort(rows, function(a, b)
    return a.first < b.first
  end)
  return rows
end
M.hunk_rows = hunk_rows

--- Draws the lines a hunk adds, as virtual lines below the lines it
--- removes (above the first line for an insertion at the top), and marks
--- the words that differ on both sides.
---@param bufnr integer
---@param h verbatim.Hunk
---@param row integer the hunk's first row in the buffer, where its marks are now
---@param text { before: string[], removed: string[], added: string[] } the document's lines before the edit (those known), and the hunk's
---@param lang string|nil the file's Tree-sitter language
local function draw_added(bufnr, h, row, text, lang)
  local before, removed, added = text.before, text.removed, text.added
  local tabstop = vim.bo[bufnr].tabstop
  local width = vim.o.columns
  -- The added lines' spans: code in the file's language (the context
  -- around them parsed with them), and the words that differ.
  local spans = {}
  for k = 1, #added do
    spans[k] = {}
  end
  if lang and #added > 0 then
    local lines, offset = {}, 0
    for j = math.max(1, first_line(h) - 3), first_line(h) - 1 do
      if before[j] then
        table.insert(lines, before[j])
        offset = offset + 1
      end
    end
    vim.list_extend(lines, added)
    local last_a = first_line(h) + h.count_a - 1
    for j = last_a + 1, last_a + 3 do
      if before[j] then
        table.insert(lines, before[j])
      end
    end
    for _, span in ipairs(highlight.code_spans(lines, lang)) do
      local k = span.line - offset
      if k >= 1 and k <= #added then
        table.insert(spans[k], { first = span.first, last = span.last, hl = span.hl })
      end
    end
  end
  if #removed == #added then
    for k = 1, #removed do
      local old_ranges, new_ranges = highlight.word_changes(removed[k], added[k])
      for _, range in ipairs(old_ranges) do
        set_mark(bufnr, row + k - 1, range[1], {
          end_col = range[2],
          hl_group = "VerbatimInlineDeleteWord",
          priority = 4210,
        })
      end
      for _, range in ipairs(new_ranges) do
        table.insert(spans[k], { first = range[1], last = range[2], word = true })
      end
    end
  end
  if #added > 0 then
    local lines = {}
    for k, line in ipairs(added) do
      lines[k] = virt_line(line, spans[k], tabstop, width)
    end
    local below = h.count_a > 0 and row + h.count_a - 1 or row
    set_mark(bufnr, below, 0, {
      virt_lines = lines,
      virt_lines_above = h.count_a == 0 and h.start_a == 0,
    })
  end
end

--- Draws one pending edit's document in its buffer.
---@param bufnr integer
---@param item verbatim.PendingEdit
---@param d integer the document's index
local function draw(bufnr, item, d)
  local old = M.views[bufnr]
  local doc = item.proposal.documents[d]
  -- Until the server offers the edit again over what the person typed, the
  -- hunks' lines are those of the text before the typing: each hunk is drawn
  -- where its marks have moved since.
  local moved_rows = {}
  if old and old.proposal == item.proposal and old.doc == d then
    for _, r in ipairs(hunk_rows(bufnr)) do
      moved_rows[r.hunk] = r.first
    end
  end
  api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  local view = {
    key = item.key,
    doc = d,
    proposal = item.proposal,
    anchors = {},
    maps = old and old.maps or map_keys(bufnr),
  }
  M.views[bufnr] = view
  local decisions = state_of(item).hunks[d] or {}
  local hunks = doc.hunks or {}
  local before, after = doc.before_lines or {}, doc.after_lines or {}
  local lang = highlight.language(vim.uri_to_fname(doc.uri), bufnr)
  ---@param i integer
  ---@param row integer where the hunk's lines are in the text it was planned on
  ---@return integer where they are now
  local function moved(i, row)
    if moved_rows[i] == nil then
      return row
    end
    local h = hunks[i]
    return moved_rows[i] - (h.count_a > 0 and h.start_a - 1 or math.max(h.start_a - 1, 0)) + row
  end
  local top = hunks[1] and moved(1, math.max(first_line(hunks[1]) - 1, 0)) or 0
  set_mark(bufnr, top, 0, { virt_lines = header(item, bufnr), virt_lines_above = true })
  for i, h in ipairs(hunks) do
    local decision = decisions[i]
    local rejected = decision and not decision.accepted
    local label
    if decision then
      label = decision.accepted and { { "  ✓ accepted", "VerbatimInlineAccepted" } }
        or {
          {
            "  ✗ rejected" .. (decision.reason and (": " .. decision.reason) or ""),
            "VerbatimInlineRejected",
          },
        }
    elseif h.note then
      -- What to know before deciding (a revert's conflict); the rest of the note in the header.
      label = { { "  ⚠ " .. (proposal_mod.note_parts(h.note)), "VerbatimInlineNote" } }
    end
    local removed, added = {}, {}
    for j = h.start_a, h.start_a + h.count_a - 1 do
      table.insert(removed, before[j] or "")
    end
    for j = h.start_b, h.start_b + h.count_b - 1 do
      table.insert(added, after[j] or "")
    end
    -- The anchor: the removed lines, or for an insertion the line it follows.
    local row, anchor
    if h.count_a > 0 then
      row = moved(i, h.start_a - 1)
      anchor = set_mark(bufnr, row, 0, {
        end_row = row + h.count_a,
        end_col = 0,
        hl_group = not rejected and "VerbatimInlineDelete" or nil,
        hl_eol = true,
        priority = 4200,
        virt_text = label,
        virt_text_pos = "eol",
      })
    else
      row = moved(i, math.max(h.start_a - 1, 0))
      anchor = set_mark(bufnr, row, 0, { virt_text = label, virt_text_pos = "eol" })
    end
    if anchor then
      view.anchors[anchor] = { hunk = i, insertion = h.count_a == 0 }
    end
    if not rejected then
      draw_added(bufnr, h, row, { before = before, removed = removed, added = added }, lang)
    end
  end
  api.nvim_exec_autocmds("User", {
    pattern = "VerbatimInline",
    modeline = false,
    data = { buf = bufnr, key = item.key },
  })
end

--- The hunks whose lines `first`..`last` (0-based rows, inclusive) touch,
--- where their marks are now.
---@param bufnr integer
---@param first integer
---@param last integer
---@return integer[] hunk indexes, top to bottom
local function hunks_in(bufnr, first, last)
  local found = {}
  for _, r in ipairs(hunk_rows(bufnr)) do
    if r.first <= last and r.last >= first then
      table.insert(found, r.hunk)
    end
  end
  table.sort(found)
  return found
end

---@param bufnr integer
---@return verbatim.PendingEdit|nil item
---@return integer|nil doc index
local function shown(bufnr)
  local view = M.views[bufnr]
  local item = view and queue.get(view.key)
  if not item then
    return nil
  end
  return item, view.doc
end

--- The person's reasons, for the agent: one alone as given, several with the
--- line of each hunk.
---@param reasons { line: integer, text: string }[]
---@return string|nil
local function join_reasons(reasons)
  if #reasons == 0 then
    return nil
  elseif #reasons == 1 then
    return reasons[1].text
  end
  return table.concat(
    vim.tbl_map(function(r)
      return string.format("line %d: %s", r.line, r.text)
    end, reasons),
    "; "
  )
end

--- Answers the edit with the decisions made: the accepted hunks apply (one
--- undo step per buffer), the others are left out, and the reasons go back
--- to the agent.
---@param item verbatim.PendingEdit
local function send(item)
  local st = state_of(item)
  local skipped, reasons, accepted_any = {}, {}, false
  for d, doc in ipairs(item.proposal.documents) do
    for i, h in ipairs(doc.hunks or {}) do
      local decision = (st.hunks[d] or {})[i]
      if decision and decision.accepted then
        accepted_any = true
      else
        hunk_actions.leave_out(skipped, d, i, true)
        if decision and decision.reason and decision.reason ~= "" then
          table.insert(reasons, { line = first_line(h), text = decision.reason })
        end
      end
    end
  end
  local reason = join_reasons(reasons)
  if not accepted_any then
    queue.reject(item, reason)
    return
  end
  item.skipped = skipped
  hunk_actions.accept(item, reason)
end

--- Whether every hunk of the edit is decided.
---@param item verbatim.PendingEdit
---@return boolean
local function all_decided(item)
  local st = state_of(item)
  for d, doc in ipairs(item.proposal.documents) do
    for i = 1, #(doc.hunks or {}) do
      if not (st.hunks[d] or {})[i] then
        return false
      end
    end
  end
  return true
end

--- Accepts (or rejects, with `reason`) every hunk of the edit shown in
--- `bufnr` that rows `first`..`last` (0-based, inclusive) touch; sends the
--- decision once every hunk is decided.
---@param bufnr integer
---@param first integer
---@param last integer
---@param accepted boolean
---@param reason? string
---@return integer how many hunks were decided
function M.decide(bufnr, first, last, accepted, reason)
  local item, d = shown(bufnr)
  if not item then
    return 0
  end
  local hunks = hunks_in(bufnr, first, last)
  if #hunks == 0 then
    vim.notify("verbatim: no hunk here (" .. M.show_key("]c") .. " moves to one)")
    return 0
  end
  local st = state_of(item)
  st.hunks[d] = st.hunks[d] or {}
  for _, i in ipairs(hunks) do
    st.hunks[d][i] = { accepted = accepted, reason = (reason ~= "" and reason) or nil }
    -- As if left out in the review window: `:Verbatim accept` and the window
    -- keep them out too.
    hunk_actions.leave_out(item.skipped, d --[[@as integer]], i, not accepted)
  end
  if all_decided(item) then
    send(item)
  else
    draw(bufnr, item, d --[[@as integer]])
  end
  return #hunks
end

--- Asks for an optional reason, then rejects the hunks rows `first`..`last`
--- touch (cancelling the prompt decides nothing).
---@param bufnr integer
---@param first integer
---@param last integer
function M.reject_with_prompt(bufnr, first, last)
  if #hunks_in(bufnr, first, last) == 0 then
    M.decide(bufnr, first, last, false)
    return
  end
  hunk_actions.ask_reason(function(reason)
    M.decide(bufnr, first, last, false, reason)
  end)
end

--- Accepts every hunk of the edit shown in `bufnr`, and sends the decision.
---@param bufnr integer
function M.accept_all(bufnr)
  local item = shown(bufnr)
  if not item then
    return
  end
  local st = state_of(item)
  for d, doc in ipairs(item.proposal.documents) do
    st.hunks[d] = st.hunks[d] or {}
    for i = 1, #(doc.hunks or {}) do
      st.hunks[d][i] = { accepted = true }
    end
  end
  item.skipped = {}
  hunk_actions.accept(item)
end

--- Rejects the whole edit shown in `bufnr`; `reason` goes back to the agent.
---@param bufnr integer
---@param reason? string
function M.reject_all(bufnr, reason)
  local item = shown(bufnr)
  if item then
    queue.reject(item, reason)
  end
end

---@param bufnr integer
function M.reject_all_with_prompt(bufnr)
  if not shown(bufnr) then
    return
  end
  hunk_actions.ask_reason(function(reason)
    M.reject_all(bufnr, reason)
  end)
end

--- Sends the decisions on the edit shown in `bufnr`; the hunks not decided
--- are left out.
---@param bufnr integer
function M.done(bufnr)
  local item = shown(bufnr)
  if item then
    send(item)
  end
end

--- Opens the review window on the edit shown in `bufnr`, with the hunks
--- rejected so far left out.
---@param bufnr integer
function M.open_window(bufnr)
  local item = shown(bufnr)
  if not item then
    return
  end
  local st = state_of(item)
  item.skipped = {}
  for d, decisions in pairs(st.hunks) do
    for i, decision in pairs(decisions) do
      if not decision.accepted then
        hunk_actions.leave_out(item.skipped, d, i, true)
      end
    end
  end
  local review = require("verbatim.review")
  review.shown = item.key
  review.open({ enter = true })
end

--- Moves the cursor `count` hunks down ("next") or up ("prev"), to the
--- hunk's first line; stops at the last one, as |]c| does in diff mode.
---@param direction "next"|"prev"
---@param count? integer
---@return boolean moved
function M.goto_hunk(direction, count)
  local bufnr = api.nvim_get_current_buf()
  local firsts = vim.tbl_map(function(r)
    return r.first
  end, hunk_rows(bufnr))
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local target = hunk_actions.step(firsts, row, direction, count)
  if not target then
    return false
  end
  vim.cmd("normal! m'")
  api.nvim_win_set_cursor(0, { target + 1, 0 })
  return true
end

--- Selects the lines of the hunk under the cursor, linewise (the text object).
function M.select_hunk()
  local bufnr = api.nvim_get_current_buf()
  local row = api.nvim_win_get_cursor(0)[1] - 1
  for _, r in ipairs(hunk_rows(bufnr)) do
    if r.first <= row and r.last >= row then
      vim.cmd(string.format("normal! %dGV%dG", r.first + 1, r.last + 1))
      return
    end
  end
end

--- Shows the next pending edit: in the current buffer the one after the
--- edit on display; otherwise the buffer of the oldest pending edit, in the
--- current window, at its first hunk.
---@return boolean shown whether there was one
function M.next()
  local bufnr = api.nvim_get_current_buf()
  local mine = items_of(bufnr)
  local view = M.views[bufnr]
  if #mine > 1 and view then
    for k, item in ipairs(mine) do
      if item.key == view.key then
        chosen[bufnr] = mine[k % #mine + 1].key
        break
      end
    end
    M.refresh()
    return true
  end
  for _, item in ipairs(queue.items) do
    for _, doc in ipairs(item.proposal.documents) do
      if doc.bufnr and doc.bufnr ~= bufnr and api.nvim_buf_is_loaded(doc.bufnr) then
        chosen[doc.bufnr] = item.key
        api.nvim_win_set_buf(0, doc.bufnr)
        M.refresh()
        local rows = hunk_rows(doc.bufnr)
        if rows[1] then
          api.nvim_win_set_cursor(0, { rows[1].first + 1, 0 })
        end
        return true
      end
    end
  end
  if #mine == 1 then
    local rows = hunk_rows(bufnr)
    if rows[1] then
      api.nvim_win_set_cursor(0, { rows[1].first + 1, 0 })
    end
    return true
  end
  return false
end

--- Tells the person an edit waits, without moving the cursor: where, and
--- the keys; for a file no window shows, how to open it.
---@param item verbatim.PendingEdit
local function announce(item)
  local keys = config.options.inline_keymaps
  local hidden = {}
  for _, doc in ipairs(item.proposal.documents) do
    if not doc.bufnr or #vim.fn.win_findbuf(doc.bufnr) == 0 then
      table.insert(hidden, vim.fn.fnamemodify(vim.uri_to_fname(doc.uri), ":~:."))
    end
  end
  local tail
  -- In a terminal (Claude Code runs in one), Terminal mode must be left first.
  local next_cmd = notice.in_terminal() and "<C-\\><C-n>:Verbatim next" or ":Verbatim next"
  if #hidden > 0 then
    tail = string.format(" (in %s: %s opens it)", table.concat(hidden, ", "), next_cmd)
  else
    local how =
      hunk_actions.key_help({ { keys.accept, "accept" }, { keys.reject, "reject" } }, M.show_key)
    tail = " (in the buffer: " .. table.concat(how, ", ") .. ")"
  end
  notice.notify("verbatim: " .. item.proposal.label, vim.log.levels.INFO, tail)
end

--- Draws every buffer's pending edit again after the queue changed, and
--- removes the marks and keys of buffers nothing waits on any more.
function M.refresh()
  if not enabled() then
    for bufnr in pairs(M.views) do
      clear(bufnr)
    end
    return
  end
  local wanted = {} ---@type table<integer, verbatim.PendingEdit>
  for _, item in ipairs(queue.items) do
    for _, doc in ipairs(item.proposal.documents) do
      local bufnr = doc.bufnr
      if bufnr and api.nvim_buf_is_loaded(bufnr) then
        local pick = chosen[bufnr]
        if not wanted[bufnr] or item.key == pick then
          wanted[bufnr] = item
        end
      end
    end
  end
  for bufnr in pairs(M.views) do
    if not wanted[bufnr] then
      clear(bufnr)
      chosen[bufnr] = nil
    end
  end
  for bufnr, item in pairs(wanted) do
    draw(bufnr, item, doc_index(item, bufnr) --[[@as integer]])
  end
  for _, item in ipairs(queue.items) do
    if not seen[item.key] then
      seen[item.key] = true
      announce(item)
    end
  end
  for key in pairs(states) do
    if not queue.get(key) then
      states[key] = nil
    end
  end
end

local function define_highlights()
  hunk_actions.link_highlights({
    VerbatimInlineAdd = "DiffAdd",
    VerbatimInlineAddWord = "DiffText",
    VerbatimInlineDeleteWord = "DiffText",
    VerbatimInlineHeader = "Title",
    VerbatimInlineHelp = "Comment",
    VerbatimInlineAccepted = "DiagnosticOk",
    VerbatimInlineRejected = "DiagnosticWarn",
    VerbatimInlineNote = "DiagnosticWarn",
  })
  if config.options.inline_strikethrough then
    -- Asked for by the option: it wins over an earlier definition.
    local base = api.nvim_get_hl(0, { name = "DiffDelete", link = false })
    base.strikethrough = true
    api.nvim_set_hl(0, "VerbatimInlineDelete", base)
  else
    api.nvim_set_hl(0, "VerbatimInlineDelete", { link = "DiffDelete", default = true })
  end
end

--- Creates the highlight groups (again after a colour scheme loads) and
--- starts following the queue. Called by `require("verbatim").setup()`.
function M.setup()
  hunk_actions.setup_ui({
    group = "verbatim.inline",
    desc = "verbatim: define the inline review's highlight groups again",
    define_highlights = define_highlights,
    refresh = M.refresh,
  })
end

return M
