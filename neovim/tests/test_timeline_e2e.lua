-- End to end, issue 33: a real `verbatim lsp` started by the plugin, three
-- agents that are real `verbatim` command line runs (each finds the server
-- by its discovery file, as an agent's tool call does, and is a session of
-- its own; `--turn` names the agent's turn), the person typing between them,
-- a change on disk by anything else; then :Verbatim timeline, its X (revert a
-- turn, and revert that revert), m (reviewed marks), a turn whose file was
-- deleted since, and a later overlapping change offered as a conflict and
-- kept. The cases run in order, each on what the one before left.
--
-- c.txt is not open in Neovim: an agent's edit of it opens it for review (the
-- server offers every edit to the editor); the person saves it and closes
-- it, so that the revert writes it on disk.
local H = require("helpers")
local api = vim.api
local verbatim = require("verbatim")
local timeline = require("verbatim.timeline")

verbatim.setup({ cmd = { vim.env.VERBATIM_BIN, "lsp" } })

--- Every vim.notify of this file, still printed to the test log.
---@type { msg: string, level: integer|nil }[]
local notes = {}
local print_notify = vim.notify
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
  print_notify(msg, level)
end

---@param prefix string
---@param count integer
---@param changed? table<integer, string>
---@return string[]
local function numbered(prefix, count, changed)
  local lines = {}
  for n = 1, count do
    lines[n] = (changed or {})[n] or string.format(prefix, n, n)
  end
  return lines
end

local A_LINE, B_LINE, C_LINE = "v%02d = %d", "b line %02d", "c line %02d"

---@param lines string[]
---@return string
local function text(lines)
  return table.concat(lines, "\n") .. "\n"
end

local root = H.workspace({
  ["a.py"] = text(numbered(A_LINE, 30)),
  ["b.txt"] = text(numbered(B_LINE, 30)),
  ["c.txt"] = text(numbered(C_LINE, 30)),
})
local paths =
  { a = root .. "/a.py", b = root .. "/b.txt", c = root .. "/c.txt", d = root .. "/d.txt" }
local uris = {}
for k, path in pairs(paths) do
  uris[k] = vim.uri_from_fname(path)
end
vim.cmd.cd(vim.fn.fnameescape(root))

---@type { a: integer, b: integer, client: vim.lsp.Client, observer: verbatim.test.Agent }
local S = {}

---@class verbatim.test.Cli
---@field obj vim.SystemObj
---@field args string[]

--- Starts `verbatim ARGS` in the workspace, as an agent's tool call does: it
--- finds the plugin's server through the discovery file in
--- $VERBATIM_RUNTIME_DIR (run.sh gives every test file its own).
---@param args string[]
---@param stdin? string
---@return verbatim.test.Cli
local function cli(args, stdin)
  local cmd = { vim.env.VERBATIM_BIN }
  vim.list_extend(cmd, args)
  return { obj = vim.system(cmd, { cwd = root, stdin = stdin, text = true }), args = args }
end

--- Waits for a command line run to end; returns its --json output.
---@param run verbatim.test.Cli
---@return table
local function finish(run)
  local done = run.obj:wait(30000)
  H.eq(
    0,
    done.code,
    "verbatim " .. table.concat(run.args, " ") .. "\n" .. done.stdout .. done.stderr
  )
  local ok, result = pcall(vim.json.decode, done.stdout, { luanil = { object = true } })
  H.truthy(ok and type(result) == "table", "JSON from the command line: " .. done.stdout)
  return result
end

--- Waits until the one edit of a command line run waits for review (a debug
--- build starting on a loaded machine takes a while).
---@param run verbatim.test.Cli
---@return verbatim.PendingInfo[]
local function wait_review(run)
  return H.wait_for("the review of verbatim " .. table.concat(run.args, " "), function()
    local pending = verbatim.pending()
    return #pending == 1 and pending or nil
  end, 30000)
end

