-- End to end: a file open in Neovim is rewritten on disk by another process
-- (Python, writing a temporary file and renaming it over the original, as
-- most agents do). The server merges it into the buffer; the plugin reviews
-- it, and the next :w writes without any prompt.
local H = require("helpers")
local api = vim.api
local verbatim = require("verbatim")
local external = require("verbatim.external")

verbatim.setup({ cmd = { vim.env.VERBATIM_BIN, "lsp" } })

--- Every vim.notify of this file, still printed to the test log.
---@type { msg: string, level: integer|nil }[]
local notes = {}
local print_notify = vim.notify
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
  print_notify(msg, level)
end

---@param needle string
---@return { msg: string, level: integer|nil }|nil
local function note_with(needle)
  for _, note in ipairs(notes) do
    if note.msg:find(needle, 1, true) then
      return note
    end
  end
end

--- Rewrites a file from another process, atomically: a temporary file in
--- the same directory, renamed over the original.
---@param path string
---@param content string
local function rewrite_atomically(path, content)
  local script = table.concat({
    "import os, sys",
    "path, text = sys.argv[1], sys.argv[2]",
    "tmp = path + '.tmp'",
    "with open(tmp, 'w', newline='') as f:",
    "    f.write(text)",
    "os.replace(tmp, path)",
  }, "\n")
  local result = vim.system({ "python3", "-c", script, path, content }):wait()
  H.eq(0, result.code, "python3 rewrote " .. path .. ": " .. tostring(result.stderr))
end

---@param count integer
---@param changed? table<integer, string>
---@return string
local function numbered(count, changed)
  local lines = {}
  for n = 1, count do
    lines[n] = (changed or {})[n] or ("line " .. n)
  end
  return table.concat(lines, "\n") .. "\n"
end

--- A workspace with a.txt open, and an agent connection that only watches
--- what the server sees (so the test knows the server has the person's
--- typing before the disk changes).
---@param content string
---@return { path: string, uri: string, buf: integer, client: vim.lsp.Client, agent: verbatim.test.Agent }
local function open_file(content)
  local root = H.workspace({ ["a.txt"] = content })
  local path = root .. "/a.txt"
  local buf, client = H.edit(path)
  local agent = H.agent(client, "observer")
  return { path = path, uri = vim.uri_from_fname(path), buf = buf, client = client, agent = agent }
end

--- The person changes one line, and the server has seen it.
---@param f { buf: integer, agent: verbatim.test.Agent, uri: string }
---@param row integer 1-based
---@param line string
local function person_types(f, row, line)
  api.nvim_buf_set_lines(f.buf, row - 1, row, true, { line })
  H.read_until(f.agent, f.uri, function(t)
    return t:find(line, 1, true) ~= nil
  end)
end

---@param f { buf: integer, path: string }
local function write_without_prompt(f)
  H.write_without_prompt(f.buf, f.path)
end

