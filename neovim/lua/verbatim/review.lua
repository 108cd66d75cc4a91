---@brief
--- The review window: the pending edit's agent, summary and changes as a
--- unified diff of the buffer's current text against the proposal, with keys
--- to accept, reject, trust the agent, move from change to change, and leave
--- out single changes or a visual range of them. The changed code is coloured
--- in its own language, with the words that differ marked (highlight.lua).
---
--- The window opens without taking the cursor (an edit arriving while the
--- person types must not catch their keys); `:Verbatim review` moves into it.

local api = vim.api
local config = require("verbatim.config")
local highlight = require("verbatim.highlight")
local hunk_actions = require("verbatim.hunk_actions")
local notice = require("verbatim.notice")
local proposal_mod = require("verbatim.proposal")
local queue = require("verbatim.queue")

local M = {}

local ns = api.nvim_create_namespace("verbatim.review")
local BUF_NAME = "verbatim://review"
local CONTEXT = proposal_mod.CONTEXT

---@type integer|nil
local bufnr = nil
--- The key of the pending edit on display.
---@type integer|nil
M.shown = nil

---@class verbatim.ReviewHunk
---@field doc integer the document's index in the proposal
---@field hunk integer the change's index in the document
---@field row integer the first changed line in the window (0-based)

--- Line (0-based) -> the change it belongs to, for the edit on display.
---@type table<integer, verbatim.ReviewHunk>
local line_hunks = {}
--- Every change on display, top to bottom.
---@type verbatim.ReviewHunk[]
local hunks = {}
--- Keys of the edits seen so far, to open the window only for new ones.
local seen = {} ---@type table<integer, boolean>

---@param fname string
---@param root string|nil
---@return string
local function display_path(fname, root)
  if root then
    local rel = vim.fs.relpath(root, fname)
    if rel then
      return rel
    end
  end
  return vim.fn.fnamemodify(fname, ":~")
end

--- Colours one change: a background on its removed and added lines, its code
--- in the file's language, and the words that differ between a removed line
--- and the added line in its place (when as many lines are added as removed).
---@param spans table[] { row, first column or nil for the whole line, end column, highlight, priority }
---@param lines string[] the window's lines so far
---@param lang string|nil
---@param rows { pre: integer[], minus: integer[], plus: integer[], post: integer[] } 0-based rows
local function decorate_hunk(spans, lines, lang, rows)
  local function text(row)
    return lines[row + 1]:sub(2)
  end
  for _, row in ipairs(rows.minus) do
    table.insert(spans, { row, nil, nil, "VerbatimReviewDelete" })
  end
  for _, row in ipairs(rows.plus) do
    table.insert(spans, { row, nil, nil, "VerbatimReviewAdd" })
  end
  if lang then
    local added = {}
    for _, row in ipairs(rows.plus) do
      added[row] = true
    end
    -- Each side is parsed whole, context included, so that a construct that
    -- spans lines is recognised; the context is coloured once, from the old side.
    for _, side in ipairs({
      { vim.list_extend(vim.list_extend(vim.list_slice(rows.pre), rows.minus), rows.post), true },
      { vim.list_extend(vim.list_extend(vim.list_slice(rows.pre), rows.plus), rows.post), false },
    }) do
      local side_rows, with_context = side[1], side[2]
      for _, span in ipairs(highlight.code_spans(vim.tbl_map(text, side_rows), lang)) do
        local row = side_rows[span.line]
        if with_context or added[row] then
          table.insert(spans, { row, span.first + 1, span.last + 1, span.hl, 150 })
        end
      end
    end
  end
  if #rows.minus == #rows.plus then
    for k, old_row in ipairs(rows.minus) do
      local new_row = rows.plus[k]
      local old_ranges, new_ranges = highlight.word_changes(text(old_row), text(new_row))
      for _, range in ipairs(old_ranges) do
        table.insert(
          spans,
          { old_row, range[1] + 1, range[2] + 1, "VerbatimReviewDeleteText", 210 }
        )
      end
      for _, range in ipairs(new_ranges) do
        table.insert(spans, { new_row, range[1] + 1, range[2] + 1, "VerbatimReviewAddText", 210 })
      end
    end
  end
