-- Claude Code's IDE protocol, the plugin's side, against a fake server that
-- announces a port (the real server and the real Claude Code are in
-- e2e_claude_code.lua): the environment of terminals, the selection sent to
-- the server, :VerbatimMention, verbatim/saveDocument, and a file that
-- Claude Code wrote after the person accepted its edit (`synced`).
local H = require("helpers")
local Child = require("helpers.child")
local api = vim.api
local claude_code = require("verbatim.claude_code")
local config = require("verbatim.config")

-- The plugin without its automatic start: each test starts the plugin's own
-- client against a fake server (H.fake_verbatim).
config.set({ cmd = { vim.env.VERBATIM_BIN, "lsp" } })
require("verbatim.review").setup()
require("verbatim.external").enable()
claude_code.enable()

--- Every vim.notify of this file, still printed to the test log.
---@type { msg: string, level: integer|nil }[]
local notes = {}
local print_notify = vim.notify
vim.notify = function(msg, level)
  table.insert(notes, { msg = msg, level = level })
  print_notify(msg, level)
end

---@return { notifications: table[], requests: table[] }
local function new_log()
  return { notifications = {}, requests = {} }
end

---@param log { notifications: table[] }
---@param method string
---@return table[] params of each notification of `method`
local function sent(log, method)
  local result = {}
  for _, n in ipairs(log.notifications) do
    if n.method == method then
      table.insert(result, n.params)
    end
  end
  return result
end

--- A workspace holding `files`, `open` edited, with the plugin's client on a
--- fake server announcing `port`.
---@param files table<string, string>
---@param open string
---@param port integer|nil
---@return { root: string, path: string, uri: string, buf: integer, client: vim.lsp.Client, dispatchers: vim.lsp.rpc.Dispatchers, log: table }
local function fake_workspace(files, open, port)
  local root = H.workspace(files)
  local path = root .. "/" .. open
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = api.nvim_get_current_buf()
  local log = new_log()
  local client, dispatchers = H.fake_verbatim(buf, port, log)
  return {
    root = root,
    path = path,
    uri = vim.uri_from_fname(path),
    buf = buf,
    client = client,
    dispatchers = dispatchers,
    log = log,
  }
end

---@param client vim.lsp.Client
local function stop(client)
  client:stop(true)
  H.wait_for("the client to exit and the plugin to notice", function()
    return claude_code.ports[client.id] == nil and vim.lsp.get_client_by_id(client.id) == nil
  end)
end

