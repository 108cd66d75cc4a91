-- End to end, review_ui = "inline": a real `verbatim lsp`, a real agent on
-- its socket, and the person deciding hunk by hunk in the buffer itself, with
-- the buffer-local keys.
local H = require("helpers")
local api = vim.api
local verbatim = require("verbatim")
local inline = require("verbatim.inline")
local queue = require("verbatim.queue")

verbatim.setup({ cmd = { vim.env.VERBATIM_BIN, "lsp" }, review_ui = "inline" })

--- Every vim.notify of this file, still printed to the test log.
---@type { msg: string, level: integer|nil }[]
local notes = {}
local print_notify = vim.notify
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
  print_notify(msg, level)
end

--- vim.ui.input answers `reply` until restored; the prompts are kept.
---@param reply string|nil
---@return string[] prompts
---@return fun() restore
local function answer_input(reply)
  local prompts = {}
  local original = vim.ui.input
  vim.ui.input = function(opts, on_confirm)
    table.insert(prompts, opts.prompt)
    on_confirm(reply)
  end
  return prompts, function()
    vim.ui.input = original
  end
end

--- The lines of a Lua file: `local <letter> = <n>`, one per letter.
---@param count integer
---@return string
local function lua_lines(count)
  local lines = {}
  for n = 1, count do
    lines[n] = string.format("local v%d = %d", n, n)
  end
  return table.concat(lines, "\n") .. "\n"
end

--- An agent's edit of two hunks in a.lua: line 2 changes, line 7 becomes two.
---@param agent_name string
---@return verbatim.test.Scenario
---@return integer request id
local function two_hunk_edit(agent_name)
  local s = H.scenario({ ["a.lua"] = lua_lines(10) }, "a.lua", agent_name)
  local id = s.agent:request("verbatim/batchEdit", {
    summary = "Tune two values",
    edits = {
      { uri = s.uri, oldStr = "local v2 = 2", newStr = "local v2 = 20", baseRev = s.read.rev },
      { uri = s.uri, oldStr = "local v7 = 7", newStr = "local v7 = 70\nlocal v7b = 71" },
    },
  })
  H.wait_pending(1)
  H.wait_for("the inline view", function()
    return inline.views[s.buf]
  end)
  return s, id
end

--- The extmarks of the inline view, with details.
---@param buf integer
---@return table[]
local function marks(buf)
  return api.nvim_buf_get_extmarks(buf, inline.ns, 0, -1, { details = true })
end

--- The text of a virtual line's chunks, without the padding.
---@param chunks table[]
---@return string
local function virt_text(chunks)
  local parts = {}
  for _, chunk in ipairs(chunks) do
    table.insert(parts, chunk[1])
  end
  return (table.concat(parts):gsub("%s+$", ""))
end

--- Presses keys in the current window as the person does.
---@param keys string
local function press(keys)
  api.nvim_feedkeys(api.nvim_replace_termcodes(keys, true, false, true), "xt", false)
end