--- An agent's `verbatim edit` through the editor, reviewed and accepted.
---@param agent string
---@param turn string
---@param file string a.py, b.txt or c.txt
---@param old string
---@param new string
---@return table result
local function agent_edits(agent, turn, file, old, new)
  local run = cli({
    "edit",
    file,
    "--old",
    old,
    "--new",
    new,
    "-m",
    agent .. " changes " .. file,
    "--agent",
    agent,
    "--turn",
    turn,
    "--json",
  })
  local pending = wait_review(run)
  H.eq(agent, pending[1].agent)
  H.eq(true, (verbatim.accept()))
  local result = finish(run)
  H.eq("editor", result.via, vim.inspect(result))
  return result
end

--- The person changes one line of a buffer, and the server has seen it.
---@param buf integer
---@param uri string
---@param row integer
---@param line string
local function person_types(buf, uri, row, line)
  api.nvim_buf_set_lines(buf, row - 1, row, true, { line })
  H.read_until(S.observer, uri, function(t)
    return t:find(line, 1, true) ~= nil
  end)
end

--- Saves a buffer, and closes it (the server is told it is not open any more).
---@param buf integer
---@param path string
local function save_and_close(buf, path)
  H.write_without_prompt(buf, path)
  api.nvim_buf_delete(buf, { force = true })
  H.wait_for("the server to see " .. path .. " closed", function()
    local response = S.observer:call("verbatim/documents", vim.empty_dict())
    for _, doc in ipairs(response.result or {}) do
      if doc.uri == vim.uri_from_fname(path) then
        return false
      end
    end
    return response.result ~= nil
  end)
end

--- The timeline's buffer and view, opened from a.py's buffer.
---@return integer buf
---@return verbatim.TimelineView view
local function open_timeline()
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == S.a then
      api.nvim_set_current_win(win)
    end
  end
  vim.cmd("Verbatim timeline")
  local buf = api.nvim_get_current_buf()
  H.eq(timeline.BUF_NAME, api.nvim_buf_get_name(buf))
  local view = timeline.views[buf]
  H.wait_for("the timeline's first answer", function()
    return view.result
  end)
  return buf, view
end

--- Waits until the timeline shows a line that `pred` picks; returns its row and node.
---@param buf integer
---@param what string
---@param pred fun(node: verbatim.TimelineNode, line: string): boolean
---@return integer row
---@return verbatim.TimelineNode node
local function wait_line(buf, what, pred)
  local found = H.wait_for("the timeline to show " .. what, function()
    local view = timeline.views[buf]
    local lines = H.lines(buf)
    for row, node in ipairs(view.nodes) do
      if node.kind ~= "header" and pred(node, lines[row]) then
        return { row, node }
      end
    end
  end)
  return found[1], found[2]
end

--- Presses `keys` on `row` of the timeline, with vim.ui.select answering
--- "Revert"; returns the questions asked.
---@param buf integer
---@param row integer
---@param keys string
---@return string[]
local function press_on(buf, row, keys)
  local win = vim.fn.win_findbuf(buf)[1]
  api.nvim_set_current_win(win)
  api.nvim_win_set_cursor(win, { row, 0 })
  local asked = {}
  local original = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    table.insert(asked, opts.prompt)
    H.eq("Revert (offered for review)", items[1])
    on_choice(items[1], 1)
  end
  local ok, err = pcall(api.nvim_feedkeys, keys, "x", false)
  vim.ui.select = original
  assert(ok, err)
  return asked
end

--- Waits for a message of the plugin holding `needle`, newer than `since`
--- messages.
---@param since integer
---@param needle string
---@return { msg: string, level: integer|nil }
local function wait_note(since, needle)
  return H.wait_for("a message with " .. needle, function()
    for i = since + 1, #notes do
      if notes[i].msg:find(needle, 1, true) then
        return notes[i]
      end
    end
  end)
end