H.test(
  "the server's port goes into the environment of new terminals, and leaves with it",
  function()
    -- A Neovim started from another IDE's terminal inherits that IDE's port.
    vim.env.CLAUDE_CODE_SSE_PORT = "1111"
    vim.env.ENABLE_IDE_INTEGRATION = nil
    local a = fake_workspace({ ["a.txt"] = "a\n" }, "a.txt", 50101)
    local initialize = a.log.requests[1]
    H.eq("initialize", initialize.method)
    H.eq(true, initialize.params.initializationOptions.claudeCode, "claudeCode is asked for")
    H.eq(50101, claude_code.ports[a.client.id])
    H.eq("50101", vim.env.CLAUDE_CODE_SSE_PORT)
    H.eq("true", vim.env.ENABLE_IDE_INTEGRATION)

    -- What a `claude` started in :terminal sees.
    vim.cmd("botright new")
    vim.fn.jobstart(
      { "sh", "-c", 'echo "port=$CLAUDE_CODE_SSE_PORT ide=$ENABLE_IDE_INTEGRATION"; sleep 5' },
      { term = true }
    )
    local term = api.nvim_get_current_buf()
    H.wait_for("the terminal to print its environment", function()
      return vim.tbl_contains(H.lines(term), "port=50101 ide=true")
    end)
    vim.cmd("bwipeout! " .. term)
    local out
    local job = vim.fn.jobstart({ "sh", "-c", "echo $CLAUDE_CODE_SSE_PORT" }, {
      stdout_buffered = true,
      on_stdout = function(_, data)
        out = data
      end,
    })
    H.eq({ 0 }, vim.fn.jobwait({ job }, 5000))
    H.wait_for("the job's output", function()
      return out
    end)
    H.eq("50101", out[1], "a job sees it too")

    vim.cmd("checkhealth verbatim")
    local health = table.concat(api.nvim_buf_get_lines(0, 0, -1, true), "\n")
    vim.cmd("tabclose")
    H.truthy(health:find("Claude Code: port 50101", 1, true), health)
    H.truthy(
      health:find("no lock file at " .. vim.env.HOME .. "/.claude/ide/50101.lock", 1, true),
      health
    )
    H.truthy(
      health:find("get CLAUDE_CODE_SSE_PORT=50101 and ENABLE_IDE_INTEGRATION=true", 1, true),
      health
    )

    -- Two servers: the one whose root holds the current directory.
    vim.cmd.cd(vim.fn.fnameescape(a.root))
    local b = fake_workspace({ ["b.txt"] = "b\n" }, "b.txt", 50102)
    H.eq("50101", vim.env.CLAUDE_CODE_SSE_PORT, "the current directory is in a's root")
    vim.cmd.cd(vim.fn.fnameescape(b.root))
    H.eq("50102", vim.env.CLAUDE_CODE_SSE_PORT, "after :cd into b's root")

    local status = require("verbatim").status()
    local ports = {}
    for _, c in ipairs(status.clients) do
      ports[c.client_id] = c.claude_code_port
    end
    H.eq({ [a.client.id] = 50101, [b.client.id] = 50102 }, ports)
    local text = table.concat(require("verbatim.commands").format_status(status), "\n")
    H.truthy(text:find("Claude Code: port 50101\n", 1, true), text)
    H.truthy(
      text:find("Claude Code: port 50102 (CLAUDE_CODE_SSE_PORT of new terminals)", 1, true),
      text
    )

    stop(b.client)
    H.eq("50101", vim.env.CLAUDE_CODE_SSE_PORT, "the other server takes over")
    stop(a.client)
    H.eq("1111", vim.env.CLAUDE_CODE_SSE_PORT, "what it was before")
    H.eq(nil, vim.env.ENABLE_IDE_INTEGRATION)

    -- Once the person set the variable, it is theirs.
    local c = fake_workspace({ ["c.txt"] = "c\n" }, "c.txt", 50103)
    H.eq("50103", vim.env.CLAUDE_CODE_SSE_PORT)
    vim.env.CLAUDE_CODE_SSE_PORT = "2222"
    stop(c.client)
    H.eq("2222", vim.env.CLAUDE_CODE_SSE_PORT)
    vim.env.CLAUDE_CODE_SSE_PORT = nil
  end
)

H.test(
  "a server without the endpoint, and claude_code = gemini_cli = false: nothing is set",
  function()
    local a = fake_workspace({ ["a.txt"] = "a\n" }, "a.txt", nil)
    H.eq(nil, claude_code.ports[a.client.id])
    H.eq(nil, vim.env.CLAUDE_CODE_SSE_PORT)
    local status = require("verbatim").status()
    local text = table.concat(require("verbatim.commands").format_status(status), "\n")
    H.truthy(text:find("Claude Code: not served", 1, true), text)
    stop(a.client)

    -- The selection is Gemini CLI's context too: it is followed while either is on.
    config.set({ cmd = { vim.env.VERBATIM_BIN, "lsp" }, claude_code = false })
    claude_code.enable()
    H.truthy(
      #api.nvim_get_autocmds({ group = "verbatim.claude_code" }) > 0,
      "selection tracking for Gemini CLI"
    )
    config.set({ cmd = { vim.env.VERBATIM_BIN, "lsp" }, claude_code = false, gemini_cli = false })
    claude_code.enable()
    H.eq({}, api.nvim_get_autocmds({ group = "verbatim.claude_code" }), "no selection tracking")
    local b = fake_workspace({ ["b.txt"] = "b\n" }, "b.txt", nil)
    H.eq(false, b.log.requests[1].params.initializationOptions.claudeCode)
    stop(b.client)
    config.set({ cmd = { vim.env.VERBATIM_BIN, "lsp" } })
    claude_code.enable()
  end
)

