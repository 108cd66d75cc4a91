-- A small test harness for real headless Neovim: test(name, fn) registers a
-- case, run(file) runs every case of a file in order and exits non-zero when
-- one fails. Helpers for workspaces, buffers and the Verbatim client.
local api = vim.api

local H = {}

local cases = {} ---@type { name: string, fn: fun() }[]
local exit_hooks = {} ---@type fun()[]

---@param name string
---@param fn fun()
function H.test(name, fn)
  table.insert(cases, { name = name, fn = fn })
end

--- Runs `fn` once the file's tests are done, whatever their outcome.
---@param fn fun()
function H.on_exit(fn)
  table.insert(exit_hooks, fn)
end

---@param msg string
local function out(msg)
  io.stdout:write(msg .. "\n")
  io.stdout:flush()
end

--- Runs a test file and exits Neovim with the result.
---@param file string
function H.run(file)
  -- Messages for the person go to the test log as comments.
  vim.notify = function(msg, level)
    out(
      string.format("#   notify(%s): %s", tostring(level or ""), tostring(msg):gsub("\n", "\n#   "))
    )
  end
  local ok, err = xpcall(dofile, debug.traceback, file)
  if not ok then
    out("not ok - loading " .. file .. "\n" .. err)
    vim.cmd("cquit 1")
    return
  end
  local failed = 0
  -- VERBATIM_TEST_ONLY=text runs only the cases whose name holds it (and says so).
  local only = vim.env.VERBATIM_TEST_ONLY
  if only and only ~= "" then
    cases = vim.tbl_filter(function(case)
      if case.name:find(only, 1, true) then
        return true
      end
      out("# not run (VERBATIM_TEST_ONLY): " .. case.name)
      return false
    end, cases)
  end
  for i, case in ipairs(cases) do
    local started = vim.uv.hrtime()
    local passed, case_err = xpcall(case.fn, debug.traceback)
    local ms = math.floor((vim.uv.hrtime() - started) / 1e6)
    if passed then
      out(string.format("ok %d - %s (%d ms)", i, case.name, ms))
    else
      failed = failed + 1
      out(string.format("not ok %d - %s (%d ms)\n%s", i, case.name, ms, tostring(case_err)))
    end
  end
  out(
    string.format(
      "# %s: %d passed, %d failed",
      vim.fn.fnamemodify(file, ":t"),
      #cases - failed,
      failed
    )
  )
  for _, hook in ipairs(exit_hooks) do
    local hook_ok, hook_err = pcall(hook)
    if not hook_ok then
      out("# cleaning up failed: " .. tostring(hook_err))
    end
  end
  for _, agent in ipairs(H.agents) do
    agent:close()
  end
  if package.loaded["helpers.child"] then
    require("helpers.child").stop_all()
  end
  if failed > 0 then
    vim.cmd("cquit 1")
  else
    vim.cmd("qall!")
  end
end

--- Compares with vim.deep_equal and shows both sides on failure.
---@param expected any
---@param actual any
---@param what? string
function H.eq(expected, actual, what)
  if not vim.deep_equal(expected, actual) then
    error(
      string.format(
        "%s\nexpected: %s\n  actual: %s",
        what or "values differ",
        vim.inspect(expected),
        vim.inspect(actual)
      ),
      2
    )
  end
end

---@param cond any
---@param what string
function H.truthy(cond, what)
  if not cond then
    error("expected true: " .. what, 2)
  end
end

--- Writes a comment line to the test log.
---@param msg string
function H.note(msg)
  out("# " .. msg)
end