H.test("a modified buffer: the change on disk is reviewed, accepted, and :w just writes", function()
  local f = open_file(numbered(12))
  person_types(f, 2, "line 2, by the person")
  rewrite_atomically(f.path, numbered(12, { [10] = "line 10, by the agent" }))

  local pending = H.wait_pending(1)
  H.truthy(
    vim.startswith(pending[1].label, "Changed on disk outside the editor: a.txt"),
    pending[1].label
  )
  H.eq("disk", pending[1].agent)
  local _, review = H.review_window()
  H.truthy(review, "the review window opened")
  H.eq(
    "Verbatim review: a change made on disk outside Neovim, merged with your unsaved changes",
    review[1]
  )
  H.eq("  " .. pending[1].label, review[2])
  H.truthy(not review[3]:find("accept all", 1, true), "no trust for the disk: " .. review[3])
  H.truthy(vim.tbl_contains(review, "-line 10"), vim.inspect(review))
  H.truthy(vim.tbl_contains(review, "+line 10, by the agent"), vim.inspect(review))
  H.eq("line 2, by the person", H.lines(f.buf)[2], "the person's line is not in the offer")
  -- Neovim checks files on focus and after shell commands: no W12 now, and
  -- the review stays.
  vim.cmd("messages clear")
  vim.cmd("checktime")
  H.truthy(not vim.fn.execute("messages"):find("W12", 1, true), vim.fn.execute("messages"))
  H.eq(1, #verbatim.pending())

  H.eq(true, verbatim.accept())
  local expected = numbered(12, { [2] = "line 2, by the person", [10] = "line 10, by the agent" })
  H.eq(vim.split(expected, "\n", { plain = true, trimempty = true }), H.lines(f.buf))
  H.eq(true, vim.bo[f.buf].modified)
  H.wait_for("the file's timestamp to be brought up to date", function()
    return external.state[f.buf] and not external.state[f.buf].needs_sync
  end)
  H.eq(true, vim.bo[f.buf].modified, "still modified after the timestamp update")
  H.eq(vim.split(expected, "\n", { plain = true, trimempty = true }), H.lines(f.buf))
  -- The person's own change is still one undo step away.
  api.nvim_buf_call(f.buf, function()
    vim.cmd("silent undo")
  end)
  H.eq("line 10", H.lines(f.buf)[10], "undo takes back the merged change")
  api.nvim_buf_call(f.buf, function()
    vim.cmd("silent redo")
  end)
  H.eq(vim.split(expected, "\n", { plain = true, trimempty = true }), H.lines(f.buf))

  write_without_prompt(f)
  H.eq(expected, H.read_file(f.path))
  H.eq({}, verbatim.pending())
end)

H.test("a clean buffer is reloaded from disk, with no review", function()
  local f = open_file(numbered(5))
  local changed = numbered(5, { [3] = "line 3, by the agent" })
  rewrite_atomically(f.path, changed)
  H.wait_for("the buffer to be reloaded", function()
    return H.lines(f.buf)[3] == "line 3, by the agent"
  end)
  H.eq(vim.split(changed, "\n", { plain = true, trimempty = true }), H.lines(f.buf))
  H.eq(false, vim.bo[f.buf].modified)
  H.eq({}, verbatim.pending())
  H.eq(nil, (H.review_window()))
  -- The reload is undoable, like Neovim's own.
  api.nvim_buf_call(f.buf, function()
    vim.cmd("silent undo")
  end)
  H.eq("line 3", H.lines(f.buf)[3])
  api.nvim_buf_call(f.buf, function()
    vim.cmd("silent redo")
  end)
  api.nvim_buf_set_lines(f.buf, 0, 1, true, { "line 1, by the person" })
  write_without_prompt(f)
end)

H.test("a conflicting change keeps the person's text, warns, and can be compared", function()
  local f = open_file(numbered(6))
  person_types(f, 4, "line 4, by the person")
  local disk = numbered(6, { [4] = "line 4, by the agent" })
  rewrite_atomically(f.path, disk)

  local note = H.wait_for("the conflict to be reported", function()
    return note_with("every change overlaps your unsaved changes")
  end)
  H.eq(vim.log.levels.WARN, note.level)
  H.truthy(note.msg:find(":VerbatimCompareDisk", 1, true), note.msg)
  H.eq("conflict", external.state[f.buf].kind)
  H.eq("line 4, by the person", H.lines(f.buf)[4])
  H.eq(true, vim.bo[f.buf].modified)
  H.eq({}, verbatim.pending())

  api.nvim_set_current_buf(f.buf)
  local wins_before = #api.nvim_tabpage_list_wins(0)
  vim.cmd("VerbatimCompareDisk")
  local scratch = api.nvim_get_current_buf()
  H.truthy(scratch ~= f.buf, "a buffer for the disk's text")
  H.eq(vim.split(disk, "\n", { plain = true, trimempty = true }), H.lines(scratch))
  H.eq(false, vim.bo[scratch].modifiable)
  H.eq(true, vim.wo.diff, "the disk's side is in diff mode")
  local buffer_win = vim.fn.win_findbuf(f.buf)[1]
  H.eq(true, vim.wo[buffer_win].diff, "the buffer's side is in diff mode")
  H.eq(wins_before + 1, #api.nvim_tabpage_list_wins(0))
  vim.cmd("close")
  H.wait_for("the diff to end", function()
    return not vim.wo[buffer_win].diff
  end)
  H.eq(false, api.nvim_buf_is_valid(scratch), "the disk's buffer is wiped")

  H.wait_for("the file's timestamp to be brought up to date", function()
    return not external.state[f.buf].needs_sync
  end)
  H.eq("line 4, by the person", H.lines(f.buf)[4])
  H.eq(true, vim.bo[f.buf].modified)
  -- Writing over the disk's change is now the person's decision, and asks nothing.
  write_without_prompt(f)
end)

H.test('external_changes = "off": the server is told, and the buffer is left alone', function()
  verbatim.setup({ cmd = { vim.env.VERBATIM_BIN, "lsp" }, external_changes = "off" })
  local f = open_file(numbered(4))
  H.eq("off", f.client.config.init_options.externalChanges)
  H.eq({}, api.nvim_get_autocmds({ event = "FileChangedShell", buffer = f.buf }))
  person_types(f, 1, "line 1, by the person")
  rewrite_atomically(f.path, numbered(4, { [3] = "line 3, by the agent" }))
  -- Longer than the server's debounce (at most 150 ms) and its answer.
  vim.wait(400)
  H.eq({ "line 1, by the person", "line 2", "line 3", "line 4" }, H.lines(f.buf))
  H.eq({}, verbatim.pending())
  H.eq(nil, external.state[f.buf])
end)