H.test("the selection: ranges in the client's encoding, the selected text", function()
  local f =
    fake_workspace({ ["s.txt"] = "héllo wörld\nsecond 😀 line\nthird\n" }, "s.txt", 50110)
  H.eq("utf-16", f.client.offset_encoding)
  local function pos(line, character)
    return { line = line, character = character }
  end
  -- Normal mode: an empty range at the cursor (byte 12 of line 2 is the
  -- space after the emoji: 7 characters, then 2 UTF-16 units).
  api.nvim_win_set_cursor(0, { 2, 11 })
  H.eq({
    uri = f.uri,
    text = "",
    range = { start = pos(1, 9), ["end"] = pos(1, 9) },
  }, claude_code.selection("utf-16"))
  H.eq(pos(1, 8), claude_code.selection("utf-32").range.start)
  H.eq(pos(1, 11), claude_code.selection("utf-8").range.start)

  -- Charwise: from the "w" of "wörld" to the emoji, inclusive.
  api.nvim_win_set_cursor(0, { 1, 7 })
  api.nvim_feedkeys("v", "nx", false)
  api.nvim_win_set_cursor(0, { 2, 7 })
  H.eq("v", api.nvim_get_mode().mode)
  H.eq({
    uri = f.uri,
    text = "wörld\nsecond 😀",
    range = { start = pos(0, 6), ["end"] = pos(1, 9) },
  }, claude_code.selection("utf-16"))
  -- The same selection made backwards.
  api.nvim_feedkeys("o", "nx", false)
  H.eq(pos(0, 6), claude_code.selection("utf-16").range.start)
  api.nvim_feedkeys("\27", "nx", false)

  -- Linewise: whole lines, to the end of the last one.
  api.nvim_win_set_cursor(0, { 2, 3 })
  api.nvim_feedkeys("Vj", "nx", false)
  H.eq({
    uri = f.uri,
    text = "second 😀 line\nthird",
    range = { start = pos(1, 0), ["end"] = pos(2, 5) },
  }, claude_code.selection("utf-16"))
  api.nvim_feedkeys("\27", "nx", false)

  -- Blockwise: the block's text, from its first to its last corner.
  api.nvim_win_set_cursor(0, { 2, 0 })
  api.nvim_feedkeys("\22jl", "nx", false)
  local block = claude_code.selection("utf-16")
  H.eq("se\nth", block.text)
  H.eq({ start = pos(1, 0), ["end"] = pos(2, 2) }, block.range)
  api.nvim_feedkeys("\27", "nx", false)
  stop(f.client)
end)