end

---@param lines string[]
---@param marks table[]
---@param spans table[] see decorate_hunk
---@param doc verbatim.DocumentChange
---@param doc_index integer
---@param skipped table<integer, boolean>
---@param root string|nil
local function render_document(lines, marks, spans, doc, doc_index, skipped, root)
  local fname = vim.uri_to_fname(doc.uri)
  local path = display_path(fname, root)
  -- Only the changed lines and their context are known (see proposal.lua).
  local a, b = doc.before_lines or {}, doc.after_lines or {}
  local total_a = doc.line_count or 0
  if doc.empty_base and doc.create then
    table.insert(lines, "--- /dev/null")
  else
    table.insert(lines, "--- a/" .. path)
  end
  table.insert(lines, "+++ b/" .. path)
  table.insert(marks, { #lines - 2, #lines, "VerbatimReviewFile" })
  if #(doc.hunks or {}) == 0 then
    table.insert(lines, "(no change)")
    return
  end
  local lang = highlight.language(fname, doc.bufnr)
  local printed_until = 0 -- last line of `a` shown so far
  local delta = 0 -- line offset of `b` against `a` before the current hunk
  ---@param h verbatim.Hunk|nil
  ---@return integer the first line of `a` the hunk touches (or inserts before)
  local function first_line(h)
    if not h then
      return total_a + 1
    end
    return h.count_a > 0 and h.start_a or h.start_a + 1
  end
  for i, h in ipairs(doc.hunks) do
    local first_a = first_line(h)
    local last_a = first_a + h.count_a - 1
    local next_first = first_line(doc.hunks[i + 1])
    local pre = math.max(printed_until + 1, first_a - CONTEXT)
    local post = math.min(last_a + CONTEXT, next_first - 1, total_a)
    local count_a = post - pre + 1
    local count_b = count_a - h.count_a + h.count_b
    local header_line = #lines
    table.insert(lines, string.format("@@ -%d,%d +%d,%d @@", pre, count_a, pre + delta, count_b))
    local rows = { pre = {}, minus = {}, plus = {}, post = {} }
    ---@param kind "pre"|"minus"|"plus"|"post"
    ---@param line string
    local function add(kind, line)
      table.insert(rows[kind], #lines)
      table.insert(lines, line)
    end
    for j = pre, first_a - 1 do
      add("pre", " " .. a[j])
    end
    local hunk = { doc = doc_index, hunk = i, row = #lines }
    table.insert(hunks, hunk)
    for j = h.start_a, h.start_a + h.count_a - 1 do
      add("minus", "-" .. a[j])
    end
    for j = h.start_b, h.start_b + h.count_b - 1 do
      add("plus", "+" .. b[j])
    end
    for j = last_a + 1, post do
      add("post", " " .. a[j])
    end
    decorate_hunk(spans, lines, lang, rows)
    for l = header_line, #lines - 1 do
      line_hunks[l] = hunk
    end
    if h.note then
      -- What to know before taking it (a revert's conflict), on its @@ line.
      table.insert(marks, { header_line, header_line + 1, nil, "⚠ " .. h.note:gsub("\n", " ") })
    end
    if skipped[i] then
      table.insert(marks, { header_line, #lines, "VerbatimReviewSkipped", "left out" })
    end
    printed_until = post
    delta = delta + h.count_b - h.count_a
  end
end

---@param item verbatim.PendingEdit
---@return string[] lines
---@return table[] marks { first line, end line (exclusive), highlight, virtual text? }
---@return table[] spans see decorate_hunk
local function render(item)
  line_hunks, hunks = {}, {}
  local proposal = item.proposal
  local keys = config.options.keymaps
  local position = queue.position(item) or 1
  local from_disk = proposal.origin == "disk"
  local lines = {
    from_disk and ("Verbatim review: " .. hunk_actions.DISK_CHANGE)
      or string.format("Verbatim review: %s wants to edit", proposal.agent),
    "  " .. proposal.summary,
  }
  local marks = { { 0, 1, "VerbatimReviewTitle" }, { 1, 2, "VerbatimReviewSummary" } }
  -- "]c/[c next/previous change", or the one of the two keys that is set.
  local nav = { keys = {}, words = {} }
  for _, key in ipairs({ { keys.next_hunk, "next" }, { keys.prev_hunk, "previous" } }) do
    if key[1] then
      table.insert(nav.keys, key[1])
      table.insert(nav.words, key[2])
    end
  end
  local help = hunk_actions.key_help({
    { keys.accept, "accept" },
    { keys.reject, from_disk and "reject (keep the buffer as it is)" or "reject" },
    -- Trust is for agents; changes on disk apply at once with external_changes = "auto".
    { not from_disk and keys.accept_all, "accept all from " .. proposal.agent },
    { keys.toggle_hunk, "leave out change (or selection)" },
    {
      #nav.keys > 0 and table.concat(nav.keys, "/"),
      table.concat(nav.words, "/") .. " change",
    },
    { keys.close, "close" },
  })
  table.insert(
    lines,
    string.format("edit %d of %d  ·  %s", position, #queue.items, table.concat(help, "  ·  "))
  )
  table.insert(marks, { 2, 3, "VerbatimReviewHelp" })
  if item.moved then
    -- See queue.lua: the server moves the edit over what the person typed.
    table.insert(
      lines,
      item.accepted and "(accepted: the buffer changed; it applies once moved over your changes)"
        or "(the buffer changed: moving the edit over your changes…)"
    )
    table.insert(marks, { #lines - 1, #lines, "VerbatimReviewSkippedLabel" })
  end
  table.insert(lines, "")
  local client = vim.lsp.get_client_by_id(proposal.client_id)
  local root = client and client.root_dir or nil
  local spans = {}
  for index, doc in ipairs(proposal.documents) do
    render_document(lines, marks, spans, doc, index, item.skipped[index] or {}, root)
  end
  return lines, marks, spans
end

---@return integer
local function ensure_buffer()
  if bufnr and api.nvim_buf_is_valid(bufnr) then
    return bufnr
  end
  bufnr = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(bufnr, BUF_NAME)
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].filetype = "diff"
  vim.bo[bufnr].modifiable = false
  local keys = config.options.keymaps
  local function map(lhs, fn, desc, mode)
    if lhs then
      vim.keymap.set(
        mode or "n",
        lhs,
        fn,
        { buffer = bufnr, nowait = true, desc = "verbatim: " .. desc }
      )
    end
  end
  map(keys.accept, function()
    M.accept_with_prompt()
  end, "accept the edit")
  map(keys.reject, function()
    M.reject_with_prompt()
  end, "reject the edit")
  map(keys.accept_all, function()
    M.accept_all()
  end, "accept all edits from this agent")
  map(keys.toggle_hunk, function()
    M.toggle_hunk()
  end, "leave out the change under the cursor")
  map(keys.toggle_hunk, function()
    M.toggle_hunks(hunk_actions.visual_lines())
  end, "leave out the selected changes", "x")
  map(keys.next_hunk, function()
    M.goto_hunk("next", vim.v.count1)
  end, "next change")
  map(keys.prev_hunk, function()
    M.goto_hunk("prev", vim.v.count1)
  end, "previous change")
  map(keys.close, function()
    M.close()
  end, "close the review window")
  return bufnr
end

---@return integer|nil
local function find_window()
  if not (bufnr and api.nvim_buf_is_valid(bufnr)) then
    return nil
  end
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(win) == bufnr then
      return win
    end
  end
end

--- The pending edit on display, or the first one.
---@return verbatim.PendingEdit|nil
function M.current()
  return queue.get(M.shown) or queue.items[1]
end

---@param item verbatim.PendingEdit
local function draw(item)
  local buf = ensure_buffer()
  M.shown = item.key
  local lines, marks, spans = render(item)
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, mark in ipairs(marks) do
    local first, last, hl, label = mark[1], mark[2], mark[3], mark[4]
    api.nvim_buf_set_extmark(buf, ns, first, 0, {
      end_row = last,
      hl_group = hl,
      hl_eol = true,
      priority = 200,
      virt_text = label and { { "  [" .. label .. "]", "VerbatimReviewSkippedLabel" } } or nil,
    })
  end
  for _, span in ipairs(spans) do
    local row, first, last, hl, priority = span[1], span[2], span[3], span[4], span[5]
    if first then
      api.nvim_buf_set_extmark(buf, ns, row, first, {
        end_col = last,
        hl_group = hl,
        priority = priority,
      })
    else
      api.nvim_buf_set_extmark(buf, ns, row, 0, { line_hl_group = hl, priority = 10 })
    end
  end
end

--- The one-line float that says edits wait, shown while the person is in a
--- terminal window (see `M.in_terminal`).
---@type integer|nil
local waiting_win = nil

--- Hides the float that says edits wait.
local function hide_waiting()
  if waiting_win and api.nvim_win_is_valid(waiting_win) then
    api.nvim_win_close(waiting_win, true)
  end
  waiting_win = nil
end

--- Shows (or updates) the float that says edits wait, at the top right of
--- the screen. A message alone would not do in Terminal mode: Neovim
--- redraws "-- TERMINAL --" over it at the next key or the next output of
--- the program in the terminal. The float takes neither the cursor nor any
--- window's size.
local function show_waiting()
  local item = M.current()
  if not item then
    hide_waiting()
    return
  end
  local how = " · <C-\\><C-n>:Verbatim review "
  local what = #queue.items == 1 and (" " .. item.proposal.label)
    or string.format(" %d edits wait for review", #queue.items)
  local room = math.max(10, vim.o.columns - 2 - vim.fn.strdisplaywidth(how))
  local line = notice.shorten(what, room) .. how
  local width = vim.fn.strdisplaywidth(line)
  local buf = waiting_win
    and api.nvim_win_is_valid(waiting_win)
    and api.nvim_win_get_buf(waiting_win)
  if not buf then
    buf = api.nvim_create_buf(false, true)
    vim.bo[buf].bufhidden = "wipe"
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, { line })
  local win_config = {
    relative = "editor",
    anchor = "NE",
    row = 0,
    col = vim.o.columns,
    width = width,
    height = 1,
    style = "minimal",
    focusable = false,
    zindex = 60,
  }
  if waiting_win and api.nvim_win_is_valid(waiting_win) then
    api.nvim_win_set_config(waiting_win, win_config)
  else
    win_config.noautocmd = true
    waiting_win = api.nvim_open_win(buf, false, win_config)
    vim.wo[waiting_win].winhighlight = "NormalFloat:VerbatimReviewWaiting"
  end
end

--- Shows the review window.
---@param opts? { enter?: boolean }
function M.open(opts)
  opts = opts or {}
  local item = M.current()
  if not item then
    vim.notify("verbatim: no edit waits for review", vim.log.levels.INFO)
    return
  end
  hide_waiting()
  draw(item)
  local win = find_window()
  if not win then
    local lines = api.nvim_buf_line_count(bufnr --[[@as integer]])
    local height = math.max(6, math.min(lines + 1, math.floor(vim.o.lines * 0.45)))
    win = api.nvim_open_win(bufnr --[[@as integer]], opts.enter or false, {
      split = "below",
      win = -1,
      height = height,
    })
    vim.wo[win].number = false
    vim.wo[win].relativenumber = false
    vim.wo[win].signcolumn = "no"
    vim.wo[win].foldenable = false
    vim.wo[win].wrap = false
    vim.wo[win].cursorline = true
    vim.wo[win].winfixheight = true
  elseif opts.enter then
    api.nvim_set_current_win(win)
  end
end

--- Closes the review window; the edits stay pending.
function M.close()
  local win = find_window()
  while win do
    if #api.nvim_tabpage_list_wins(0) > 1 then
      api.nvim_win_close(win, true)
    elseif #api.nvim_list_tabpages() > 1 then
      vim.cmd("tabclose")
    else
      -- The last window of the last tab page: show another buffer in it.
      local alternate = vim.fn.bufnr("#")
      if alternate > 0 and alternate ~= bufnr and vim.bo[alternate].buflisted then
        api.nvim_win_set_buf(win, alternate)
      else
        api.nvim_win_set_buf(win, api.nvim_create_buf(true, false))
      end
    end
    win = find_window()
  end
end

--- Whether the person is in a terminal window: most likely typing to an
--- agent there (Claude Code asks for its edits while it runs in one). A
--- review must then neither take the terminal's place nor its size.
---@return boolean
function M.in_terminal()
  return notice.in_terminal()
end

--- Tells the person that an edit waits, and how to see it; in a terminal,
--- how to leave Terminal mode too.
---@param pending verbatim.PendingEdit
local function announce(pending)
  local label = "verbatim: " .. pending.proposal.label
  if M.in_terminal() then
    notice.notify(label, vim.log.levels.INFO, " (<C-\\><C-n>:Verbatim review)")
  else
    vim.notify(label .. " (:Verbatim review)", vim.log.levels.INFO)
  end
end

--- Redraws after the queue changed; opens the window for new edits, except
--- while the person is in a terminal window (see `M.in_terminal`): there a
--- float at the top right says that edits wait, until the review is opened.
function M.refresh()
  local item = M.current()
  -- The inline review announces edits and draws them itself (inline.lua);
  -- the window then opens only when asked for.
  local inline = config.options.review_ui == "inline"
  local has_new = false
  for _, pending in ipairs(queue.items) do
    if not seen[pending.key] then
      seen[pending.key] = true
      has_new = true
      if not inline then
        announce(pending)
      end
    end
  end
  if not item then
    M.shown = nil
    hide_waiting()
    M.close()
    return
  end
  if find_window() then
    hide_waiting()
    draw(item)
  elseif inline then
    hide_waiting()
  elseif has_new and config.options.auto_open and not M.in_terminal() then
    M.open({ enter = false })
  elseif (has_new and M.in_terminal()) or waiting_win then
    show_waiting()
  end
end

--- Shows the pending edit after the one on display (the first after the
--- last), in the review window.
---@return boolean shown whether an edit waits
function M.next()
  local item = M.current()
  if not item then
    return false
  end
  local index = queue.position(item) or 0
  M.shown = queue.items[index % #queue.items + 1].key
  M.open({ enter = false })
  return true
end

--- The pending edit with `key`, or the one on display.
---@param key integer|nil
---@return verbatim.PendingEdit|nil
local function pending_edit(key)
  if key ~= nil then
    return queue.get(key)
  end
  return M.current()
end

--- Accepts the edit on display (or the pending edit `key`), without the
--- changes left out; `reason` (why they were left out) goes back to the agent.
---@param key? integer
---@param reason? string
---@return boolean applied
---@return string|nil reason
---@return boolean|nil later the buffer changed: it applies when the server offers it again
function M.accept(key, reason)
  local item = pending_edit(key)
  if not item then
    return false, key and ("no pending edit " .. key) or "no edit waits for review"
  end
  return hunk_actions.accept(item, reason)
end

--- Rejects the edit on display (or the pending edit `key`); `reason` goes
--- back to the agent.
---@param reason string|nil
---@param key? integer
---@return boolean rejected
function M.reject(reason, key)
  local item = pending_edit(key)
  if not item then
    return false
  end
  queue.reject(item, reason)
  return true
end

--- Accepts the edit on display; when changes are left out, first asks why
--- (optional; cancelling the prompt keeps the edit waiting).
function M.accept_with_prompt()
  local item = M.current()
  if not item then
    return
  end
  local left_out = queue.left_out(item)
  if left_out == 0 then
    M.accept(item.key)
    return
  end
  vim.ui.input({
    prompt = string.format(
      "Why leave out %d change%s? (optional, for the agent): ",
      left_out,
      left_out == 1 and "" or "s"
    ),
  }, function(reason)
    if reason == nil or not queue.get(item.key) then
      return
    end
    M.accept(item.key, reason)
  end)
end

--- Asks for a reason, then rejects (cancelling the prompt keeps the edit).
function M.reject_with_prompt()
  local item = M.current()
  if not item then
    return
  end
  hunk_actions.ask_reason(function(reason)
    if queue.get(item.key) then
      queue.reject(item, reason)
    end
  end)
end

--- Accepts the edit on display and trusts its agent for the session. A
--- change made on disk is only accepted: no agent is behind it.
function M.accept_all()
  local item = M.current()
  if not item then
    return
  end
  if item.proposal.origin == "disk" then
    M.accept(item.key)
    return
  end
  queue.trust(item.proposal.agent)
end

--- Leaves out every change that lines `first`..`last` (1-based, inclusive)
--- of the review window touch; when all of them are left out already, takes
--- them back instead.
---@param first integer
---@param last integer
function M.toggle_hunks(first, last)
  local item = M.current()
  if not item or not find_window() then
    return
  end
  local touched, all_skipped = {}, true
  for row = first - 1, last - 1 do
    local hunk = line_hunks[row]
    if hunk and not vim.tbl_contains(touched, hunk) then
      table.insert(touched, hunk)
      local skipped = item.skipped[hunk.doc]
      all_skipped = all_skipped and skipped ~= nil and skipped[hunk.hunk] == true
    end
  end
  if #touched == 0 then
    return
  end
  for _, hunk in ipairs(touched) do
    hunk_actions.leave_out(item.skipped, hunk.doc, hunk.hunk, not all_skipped)
  end
  draw(item)
end

--- Leaves out (or takes back) the change under the cursor.
function M.toggle_hunk()
  local win = find_window()
  if win then
    local line = api.nvim_win_get_cursor(win)[1]
    M.toggle_hunks(line, line)
  end
end

--- Moves the cursor of the review window `count` changes down ("next") or
--- up ("prev"), to the change's first changed line; stops at the last one,
--- as `]c` does in diff mode.
---@param direction "next"|"prev"
---@param count? integer
---@return boolean moved
function M.goto_hunk(direction, count)
  local win = find_window()
  if not win or #hunks == 0 then
    return false
  end
  local firsts = vim.tbl_map(function(hunk)
    return hunk.row
  end, hunks)
  local row = api.nvim_win_get_cursor(win)[1] - 1
  local target_row = hunk_actions.step(firsts, row, direction, count)
  if not target_row then
    return false
  end
  api.nvim_win_set_cursor(win, { target_row + 1, 0 })
  return true
end

local function define_highlights()
  hunk_actions.link_highlights({
    VerbatimReviewTitle = "Title",
    VerbatimReviewSummary = "Bold",
    VerbatimReviewHelp = "Comment",
    VerbatimReviewFile = "Directory",
    VerbatimReviewSkipped = "Comment",
    VerbatimReviewSkippedLabel = "WarningMsg",
    VerbatimReviewAdd = "DiffAdd",
    VerbatimReviewDelete = "DiffDelete",
    VerbatimReviewAddText = "DiffText",
    VerbatimReviewDeleteText = "DiffText",
    VerbatimReviewWaiting = "PmenuSel",
  })
end

--- Creates the highlight groups (again after a colour scheme loads) and
--- starts following the queue. Called by `require("verbatim").setup()`;
--- calling it again is harmless.
function M.setup()
  hunk_actions.setup_ui({
    group = "verbatim.review",
    desc = "verbatim: define the review window's highlight groups again",
    define_highlights = define_highlights,
    refresh = M.refresh,
  })
end

return M
