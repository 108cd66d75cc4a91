-- Edits that arrive while the person types in a terminal window (Claude Code
-- runs in one and asks for its edits from there): they never take the
-- cursor, Terminal mode or the terminal's size; a message says how to open
-- the review. A real `verbatim lsp` in a child Neovim whose main loop really
-- is in Terminal mode, the person's keys typed into it (nvim_input), and an
-- agent on the server's socket.
local H = require("helpers")
local Agent = require("helpers.agent")
local Child = require("helpers.child")

---@class verbatim.test.TerminalSetup
---@field child verbatim.test.Child
---@field agent verbatim.test.Agent
---@field root string
---@field term_win integer the terminal's window in the child

--- A child Neovim with `open` edited in the top window and a shell in a
--- terminal window below it, the cursor there, in Terminal mode; an agent
--- connected to the child's server.
---@param files table<string, string>
---@param open string
---@return verbatim.test.TerminalSetup
local function terminal_setup(files, open)
  local root = H.workspace(files)
  local child = Child.start()
  child:lua(
    [[
    local bin, path = ...
    require("verbatim").setup({ cmd = { bin, "lsp" } })
    vim.cmd.edit(vim.fn.fnameescape(path))
  ]],
    vim.env.VERBATIM_BIN,
    root .. "/" .. open
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
  agent:initialize("term-agent", "utf-8")
  table.insert(H.agents, agent)
  local term_win = child:lua([[
    vim.cmd("botright 12split | terminal")
    return vim.api.nvim_get_current_win()
  ]])
  child:input("i")
  H.wait_for("Terminal mode", function()
    return child:mode() == "t"
  end)
  return { child = child, agent = agent, root = root, term_win = term_win }
end

--- The child's windows, their buffers and sizes, and the current window.
---@param child verbatim.test.Child
---@return table
local function layout(child)
  return child:lua([[
    local wins = {}
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if vim.api.nvim_win_get_config(win).relative == "" then
        table.insert(wins, {
        win = win,
        buf = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)),
        height = vim.api.nvim_win_get_height(win),
        width = vim.api.nvim_win_get_width(win),
        })
      end
    end
    return { wins = wins, current = vim.api.nvim_get_current_win(), layout = vim.fn.winlayout() }
  ]])
end

---@param child verbatim.test.Child
---@param n integer
local function wait_pending(child, n)
  child:wait_for(n .. " pending edit(s)", "return #require('verbatim').pending() == " .. n)
end

--- Checks the person is still where they were: same windows, same sizes,
--- Terminal mode, the cursor in the terminal, and what they type reaches it.
---@param s verbatim.test.TerminalSetup
---@param before table layout()
---@param word string typed into the shell
local function still_in_terminal(s, before, word)
  H.eq(before, layout(s.child), "the windows, their sizes and the current window")
  H.eq("t", s.child:mode(), "still in Terminal mode")
  s.child:input("echo " .. word .. "<CR>")
  H.wait_for("the shell to echo what the person typed", function()
    local lines = s.child:lua(
      "return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(...), 0, -1, false)",
      s.term_win
    )
    for _, line in ipairs(lines) do
      if line == word then
        return true
      end
    end
  end)
end

--- The text of the floats in the child's tab page.
---@param child verbatim.test.Child
---@return string[]
local function floats(child)
  return child:lua([[
    local texts = {}
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      local config = vim.api.nvim_win_get_config(win)
      if config.relative ~= "" then
        local buf = vim.api.nvim_win_get_buf(win)
        table.insert(texts, table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, true), "\n"))
      end
    end
    return texts
  ]])
end

---@param child verbatim.test.Child
---@param needle string
---@return string|nil the first message holding it
local function note_with(child, needle)
  for _, note in ipairs(child:notes()) do
    if note.msg:find(needle, 1, true) then
      return note.msg
    end
  end
end