H.test("the selection is sent for served buffers only, once per change", function()
  local f = fake_workspace({ ["a.txt"] = "one\ntwo\n", ["b.txt"] = "x\n" }, "a.txt", 50111)
  api.nvim_win_set_cursor(0, { 2, 1 })
  claude_code.send_selection()
  claude_code.send_selection()
  local selections = sent(f.log, "verbatim/selectionChanged")
  H.eq(1, #selections, "an unchanged selection is not sent again")
  H.eq({
    uri = f.uri,
    text = "",
    range = {
      start = { line = 1, character = 1 },
      ["end"] = {
        line = 1,
        character = 1,
      },
    },
  }, selections[1])
  -- Not for a terminal, the review window's kind of buffer, or a buffer
  -- whose server does not serve Claude Code.
  vim.cmd("botright new")
  vim.fn.jobstart({ "sh", "-c", "sleep 5" }, { term = true })
  claude_code.send_selection()
  vim.cmd("bwipeout!")
  vim.cmd("botright new")
  vim.bo.buftype = "nofile"
  claude_code.send_selection()
  vim.cmd("bwipeout!")
  local other = fake_workspace({ ["c.txt"] = "c\n" }, "c.txt", nil)
  claude_code.send_selection()
  H.eq(1, #sent(f.log, "verbatim/selectionChanged"))
  H.eq({}, sent(other.log, "verbatim/selectionChanged"))
  stop(other.client)
  stop(f.client)
end)

H.test(
  ":VerbatimMention sends the file or the range's lines; a notice without the endpoint",
  function()
    local f = fake_workspace({ ["m.txt"] = "one\ntwö\nthree\n" }, "m.txt", 50112)
    H.eq(2, vim.fn.exists(":VerbatimMention"))
    vim.cmd("VerbatimMention")
    vim.cmd("2,3VerbatimMention")
    local mentions = sent(f.log, "verbatim/atMention")
    H.eq({ { uri = f.uri } }, { mentions[1] }, "the whole file: no range")
    H.eq({
      uri = f.uri,
      range = { start = { line = 1, character = 0 }, ["end"] = { line = 2, character = 5 } },
    }, mentions[2])
    H.truthy(notes[#notes].msg:find("m.txt#L2-3", 1, true), notes[#notes].msg)

    -- A buffer no server serves, and one whose server has no endpoint.
    vim.cmd("enew")
    notes = {}
    vim.cmd("VerbatimMention")
    H.eq(vim.log.levels.WARN, notes[1].level)
    H.truthy(notes[1].msg:find("no Verbatim server", 1, true), notes[1].msg)
    local other = fake_workspace({ ["o.txt"] = "o\n" }, "o.txt", nil)
    notes = {}
    vim.cmd("VerbatimMention")
    H.eq(vim.log.levels.WARN, notes[1].level)
    H.truthy(notes[1].msg:find("no server serves Claude Code", 1, true), notes[1].msg)
    H.eq({}, sent(other.log, "verbatim/atMention"))
    H.eq(2, #sent(f.log, "verbatim/atMention"))
    stop(other.client)
    stop(f.client)
  end
)

H.test("verbatim/saveDocument writes the buffer without changing the current window", function()
  local f = fake_workspace({ ["w.txt"] = "old\n", ["r.txt"] = "ro\n" }, "w.txt", 50113)
  api.nvim_buf_set_lines(f.buf, 0, 1, true, { "new" })
  -- The buffer is hidden: the person is in another window.
  vim.cmd("enew")
  local win, current = api.nvim_get_current_win(), api.nvim_get_current_buf()
  local result, err = f.dispatchers.server_request("verbatim/saveDocument", { uri = f.uri })
  H.eq(nil, err)
  H.eq({ saved = true }, result)
  H.eq("new\n", H.read_file(f.path))
  H.eq(false, vim.bo[f.buf].modified)
  H.eq(win, api.nvim_get_current_win())
  H.eq(current, api.nvim_get_current_buf())

  local missing = vim.uri_from_fname(f.root .. "/not-open.txt")
  result = f.dispatchers.server_request("verbatim/saveDocument", { uri = missing })
  H.eq(false, result.saved)
  H.truthy(result.message:find("not-open.txt is not open in Neovim", 1, true), result.message)

  vim.cmd.edit(vim.fn.fnameescape(f.root .. "/r.txt"))
  local ro = api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(ro, f.client.id)
  api.nvim_buf_set_lines(ro, 0, 1, true, { "changed" })
  vim.bo[ro].readonly = true
  result = f.dispatchers.server_request(
    "verbatim/saveDocument",
    { uri = vim.uri_from_fname(f.root .. "/r.txt") }
  )
  H.eq(false, result.saved)
  H.truthy(result.message:find("E45", 1, true), result.message)
  H.eq("ro\n", H.read_file(f.root .. "/r.txt"))
  vim.cmd("bwipeout! " .. ro)
  stop(f.client)
end)

--- The server's notification once Claude Code wrote a file the buffer
--- already holds (docs/protocol.md, `verbatim/externalChange` `synced`).
---@param f { uri: string, client: vim.lsp.Client }
local function synced(f)
  require("verbatim.external").handler(nil, {
    uri = f.uri,
    kind = "synced",
    time = "2026-12-01T10:00:00Z",
    conflicts = {},
    message = "",
  }, { client_id = f.client.id, method = "verbatim/externalChange" })
end

---@param bufnr integer
local function checktime_says_nothing(bufnr)
  vim.cmd("messages clear")
  vim.v.errmsg = ""
  vim.cmd("checktime " .. bufnr)
  local messages = vim.fn.execute("messages")
  H.truthy(not messages:find("W12", 1, true), "no W12 in: " .. messages)
  H.truthy(not messages:find("changed", 1, true), "no warning in: " .. messages)
end

H.test(
  "Claude Code wrote what the buffer holds: the buffer ends unmodified, :w asks nothing",
  function()
    local f = fake_workspace({ ["c.txt"] = "one\ntwo\nthree\n" }, "c.txt", 50114)
    -- The person accepted Claude Code's edit (one undo step)...
    api.nvim_buf_call(f.buf, function()
      vim.cmd("let &l:undolevels = &l:undolevels")
    end)
    api.nvim_buf_set_lines(f.buf, 1, 2, true, { "TWO" })
    H.eq(true, vim.bo[f.buf].modified)
    -- ...and Claude Code wrote exactly that to disk, a moment later.
    vim.wait(20)
    H.write_file(f.path, "one\nTWO\nthree\n")
    synced(f)
    H.wait_for("the buffer to be unmodified", function()
      return not vim.bo[f.buf].modified
    end)
    H.eq({ "one", "TWO", "three" }, H.lines(f.buf))
    checktime_says_nothing(f.buf)
    H.eq(false, vim.bo[f.buf].modified)
    -- The accepted edit is still one undo step away.
    api.nvim_buf_call(f.buf, function()
      vim.cmd("silent undo")
    end)
    H.eq({ "one", "two", "three" }, H.lines(f.buf), "undo takes back the accepted edit")
    api.nvim_buf_call(f.buf, function()
      vim.cmd("silent redo")
    end)
    H.eq({ "one", "TWO", "three" }, H.lines(f.buf))
    H.eq(false, vim.bo[f.buf].modified, "redo is back to what the disk holds")
    H.write_without_prompt(f.buf, f.path)
    stop(f.client)
  end
)

H.test("Claude Code wrote the kept change only: the person's other change stays unsaved", function()
  local f = fake_workspace({ ["d.txt"] = "one\ntwo\nthree\nfour\n" }, "d.txt", 50115)
  api.nvim_buf_set_lines(f.buf, 0, 1, true, { "one, by the person" }) -- unsaved
  api.nvim_buf_call(f.buf, function()
    vim.cmd("let &l:undolevels = &l:undolevels")
  end)
  api.nvim_buf_set_lines(f.buf, 3, 4, true, { "FOUR" }) -- the accepted edit
  vim.wait(20)
  H.write_file(f.path, "one\ntwo\nthree\nFOUR\n") -- disk + the kept hunk
  synced(f)
  local external = require("verbatim.external")
  H.wait_for("the file's timestamp to be brought up to date", function()
    return external.state[f.buf] and not external.state[f.buf].needs_sync
  end)
  H.eq({ "one, by the person", "two", "three", "FOUR" }, H.lines(f.buf))
  H.eq(true, vim.bo[f.buf].modified)
  checktime_says_nothing(f.buf)
  H.eq(true, vim.bo[f.buf].modified)
  H.eq("one\ntwo\nthree\nFOUR\n", H.read_file(f.path), "the disk keeps Claude Code's write")
  H.write_without_prompt(f.buf, f.path)
  stop(f.client)
end)

H.test(
  "in a real main loop: the selection follows the cursor, debounced, not from a terminal",
  function()
    local root = H.workspace({ ["a.txt"] = "one\ntwo\nthree\nfour\n" })
    local child = Child.start()
    child:lua(
      [[
    local H = require("helpers")
    require("verbatim.config").set({ cmd = { "verbatim", "lsp" } })
    require("verbatim.claude_code").enable()
    vim.cmd.edit(...)
    _G.log = { notifications = {}, requests = {} }
    H.fake_verbatim(vim.api.nvim_get_current_buf(), 50120, _G.log)
  ]],
      root .. "/a.txt"
    )
    local function selections()
      return child:lua([[
      local result = {}
      for _, n in ipairs(_G.log.notifications) do
        if n.method == "verbatim/selectionChanged" then
          table.insert(result, n.params)
        end
      end
      return result
    ]])
    end
    -- Three moves typed at once: one notification, for where the cursor rests.
    child:input("jjl")
    H.wait_for("a selection", function()
      return #selections() > 0
    end)
    vim.wait(250)
    local sel = selections()
    H.eq(1, #sel, vim.inspect(sel))
    H.eq({ line = 2, character = 1 }, sel[1].range.start)
    -- Visual mode, then the command line: the selection stays the last one sent.
    child:input("vk")
    H.wait_for("the visual selection", function()
      return #selections() == 2
    end)
    H.eq("wo\nth", selections()[2].text)
    child:input(":")
    vim.wait(250)
    H.eq(2, #selections(), "nothing sent from the command line")
    child:input("<Esc><Esc>")
    H.wait_for("the cursor after Visual mode", function()
      return #selections() == 3
    end)
    -- A terminal: typing there sends nothing.
    child:lua([[vim.cmd("botright split | terminal")]])
    child:input("iecho hello<CR>")
    vim.wait(300)
    H.eq("t", child:mode())
    H.eq(3, #selections())
    child:stop()
  end
)