--- How many times longer `large` takes than `small`, for complexity guards
--- that no slow machine fails: the ratio of the shortest times of `samples`
--- runs of each, taken in turns. On 20 times the input, linear work costs
--- about 20 times as much, quadratic 400 times.
---
--- The shortest time, not the median: noise only ever adds time, and on a
--- machine busy with other work (a test run beside a build) a run of 10 ms
--- is interrupted far more often than one of 0.1 ms, which skews even the
--- median of the longer one. The shortest run is the one nothing interrupted.
--- Each function may return its own measure of its time in nanoseconds
--- (when part of what it does should not count); otherwise it is timed.
---@param small fun(): number|nil
---@param large fun(): number|nil
---@param samples? integer default 9
---@return number ratio
---@return number small_ms shortest time of `small`
---@return number large_ms shortest time of `large`
function H.cost_ratio(small, large, samples)
  local times = { {}, {} }
  for _ = 1, samples or 9 do
    for k, fn in ipairs({ small, large }) do
      -- The garbage collector's steps cost in proportion to the whole heap,
      -- not to the work measured: keep them out.
      collectgarbage("collect")
      collectgarbage("stop")
      local started = vim.uv.hrtime()
      local measured = fn()
      table.insert(times[k], measured or (vim.uv.hrtime() - started))
      collectgarbage("restart")
    end
  end
  local small_ns, large_ns = math.min(unpack(times[1])), math.min(unpack(times[2]))
  return large_ns / math.max(small_ns, 1), small_ns / 1e6, large_ns / 1e6
end

--- Fails when `large` costs more than `limit` times `small` (see
--- H.cost_ratio) in three measurements in a row, and logs the ratio.
---@param what string
---@param limit number
---@param small fun(): number|nil
---@param large fun(): number|nil
---@param samples? integer
function H.assert_cost_ratio(what, limit, small, large, samples)
  -- A machine busy with other work can still spoil one whole measurement (fresh
  -- memory from the system, a stalled core): measure again, up to three times,
  -- before calling it a failure. A quadratic cost fails every time (400x for
  -- 20x the input), a linear one only when every round is spoiled.
  local ratio, small_ms, large_ms
  for _ = 1, 3 do
    ratio, small_ms, large_ms = H.cost_ratio(small, large, samples)
    if ratio <= limit then
      break
    end
  end
  H.note(
    string.format(
      "%s: %.3f ms vs %.3f ms, ratio %.1f (limit %d)",
      what,
      small_ms,
      large_ms,
      ratio,
      limit
    )
  )
  if ratio > limit then
    error(
      string.format(
        "%s: costs %.1f times as much (%.3f ms vs %.3f ms); the limit is %d",
        what,
        ratio,
        large_ms,
        small_ms,
        limit
      ),
      2
    )
  end
end

--- Waits until `fn` returns a truthy value, failing with `what` after `timeout` ms.
---@generic T
---@param what string
---@param fn fun(): T
---@param timeout? integer
---@return T
function H.wait_for(what, fn, timeout)
  local value
  local ok = vim.wait(timeout or 10000, function()
    value = fn()
    return value ~= nil and value ~= false
  end, 10)
  if not ok then
    error("timed out waiting for " .. what, 2)
  end
  return value
end

--- A scratch directory for this test run (run.sh sets VERBATIM_TEST_TMP).
---@return string
function H.tmpdir()
  local base = vim.env.VERBATIM_TEST_TMP or vim.fn.tempname()
  vim.fn.mkdir(base, "p")
  return base
end

local workspace_count = 0

--- Creates a workspace (a directory with a .git marker) holding `files`
--- (name -> exact bytes).
---@param files table<string, string>
---@return string root
function H.workspace(files)
  workspace_count = workspace_count + 1
  local root = vim.fs.normalize(H.tmpdir() .. "/ws" .. workspace_count)
  vim.fn.mkdir(root .. "/.git", "p")
  for name, content in pairs(files) do
    H.write_file(root .. "/" .. name, content)
  end
  return root
end

---@param path string
---@param content string
function H.write_file(path, content)
  vim.fn.mkdir(vim.fs.dirname(path), "p")
  local f = assert(io.open(path, "wb"))
  f:write(content)
  f:close()
end

---@param path string
---@return string|nil
function H.read_file(path)
  local f = io.open(path, "rb")
  if not f then
    return nil
  end
  local data = f:read("*a")
  f:close()
  return data
end

