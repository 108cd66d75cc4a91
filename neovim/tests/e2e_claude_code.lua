-- End to end with the real Claude Code CLI: Neovim 0.11 runs the plugin with
-- a real `verbatim lsp`; Claude Code runs interactively under tmux in its
-- default permission mode, its model played by tests/agents/model_server.py
-- from a script; the person drives Neovim with keys. Claude Code's Edit and
-- Write become reviews in Neovim, and Claude Code writes what the person kept.
--
--   neovim/tests/e2e_claude_code.sh      (installs Claude Code, then runs this)
--
-- Neovim is a child process driven over RPC (helpers/child.lua) for the first
-- scenarios, and a real TUI in a tmux pane for the last one, where Claude Code
-- runs in Neovim's own :terminal and connects with no --ide flag. Nothing is
-- skipped: a missing Claude Code is an error.
local H = require("helpers")
local Agent = require("helpers.agent")
local Child = require("helpers.child")

local tests_dir = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local repo = vim.fn.fnamemodify(tests_dir, ":h:h")
local claude_tmux = repo .. "/tests/agents/claude_tmux.py"

--- Runs a command; its stdout, or an error with its output.
---@param cmd string[]
---@return string
local function run(cmd)
  local result = vim.system(cmd, { text = true }):wait()
  if result.code ~= 0 then
    error(
      string.format(
        "%s exited %d\n%s%s",
        table.concat(cmd, " "),
        result.code,
        result.stdout or "",
        result.stderr or ""
      ),
      2
    )
  end
  return result.stdout
end

local claude_bin = vim.env.CLAUDE_CODE_BIN
if not claude_bin or claude_bin == "" then
  claude_bin = vim.trim(run({ repo .. "/tests/agents/install.sh", "--print-bin" }))
end
H.note("Claude Code: " .. claude_bin)

-- ---------------------------------------------------------------------------
-- Claude Code under tmux (tests/agents/claude_tmux.py, through its CLI)

---@class verbatim.test.Claude
---@field name string
---@field state table claude_tmux.py's session
local Claude = {}
Claude.__index = Claude

local session_count = 0

--- A HOME of its own for one Claude Code session, which finds the editors of
--- this run (their lock files in `$HOME/.claude/ide`) through a symlink. Two
--- Claude Codes in one HOME rewrite each other's `~/.claude.json` (each writes
--- its own copy back), which took away a later session's seeded trust.
---@param name string
---@return string
local function own_home(name)
  local shared = vim.env.HOME .. "/.claude/ide"
  vim.fn.mkdir(shared, "p")
  local home = H.tmpdir() .. "/" .. name .. "-home"
  vim.fn.mkdir(home .. "/.claude", "p")
  assert(vim.uv.fs_symlink(shared, home .. "/.claude/ide"))
  return home
end

--- Starts Claude Code (or `opts.command` in its pane) with a scripted model, in
--- `opts.home` or else a HOME of its own (`own_home`).
---@param opts { cwd: string, home?: string, script: table[], args?: string[], command?: string, env?: table<string, string>, size?: string }
---@return verbatim.test.Claude
function Claude.start(opts)
  session_count = session_count + 1
  local name = string.format("vbnv-%d-%d", vim.fn.getpid(), session_count)
  local home = opts.home or own_home(name)
  local script = H.tmpdir() .. "/" .. name .. ".script.json"
  H.write_file(script, vim.json.encode(opts.script))
  local cmd = {
    "python3",
    claude_tmux,
    "start",
    "--name",
    name,
    "--cwd",
    opts.cwd,
    "--home",
    home,
    "--script",
    script,
    "--bin",
    claude_bin,
    "--size",
    opts.size or "120x40",
  }
  if opts.command then
    vim.list_extend(cmd, { "--command", opts.command })
  end
  for key, value in pairs(opts.env or {}) do
    vim.list_extend(cmd, { "--env", key .. "=" .. value })
  end
  if opts.args then
    table.insert(cmd, "--")
    vim.list_extend(cmd, opts.args)
  end
  local self = setmetatable({ name = name, state = vim.json.decode(run(cmd)) }, Claude)
  return self
end

---@param args string[]
---@return string
function Claude:cli(args)
  local cmd = { "python3", claude_tmux, args[1], "--name", self.name }
  vim.list_extend(cmd, vim.list_slice(args, 2))
  return run(cmd)
end