--- The lines of the review window that a diff adds or removes.
---@return string[]
local function review_changes()
  local _, review = H.review_window()
  H.truthy(review, "the review window is open")
  return vim.tbl_filter(function(line)
    return line:match("^[-+]") ~= nil and not line:match("^%-%-%- ") and not line:match("^%+%+%+ ")
  end, review or {})
end

--- The timeline's lines of one kind whose node `pred` picks.
---@param buf integer
---@param kind string
---@param pred fun(node: verbatim.TimelineNode): boolean
---@return string[]
local function lines_of(buf, kind, pred)
  local view, lines, found = timeline.views[buf], H.lines(buf), {}
  for row, node in ipairs(view.nodes) do
    if node.kind == kind and pred(node) then
      table.insert(found, lines[row])
    end
  end
  return found
end

---@param turn string
---@return fun(node: verbatim.TimelineNode): boolean
local function of_turn(turn)
  return function(node)
    return node.turn.turn == turn
  end
end

-- What each file holds, as the case before left it.
local expected = {}

H.test(
  "three agents and the person change two open files and one closed; the disk changes one",
  function()
    S.a, S.client = H.edit(paths.a)
    S.b = H.edit(paths.b)
    S.observer = H.agent(S.client, "observer")
    agent_edits("one", "one-1", "a.py", "v03 = 3", "v03 = 300")
    agent_edits("one", "one-1", "b.txt", "b line 05", "b line 05 (one)")
    person_types(S.a, uris.a, 10, "v10 = 10  # typed")
    agent_edits("two", "two-1", "a.py", "v20 = 20", "v20 = 2000")
    person_types(S.a, uris.a, 25, "v25 = 25  # typed again")
    agent_edits("two", "two-1", "b.txt", "b line 12", "b line 12 (two)")
    -- c.txt is not open: the review opens it; the person saves it and closes it.
    agent_edits("two", "two-1", "c.txt", "c line 04", "c line 04 (two)")
    local c = vim.fn.bufnr(paths.c)
    H.truthy(c > 0, "the review opened c.txt")
    save_and_close(c, paths.c)
    -- Anything else rewrites b.txt on disk (atomically) while its buffer has no
    -- unsaved change: the plugin reloads it.
    H.write_without_prompt(S.b, paths.b)
    local b_disk = numbered(
      B_LINE,
      30,
      { [5] = "b line 05 (one)", [12] = "b line 12 (two)", [28] = "b line 28 (disk)" }
    )
    H.write_file(paths.b .. ".tmp", text(b_disk))
    assert(os.rename(paths.b .. ".tmp", paths.b))
    H.wait_for("b.txt to be reloaded", function()
      return H.lines(S.b)[28] == "b line 28 (disk)"
    end)
    H.eq(false, vim.bo[S.b].modified)
    H.eq({}, verbatim.pending())

    expected.a = numbered(A_LINE, 30, {
      [3] = "v03 = 300",
      [10] = "v10 = 10  # typed",
      [20] = "v20 = 2000",
      [25] = "v25 = 25  # typed again",
    })
    expected.b = b_disk
    expected.c = numbered(C_LINE, 30, { [4] = "c line 04 (two)" })
    H.eq(expected.a, H.lines(S.a))
    H.eq(true, vim.bo[S.a].modified, "the person's typing is not saved")
    H.eq(expected.b, H.lines(S.b))
    H.eq(text(expected.c), H.read_file(paths.c))
    H.eq(-1, vim.fn.bufnr(paths.c), "c.txt is not open")
  end
)