H.test("an edit of a file that is not loaded: a message, the terminal keeps the keys", function()
  local s = terminal_setup({ ["open.txt"] = "x\n", ["closed.txt"] = "first\nsecond\n" }, "open.txt")
  local before = layout(s.child)
  local uri = vim.uri_from_fname(s.root .. "/closed.txt")
  local read = H.read_until(s.agent, uri)
  local id = s.agent:request("verbatim/strReplace", {
    uri = uri,
    oldStr = "second",
    newStr = "2nd",
    baseRev = read.rev,
    summary = "Abbreviate",
  })
  wait_pending(s.child, 1)
  still_in_terminal(s, before, "typed-after-the-edit-arrived")
  local msg = note_with(s.child, "term-agent: Abbreviate")
  H.truthy(msg, vim.inspect(s.child:notes()))
  H.eq("verbatim: term-agent: Abbreviate (<C-\\><C-n>:Verbatim review)", msg)
  -- Neovim redraws "-- TERMINAL --" over a message at the next key: a float
  -- at the top right stays until the review is opened.
  H.eq({ " term-agent: Abbreviate · <C-\\><C-n>:Verbatim review " }, floats(s.child))
  H.eq(
    { true, 0 },
    s.child:lua(
      [[
      local buf = vim.fn.bufnr(...)
      return { vim.api.nvim_buf_is_loaded(buf), #vim.fn.win_findbuf(buf) }
    ]],
      s.root .. "/closed.txt"
    ),
    "loaded for the review, in no window"
  )
  H.eq(false, s.agent:answered(id))

  -- When the person wants: leave the terminal, open the review, accept.
  s.child:input("<C-\\><C-n>:Verbatim review<CR>")
  s.child:wait_for(
    "the review window, entered",
    [[return vim.api.nvim_buf_get_name(0) == "verbatim://review"]]
  )
  H.eq({}, floats(s.child), "the float leaves when the review opens")
  s.child:input("a")
  local response = s.agent:wait(id)
  H.eq(nil, response.error)
  H.eq(true, response.result.applied)
  s.child:stop()
end)

H.test("an edit of a hidden buffer, accepted at once (trusted): Terminal mode stays", function()
  local s = terminal_setup({ ["open.txt"] = "x\n", ["hidden.txt"] = "one\ntwo\n" }, "hidden.txt")
  -- hidden.txt stays loaded but leaves its window.
  s.child:lua(
    [[
    local win, path = ...
    local top = vim.fn.win_getid(1)
    vim.api.nvim_win_call(top, function() vim.cmd.edit(vim.fn.fnameescape(path)) end)
  ]],
    s.term_win,
    s.root .. "/open.txt"
  )
  H.eq("t", s.child:mode())
  local before = layout(s.child)
  local uri = vim.uri_from_fname(s.root .. "/hidden.txt")
  local read = H.read_until(s.agent, uri)
  H.eq("editor", read.source, "the buffer is open on the server's side")
  local id = s.agent:request("verbatim/strReplace", {
    uri = uri,
    oldStr = "two",
    newStr = "TWO",
    baseRev = read.rev,
    summary = "Shout",
  })
  wait_pending(s.child, 1)
  still_in_terminal(s, before, "after-the-hidden-edit")
  H.truthy(
    note_with(s.child, "term-agent: Shout (<C-\\><C-n>:Verbatim review)"),
    vim.inspect(s.child:notes())
  )

  -- Accepting from outside the terminal (the person trusts the agent from a
  -- mapping, say) changes the hidden buffer without leaving Terminal mode.
  s.child:lua([[require("verbatim.queue").trust("term-agent")]])
  local response = s.agent:wait(id)
  H.eq(true, response.result.applied)
  H.eq({}, floats(s.child), "nothing waits: the float leaves")
  H.eq(
    { "one", "TWO" },
    s.child:lua(
      "return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, true)",
      s.root .. "/hidden.txt"
    )
  )
  still_in_terminal(s, before, "after-the-accept")

  -- The next edit of the trusted agent applies at once, inside the handler.
  read = H.read_until(s.agent, uri, function(t)
    return t:find("TWO", 1, true) ~= nil
  end)
  response = s.agent:call("verbatim/strReplace", {
    uri = uri,
    oldStr = "one",
    newStr = "ONE",
    baseRev = read.rev,
    summary = "Shout more",
  })
  H.eq(true, response.result.applied)
  still_in_terminal(s, before, "after-the-trusted-edit")
  s.child:stop()
end)

H.test("a hidden clean buffer reloaded from disk: Terminal mode stays", function()
  local s = terminal_setup({ ["open.txt"] = "x\n", ["clean.txt"] = "a\nb\n" }, "clean.txt")
  s.child:lua(
    [[
    local path = ...
    vim.api.nvim_win_call(vim.fn.win_getid(1), function() vim.cmd.edit(vim.fn.fnameescape(path)) end)
  ]],
    s.root .. "/open.txt"
  )
  local before = layout(s.child)
  H.write_file(s.root .. "/clean.txt", "a\nb, changed on disk\n")
  s.child:wait_for(
    "the hidden buffer to be reloaded",
    [[return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 1, 2, true)[1] == "b, changed on disk"]],
    s.root .. "/clean.txt"
  )
  still_in_terminal(s, before, "after-the-reload")
  s.child:stop()
end)
