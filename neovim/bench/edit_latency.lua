-- Usage: nvim -l neovim/bench/edit_latency.lua [--bin target/release/verbatim] [--plugin neovim] [--sizes 100,10000,100000] [--edits 50] [--modes auto,review] [--timeout 60] [--each 1]
--
-- Latency of agent edits in a real Neovim with the Verbatim plugin. For each
-- mode and file size it starts `nvim --headless --listen SOCK` (isolated XDG
-- directories, the plugin from --plugin and nothing else), drives it over its
-- RPC socket, opens a file of that many lines, and acts as an agent on the
-- server's agent socket: `verbatim/strReplace` of one line, `--edits` times,
-- spread over the file (after one warm-up edit that is not counted).
--
--   auto    review = "auto": the agent's round trip, from sending the request
--           to reading its answer (applied, buffer changed, server synced).
--   review  review = "confirm": from sending the request until the review
--           window shows the edit (the plugin's User VerbatimPending event,
--           timed in the editor with the same monotonic clock); then the
--           driver accepts over RPC and waits for the agent's answer.
--
-- Prints one line per run (with --each 1, every edit's time too) and a
-- Markdown table of medians and 90th percentiles. An edit that takes longer than --timeout seconds ends its run
-- (the old plugin needed more than 20 s per edit at 10,000 lines).

local uv = vim.uv

local script_dir = vim.fs.dirname(vim.fs.normalize(debug.getinfo(1, "S").source:sub(2)))
local repo = vim.fs.dirname(vim.fs.dirname(script_dir))

local opts = {
  bin = repo .. "/target/release/verbatim",
  plugin = repo .. "/neovim",
  sizes = "100,10000,100000",
  edits = "50",
  modes = "auto,review",
  timeout = "60",
  each = "0",
  nvim = vim.v.progpath,
}
local argv = _G.arg or {}
local i = 1
while i <= #argv do
  local key = argv[i]:match("^%-%-(.+)$")
  if not key or opts[key] == nil or argv[i + 1] == nil then
    io.stderr:write("unknown or incomplete argument: " .. argv[i] .. "\n")
    os.exit(2)
  end
  opts[key] = argv[i + 1]
  i = i + 2
end
opts.bin = vim.fn.fnamemodify(opts.bin, ":p")
opts.plugin = vim.fn.fnamemodify(opts.plugin, ":p"):gsub("/$", "")
local edit_count = assert(tonumber(opts.edits))
local timeout_ms = assert(tonumber(opts.timeout)) * 1000

---@param fmt string
local function say(fmt, ...)
  io.stdout:write(string.format(fmt, ...) .. "\n")
  io.stdout:flush()
end

---@param ns integer
---@return number
local function ms(ns)
  return ns / 1e6
end

-- The agent of the plugin's tests: it notes when each response arrives, in
-- its read callback, so the driver's wait loop adds nothing to the times.
package.path = table.concat({
  repo .. "/neovim/tests/?.lua",
  repo .. "/neovim/tests/?/init.lua",
  package.path,
}, ";")
local Agent = require("helpers.agent")

--- The editor's init file: the plugin and nothing else, and a timestamp of
--- the moment the review window shows a pending edit.
---@param mode "auto"|"review"
---@return string
local function init_lua(mode)
  return table.concat({
    "vim.opt.runtimepath:prepend(" .. vim.inspect(opts.plugin) .. ")",
    "vim.opt.swapfile = false",
    "vim.opt.shadafile = 'NONE'",
    "vim.opt.more = false",
    "vim.notify = function() end",
    "require('verbatim').setup({ cmd = { "
      .. vim.inspect(opts.bin)
      .. ", 'lsp' }, review = "
      .. (mode == "auto" and "'auto'" or "'confirm'")
      .. " })",
    "vim.api.nvim_create_autocmd('User', { pattern = 'VerbatimPending', callback = function()",
    "  for _, win in ipairs(vim.api.nvim_list_wins()) do",
    "    local buf = vim.api.nvim_win_get_buf(win)",
    "    if vim.api.nvim_buf_get_name(buf) == 'verbatim://review' and #require('verbatim').pending() > 0 then",
    "      _G.bench_shown = _G.bench_shown or vim.uv.hrtime()",
    "    end",
    "  end",
    "end })",
  }, "\n")
end

---@param values number[]
---@param p number 0..1
---@return number
local function percentile(values, p)
  local sorted = vim.list_slice(values)
  table.sort(sorted)
  return sorted[math.max(1, math.ceil(p * #sorted))]
end

---@param n integer
---@return string
local function line_text(n)
  return string.format("line %06d: local value = compute(alpha, beta, gamma) -- a typical line", n)
end

--- One run: a fresh editor, a file of `size` lines, `edit_count` edits.
---@param mode "auto"|"review"
---@param size integer
---@return number[]|nil latencies in ms, nil when the run could not finish
---@return string|nil why it stopped early
local function run(mode, size)
  local dir = vim.fn.tempname()
  local root = dir .. "/ws"
  vim.fn.mkdir(root .. "/.git", "p")
  local lines = {}
  for n = 1, size do
    lines[n] = line_text(n)
  end
  local path = root .. "/bench.txt"
  vim.fn.writefile(lines, path)
  local init = dir .. "/init.lua"
  vim.fn.writefile(vim.split(init_lua(mode), "\n"), init)
  local env = { VIMINIT = "", NVIM = "" }
  for _, name in ipairs({ "CONFIG", "DATA", "STATE", "CACHE" }) do
    local sub = dir .. "/" .. name:lower()
    vim.fn.mkdir(sub, "p")
    env["XDG_" .. name .. "_HOME"] = sub
  end
  env.VERBATIM_RUNTIME_DIR = dir .. "/rt"
  vim.fn.mkdir(env.VERBATIM_RUNTIME_DIR, "p", tonumber("700", 8))
  local sock = dir .. "/nvim.sock"
  local editor = vim.system(
    { opts.nvim, "--headless", "-i", "NONE", "-n", "-u", init, "--listen", sock },
    { env = env, cwd = root, stdin = false }
  )
  local agent ---@type verbatim.test.Agent|nil
  local channel = 0
  local function finish()
    if agent then
      agent:close()
    end
    if channel > 0 then
      pcall(vim.rpcnotify, channel, "nvim_command", "qall!")
      pcall(vim.fn.chanclose, channel)
    end
    if not editor:wait(3000).code then
      editor:kill("sigkill")
    end
    vim.fn.delete(dir, "rf")
  end
  local ok, result, why = xpcall(function()
    assert(
      vim.wait(10000, function()
        return uv.fs_stat(sock) ~= nil
      end, 5),
      "the editor did not listen on " .. sock
    )
    channel = vim.fn.sockconnect("pipe", sock, { rpc = true })
    local function exec(code, ...)
      return vim.rpcrequest(channel, "nvim_exec_lua", code, { ... })
    end
    exec("vim.cmd.edit(...)", path)
    assert(
      vim.wait(15000, function()
        return exec([[
        local c = vim.lsp.get_clients({ bufnr = 0, name = 'verbatim' })[1]
        return c ~= nil and c.initialized == true]])
      end, 10),
      "the Verbatim client did not attach"
    )
    local socket = exec([[
      local c = vim.lsp.get_clients({ bufnr = 0, name = 'verbatim' })[1]
      return c:request_sync('verbatim/status', nil, 5000).result.socket]])
    agent = Agent.connect(socket)
    agent:initialize("bench", "utf-16")
    local uri = vim.uri_from_fname(path)
    local read = agent:call("verbatim/read", { uri = uri }, 10000)
    assert(read.result and read.result.source == "editor", "the server does not see the buffer")

    local latencies = {}
    for k = 0, edit_count do -- edit 0 warms up and is not counted
      local n = math.floor((k + 0.5) * size / (edit_count + 1)) + 1
      local old = string.format("line %06d:", n)
      exec("_G.bench_shown = nil")
      local sent = uv.hrtime()
      local id = agent:request("verbatim/strReplace", {
        uri = uri,
        oldStr = old,
        newStr = old:upper(),
        summary = "Bench edit " .. k,
      })
      local elapsed
      if mode == "review" then
        local shown
        if
          not vim.wait(timeout_ms, function()
            shown = exec("return _G.bench_shown")
            return shown ~= nil and shown ~= vim.NIL
          end, 1)
        then
          return nil, string.format("edit %d: no review after %d s", k, timeout_ms / 1000)
        end
        elapsed = ms(shown - sent)
        exec("require('verbatim').accept()")
      end
      local answered, response = pcall(agent.wait, agent, id, timeout_ms)
      if not answered then
        return nil, string.format("edit %d: no answer after %d s", k, timeout_ms / 1000)
      end
      if not (response.result and response.result.applied) then
        return nil,
          string.format(
            "edit %d not applied: %s",
            k,
            vim.inspect(response.error or response.result)
          )
      end
      elapsed = elapsed or ms(agent.arrived[id] - sent)
      if k > 0 then
        table.insert(latencies, elapsed)
      end
    end
    local expected = exec("return vim.api.nvim_buf_line_count(0)")
    assert(expected == size, "the buffer has " .. tostring(expected) .. " lines")
    return latencies
  end, debug.traceback)
  finish()
  if not ok then
    return nil, tostring(result)
  end
  return result, why
end

say(
  "# %s, server %s, plugin %s",
  vim.version and tostring(vim.version()) or "",
  opts.bin,
  opts.plugin
)
local rows = {}
for _, mode in ipairs(vim.split(opts.modes, ",")) do
  for _, size_text in ipairs(vim.split(opts.sizes, ",")) do
    local size = assert(tonumber(size_text))
    local started = uv.hrtime()
    local latencies, why = run(mode, size)
    local row = { mode = mode, size = size }
    if latencies and #latencies > 0 then
      row.median = percentile(latencies, 0.5)
      row.p90 = percentile(latencies, 0.9)
      row.max = percentile(latencies, 1)
      say(
        "%-6s %7d lines: median %8.2f ms  p90 %8.2f ms  max %8.2f ms  (%d edits, %.1f s)",
        mode,
        size,
        row.median,
        row.p90,
        row.max,
        #latencies,
        ms(uv.hrtime() - started) / 1000
      )
    else
      row.failed = why or "no edits"
      say("%-6s %7d lines: did not finish: %s", mode, size, row.failed)
    end
    if latencies and opts.each == "1" then
      say(
        "  each (ms): %s",
        table.concat(
          vim.tbl_map(function(v)
            return string.format("%.1f", v)
          end, latencies),
          " "
        )
      )
    end
    table.insert(rows, row)
  end
end

say("")
say("| mode | lines | median | p90 |")
say("|---|---:|---:|---:|")
for _, row in ipairs(rows) do
  local what = row.mode == "auto" and "auto: agent round trip" or "review: until the review shows"
  if row.failed then
    say("| %s | %d | did not finish (%s) | |", what, row.size, row.failed:gsub("\n.*", ""))
  else
    say("| %s | %d | %.1f ms | %.1f ms |", what, row.size, row.median, row.p90)
  end
end