H.test("two hunks: removed lines marked in place, added lines as coloured virtual lines", function()
  local s, id = two_hunk_edit("marks-agent")
  H.eq(nil, (H.review_window()), "no review window in inline mode")
  H.eq(false, s.agent:answered(id))
  H.eq(vim.split(lua_lines(10), "\n", { trimempty = true }), H.lines(s.buf), "text unchanged")

  local deleted, words, virt, header = {}, {}, {}, nil
  for _, m in ipairs(marks(s.buf)) do
    local row, col, d = m[2], m[3], m[4]
    if d.hl_group == "VerbatimInlineDelete" then
      table.insert(deleted, { row, d.end_row, d.end_col, d.hl_eol })
    elseif d.hl_group == "VerbatimInlineDeleteWord" then
      table.insert(words, { row, col, d.end_col })
    elseif d.virt_lines and d.virt_lines_above then
      header = d.virt_lines
    elseif d.virt_lines then
      table.insert(virt, { row = row, lines = d.virt_lines })
    end
  end
  H.eq({ { 1, 2, 0, true }, { 6, 7, 0, true } }, deleted, "the two removed lines")
  H.eq({ { 1, 11, 12 } }, words, "the word that differs on the line changed one for one")
  H.eq(2, #virt)
  H.eq(1, virt[1].row)
  H.eq({ "local v2 = 20" }, vim.tbl_map(virt_text, virt[1].lines))
  H.eq(6, virt[2].row)
  H.eq({ "local v7 = 70", "local v7b = 71" }, vim.tbl_map(virt_text, virt[2].lines))
  -- Coloured in Lua (Tree-sitter), on the added background, the new word marked.
  local first = virt[1].lines[1]
  H.eq({ "local", { "VerbatimInlineAdd", "@keyword.lua" } }, first[1])
  local marked = vim.tbl_filter(function(chunk)
    return type(chunk[2]) == "table" and vim.tbl_contains(chunk[2], "VerbatimInlineAddWord")
  end, first)
  H.eq(
    { "20" },
    vim.tbl_map(function(chunk)
      return chunk[1]
    end, marked)
  )
  H.eq(
    "VerbatimInlineAdd",
    first[#first][2],
    "padded to the window's width on the added background"
  )
  H.truthy(header, "a header above the first hunk")
  H.eq("Verbatim · marks-agent: Tune two values", virt_text(header[1]))
  H.truthy(virt_text(header[2]):find("edit 1 of 1", 1, true), virt_text(header[2]))
  H.truthy(virt_text(header[2]):find("\\a accept", 1, true), virt_text(header[2]))
  local note = notes[#notes].msg
  H.truthy(note:find("marks-agent: Tune two values", 1, true), note)
  H.truthy(note:find("in the buffer", 1, true), note)

  -- The keys are buffer-local, and leave with the edit.
  H.eq("verbatim: accept the hunk under the cursor", vim.fn.maparg("\\a", "n", false, true).desc)
  H.eq(true, verbatim.reject())
  s.agent:wait(id)
  H.wait_for("the marks to go", function()
    return #marks(s.buf) == 0
  end)
  H.eq("", vim.fn.maparg("\\a", "n"), "the key leaves with the edit")
  H.eq("", vim.fn.maparg("]c", "n"))
end)

H.test("a revert's conflict: its hunk says so, the rest of its note once in the header", function()
  local s = H.scenario({ ["a.lua"] = lua_lines(10) }, "a.lua", "undo-agent")
  for _, change in ipairs({
    { "local v2 = 2", "local v2 = 20" },
    { "local v7 = 7", "local v7 = 70" },
  }) do
    local id = s.agent:request(
      "verbatim/strReplace",
      { uri = s.uri, oldStr = change[1], newStr = change[2], summary = "Tune", turn = "t-1" }
    )
    H.wait_pending(1)
    H.eq(true, verbatim.accept())
    H.eq(true, s.agent:wait(id).result.applied)
  end
  -- The person changes line 2 again: reverting the turn there would drop their change.
  api.nvim_buf_set_lines(s.buf, 1, 2, true, { "local v2 = 200 -- mine" })
  H.read_until(s.agent, s.uri, function(text)
    return text:find("-- mine", 1, true) ~= nil
  end)
  local id = s.agent:request("verbatim/revert", { turn = "t-1" })
  H.wait_pending(1)
  H.wait_for("the inline view", function()
    return inline.views[s.buf]
  end)
  local labels, header = {}, nil
  for _, m in ipairs(marks(s.buf)) do
    local d = m[4]
    if d.virt_lines and d.virt_lines_above then
      header = d.virt_lines
    elseif d.virt_text then
      table.insert(labels, { m[2], virt_text(d.virt_text), d.virt_text[1][2] })
    end
  end
  H.eq({
    { 1, "  ⚠ Conflict: a later change also touched line 2", "VerbatimInlineNote" },
  }, labels, "only the conflict's hunk has a label")
  H.truthy(header, "a header above the first hunk")
  H.eq(3, #header, vim.inspect(header))
  H.eq(
    "⚠ Accepting this hunk brings back the text from before the reverted edit and drops the later change; "
      .. "rejecting it keeps the text as it is now.",
    virt_text(header[3])
  )
  -- Rejected, the conflict keeps the person's line; the other hunk is reverted.
  api.nvim_win_set_cursor(0, { 2, 0 })
  local _, restore = answer_input("")
  press("\\r")
  restore()
  api.nvim_win_set_cursor(0, { 7, 0 })
  press("\\a")
  local response = s.agent:wait(id)
  H.eq(nil, response.error)
  H.eq("partial", response.result.outcome, vim.inspect(response.result))
  local now = H.lines(s.buf)
  H.eq({ "local v2 = 200 -- mine", "local v7 = 7" }, { now[2], now[7] })
end)

H.test("an insertion at the top and a change of the last line", function()
  local s = H.scenario({ ["g.lua"] = lua_lines(4) }, "g.lua", "edge-agent")
  local id = s.agent:request("verbatim/batchEdit", {
    summary = "Edges",
    edits = {
      {
        uri = s.uri,
        oldStr = "local v1 = 1",
        newStr = "-- a header\nlocal v1 = 1",
        baseRev = s.read.rev,
      },
      { uri = s.uri, oldStr = "local v4 = 4", newStr = "local v4 = 44" },
    },
  })
  H.wait_for("the inline view", function()
    return #inline.hunk_rows(s.buf) == 2
  end)
  local rows = vim.tbl_map(function(r)
    return { r.first, r.last }
  end, inline.hunk_rows(s.buf))
  H.eq({ { 0, 0 }, { 3, 3 } }, rows)
  local above = {}
  for _, m in ipairs(marks(s.buf)) do
    if m[4].virt_lines and m[4].virt_lines_above then
      table.insert(above, virt_text(m[4].virt_lines[1]))
    end
  end
  H.eq({ "Verbatim · edge-agent: Edges", "-- a header" }, above, "both above the first line")
  api.nvim_win_set_cursor(0, { 4, 0 })
  press("\\a")
  api.nvim_win_set_cursor(0, { 1, 0 })
  press("\\a")
  H.eq(true, s.agent:wait(id).result.applied)
  H.eq(
    { "-- a header", "local v1 = 1", "local v2 = 2", "local v3 = 3", "local v4 = 44" },
    H.lines(s.buf)
  )
end)

H.test(":Verbatim accept leaves out the hunks rejected in the buffer", function()
  local s, id = two_hunk_edit("command-agent")
  H.eq(1, inline.decide(s.buf, 1, 1, false, "not v2"))
  vim.cmd("Verbatim accept not v2")
  local response = s.agent:wait(id)
  H.eq(true, response.result.partial, vim.inspect(response.result))
  H.eq("not v2", response.result.reason)
  local now = H.lines(s.buf)
  H.eq({ "local v2 = 2", "local v7 = 70" }, { now[2], now[7] })
end)

H.test("inline_strikethrough strikes the removed lines through", function()
  local config = require("verbatim.config")
  config.options.inline_strikethrough = true
  inline.setup()
  H.eq(true, api.nvim_get_hl(0, { name = "VerbatimInlineDelete" }).strikethrough)
  config.options.inline_strikethrough = false
  api.nvim_set_hl(0, "VerbatimInlineDelete", { link = "DiffDelete" })
end)

H.test("accept the hunk at the cursor, reject the other with a reason", function()
  local s, id = two_hunk_edit("cursor-agent")
  api.nvim_win_set_cursor(0, { 1, 0 })
  press("]c")
  H.eq(2, api.nvim_win_get_cursor(0)[1], "]c moves to the first hunk")
  press("\\a")
  H.eq(false, s.agent:answered(id), "one hunk of two decided: the edit waits")
  H.eq("local v2 = 2", H.lines(s.buf)[2], "the text waits for the decision")
  local accepted = vim.tbl_filter(function(m)
    return m[4].virt_text and m[4].virt_text[1][2] == "VerbatimInlineAccepted"
  end, marks(s.buf))
  H.eq(1, #accepted, "the hunk says it is accepted")
  press("]c")
  H.eq(7, api.nvim_win_get_cursor(0)[1])
  local prompts, restore = answer_input("keep v7 as it is")
  press("\\r")
  restore()
  H.eq({ "Reason for the agent (optional): " }, prompts)
  local response = s.agent:wait(id)
  H.eq(nil, response.error)
  H.eq(true, response.result.applied)
  H.eq(true, response.result.partial, vim.inspect(response.result))
  H.eq("keep v7 as it is", response.result.reason)
  H.eq(
    { { 0, true }, { 1, false } },
    vim.tbl_map(function(h)
      return { h.index, h.accepted }
    end, response.result.documents[1].hunks)
  )
  H.eq(false, response.result.modifiedByEditor)
  local now = H.lines(s.buf)
  H.eq({ "local v2 = 20", "local v7 = 7", 10 }, { now[2], now[7], #now })
  H.eq({}, verbatim.pending())
  H.eq(0, #marks(s.buf), "no marks once decided")
  vim.cmd("silent undo")
  H.eq("local v2 = 2", H.lines(s.buf)[2], "one undo step")
end)

H.test("typing above a pending hunk moves its marks; the accept lands right", function()
  local s, id = two_hunk_edit("typing-agent")
  local first = verbatim.pending()[1]
  api.nvim_win_set_cursor(0, { 1, 0 })
  press("Onew first line<Esc>")
  local rows = inline.hunk_rows(s.buf)
  H.eq({ 2, 7 }, { rows[1].first, rows[2].first }, "the marks moved down with the text")
  -- At once, before the server moved the edit: accept the second hunk where
  -- it is now, and reject the first.
  api.nvim_win_set_cursor(0, { 8, 0 })
  press("\\a")
  api.nvim_win_set_cursor(0, { 3, 0 })
  H.eq(1, inline.decide(s.buf, 2, 2, false, "not this one"))
  local response = s.agent:wait(id)
  H.eq(nil, response.error)
  H.eq(true, response.result.applied, vim.inspect(response.result))
  H.eq(true, response.result.documents[1].rebased, vim.inspect(response.result))
  H.eq(true, response.result.partial, vim.inspect(response.result))
  H.eq("not this one", response.result.reason)
  H.eq(
    { { 0, false }, { 1, true } },
    vim.tbl_map(function(h)
      return { h.index, h.accepted }
    end, response.result.documents[1].hunks)
  )
  local now = H.lines(s.buf)
  H.eq(
    { "new first line", "local v1 = 1", "local v2 = 2", "local v7 = 70", "local v7b = 71" },
    { now[1], now[2], now[3], now[8], now[9] }
  )
  H.eq(12, #now)
  H.eq({}, verbatim.pending())
  H.truthy(first.id, "the edit had an id")
end)

H.test("typing, then the new offer: the marks are drawn from it", function()
  local s, id = two_hunk_edit("reoffer-agent")
  local old = queue.items[1].proposal
  api.nvim_buf_set_lines(s.buf, 0, 0, true, { "-- a comment", "-- another" })
  H.wait_for("the new offer", function()
    local item = queue.items[1]
    return item and not item.moved and item.proposal ~= old
  end)
  H.wait_for("the marks drawn again", function()
    local rows = inline.hunk_rows(s.buf)
    return #rows == 2 and rows[1].first == 3 and rows[2].first == 8
  end)
  api.nvim_win_set_cursor(0, { 4, 0 })
  press("\\a")
  api.nvim_win_set_cursor(0, { 9, 0 })
  press("\\a")
  local response = s.agent:wait(id)
  H.eq(true, response.result.applied, vim.inspect(response.result))
  H.eq(nil, response.result.partial)
  local now = H.lines(s.buf)
  H.eq({ "local v2 = 20", "local v7 = 70", "local v7b = 71" }, { now[4], now[9], now[10] })
end)

H.test("a visual range accepts every hunk it touches; the last is rejected", function()
  local s = H.scenario({ ["b.lua"] = lua_lines(20) }, "b.lua", "range-agent")
  local id = s.agent:request("verbatim/batchEdit", {
    summary = "Three changes",
    edits = {
      { uri = s.uri, oldStr = "local v3 = 3", newStr = "local v3 = 30", baseRev = s.read.rev },
      { uri = s.uri, oldStr = "local v9 = 9", newStr = "local v9 = 90" },
      { uri = s.uri, oldStr = "local v15 = 15", newStr = "local v15 = 150" },
    },
  })
  H.wait_pending(1)
  H.wait_for("the inline view", function()
    return inline.views[s.buf]
  end)
  api.nvim_win_set_cursor(0, { 2, 0 })
  press("V10G\\a")
  H.eq(false, s.agent:answered(id))
  H.eq("n", api.nvim_get_mode().mode)
  -- The hunk text object: `vih` selects the hunk's lines.
  api.nvim_win_set_cursor(0, { 15, 3 })
  press("vih<Esc>")
  H.eq({ 15, 15 }, { vim.fn.line("'<"), vim.fn.line("'>") })
  press("yih")
  H.eq("local v15 = 15\n", vim.fn.getreg('"'), "an operator takes the hunk's lines")
  -- In diff mode ]c is diff mode's own: it does not move to the hunks.
  vim.wo.diff = true
  api.nvim_win_set_cursor(0, { 1, 0 })
  pcall(press, "]c")
  vim.wo.diff = false
  H.eq(1, api.nvim_win_get_cursor(0)[1], "diff mode's ]c")
  press("]c")
  H.eq(3, api.nvim_win_get_cursor(0)[1], "then the hunks' ]c again")
  api.nvim_win_set_cursor(0, { 15, 0 })
  press("\\d") -- done: the hunk not decided is left out
  local response = s.agent:wait(id)
  H.eq(true, response.result.partial, vim.inspect(response.result))
  H.eq(
    { true, true, false },
    vim.tbl_map(function(h)
      return h.accepted
    end, response.result.documents[1].hunks)
  )
  local now = H.lines(s.buf)
  H.eq({ "local v3 = 30", "local v9 = 90", "local v15 = 15" }, { now[3], now[9], now[15] })
end)

H.test("]c keeps the person's own mapping", function()
  local root = H.workspace({ ["c.lua"] = lua_lines(5) })
  local buf, client = H.edit(root .. "/c.lua")
  vim.keymap.set("n", "]c", "<Cmd>let g:own_mapping = 1<CR>", { buffer = buf })
  vim.keymap.set("n", "\\a", "<Cmd>let g:own_accept = 1<CR>", { buffer = buf })
  local agent = H.agent(client, "map-agent")
  local uri = vim.uri_from_fname(root .. "/c.lua")
  local read = H.read_until(agent, uri)
  local id = agent:request("verbatim/strReplace", {
    uri = uri,
    oldStr = "local v4 = 4",
    newStr = "local v4 = 40",
    baseRev = read.rev,
    summary = "Four",
  })
  H.wait_for("the inline view", function()
    return inline.views[buf]
  end)
  press("gg]c")
  H.eq(1, vim.g.own_mapping, "the person's ]c")
  H.eq(1, api.nvim_win_get_cursor(0)[1])
  press("4G\\a")
  local response = agent:wait(id)
  H.eq(true, response.result.applied)
  H.eq("<Cmd>let g:own_accept = 1<CR>", vim.fn.maparg("\\a", "n"), "their mapping is back")
  vim.keymap.del("n", "]c", { buffer = buf })
  vim.keymap.del("n", "\\a", { buffer = buf })
end)

H.test("two pending edits in two buffers: the count in each header, :Verbatim next", function()
  local s = H.scenario({ ["d.lua"] = lua_lines(12), ["f.lua"] = lua_lines(3) }, "d.lua", "one")
  local other_buf = H.edit(s.root .. "/f.lua")
  vim.cmd.buffer(s.buf)
  local other = H.agent(s.client, "two")
  local first = s:str_replace("local v2 = 2", "local v2 = 22", "First")
  H.wait_pending(1)
  local other_uri = vim.uri_from_fname(s.root .. "/f.lua")
  local second = other:request("verbatim/strReplace", {
    uri = other_uri,
    oldStr = "local v3 = 3",
    newStr = "local v3 = 33",
    baseRev = H.read_until(other, other_uri).rev,
    summary = "Second",
  })
  H.wait_pending(2)
  ---@param buf integer
  ---@return string|nil, string|nil
  local function header(buf)
    for _, m in ipairs(marks(buf)) do
      if m[4].virt_lines_above and m[4].virt_lines[2] then
        return virt_text(m[4].virt_lines[1]), virt_text(m[4].virt_lines[2])
      end
    end
  end
  H.wait_for("both headers", function()
    return header(s.buf) and header(other_buf)
  end)
  H.eq("Verbatim · one: First", (header(s.buf)))
  H.truthy(
    select(2, header(s.buf)):find("edit 1 of 2 · :Verbatim next", 1, true),
    select(2, header(s.buf))
  )
  H.eq("Verbatim · two: Second", (header(other_buf)))
  H.truthy(select(2, header(other_buf)):find("edit 2 of 2", 1, true), select(2, header(other_buf)))
  vim.cmd("Verbatim next")
  H.eq(other_buf, api.nvim_get_current_buf(), "the other edit's buffer, in this window")
  H.eq(3, api.nvim_win_get_cursor(0)[1], "at its hunk")
  press("\\A")
  H.eq(true, other:wait(second).result.applied)
  H.eq("local v3 = 33", H.lines(other_buf)[3])
  H.wait_for("the count to follow", function()
    local _, help = header(s.buf)
    return help and help:find("edit 1 of 1", 1, true)
  end)
  vim.cmd.buffer(s.buf)
  api.nvim_win_set_cursor(0, { 2, 0 })
  press("\\a")
  local response = s.agent:wait(first)
  H.eq(true, response.result.applied, vim.inspect(response))
  H.eq("local v2 = 22", H.lines(s.buf)[2])
end)

H.test("an edit of a file no window shows: a notice, :Verbatim next opens it", function()
  local root = H.workspace({ ["shown.lua"] = lua_lines(3), ["hidden.lua"] = lua_lines(4) })
  local shown_buf, client = H.edit(root .. "/shown.lua")
  local agent = H.agent(client, "hidden-agent")
  local uri = vim.uri_from_fname(root .. "/hidden.lua")
  local id = agent:request("verbatim/strReplace", {
    uri = uri,
    oldStr = "local v3 = 3",
    newStr = "local v3 = 33",
    summary = "Elsewhere",
  })
  H.wait_pending(1)
  local note = H.wait_for("the notice", function()
    local last = notes[#notes]
    return last and last.msg:find("Elsewhere", 1, true) and last.msg
  end)
  H.truthy(note:find("hidden.lua: :Verbatim next opens it", 1, true), note)
  H.eq(shown_buf, api.nvim_get_current_buf(), "the cursor stays")
  vim.cmd("Verbatim next")
  local buf = api.nvim_get_current_buf()
  H.eq(root .. "/hidden.lua", api.nvim_buf_get_name(buf))
  H.eq(3, api.nvim_win_get_cursor(0)[1], "at the hunk")
  press("\\a")
  H.eq(true, agent:wait(id).result.applied)
  H.eq("local v3 = 33", H.lines(buf)[3])
end)

H.test("an edit of two files: each buffer shows its hunks, sent once both are decided", function()
  local s = H.scenario({ ["m.lua"] = lua_lines(3), ["n.lua"] = lua_lines(3) }, "m.lua", "multi")
  local n_uri = vim.uri_from_fname(s.root .. "/n.lua")
  local id = s.agent:request("verbatim/batchEdit", {
    summary = "Both files",
    edits = {
      { uri = s.uri, oldStr = "local v2 = 2", newStr = "local v2 = 'm'", baseRev = s.read.rev },
      { uri = n_uri, oldStr = "local v3 = 3", newStr = "local v3 = 'n'" },
    },
  })
  H.wait_pending(1)
  H.wait_for("the inline view", function()
    return inline.views[s.buf]
  end)
  local help
  for _, m in ipairs(marks(s.buf)) do
    if m[4].virt_lines_above and m[4].virt_lines[2] then
      help = virt_text(m[4].virt_lines[2])
    end
  end
  H.truthy(help:find("1 more file", 1, true), help)
  api.nvim_win_set_cursor(0, { 2, 0 })
  press("\\a")
  H.eq(false, s.agent:answered(id), "the other file's hunk is not decided yet")
  vim.cmd("Verbatim next")
  local n_buf = api.nvim_get_current_buf()
  H.eq(s.root .. "/n.lua", api.nvim_buf_get_name(n_buf))
  H.eq(3, api.nvim_win_get_cursor(0)[1])
  press("\\a")
  local response = s.agent:wait(id)
  H.eq(nil, response.error)
  H.eq(true, response.result.applied, vim.inspect(response.result))
  H.eq("local v2 = 'm'", H.lines(s.buf)[2])
  H.eq("local v3 = 'n'", H.lines(n_buf)[3])
end)

H.test("\\w opens the review window on the edit, the hunks rejected left out", function()
  local s, id = two_hunk_edit("window-agent")
  H.eq(1, inline.decide(s.buf, 6, 6, false))
  local editor = api.nvim_get_current_win()
  api.nvim_win_set_cursor(0, { 2, 0 })
  press("\\w")
  local win, lines = H.review_window()
  H.truthy(win, "the review window opened")
  H.eq(win, api.nvim_get_current_win(), "and the cursor is in it")
  H.truthy(vim.tbl_contains(lines, "+local v2 = 20"), vim.inspect(lines))
  H.eq({ [1] = { [2] = true } }, queue.items[1].skipped)
  local prompts, restore = answer_input("not v7")
  press("a")
  restore()
  H.eq({ "Why leave out 1 change? (optional, for the agent): " }, prompts)
  local response = s.agent:wait(id)
  H.eq(true, response.result.partial, vim.inspect(response.result))
  H.eq("not v7", response.result.reason)
  api.nvim_set_current_win(editor)
end)

H.test("a change on disk merged with unsaved changes is reviewed inline", function()
  local content = lua_lines(12)
  local root = H.workspace({ ["e.lua"] = content })
  local path = root .. "/e.lua"
  local buf, client = H.edit(path)
  local agent = H.agent(client, "observer")
  local uri = vim.uri_from_fname(path)
  api.nvim_buf_set_lines(buf, 1, 2, true, { "local v2 = 'typed'" })
  H.read_until(agent, uri, function(t)
    return t:find("typed", 1, true) ~= nil
  end)
  local on_disk = content:gsub("local v10 = 10", "local v10 = 'disk'")
  H.write_file(path .. ".tmp", on_disk)
  vim.uv.fs_rename(path .. ".tmp", path)
  local pending = H.wait_pending(1)
  H.eq("disk", pending[1].agent)
  H.wait_for("the inline view", function()
    return inline.views[buf]
  end)
  local header
  for _, m in ipairs(marks(buf)) do
    if m[4].virt_lines_above then
      header = virt_text(m[4].virt_lines[1])
    end
  end
  H.eq("Verbatim · a change made on disk outside Neovim, merged with your unsaved changes", header)
  local rows = inline.hunk_rows(buf)
  H.eq(1, #rows)
  H.eq(9, rows[1].first)
  api.nvim_win_set_cursor(0, { 10, 0 })
  press("\\a")
  H.wait_pending(0)
  local now = H.lines(buf)
  H.eq({ "local v2 = 'typed'", "local v10 = 'disk'" }, { now[2], now[10] })
  H.eq(true, vim.bo[buf].modified)
end)

H.test("the inline view of a 100,000-line buffer reads only the hunks' lines", function()
  local root = H.workspace({ ["big.lua"] = lua_lines(100000), ["small.lua"] = lua_lines(100) })
  local _, client = H.edit(root .. "/small.lua")
  local big = H.edit(root .. "/big.lua")
  local agent = H.agent(client, "guard-agent")
  -- Count every line any buffer function reads or is told about while the
  -- edit arrives and is drawn: a whole-text read would be 100,000.
  local counted = { get_lines = 0, get_text = 0, extmarks = 0 }
  local originals = {
    get_lines = api.nvim_buf_get_lines,
    get_text = api.nvim_buf_get_text,
    set_extmark = api.nvim_buf_set_extmark,
  }
  local function count(path, old, new, summary)
    local uri = vim.uri_from_fname(root .. "/" .. path)
    local read = H.read_until(agent, uri)
    counted = { get_lines = 0, get_text = 0, extmarks = 0 }
    api.nvim_buf_get_lines = function(b, first, last, strict)
      local lines = originals.get_lines(b, first, last, strict)
      counted.get_lines = counted.get_lines + #lines
      return lines
    end
    api.nvim_buf_get_text = function(b, ...)
      local lines = originals.get_text(b, ...)
      counted.get_text = counted.get_text + #lines
      return lines
    end
    api.nvim_buf_set_extmark = function(...)
      counted.extmarks = counted.extmarks + 1
      return originals.set_extmark(...)
    end
    local ok, err = pcall(function()
      local id = agent:request("verbatim/batchEdit", {
        summary = summary,
        edits = {
          { uri = uri, oldStr = old[1], newStr = new[1], baseRev = read.rev },
          { uri = uri, oldStr = old[2], newStr = new[2] },
        },
      })
      H.wait_pending(1)
      H.wait_for("the inline view", function()
        return #inline.hunk_rows(vim.uri_to_bufnr(uri)) == 2
      end)
      api.nvim_buf_get_lines = originals.get_lines
      api.nvim_buf_get_text = originals.get_text
      api.nvim_buf_set_extmark = originals.set_extmark
      -- For the log (not asserted): the plugin's own cost of drawing the view.
      local times = {}
      for k = 1, 21 do
        local started = vim.uv.hrtime()
        inline.refresh()
        times[k] = (vim.uv.hrtime() - started) / 1e6
      end
      table.sort(times)
      counted.draw_ms = times[11]
      H.eq(true, verbatim.reject())
      agent:wait(id)
    end)
    api.nvim_buf_get_lines = originals.get_lines
    api.nvim_buf_get_text = originals.get_text
    api.nvim_buf_set_extmark = originals.set_extmark
    assert(ok, err)
    return vim.deepcopy(counted)
  end
  local small = count(
    "small.lua",
    { "local v50 = 50", "local v90 = 90" },
    { "local v50 = 5", "local v90 = 9" },
    "Small"
  )
  local large = count(
    "big.lua",
    { "local v50000 = 50000", "local v99990 = 99990" },
    { "local v50000 = 5", "local v99990 = 9" },
    "Large"
  )
  H.note(
    string.format(
      "lines read: %d (100 lines) vs %d (100,000 lines); extmarks: %d vs %d;"
        .. " drawing the view: %.3f ms vs %.3f ms (median of 21)",
      small.get_lines + small.get_text,
      large.get_lines + large.get_text,
      small.extmarks,
      large.extmarks,
      small.draw_ms,
      large.draw_ms
    )
  )
  H.truthy(large.get_lines + large.get_text <= 200, vim.inspect(large))
  H.eq(small.extmarks, large.extmarks, "as many marks whatever the size")
  H.truthy(api.nvim_buf_line_count(big) == 100000, "the big buffer is untouched")
end)

H.test("screenshot: the inline view as Neovim draws it", function()
  local Child = require("helpers.child")
  local Agent = require("helpers.agent")
  local root = H.workspace({ ["shot.lua"] = lua_lines(8) })
  local child = Child.start()
  child:lua(
    [[
    local bin, path = ...
    vim.o.columns, vim.o.lines = 64, 16
    vim.o.laststatus, vim.o.ruler, vim.o.showmode, vim.o.showcmd = 0, false, false, false
    vim.o.number = true
    vim.cmd("colorscheme default")
    vim.o.background = "dark"
    require("verbatim").setup({ cmd = { bin, "lsp" }, review_ui = "inline" })
    vim.cmd.edit(vim.fn.fnameescape(path))
  ]],
    vim.env.VERBATIM_BIN,
    root .. "/shot.lua"
  )
  child:wait_for(
    "the verbatim client",
    [[
    local c = vim.lsp.get_clients({ bufnr = 0, name = "verbatim" })[1]
    return c and c.initialized
  ]]
  )
  local socket = child:lua([[
    local c = vim.lsp.get_clients({ name = "verbatim" })[1]
    return c:request_sync("verbatim/status", nil, 5000).result.socket
  ]])
  local agent = Agent.connect(socket)
  agent:initialize("shot-agent", "utf-8")
  table.insert(H.agents, agent)
  local uri = vim.uri_from_fname(root .. "/shot.lua")
  local read = H.read_until(agent, uri)
  local id = agent:request("verbatim/batchEdit", {
    summary = "Tune two values",
    edits = {
      { uri = uri, oldStr = "local v2 = 2", newStr = "local v2 = 20", baseRev = read.rev },
      { uri = uri, oldStr = "local v6 = 6", newStr = "local v6 = 60\nlocal v6b = 61" },
    },
  })
  child:wait_for(
    "the inline view",
    "return next(require('verbatim.inline').views) ~= nil and #require('verbatim.queue').items == 1"
  )
  child:lua("vim.cmd('echo \"\"')")
  child:expect_screenshot("inline_two_hunks.txt")
  -- The first hunk accepted at the cursor, with the key: it says so.
  child:lua("vim.api.nvim_win_set_cursor(0, { 2, 0 })")
  child:input("\\a")
  child:wait_for(
    "the hunk accepted",
    [[
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, require("verbatim.inline").ns, 0, -1,
        { details = true })) do
      if m[4].virt_text and m[4].virt_text[1][2] == "VerbatimInlineAccepted" then
        return true
      end
    end
  ]]
  )
  child:expect_screenshot("inline_one_accepted.txt")
  child:lua("require('verbatim').reject('screenshot taken')")
  agent:wait(id)
  child:stop()
end)