--- Edits a file and waits until the Verbatim client is attached and ready.
---@param path string
---@return integer bufnr
---@return vim.lsp.Client client
function H.edit(path)
  vim.cmd.edit(vim.fn.fnameescape(path))
  local bufnr = api.nvim_get_current_buf()
  local client = H.wait_for("the verbatim client to attach to " .. path, function()
    local c = vim.lsp.get_clients({ bufnr = bufnr, name = "verbatim" })[1]
    return c and c.initialized and c or nil
  end)
  return bufnr, client
end

--- The agent socket of a client's server.
---@param client vim.lsp.Client
---@return string
function H.socket(client)
  local response = assert(client:request_sync("verbatim/status", nil, 5000))
  assert(response.result, "verbatim/status failed: " .. vim.inspect(response.err))
  return response.result.socket
end

--- Every agent connected by H.agent(), closed when the file's tests end.
---@type verbatim.test.Agent[]
H.agents = {}

--- Connects an agent to a client's server and initializes it.
---@param client vim.lsp.Client
---@param name string
---@param encoding? string
---@return verbatim.test.Agent
function H.agent(client, name, encoding)
  local Agent = require("helpers.agent")
  local agent = Agent.connect(H.socket(client))
  agent:initialize(name, encoding or "utf-8")
  table.insert(H.agents, agent)
  return agent
end

---@class verbatim.test.Scenario
---@field root string the workspace
---@field path string the file open in Neovim
---@field uri string
---@field buf integer
---@field client vim.lsp.Client
---@field agent verbatim.test.Agent
---@field read table the agent's verbatim/read of the file
local Scenario = {}
Scenario.__index = Scenario

--- A workspace holding `files`, the file `open` edited in Neovim, and an
--- agent connected to its server that has read that file.
---@param files table<string, string>
---@param open string
---@param agent_name string
---@param encoding? string the agent's position encoding
---@return verbatim.test.Scenario
function H.scenario(files, open, agent_name, encoding)
  local root = H.workspace(files)
  local path = root .. "/" .. open
  local buf, client = H.edit(path)
  local agent = H.agent(client, agent_name, encoding)
  local uri = vim.uri_from_fname(path)
  return setmetatable({
    root = root,
    path = path,
    uri = uri,
    buf = buf,
    client = client,
    agent = agent,
    read = H.read_until(agent, uri),
  }, Scenario)
end

--- Sends verbatim/strReplace for the open file against the rev the agent
--- read; returns the request id.
---@param old_str string
---@param new_str string
---@param summary string
---@param extra? table more params
---@return integer
function Scenario:str_replace(old_str, new_str, summary, extra)
  return self.agent:request(
    "verbatim/strReplace",
    vim.tbl_extend("force", {
      uri = self.uri,
      oldStr = old_str,
      newStr = new_str,
      baseRev = self.read.rev,
      summary = summary,
    }, extra or {})
  )
end

--- Waits until `n` edits wait for review.
---@param n integer
---@return verbatim.PendingInfo[]
function H.wait_pending(n)
  return H.wait_for(n .. " pending edit(s)", function()
    local pending = require("verbatim").pending()
    return #pending == n and pending or nil
  end)
end

---@param bufnr integer
---@return string[]
function H.lines(bufnr)
  return api.nvim_buf_get_lines(bufnr, 0, -1, true)
end

--- The review window in the current tab page, if open.
---@return integer|nil win
---@return string[]|nil lines
function H.review_window()
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    local buf = api.nvim_win_get_buf(win)
    if api.nvim_buf_get_name(buf) == "verbatim://review" then
      return win, api.nvim_buf_get_lines(buf, 0, -1, true)
    end
  end
end

--- Reads a document through the agent, waiting until its text satisfies `pred`
--- (the server sees buffer changes a moment after they happen).
---@param agent verbatim.test.Agent
---@param uri string
---@param pred? fun(text: string): boolean
---@return table result of verbatim/read
function H.read_until(agent, uri, pred)
  return H.wait_for("the server to see the expected text of " .. uri, function()
    local response = agent:call("verbatim/read", { uri = uri })
    if response.result and (not pred or pred(response.result.text)) then
      return response.result
    end
  end)
end

