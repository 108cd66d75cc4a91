-- Usage: nvim -l neovim/bench/edit_latency.lua [--bin target/release/verbatim] [--plugin neovim] [--sizes 100,10000,100000] [--edits 50] [--modes auto,review,inline] [--timeout 60] [--each 1]
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
--   inline  review_ui = "inline": from sending the request until the marks
--           of the inline review are drawn in the buffer (the plugin's User
--           VerbatimInline event); then, as "inline accept", from accepting
--           the hunk at its line (the driver's RPC call) to the agent's answer.
--
-- Prints one line per run (with --each 1, every edit's time too) and a
-- Markdown table of medians and 90th percentiles. An edit that takes longer than --timeout seconds ends its run
-- (the old plugin needed more than 20 s per edit at 10,000 lines).

local uv = vim.uv

local script_dir = vim.fs.dirname(vim.fs.normalize(debug.getinfo(1, "S").source:sub(2)))
package.path = script_dir .. "/?.lua;" .. package.path
local harness = require("harness")
local repo = harness.repo
local say, ms, percentile = harness.say, harness.ms, harness.percentile

local opts = harness.parse_args({
  bin = repo .. "/target/release/verbatim",
  plugin = repo .. "/neovim",
  sizes = "100,10000,100000",
  edits = "50",
  modes = "auto,review",
  timeout = "60",
  each = "0",
  nvim = vim.v.progpath,
})
opts.bin = vim.fn.fnamemodify(opts.bin, ":p")
opts.plugin = vim.fn.fnamemodify(opts.plugin, ":p"):gsub("/$", "")
local edit_count = assert(tonumber(opts.edits))
local timeout_ms = assert(tonumber(opts.timeout)) * 1000

--- The editor's init file: the plugin and nothing else, and a timestamp of
--- the moment the review window shows a pending edit.
---@param mode "auto"|"review"|"inline"
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
      .. (mode == "inline" and ", review_ui = 'inline'" or "")
      .. " })",
    "vim.api.nvim_create_autocmd('User', { pattern = 'VerbatimInline', callback = function()",
    "  if #require('verbatim').pending() > 0 then _G.bench_shown = _G.bench_shown or vim.uv.hrtime() end",
    "end })",
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

---@param n integer
---@return string
local function line_text(n)
  return string.format("line %06d: local value = compute(alpha, beta, gamma) -- a typical line", n)
end

--- One run: a fresh editor, a file of `size` lines, `edit_count` edits.
---@param mode "auto"|"review"|"inline"
---@param size integer
---@return number[]|nil latencies in ms, nil when the run could not finish
---@return string|nil why it stopped early
---@return number[]|nil accepts (inline) from accepting the hunk to the agent's answer, in ms
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
  local editor = harness.start_editor(opts.nvim, dir, root, init_lua(mode))
  local ok, result, why, accepts = xpcall(function()
    editor:connect()
    local function exec(code, ...)
      return editor:exec(code, ...)
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
    local agent, uri = editor:connect_agent(path)

    local latencies, accepts = {}, {}
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
      local elapsed, accept_sent
      if mode == "review" or mode == "inline" then
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
        if mode == "inline" then
          accept_sent = uv.hrtime()
          exec(
            "local row = ... require('verbatim.inline').decide(vim.api.nvim_get_current_buf(), row, row, true)",
            n - 1
          )
        else
          exec("require('verbatim').accept()")
        end
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
        if accept_sent then
          table.insert(accepts, ms(agent.arrived[id] - accept_sent))
        end
      end
    end
    local expected = exec("return vim.api.nvim_buf_line_count(0)")
    assert(expected == size, "the buffer has " .. tostring(expected) .. " lines")
    return latencies, nil, accepts
  end, debug.traceback)
  editor:finish()
  if not ok then
    return nil, tostring(result)
  end
  return result, why, accepts
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
    local latencies, why, accepts = run(mode, size)
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
    if accepts and #accepts > 0 then
      local accept_row = {
        mode = "inline accept",
        size = size,
        median = percentile(accepts, 0.5),
        p90 = percentile(accepts, 0.9),
      }
      say(
        "%-6s %7d lines: median %8.2f ms  p90 %8.2f ms  (accept one hunk -> the agent's answer)",
        "accept",
        size,
        accept_row.median,
        accept_row.p90
      )
      table.insert(rows, accept_row)
    end
  end
end

say("")
say("| mode | lines | median | p90 |")
say("|---|---:|---:|---:|")
for _, row in ipairs(rows) do
  local what = ({
    auto = "auto: agent round trip",
    review = "review: until the review shows",
    inline = "inline: until the marks are drawn",
    ["inline accept"] = "inline: accept one hunk -> agent's answer",
  })[row.mode] or row.mode
  if row.failed then
    say("| %s | %d | did not finish (%s) | |", what, row.size, row.failed:gsub("\n.*", ""))
  else
    say("| %s | %d | %.1f ms | %.1f ms |", what, row.size, row.median, row.p90)
  end
end