--- Types `text` into the pane and presses Enter.
---@param text string
function Claude:send_text(text)
  self:cli({ "send", "--text", text })
end

--- Presses tmux keys (Enter, Escape, C-\\, ...).
---@param ... string
function Claude:send_keys(...)
  self:cli({ "send", ... })
end

--- Waits until a (Python) regex matches the pane's screen.
---@param regex string
---@param timeout? number seconds
function Claude:wait_for(regex, timeout)
  self:cli({ "wait-for", "--regex", regex, "--timeout", tostring(timeout or 30) })
end

---@return string
function Claude:screen()
  return self:cli({ "capture" })
end

--- The model requests of Claude Code's main loop so far.
---@return table[]
function Claude:requests()
  return vim.json.decode(self:cli({ "requests", "--kind", "main" }))
end

--- Waits for the `count`th main-loop request; returns it.
---@param count integer
---@return table
function Claude:wait_request(count)
  return vim.json.decode(
    self:cli({ "wait-request", "--count", tostring(count), "--timeout", "60" })
  )
end

function Claude:stop()
  self:cli({ "stop" })
  self.stopped = true
end

local claudes = {} ---@type verbatim.test.Claude[]

-- Whatever happened, no tmux server or Claude Code outlives the tests; a
-- session still running then (a test failed) keeps its state directory
-- (HOME, the model's request log) for a post-mortem.
H.on_exit(function()
  for _, claude in ipairs(claudes) do
    if not claude.stopped then
      pcall(claude.cli, claude, { "stop", "--keep" })
      H.note("kept the state of " .. claude.name .. ": " .. tostring(claude.state.state_dir))
    end
  end
end)

--- The tool_result blocks of a model request, as text.
---@param request table
---@return string
local function tool_results(request)
  local parts = {}
  for _, message in ipairs(request.body.messages or {}) do
    if type(message.content) == "table" then
      for _, block in ipairs(message.content) do
        if block.type == "tool_result" then
          local content = block.content
          if type(content) == "table" then
            local texts = {}
            for _, c in ipairs(content) do
              table.insert(texts, c.text or "")
            end
            content = table.concat(texts, "\n")
          end
          table.insert(parts, tostring(content))
        end
      end
    end
  end
  return table.concat(parts, "\n---\n")
end

--- The tool_result blocks of the last message of a request (those that
--- answer the previous step).
---@param request table
---@return string
local function last_tool_results(request)
  local messages = request.body.messages
  return tool_results({ body = { messages = { messages[#messages] } } })
end

-- ---------------------------------------------------------------------------
-- Time: the server's log and the test share the wall clock.

--- Seconds since the epoch of an RFC 3339 UTC timestamp (as the server logs).
---@param stamp string e.g. 2026-12-01T21:45:01.123456Z
---@return number|nil
local function utc_seconds(stamp)
  local y, mo, d, h, mi, s = stamp:match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):([%d.]+)Z")
  if not y then
    return nil
  end
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  -- Days from the civil date (Howard Hinnant's algorithm), time zone free.
  y = mo <= 2 and y - 1 or y
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * (mo + (mo > 2 and -3 or 9)) + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  local days = era * 146097 + doe - 719468
  return days * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(s)
end

---@return number seconds since the epoch
local function now()
  local t = vim.uv.clock_gettime("realtime")
  return t.sec + t.nsec / 1e9
end

--- The times of the server's log lines that contain `needle`, in order.
---@param log string path
---@param needle string
---@return number[]
local function log_times(log, needle)
  local times = {}
  for _, line in ipairs(vim.fn.readfile(log)) do
    if line:find(needle, 1, true) then
      table.insert(times, utc_seconds(line:match("^(%S+)")))
    end
  end
  return times
end

-- ---------------------------------------------------------------------------
-- Neovim, as a child over RPC, with the plugin and a real server

---@class verbatim.test.Editor
---@field child verbatim.test.Child
---@field agent verbatim.test.Agent an observer on the server's socket
---@field port integer the server's Claude Code port
---@field log string the server's log file

--- A child Neovim running the plugin for `path` (the server logs Claude
--- Code's tool calls at debug level, for the timings).
---@param path string
---@return verbatim.test.Editor
---@param options? table more options for setup()
local function start_editor(path, options)
  -- VERBATIM_E2E_LOGS keeps the server's logs after the run (run.sh removes its temp tree).
  local log = (vim.env.VERBATIM_E2E_LOGS or H.tmpdir())
    .. "/server-"
    .. vim.fn.fnamemodify(path, ":t")
    .. ".log"
  vim.fn.delete(log)
  local child = Child.start({ VERBATIM_LOG = "info,verbatim::ide=debug" })
  child:lua(
    [[
    local bin, path, log, options = ...
    require("verbatim").setup(vim.tbl_extend("force", { cmd = { bin, "lsp" }, log_file = log }, options))
    _G.pending_times = {}
    vim.api.nvim_create_autocmd("User", {
      pattern = "VerbatimPending",
      callback = function()
        for _, item in ipairs(require("verbatim.queue").items) do
          if not _G.pending_times[item.key] then
            local t = vim.uv.clock_gettime("realtime")
            _G.pending_times[item.key] = t.sec + t.nsec / 1e9
          end
        end
      end,
    })
    vim.cmd.edit(vim.fn.fnameescape(path))
  ]],
    vim.env.VERBATIM_BIN,
    path,
    log,
    options or {}
  )
  local port = child:wait_for(
    "the server's Claude Code port",
    [[
    local c = vim.lsp.get_clients({ bufnr = 0, name = "verbatim" })[1]
    return c and c.initialized and require("verbatim.claude_code").ports[c.id]
  ]]
  )
  local socket = child:lua([[
    local c = vim.lsp.get_clients({ name = "verbatim" })[1]
    return c:request_sync("verbatim/status", nil, 5000).result.socket
  ]])
  local agent = Agent.connect(socket)
  agent:initialize("observer", "utf-8")
  table.insert(H.agents, agent)
  return { child = child, agent = agent, port = port, log = log }
end

--- Waits until Claude Code is connected to the child's server.
---@param child verbatim.test.Child
local function wait_connected(child)
  child:wait_for(
    "Claude Code among the server's agents",
    [[
    local c = vim.lsp.get_clients({ name = "verbatim" })[1]
    local status = c:request_sync("verbatim/status", nil, 2000).result
    for _, agent in ipairs(status.agents) do
      if agent.name == "Claude Code" then
        return true
      end
    end
  ]]
  )
end

---@param child verbatim.test.Child
---@return table[] pending edits
local function pending(child)
  return child:lua("return require('verbatim').pending()")
end

---@param child verbatim.test.Child
---@param n integer
---@param timeout? integer ms (10 s by default)
---@return table[]
local function wait_pending(child, n, timeout)
  H.wait_for("the child Neovim to hold " .. n .. " pending edit(s)", function()
    return #pending(child) == n
  end, timeout)
  return pending(child)
end

---@param child verbatim.test.Child
---@return string[]|nil the review window's lines
local function review_lines(child)
  return child:lua([[
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      local buf = vim.api.nvim_win_get_buf(win)
      if vim.api.nvim_buf_get_name(buf) == "verbatim://review" then
        return vim.api.nvim_buf_get_lines(buf, 0, -1, true)
      end
    end
  ]])
end

---@param child verbatim.test.Child
---@param path string
---@return { lines: string[], modified: boolean, kind: string|nil }
local function buffer_state(child, path)
  return child:lua(
    [[
    local buf = vim.fn.bufnr(...)
    local st = require("verbatim.external").state[buf]
    return {
      lines = vim.api.nvim_buf_get_lines(buf, 0, -1, true),
      modified = vim.bo[buf].modified,
      kind = st and st.kind or vim.NIL,
      needs_sync = st and st.needs_sync or false,
    }
  ]],
    path
  )
end

---@param count integer
---@param changed? table<integer, string>
---@return string[]
local function numbered(count, changed)
  local lines = {}
  for n = 1, count do
    lines[n] = (changed or {})[n] or ("line " .. n)
  end
  return lines
end

---@param lines string[]
---@return string
local function text_of(lines)
  return table.concat(lines, "\n") .. "\n"
end

--- Waits until the server has synced the file Claude Code wrote (the buffer
--- knows the disk's text), and nothing waits for review.
---@param child verbatim.test.Child
---@param path string
local function wait_synced(child, path)
  child:wait_for(
    "verbatim/externalChange synced, and the buffer brought up to date",
    [[
    local buf = vim.fn.bufnr(...)
    local st = require("verbatim.external").state[buf]
    return st and st.kind == "synced" and not st.needs_sync
  ]],
    path
  )
end

--- `:checktime` in the child says nothing about the file.
---@param child verbatim.test.Child
local function checktime_is_quiet(child)
  local messages = child:lua([[
    vim.cmd("messages clear")
    vim.cmd("checktime")
    return vim.fn.execute("messages")
  ]])
  H.truthy(not messages:find("W12", 1, true), "no W12: " .. messages)
  H.truthy(not messages:find("changed", 1, true), "no warning: " .. messages)
end

-- ---------------------------------------------------------------------------

H.test("Edit of an open file with unsaved changes: one hunk kept; a reject; a Write", function()
  local original = numbered(12)
  local root = H.workspace({ ["a.txt"] = text_of(original), ["notes/todo.txt"] = "x\n" })
  local a_path = root .. "/a.txt"
  local b_path = root .. "/notes/b.txt"
  local editor = start_editor(a_path)
  local child = editor.child
  local a_uri = vim.uri_from_fname(a_path)
  local health = child:lua([[
    vim.cmd("checkhealth verbatim")
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, true), "\n")
    vim.cmd("tabclose")
    return text
  ]])
  local lock = vim.env.HOME .. "/.claude/ide/" .. editor.port .. ".lock"
  H.truthy(health:find("lock file (claude --ide and /ide find it): " .. lock, 1, true), health)
  local lock_file = vim.json.decode(H.read_file(lock))
  H.eq({ root }, lock_file.workspaceFolders)

  -- The person types a line elsewhere, unsaved.
  child:input("10GccLine 10, typed by the person<Esc>")
  H.read_until(editor.agent, a_uri, function(t)
    return t:find("Line 10, typed by the person", 1, true) ~= nil
  end)

  local claude = Claude.start({
    cwd = root,
    args = { "--ide" },
    script = {
      { tool_use = { name = "Read", input = { file_path = a_path } } },
      {
        tool_use = {
          name = "Edit",
          input = {
            file_path = a_path,
            old_string = "line 3\nline 4\nline 5\n",
            new_string = "LINE 3\nline 4\nLINE 5\n",
          },
        },
      },
      { expect = "modified", text = "You kept one of my two changes." },
      {
        tool_use = {
          name = "Edit",
          input = { file_path = a_path, old_string = "line 1\n", new_string = "LINE 1\n" },
        },
      },
      {
        tool_use = {
          name = "Write",
          input = { file_path = b_path, content = "hello\nworld\n" },
        },
      },
      { expect = "created successfully", text = "I wrote notes/b.txt." },
    },
  })
  table.insert(claudes, claude)
  wait_connected(child)

  -- a. The Edit becomes a review of the live buffer.
  claude:send_text("edit a.txt")
  local items = wait_pending(child, 1)
  H.eq("Claude Code", items[1].agent)
  H.note("the review's label: " .. items[1].label)
  local lines = review_lines(child)
  H.truthy(lines, "the review window opened")
  for _, expected in ipairs({ "-line 3", "+LINE 3", "-line 5", "+LINE 5" }) do
    H.truthy(vim.tbl_contains(lines, expected), expected .. " in\n" .. table.concat(lines, "\n"))
  end
  H.eq(
    a_path,
    child:lua("return vim.api.nvim_buf_get_name(0)"),
    "the cursor stays in the person's window"
  )
  -- The person goes to the review, moves to the second change, leaves it
  -- out, accepts, and says why.
  child:input(":Verbatim review<CR>")
  child:wait_for("the review window, entered", [[return vim.bo.filetype == "diff"]])
  child:input("]c]cx")
  child:wait_for(
    "one change left out",
    "return require('verbatim.queue').left_out(require('verbatim.queue').items[1]) == 1"
  )
  child:input("a")
  child:wait_for("the question why", [[return vim.fn.mode() == "c"]])
  child:input("keep line 5 as it is<CR>")

  local after_edit = claude:wait_request(3)
  local result = last_tool_results(after_edit)
  H.truthy(result:find("user modified your proposed changes", 1, true), result)
  local on_disk = numbered(12, { [3] = "LINE 3" })
  H.wait_for("Claude Code to write a.txt", function()
    return H.read_file(a_path) == text_of(on_disk)
  end)
  wait_synced(child, a_path)
  local state = buffer_state(child, a_path)
  H.eq(numbered(12, { [3] = "LINE 3", [10] = "Line 10, typed by the person" }), state.lines)
  H.eq(true, state.modified, "the person's own change is still unsaved")
  vim.wait(500)
  H.eq({}, pending(child), "no second review")
  checktime_is_quiet(child)
  H.eq(text_of(on_disk), H.read_file(a_path))

  -- b. A full reject: nothing written, the model told.
  claude:wait_for("You kept one of my two changes")
  claude:send_text("change line 1")
  wait_pending(child, 1)
  child:input(":Verbatim review<CR>")
  child:wait_for("the review window, entered", [[return vim.bo.filetype == "diff"]])
  child:input("r")
  child:wait_for("the question why", [[return vim.fn.mode() == "c"]])
  child:input("no, keep it<CR>")
  claude:wait_for("(?i)rejected|doesn't want|did not want|No \\(tell Claude")
  vim.wait(500)
  H.eq(text_of(on_disk), H.read_file(a_path), "the file is untouched")
  H.eq(
    numbered(12, { [3] = "LINE 3", [10] = "Line 10, typed by the person" }),
    buffer_state(child, a_path).lines
  )

  -- c. A Write of a new file: reviewed as a created file.
  claude:send_text("create notes/b.txt")
  local before_write = claude:wait_request(5)
  local told = tool_results(before_write)
  H.truthy(
    told:find("doesn't want to proceed", 1, true) or told:find("rejected", 1, true),
    "the model is told the user rejected the edit: " .. told
  )
  wait_pending(child, 1)
  lines = review_lines(child)
  H.truthy(vim.tbl_contains(lines, "--- /dev/null"), table.concat(lines, "\n"))
  H.truthy(vim.tbl_contains(lines, "+hello"), table.concat(lines, "\n"))
  child:input(":Verbatim review<CR>")
  child:wait_for("the review window, entered", [[return vim.bo.filetype == "diff"]])
  child:input("a")
  local after_write = claude:wait_request(6)
  H.truthy(
    last_tool_results(after_write):find("created successfully", 1, true),
    last_tool_results(after_write)
  )
  H.wait_for("Claude Code to write notes/b.txt", function()
    return H.read_file(b_path) == "hello\nworld\n"
  end)
  wait_synced(child, b_path)
  state = buffer_state(child, b_path)
  H.eq({ "hello", "world" }, state.lines)
  H.eq(false, state.modified, "the created buffer holds what is on disk")
  claude:wait_for("I wrote notes/b.txt")
  H.eq({}, pending(child))

  -- The person saves a.txt at last: no "file changed since reading it".
  child:lua(
    [[
    local path = ...
    require("helpers").write_without_prompt(vim.fn.bufnr(path), path)
  ]],
    a_path
  )
  H.eq(
    text_of(numbered(12, { [3] = "LINE 3", [10] = "Line 10, typed by the person" })),
    H.read_file(a_path)
  )
  claude:stop()
  child:stop()
end)

H.test(
  "review_ui = inline: the Edit reviewed in the buffer itself, one hunk kept at the cursor",
  function()
    local original = numbered(12)
    local root = H.workspace({ ["a.txt"] = text_of(original) })
    local a_path = root .. "/a.txt"
    local editor = start_editor(a_path, { review_ui = "inline" })
    local child = editor.child
    local a_uri = vim.uri_from_fname(a_path)
    child:input("10GccLine 10, typed by the person<Esc>")
    H.read_until(editor.agent, a_uri, function(t)
      return t:find("Line 10, typed by the person", 1, true) ~= nil
    end)
    local claude = Claude.start({
      cwd = root,
      args = { "--ide" },
      script = {
        { tool_use = { name = "Read", input = { file_path = a_path } } },
        {
          tool_use = {
            name = "Edit",
            input = {
              file_path = a_path,
              old_string = "line 3\nline 4\nline 5\n",
              new_string = "LINE 3\nline 4\nLINE 5\n",
            },
          },
        },
        { expect = "modified", text = "You kept one of my two changes." },
      },
    })
    table.insert(claudes, claude)
    wait_connected(child)
    claude:send_text("edit a.txt")
    wait_pending(child, 1)
    -- The review is drawn in a.txt's own window; no review window opens.
    local marks = child:wait_for(
      "the inline marks in a.txt",
      [[
    local ns = vim.api.nvim_get_namespaces()["verbatim.inline"]
    local marks = ns and vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true }) or {}
    return #marks > 0 and #marks or nil
  ]]
    )
    H.truthy(marks > 0, "inline marks")
    H.eq(
      { a_path, false },
      child:lua([[return { vim.api.nvim_buf_get_name(0), vim.bo.filetype == "diff" }]]),
      "the person stays in a.txt, no review window"
    )
    -- Accept the first hunk at the cursor, reject the second with a reason.
    child:input("3G\\a")
    child:input("5G\\r")
    child:wait_for("the question why", [[return vim.fn.mode() == "c"]])
    child:input("keep line 5 as it is<CR>")
    local after_edit = claude:wait_request(3)
    local result = last_tool_results(after_edit)
    H.truthy(result:find("user modified your proposed changes", 1, true), result)
    local on_disk = numbered(12, { [3] = "LINE 3" })
    H.wait_for("Claude Code to write a.txt", function()
      return H.read_file(a_path) == text_of(on_disk)
    end)
    wait_synced(child, a_path)
    local state = buffer_state(child, a_path)
    H.eq(numbered(12, { [3] = "LINE 3", [10] = "Line 10, typed by the person" }), state.lines)
    H.eq(true, state.modified, "the person's own change is still unsaved")
    vim.wait(500)
    H.eq({}, pending(child), "no second review")
  end
)

H.test("the selection and :VerbatimMention reach Claude Code", function()
  local root = H.workspace({ ["m.txt"] = "alpha\nbeta\ngamma\ndelta\n" })
  local path = root .. "/m.txt"
  local editor = start_editor(path)
  local child = editor.child
  local claude = Claude.start({
    cwd = root,
    args = { "--ide" },
    script = { { text = "I see them." } },
  })
  table.insert(claudes, claude)
  wait_connected(child)
  -- The person sends lines 2 and 3 into Claude Code's prompt. Claude Code
  -- drops IDE notifications that come before it listens for them, a moment
  -- after it connects (seen: up to about 3 s): until the mention shows, the
  -- person tries again.
  local shown = false
  for _ = 1, 8 do
    child:input(":2,3VerbatimMention<CR>")
    shown = vim.wait(1500, function()
      return claude:screen():find("@m.txt#L2-3", 1, true) ~= nil
    end, 100)
    if shown then
      break
    end
  end
  H.truthy(shown, "the mention in Claude Code's prompt:\n" .. claude:screen())
  child:wait_for(
    "the notice that it was sent",
    [[
    for _, note in ipairs(_G.notes) do
      if note.msg:find("m.txt#L2-3 to Claude Code", 1, true) then
        return true
      end
    end
  ]]
  )
  -- Then selects them: Claude Code is told with the next prompt.
  child:input("2GVj")
  vim.wait(300) -- the plugin's debounce (100 ms), then the server's (50 ms)
  claude:send_text("what do these lines do?")
  local request = claude:wait_request(1)
  local body = vim.json.encode(request.body.messages)
  H.truthy(body:find("selected the lines 2 to 3", 1, true), "the selection: " .. body)
  H.truthy(body:find("beta", 1, true), "the selected text: " .. body)
  H.truthy(body:find("m.txt#L2-3", 1, true), "the mention: " .. body)
  claude:wait_for("I see them")
  claude:stop()
  child:stop()
end)

H.test("Write into a directory that does not exist yet: created, and the buffer synced", function()
  local root = H.workspace({ ["a.txt"] = "a\n" })
  local path = root .. "/src/new/c.txt"
  local editor = start_editor(root .. "/a.txt")
  local child = editor.child
  local claude = Claude.start({
    cwd = root,
    args = { "--ide" },
    script = {
      { tool_use = { name = "Write", input = { file_path = path, content = "fresh\n" } } },
      { expect = "created successfully", text = "I wrote src/new/c.txt." },
    },
  })
  table.insert(claudes, claude)
  wait_connected(child)
  claude:send_text("create src/new/c.txt")
  wait_pending(child, 1)
  child:input(":Verbatim review<CR>")
  child:wait_for("the review window, entered", [[return vim.bo.filetype == "diff"]])
  child:input("a")
  claude:wait_for("I wrote src/new/c.txt")
  H.eq("fresh\n", H.read_file(path))
  -- The server watched a directory that was not there when the buffer
  -- opened: it must see Claude Code's write all the same.
  wait_synced(child, path)
  H.eq(false, buffer_state(child, path).modified, "the buffer holds what is on disk")
  claude:stop()
  child:stop()
end)

--- Timings of Claude Code Edits of a file of `count` lines, open in Neovim,
--- in milliseconds, one entry per edit:
--- - `review`: openDiff received by the server (its debug log line) → the
---   review window open in Neovim (the plugin's VerbatimPending event, which
---   follows the window's opening), split into `server` (→ the server's
---   "sending workspace/applyEdit" line) and `editor` (the rest);
--- - `answer`: the person's accept key (just before it is typed) → the
---   server's "openDiff: accepted" line, logged as it answers Claude Code.
--- Both sides read the same wall clock.
---@param count integer
---@param edits integer how many Edits to time
---@return table<string, number[]>
local function time_edits(count, edits)
  local name = "big" .. count .. ".txt"
  local root = H.workspace({ [name] = text_of(numbered(count)) })
  local path = root .. "/" .. name
  local editor = start_editor(path)
  local child = editor.child
  local script = { { tool_use = { name = "Read", input = { file_path = path } } } }
  local changed = {}
  for k = 1, edits do
    local row = math.floor(count / 2) + k
    changed[row] = "LINE " .. row
    table.insert(script, {
      tool_use = {
        name = "Edit",
        input = {
          file_path = path,
          old_string = "line " .. row .. "\n",
          new_string = changed[row] .. "\n",
        },
      },
    })
  end
  table.insert(script, { text = "timed" })
  local claude = Claude.start({ cwd = root, args = { "--ide" }, script = script })
  table.insert(claudes, claude)
  wait_connected(child)
  claude:send_text("edit " .. name)
  local keys = {}
  for k = 1, edits do
    -- Claude Code reads and diffs the whole file before its openDiff: seconds at
    -- 10,000 lines on a busy machine. What is timed starts at the openDiff.
    local ok, err = pcall(wait_pending, child, 1, 60000)
    if not ok then
      -- What each side was doing, for the post-mortem.
      local log = H.read_file(editor.log) or ""
      error(
        string.format(
          "edit %d of %d at %d lines: %s\nmodel requests so far: %d\nClaude Code's screen:\n%s\nthe server log's end:\n%s",
          k,
          edits,
          count,
          tostring(err),
          #claude:requests(),
          claude:screen(),
          log:sub(-3000)
        )
      )
    end
    child:input(":Verbatim review<CR>")
    child:wait_for("the review window, entered", [[return vim.bo.filetype == "diff"]])
    keys[k] = now()
    child:input("a")
    claude:wait_request(k + 2)
    wait_synced(child, path)
    child:wait_for(
      "the buffer to be unmodified",
      "return not vim.bo[vim.fn.bufnr(...)].modified",
      path
    )
  end
  claude:wait_for("timed")
  H.eq(text_of(numbered(count, changed)), H.read_file(path))
  local received = log_times(editor.log, "IDE tool call tool=openDiff")
  local sent = log_times(editor.log, "sending workspace/applyEdit: Claude Code")
  local answered = log_times(editor.log, "openDiff: accepted")
  H.eq(edits, #received, "openDiff calls in the server's log")
  H.eq(edits, #answered, "accepted answers in the server's log")
  -- An edit sent while the plugin reloads the buffer from Claude Code's write of the
  -- one before is refused for its version and sent again (the same text, a new
  -- version): the review shown is the last one sent before it.
  H.truthy(#sent >= edits, "reviews sent to Neovim in the server's log: " .. #sent)
  if #sent > edits then
    H.note(string.format("%d lines: %d review(s) sent again", count, #sent - edits))
  end
  local shown_by_key = child:lua("return _G.pending_times")
  local order = vim.tbl_keys(shown_by_key)
  table.sort(order)
  H.eq(edits, #order, "reviews shown in Neovim")
  local times = { review = {}, server = {}, editor = {}, answer = {} }
  for k = 1, edits do
    local shown = shown_by_key[order[k]]
    local sent_k
    for _, t in ipairs(sent) do
      if t >= received[k] and t <= shown then
        sent_k = t
      end
    end
    assert(sent_k, "no review sent between openDiff " .. k .. " and its review on screen")
    times.review[k] = (shown - received[k]) * 1000
    times.server[k] = (sent_k - received[k]) * 1000
    times.editor[k] = (shown - sent_k) * 1000
    times.answer[k] = (answered[k] - keys[k]) * 1000
  end
  claude:stop()
  child:stop()
  return times
end

---@param values number[]
---@return string
local function summary(values)
  local sorted = vim.list_slice(values)
  table.sort(sorted)
  local parts = {}
  for _, v in ipairs(values) do
    table.insert(parts, string.format("%.1f", v))
  end
  return string.format(
    "median %.1f ms (%s)",
    sorted[math.ceil(#sorted / 2)],
    table.concat(parts, ", ")
  )
end

H.test(
  "timings: openDiff → review on screen, accept key → answer, at 1,000 and 10,000 lines",
  function()
    for _, count in ipairs({ 1000, 10000 }) do
      local times = time_edits(count, 5)
      H.note(
        string.format(
          "%d lines: openDiff received → review on screen: %s",
          count,
          summary(times.review)
        )
      )
      H.note(
        string.format(
          "%d lines:   of which the server (→ workspace/applyEdit sent): %s",
          count,
          summary(times.server)
        )
      )
      H.note(
        string.format(
          "%d lines:   of which Neovim (→ review window open): %s",
          count,
          summary(times.editor)
        )
      )
      H.note(
        string.format("%d lines: accept key → FILE_SAVED sent: %s", count, summary(times.answer))
      )
    end
  end
)

H.test("Claude Code started in Neovim's own :terminal connects with no --ide", function()
  local root = H.workspace({ ["a.txt"] = "one\ntwo\nthree\n" })
  local a_path = root .. "/a.txt"
  local sock = H.tmpdir() .. "/tui.sock"
  local command = table.concat({
    vim.fn.shellescape(vim.v.progpath),
    "-i NONE -u",
    vim.fn.shellescape(tests_dir .. "/minimal_init.lua"),
    "--listen",
    vim.fn.shellescape(sock),
    "-c",
    vim.fn.shellescape(
      string.format("lua require('verbatim').setup({ cmd = { %q, 'lsp' } })", vim.env.VERBATIM_BIN)
    ),
    vim.fn.shellescape(a_path),
  }, " ")
  local tui = Claude.start({
    cwd = root,
    home = vim.env.HOME,
    command = command,
    script = {
      { tool_use = { name = "Read", input = { file_path = a_path } } },
      {
        tool_use = {
          name = "Edit",
          input = { file_path = a_path, old_string = "two\n", new_string = "TWO\n" },
        },
      },
      { expect = "updated", text = "Changed line two." },
    },
  })
  table.insert(claudes, tui)
  H.wait_for("Neovim's socket", function()
    return vim.uv.fs_stat(sock) ~= nil
  end)
  local chan = vim.fn.sockconnect("pipe", sock, { rpc = true })
  local nvim = setmetatable({ chan = chan }, { __index = Child })
  local port = nvim:wait_for(
    "the server's Claude Code port",
    [[
    local c = vim.lsp.get_clients({ bufnr = 0, name = "verbatim" })[1]
    return c and c.initialized and require("verbatim.claude_code").ports[c.id]
  ]]
  )
  H.eq(tostring(port), nvim:lua("return vim.env.CLAUDE_CODE_SSE_PORT"))

  -- The person starts claude in a terminal window, without --ide.
  tui:send_text(":botright 30split | terminal claude")
  tui:send_keys("i")
  tui:wait_for("(?m)^─{20,}\\n❯\\s", 40)
  wait_connected(nvim)
  -- Typing to it in Terminal mode: its Edit arrives as a message, and the
  -- person stays where they are until they choose to review.
  tui:send_text("edit a.txt")
  nvim:wait_for("the review", "return #require('verbatim').pending() == 1")
  H.eq("t", vim.rpcrequest(chan, "nvim_get_mode").mode, "still in Terminal mode")
  H.eq("terminal", nvim:lua("return vim.bo.buftype"), "the cursor stays in the terminal")
  -- A float at the top right says so, and stays while Claude Code redraws.
  tui:wait_for("<C-\\\\><C-n>:Verbatim review")
  vim.wait(1000)
  tui:wait_for("<C-\\\\><C-n>:Verbatim review")
  tui:send_keys("C-\\", "C-n")
  tui:send_text(":Verbatim review")
  nvim:wait_for("the review window, entered", [[return vim.bo.filetype == "diff"]])
  tui:send_keys("a")
  H.wait_for("Claude Code to write a.txt", function()
    return H.read_file(a_path) == "one\nTWO\nthree\n"
  end)
  nvim:wait_for(
    "the buffer to hold what is on disk, unmodified",
    [[
    local buf = vim.fn.bufnr(...)
    return not vim.bo[buf].modified and vim.api.nvim_buf_get_lines(buf, 1, 2, true)[1] == "TWO"
  ]],
    a_path
  )
  tui:wait_for("Changed line two")
  pcall(vim.fn.chanclose, chan)
  tui:stop()
end)