--- An in-process language server, for `vim.lsp.start({ cmd = H.fake_server(...) })`:
--- it answers `initialize` with `capabilities` and every other request with
--- what `on_request` returns (null when it returns nothing), hands each
--- notification to `on_notify` (and each request to `on_request`), and
--- reports nothing by itself; `on_start` gets the dispatchers, through which
--- a test sends the client requests (and notifications) as the server.
---@param capabilities table
---@param on_notify? fun(method: string, params: any)
---@param on_request? fun(method: string, params: any): any
---@param on_start? fun(dispatchers: vim.lsp.rpc.Dispatchers)
---@return fun(dispatchers: vim.lsp.rpc.Dispatchers): vim.lsp.rpc.PublicClient
function H.fake_server(capabilities, on_notify, on_request, on_start)
  return function(dispatchers)
    local closing, next_id = false, 0
    if on_start then
      on_start(dispatchers)
    end
    return {
      request = function(method, params, callback)
        local answer = on_request and on_request(method, params)
        if answer == nil then
          answer = vim.NIL
        end
        next_id = next_id + 1
        callback(nil, method == "initialize" and { capabilities = capabilities } or answer)
        return true, next_id
      end,
      notify = function(method, params)
        if on_notify then
          on_notify(method, params)
        end
        if method == "exit" and not closing then
          closing = true
          dispatchers.on_exit(0, 15)
        end
        return true
      end,
      is_closing = function()
        return closing
      end,
      terminate = function()
        if not closing then
          closing = true
          dispatchers.on_exit(0, 15)
        end
      end,
    }
  end
end

--- Starts the plugin's own client (its handlers, options and callbacks) for
--- `bufnr` against an in-process fake server (H.fake_server) that announces
--- `port` for Claude Code, or nothing when `port` is nil. The server records
--- every notification and request it gets in `log.notifications` and
--- `log.requests` ({ method, params }), and answers a request with
--- `log.answers[method]` when there is one (else null).
---@param bufnr integer
---@param port integer|nil
---@param log { notifications: table[], requests: table[], answers?: table<string, any> }
---@return vim.lsp.Client client
---@return vim.lsp.rpc.Dispatchers dispatchers to send the client requests as the server
function H.fake_verbatim(bufnr, port, log)
  local capabilities = {
    textDocumentSync = { openClose = true, change = 2 },
    experimental = {
      verbatim = { protocolVersion = 1, claudeCode = port and { port = port } or nil },
    },
  }
  local dispatchers
  local config = require("verbatim.lsp").client_config(bufnr)
  config.cmd = H.fake_server(capabilities, function(method, params)
    table.insert(log.notifications, { method = method, params = params })
  end, function(method, params)
    table.insert(log.requests, { method = method, params = params })
    return log.answers and log.answers[method]
  end, function(d)
    dispatchers = d
  end)
  local id = assert(vim.lsp.start(config, { bufnr = bufnr }))
  local client = H.wait_for("the fake server to initialize", function()
    local c = vim.lsp.get_client_by_id(id)
    return c and c.initialized and c or nil
  end)
  return client, dispatchers
end

--- Writes a buffer with :w and proves Neovim asked nothing: an <Esc> is
--- typed ahead, which a "really write?" prompt would take as "no". It must
--- still be there afterwards, and the file must hold the buffer's text.
---@param bufnr integer
---@param path string
function H.write_without_prompt(bufnr, path)
  vim.cmd("messages clear")
  vim.v.errmsg = ""
  api.nvim_feedkeys("\27", "t", false)
  api.nvim_buf_call(bufnr, function()
    vim.cmd("write")
  end)
  H.eq(27, vim.fn.getchar(0), "the typed-ahead <Esc> was not consumed by a prompt")
  local messages = vim.fn.execute("messages")
  H.truthy(not messages:find("changed since reading", 1, true), "no prompt in: " .. messages)
  H.truthy(not messages:find("W12", 1, true), "no W12 in: " .. messages)
  H.eq("", vim.v.errmsg)
  H.eq(false, vim.bo[bufnr].modified)
  H.eq(table.concat(H.lines(bufnr), "\n") .. "\n", H.read_file(path))
end

return H