H.test("the timeline shows every agent, the disk, the turns and the outcomes", function()
  local buf = open_timeline()
  wait_line(buf, "the change on disk", function(node)
    return node.kind == "edit" and node.session.session == "disk"
  end)
  local sessions = lines_of(buf, "session", function()
    return true
  end)
  -- Newest first: the disk, then agent two's three runs, then agent one's two.
  H.eq(6, #sessions, table.concat(H.lines(buf), "\n"))
  H.truthy(vim.startswith(sessions[1], "▾ disk  "), sessions[1])
  for i, agent in ipairs({ "two", "two", "two", "one", "one" }) do
    H.truthy(vim.startswith(sessions[i + 1], "▾ " .. agent .. "  "), sessions[i + 1])
    H.truthy(sessions[i + 1]:find("1 turn, 1 edit  editor session ", 1, true), sessions[i + 1])
  end
  local turns = lines_of(buf, "turn", of_turn("two-1"))
  H.eq(3, #turns)
  for _, line in ipairs(turns) do
    H.truthy(line:match("^  ▾ turn 1  .*  1 edit, 0/1 file reviewed  two%-1$"), line)
  end
  local edits = lines_of(buf, "edit", function()
    return true
  end)
  local summaries = {}
  for _, line in ipairs(edits) do
    table.insert(summaries, (line:gsub("^    ▾ %d%d:%d%d  ", "")))
  end
  H.eq({
    "reloaded  Changed on disk outside the editor: b.txt",
    "applied   two changes c.txt",
    "applied   two changes b.txt",
    "applied   two changes a.py",
    "applied   one changes b.txt",
    "applied   one changes a.py",
  }, summaries)
  H.eq(
    { "        · c.txt  +1 -1" },
    lines_of(buf, "file", function(node)
      return node.edit.summary == "two changes c.txt"
    end)
  )
end)

H.test("m marks a file of a turn reviewed, and again unmarks it", function()
  local buf = open_timeline()
  local row = wait_line(buf, "b.txt of turn two-1", function(node)
    return node.kind == "file" and node.turn.turn == "two-1" and node.file.uri == uris.b
  end)
  press_on(buf, row, "m")
  H.wait_for("the mark", function()
    return H.lines(buf)[row] == "        ✓ b.txt  +1 -1"
  end)
  press_on(buf, row, "m")
  H.wait_for("the mark to go", function()
    return H.lines(buf)[row] == "        · b.txt  +1 -1"
  end)
  press_on(buf, row, "m")
  -- The server keeps it: a fresh timeline still shows it.
  press_on(buf, row, "R")
  wait_line(buf, "b.txt of turn two-1, reviewed", function(node, line)
    return node.kind == "file"
      and node.turn.turn == "two-1"
      and line == "        ✓ b.txt  +1 -1"
      and H.lines(buf)[row - 2]:find("1/1 file reviewed", 1, true) ~= nil
  end)
end)

H.test("X on agent two's turn: only its hunks are reviewed; accepted, they are gone", function()
  local buf = open_timeline()
  local row = wait_line(buf, "agent two's turn", function(node)
    return node.kind == "turn" and node.turn.turn == "two-1"
  end)
  local since = #notes
  H.eq({ "Revert turn two-1 of two (3 edits in 3 sessions)?" }, press_on(buf, row, "X"))
  local pending = H.wait_pending(1)
  -- c.txt is open nowhere: it is reverted on disk, and only the open files are reviewed.
  H.eq({ uris.a, uris.b }, pending[1].uris)
  H.eq("Revert: two changes a.py (and 2 more)", pending[1].summary)
  H.eq({ "-v20 = 2000", "+v20 = 20", "-b line 12 (two)", "+b line 12" }, review_changes())
  H.eq(true, (verbatim.accept()))
  local note = wait_note(since, "verbatim: Reverted")
  H.eq(
    { msg = "verbatim: Reverted 3 entries in c.txt, a.py, b.txt.", level = vim.log.levels.INFO },
    note
  )

  expected.a[20] = "v20 = 20"
  expected.b[12] = "b line 12"
  expected.c[4] = "c line 04"
  H.eq(expected.a, H.lines(S.a), "the person's typing and agent one's change stay")
  H.eq(expected.b, H.lines(S.b), "agent one's change and the disk's stay")
  H.eq(text(expected.c), H.read_file(paths.c))
  H.eq(-1, vim.fn.bufnr(paths.c), "c.txt was reverted on disk, not opened")
  H.eq({}, verbatim.pending())

  -- The timeline: agent two's edits reverted, by one edit of three files; the
  -- mark on b.txt cleared, as the revert changed it.
  wait_line(buf, "the revert", function(node)
    return node.kind == "edit" and node.edit.reverts ~= nil
  end)
  H.wait_for("agent two's edits shown reverted", function()
    local shown = lines_of(buf, "edit", of_turn("two-1"))
    return #shown == 3
      and #vim.tbl_filter(function(line)
          return line:find("  reverted  two changes ", 1, true) ~= nil
        end, shown)
        == 3
  end)
  local revert = lines_of(buf, "file", function(node)
    return node.edit.reverts ~= nil
  end)
  H.eq({ "        · c.txt  +1 -1", "        · a.py  +1 -1", "        · b.txt  +1 -1" }, revert)
  H.eq(
    { "        · b.txt  +1 -1" },
    lines_of(buf, "file", function(node)
      return node.turn.turn == "two-1" and node.file.uri == uris.b
    end),
    "the reviewed mark cleared"
  )
  H.eq(
    { "applied   one changes b.txt", "applied   one changes a.py" },
    vim.tbl_map(function(line)
      return (line:gsub("^    ▾ %d%d:%d%d  ", ""))
    end, lines_of(buf, "edit", of_turn("one-1")))
  )
end)

H.test("X on the revert, the newest edit: agent two's changes are back", function()
  local buf = open_timeline()
  local row, node = wait_line(buf, "the newest edit", function(node)
    return node.kind == "edit"
  end)
  H.truthy(node.edit.reverts ~= nil, "the newest edit is the revert: " .. H.lines(buf)[row])
  local since = #notes
  local asked = press_on(buf, row, "X")
  H.truthy(
    asked[1]:match('^Revert "Revert: two changes a%.py %(and 2 more%)" %(.*%), 3 files%?$'),
    asked[1]
  )
  local pending = H.wait_pending(1)
  H.eq({ uris.a, uris.b }, pending[1].uris)
  H.eq({ "-v20 = 20", "+v20 = 2000", "-b line 12", "+b line 12 (two)" }, review_changes())
  H.eq(true, (verbatim.accept()))
  wait_note(since, "verbatim: Reverted 3 entries")
  expected.a[20] = "v20 = 2000"
  expected.b[12] = "b line 12 (two)"
  expected.c[4] = "c line 04 (two)"
  H.eq(expected.a, H.lines(S.a))
  H.eq(expected.b, H.lines(S.b))
  H.eq(text(expected.c), H.read_file(paths.c))
  H.wait_for("agent two's edits shown applied again", function()
    local shown = lines_of(buf, "edit", of_turn("two-1"))
    return #shown == 3
      and #vim.tbl_filter(function(line)
          return line:find("  applied   two changes ", 1, true) ~= nil
        end, shown)
        == 3
  end)
  local reverts = lines_of(buf, "edit", function(n)
    return n.edit.reverts ~= nil
  end)
  H.eq(2, #reverts)
  H.truthy(reverts[1]:find("  applied   Revert: Revert: two changes", 1, true), reverts[1])
  H.truthy(reverts[2]:find("  reverted  Revert: two changes", 1, true), reverts[2])
end)

H.test("a turn whose file was deleted since: nothing to revert, and it says so", function()
  local args = {
    "write",
    "d.txt",
    "-m",
    "three adds d.txt",
    "--agent",
    "three",
    "--turn",
    "three-1",
    "--json",
  }
  local run = cli(args, "d one\nd two\n")
  local pending = wait_review(run)
  H.eq("three", pending[1].agent)
  H.eq(true, (verbatim.accept()))
  H.eq("create", finish(run).operation)
  save_and_close(vim.fn.bufnr(paths.d), paths.d)
  assert(os.remove(paths.d))

  local buf = open_timeline()
  local row = wait_line(buf, "agent three's turn", function(node)
    return node.kind == "turn" and node.turn.turn == "three-1"
  end)
  local since = #notes
  H.eq({ "Revert turn 1 of three (1 edit)?" }, press_on(buf, row, "X"))
  local note = wait_note(since, "verbatim: ")
  H.eq({
    msg = "verbatim: Nothing to revert in d.txt: it no longer exists.",
    level = vim.log.levels.INFO,
  }, note)
  H.eq({}, verbatim.pending())
  H.eq(nil, H.read_file(paths.d), "d.txt stays deleted")
  -- Nothing was journaled: three's edit is still the newest.
  press_on(buf, row, "R")
  vim.wait(200)
  local _, newest = wait_line(buf, "the newest edit", function(node)
    return node.kind == "edit"
  end)
  H.eq("three adds d.txt", newest.edit.summary)
  H.eq(expected.b, H.lines(S.b))
end)

H.test("a later change to the same lines is offered as a conflict; rejected, it stays", function()
  agent_edits("one", "one-2", "b.txt", "b line 18", "b line 18 (one)")
  agent_edits("two", "two-2", "b.txt", "b line 18 (one)", "b line 18 (two)")
  expected.b[18] = "b line 18 (two)"
  H.eq(expected.b, H.lines(S.b))
  local buf = open_timeline()
  local row = wait_line(buf, "agent one's turn one-2", function(node)
    return node.kind == "turn" and node.turn.turn == "one-2"
  end)
  local since = #notes
  H.eq({ "Revert turn 1 of one (1 edit)?" }, press_on(buf, row, "X"))
  local pending = H.wait_pending(1)
  H.eq({ uris.b }, pending[1].uris)
  H.eq(
    "Revert: one changes b.txt (conflict with a later change at b.txt lines 18-18: "
      .. "accepting that hunk drops the later change)",
    pending[1].summary
  )
  local _, review = H.review_window()
  H.truthy(vim.tbl_contains(review or {}, "  " .. pending[1].summary), vim.inspect(review))
  H.eq({ "-b line 18 (two)", "+b line 18" }, review_changes())
  -- The conflict's hunk says so on its @@ line: the server's note.
  local win = H.review_window()
  local marks = vim.api.nvim_buf_get_extmarks(
    vim.api.nvim_win_get_buf(win --[[@as integer]]),
    vim.api.nvim_create_namespace("verbatim.review"),
    0,
    -1,
    { details = true }
  )
  local said = {}
  for _, mark in ipairs(marks) do
    for _, chunk in ipairs(mark[4].virt_text or {}) do
      table.insert(said, chunk[1])
    end
  end
  H.truthy(
    vim.tbl_contains(
      said,
      "  [⚠ Conflict: a later change also touched line 18. Accepting this hunk brings back the text from "
        .. "before the reverted edit and drops the later change; rejecting it keeps the text as it is now.]"
    ),
    vim.inspect(said)
  )
  H.eq(true, (verbatim.reject()))
  local note = wait_note(since, "verbatim: The person rejected")
  H.eq({
    msg = "verbatim: The person rejected the revert in the editor; nothing changed. "
      .. "1 conflict kept as it is now, because a later change touched the same lines: b.txt lines 18-18.",
    level = vim.log.levels.WARN,
  }, note)
  H.eq(expected.b, H.lines(S.b), "the later change is kept")
  H.eq(expected.a, H.lines(S.a))
  H.eq(text(expected.c), H.read_file(paths.c))
  -- The timeline: the revert rejected, agent one's edit not reverted.
  wait_line(buf, "the rejected revert", function(node, line)
    return node.kind == "edit"
      and node.edit.reverts ~= nil
      and line:find("  rejected  ", 1, true) ~= nil
  end)
  local one = lines_of(buf, "edit", of_turn("one-2"))
  H.eq(1, #one)
  H.truthy(one[1]:find("  applied   one changes b.txt", 1, true), one[1])
end)
