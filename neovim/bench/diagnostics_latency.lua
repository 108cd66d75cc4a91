-- Usage: nvim -l neovim/bench/diagnostics_latency.lua [--bin target/release/verbatim]
--          [--plugin neovim] [--ruff .venv-test/bin/ruff] [--lines 2000] [--edits 40]
--          [--rounds 1] [--diag-timeout 2500] [--timeout 60] [--each 0]
--
-- What `diagnostics: true` adds to an agent's edit, in a real Neovim with a
-- real language server (`ruff server`, as neovim/tests/test_diagnostics.lua
-- starts it). For each mode it starts `nvim --headless --listen SOCK`
-- (isolated XDG directories, the plugin from --plugin, review = "auto", ruff
-- attached to Python buffers), opens a Python file of about --lines lines of
-- varied code with a few existing problems (unused imports, undefined names,
-- `== None`), waits until ruff has reported on it, and acts as an agent on
-- the server's agent socket: --edits `verbatim/strReplace` edits spread over
-- the file, alternately introducing an undefined name (F821: `transform_0007(`
-- becomes `transfrom_0007(`) and fixing it again on the next edit. One
-- warm-up pair of edits is not counted.
--
--   off  the edits without `diagnostics` (ruff attached all the same);
--   on   the same edits with `diagnostics: true` (and --diag-timeout as
--        `diagnosticsTimeoutMs`).
--
-- With --rounds R the two modes run R times each, in turns (off, on, off, on
-- ...), each run in a fresh editor; the figures pool all rounds.
--
-- Per edit it records the agent's round trip (from sending the request to
-- reading its answer, noted in the agent's read callback), and with
-- diagnostics on `result.diagnostics.waitedMs`, `status`, and whether
-- introduced/resolved hold the one F821 expected. It also notes, in the
-- editor, when ruff's diagnostics for the buffer first changed after the
-- edit's text change ("ruff first report"): the part of waitedMs that is
-- ruff's, the rest being the 300 ms quiet period and polling; also the
-- last such change before the answer, and how many there were.
--
-- Prints median and p99 (with this few edits, p99 is the slowest but at
-- most one) of the round trip off, on, their difference (of medians, and
-- edit by edit: edit k on minus edit k off), waitedMs, ruff's first report,
-- and the count of each status.
--
-- From a worktree without its own build, name the server:
--   nvim -l neovim/bench/diagnostics_latency.lua --bin /work/main/target/release/verbatim --rounds 3
-- Measured 2026-11-30 (Neovim 0.11.4, ruff 0.17.5, release server, 2 cores
-- under load 3-5, 2,009 lines, 40 edits x 3 rounds): round trip off median
-- 1.5 ms (p99 8.1), on 328.3 ms (p99 388.6); waitedMs median 324 (p99 366);
-- ruff's first report 7.8 ms after the change; 120 of 120 settled. The cost
-- is almost all the 300 ms quiet period, plus ruff's time and the handler's
-- 20 ms polling. At 10,000 lines: on 353.9 ms, ruff's report at 33.7 ms.

local uv = vim.uv

local script_dir = vim.fs.dirname(vim.fs.normalize(debug.getinfo(1, "S").source:sub(2)))
package.path = script_dir .. "/?.lua;" .. package.path
local harness = require("harness")
local repo = harness.repo
local say, ms, percentile = harness.say, harness.ms, harness.percentile

local opts = harness.parse_args({
  bin = repo .. "/target/release/verbatim",
  plugin = repo .. "/neovim",
  ruff = repo .. "/.venv-test/bin/ruff",
  lines = "2000",
  edits = "40",
  rounds = "1",
  ["diag-timeout"] = "2500",
  timeout = "60",
  each = "0",
  nvim = vim.v.progpath,
})
opts.bin = vim.fn.fnamemodify(opts.bin, ":p")
opts.ruff = vim.fn.fnamemodify(opts.ruff, ":p")
opts.plugin = vim.fn.fnamemodify(opts.plugin, ":p"):gsub("/$", "")
local edit_count = assert(tonumber(opts.edits))
assert(edit_count % 2 == 0, "--edits must be even: each site is broken, then fixed")
local target_lines = assert(tonumber(opts.lines))
local rounds = assert(tonumber(opts.rounds))
local diag_timeout = assert(tonumber(opts["diag-timeout"]))
local timeout_ms = assert(tonumber(opts.timeout)) * 1000

--- The editor's init file: the plugin, ruff on Python buffers, and a record
--- of when the buffer's text and ruff's diagnostics changed.
---@return string
local function init_lua()
  return table.concat({
    "vim.opt.runtimepath:prepend(" .. vim.inspect(opts.plugin) .. ")",
    "vim.opt.swapfile = false",
    "vim.opt.shadafile = 'NONE'",
    "vim.opt.more = false",
    "vim.notify = function() end",
    "require('verbatim').setup({ cmd = { "
      .. vim.inspect(opts.bin)
      .. ", 'lsp' }, review = 'auto' })",
    "vim.cmd('filetype on')",
    "_G.bench = { text = {}, diag = {} }",
    "vim.api.nvim_create_autocmd('FileType', { pattern = 'python', callback = function(args)",
    "  vim.lsp.start({ name = 'ruff', cmd = { "
      .. vim.inspect(opts.ruff)
      .. ", 'server' }, root_dir = vim.fs.root(args.buf, '.git') }, { bufnr = args.buf })",
    "  vim.api.nvim_buf_attach(args.buf, false, { on_lines = function()",
    "    table.insert(_G.bench.text, vim.uv.hrtime())",
    "  end })",
    "end })",
    "vim.api.nvim_create_autocmd('DiagnosticChanged', { pattern = '*.py', callback = function()",
    "  table.insert(_G.bench.diag, vim.uv.hrtime())",
    "end })",
  }, "\n")
end

--- A Python module of about `target` lines: varied functions, classes,
--- comprehensions, and a few problems ruff reports from the start. Returns
--- its lines and the number of edit sites (`total += transform_NNNN(item)`).
---@param target integer
---@return string[] lines
---@return integer sites
local function python_source(target)
  local out = {
    '"""Generated module for the Verbatim diagnostics benchmark."""',
    "",
    "from __future__ import annotations",
    "",
    "import json",
    "import os, sys",
    "import re",
    "from dataclasses import dataclass, field",
    "from typing import Iterable, Optional",
    "",
    "",
    "LIMIT = 100",
    "PATTERN = re.compile(r'^[a-z_]+$')",
    "",
    "",
  }
  local function add(block)
    vim.list_extend(out, vim.split(block, "\n"))
  end
  local n = 0
  while #out < target - 12 do
    n = n + 1
    local id = string.format("%04d", n)
    local kind = n % 4
    add(([[def process_ID(items: Iterable[int], limit: int = LIMIT) -> int:
    """Sum the transformed items of batch ID, up to `limit` of them."""
    total = 0
    for index, item in enumerate(items):
        if index > limit:
            break
        total += transform_ID(item)
    return total


def transform_ID(value: int) -> int:
    return value * 2 + MOD
]]):gsub("ID", id):gsub("MOD", tostring(n % 7)))
    if kind == 0 then
      add(([[

@dataclass
class Record_ID:
    name: str
    tags: list[str] = field(default_factory=list)
    parent: Optional[Record_ID] = None

    def describe(self) -> str:
        if self.parent == None:
            return f"{self.name} (root)"
        return f"{self.name} < {self.parent.name}"

    def matches(self, query: str) -> bool:
        return bool(PATTERN.match(query)) and query in self.tags
]]):gsub("ID", id))
    elseif kind == 1 then
      add(([[

def load_ID(path: str) -> dict:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    keys = sorted(k for k in data if not k.startswith("_"))
    return {key: data[key] for key in keys}
]]):gsub("ID", id))
    elseif kind == 2 then
      add(([[

class Counter_ID:
    def __init__(self, start: int = 0) -> None:
        self.value = start
        self.history: list[int] = []

    def bump(self, by: int = 1) -> int:
        self.history.append(self.value)
        self.value += by
        return self.value

    def reset(self) -> None:
        self.history.clear()
        self.value = 0
]]):gsub("ID", id))
    else
      add(([[

def summarize_ID(words: list[str]) -> str:
    lengths = [len(w) for w in words if w]
    longest = max(lengths, default=0)
    unused = longest * 2
    return ", ".join(w.upper() for w in words if len(w) == longest)
]]):gsub("ID", id))
    end
    if n % 40 == 13 then
      add("\n\ndef broken_" .. id .. "():\n    return missing_helper_" .. id .. "(1)\n")
    end
    add("\n")
  end
  add([[

def main() -> int:
    print(process_0001(range(10)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())]])
  return out, n
end

---@param mode "off"|"on"
---@param plan { site: integer, breaks: boolean }[]
---@return table[]|nil per edit: { rt, waited, status, expected, ruff_first }
---@return string|nil why it stopped early
---@return table|nil info about the file
local function run(mode, plan)
  local dir = vim.fn.tempname()
  local root = dir .. "/ws"
  vim.fn.mkdir(root .. "/.git", "p")
  local lines, sites = python_source(target_lines)
  local path = root .. "/bench.py"
  vim.fn.writefile(lines, path)
  local editor = harness.start_editor(opts.nvim, dir, root, init_lua())
  local info = { lines = #lines, sites = sites }
  local ok, result, why = xpcall(function()
    editor:connect()
    local function exec(code, ...)
      return editor:exec(code, ...)
    end
    exec("vim.cmd.edit(...)", path)
    assert(
      vim.wait(20000, function()
        return exec(
          [[
        local v = vim.lsp.get_clients({ bufnr = 0, name = 'verbatim' })[1]
        local r = vim.lsp.get_clients({ bufnr = 0, name = 'ruff' })[1]
        return v ~= nil and v.initialized == true and r ~= nil and r.initialized == true
          and require('verbatim.diagnostics').changes[vim.api.nvim_get_current_buf()] ~= nil]]
        )
      end, 10),
      "Verbatim and ruff did not both attach and report"
    )
    info.existing = exec([[
      local by = {}
      for _, d in ipairs(vim.diagnostic.get(0)) do
        local key = (d.severity == 1 and 'error ' or 'warning ') .. tostring(d.code)
        by[key] = (by[key] or 0) + 1
      end
      return by]])
    local agent, uri = editor:connect_agent(path)

    local records = {}
    for k, step in ipairs(plan) do
      local id_text = string.format("%04d", step.site)
      local good = "total += transform_" .. id_text .. "(item)"
      local bad = "total += transfrom_" .. id_text .. "(item)"
      exec("_G.bench.text = {}; _G.bench.diag = {}")
      local params = {
        uri = uri,
        oldStr = step.breaks and good or bad,
        newStr = step.breaks and bad or good,
        summary = "Bench edit " .. k,
      }
      if mode == "on" then
        params.diagnostics = true
        params.diagnosticsTimeoutMs = diag_timeout
      end
      local sent = uv.hrtime()
      local id = agent:request("verbatim/strReplace", params)
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
      local record = { rt = ms(agent.arrived[id] - sent), warmup = step.warmup }
      local d = response.result.diagnostics
      if mode == "on" then
        assert(type(d) == "table", "no diagnostics in the result of edit " .. k)
        record.waited = d.waitedMs
        record.status = d.status
        local list = step.breaks and d.introduced or d.resolved
        local other = step.breaks and d.resolved or d.introduced
        record.expected = #list == 1 and list[1].code == "F821" and #other == 0
        if not record.expected then
          record.detail = vim.inspect({
            status = d.status,
            introduced = d.introduced,
            resolved = d.resolved,
            note = d.note,
          })
        end
        local times = exec("return _G.bench")
        local changed = times.text[1]
        record.text_changes = #times.text
        if changed then
          record.ruff_reports = 0
          for _, t in ipairs(times.diag) do
            if t >= changed then
              record.ruff_first = record.ruff_first or ms(t - changed)
              record.ruff_last = ms(t - changed)
              record.ruff_reports = record.ruff_reports + 1
            end
          end
        end
      end
      table.insert(records, record)
    end
    return records
  end, debug.traceback)
  editor:finish()
  if not ok then
    return nil, tostring(result), info
  end
  return result, why, info
end

-- The plan: one warm-up pair, then edit_count/2 sites spread over the file,
-- each broken and fixed on the next edit.
local _, total_sites = python_source(target_lines)
local pairs_count = edit_count / 2
assert(total_sites >= pairs_count + 1, "the file has too few sites for --edits")
local plan = {
  { site = total_sites, breaks = true, warmup = true },
  { site = total_sites, breaks = false, warmup = true },
}
for p = 0, pairs_count - 1 do
  local site = math.floor((p + 0.5) * (total_sites - 1) / pairs_count) + 1
  table.insert(plan, { site = site, breaks = true })
  table.insert(plan, { site = site, breaks = false })
end

say(
  "# %s, server %s, plugin %s, %s",
  tostring(vim.version()),
  opts.bin,
  opts.plugin,
  vim.trim(vim.fn.system({ opts.ruff, "--version" }))
)
local all = { off = {}, on = {} }
local by_round = {}
for round = 1, rounds do
  by_round[round] = {}
  for _, mode in ipairs({ "off", "on" }) do
    local started = uv.hrtime()
    local records, why, info = run(mode, plan)
    if round == 1 and mode == "off" and info then
      local existing = {}
      for key, count in pairs(info.existing or {}) do
        table.insert(existing, key .. " x" .. count)
      end
      table.sort(existing)
      say(
        "# bench.py: %d lines, %d sites; ruff reports at the start: %s",
        info.lines,
        info.sites,
        table.concat(existing, ", ")
      )
    end
    if not records then
      say("round %d %-3s: did not finish: %s", round, mode, why or "?")
    else
      local counted = vim.tbl_filter(function(r)
        return not r.warmup
      end, records)
      by_round[round][mode] = counted
      vim.list_extend(all[mode], counted)
      say(
        "round %d %-3s: %d edits, median round trip %.1f ms (%.1f s)",
        round,
        mode,
        #counted,
        percentile(
          vim.tbl_map(function(r)
            return r.rt
          end, counted),
          0.5
        ),
        ms(uv.hrtime() - started) / 1000
      )
      if opts.each == "1" then
        say(
          "  round trip each (ms): %s",
          table.concat(
            vim.tbl_map(function(r)
              return string.format("%.0f", r.rt)
            end, counted),
            " "
          )
        )
        if mode == "on" then
          say(
            "  waitedMs each: %s",
            table.concat(
              vim.tbl_map(function(r)
                return tostring(r.waited)
                  .. (r.status == "settled" and "" or "!" .. tostring(r.status))
              end, counted),
              " "
            )
          )
          say(
            "  buffer text changes / diagnostic changes each: %s",
            table.concat(
              vim.tbl_map(function(r)
                return tostring(r.text_changes) .. "/" .. tostring(r.ruff_reports)
              end, counted),
              " "
            )
          )
        end
      end
    end
  end
end

local function field(list, name)
  local values = {}
  for _, r in ipairs(list) do
    if type(r[name]) == "number" then
      table.insert(values, r[name])
    end
  end
  return values
end

local diffs = {}
for _, round in ipairs(by_round) do
  if round.off and round.on then
    for k = 1, math.min(#round.off, #round.on) do
      table.insert(diffs, round.on[k].rt - round.off[k].rt)
    end
  end
end

local rt_off, rt_on = field(all.off, "rt"), field(all.on, "rt")
local rows = {
  { "round trip, diagnostics off", rt_off },
  { "round trip, diagnostics on", rt_on },
  { "difference, edit by edit (on - off)", diffs },
  { "waitedMs (result.diagnostics)", field(all.on, "waited") },
  { "ruff's first report after the change", field(all.on, "ruff_first") },
  { "ruff's last report before the answer", field(all.on, "ruff_last") },
  { "diagnostic changes per edit (count)", field(all.on, "ruff_reports") },
}
say("")
say("| ms | n | median | p99 | min | max |")
say("|---|---:|---:|---:|---:|---:|")
for _, row in ipairs(rows) do
  local values = row[2]
  if #values == 0 then
    say("| %s | 0 | | | | |", row[1])
  else
    say(
      "| %s | %d | %.1f | %.1f | %.1f | %.1f |",
      row[1],
      #values,
      percentile(values, 0.5),
      percentile(values, 0.99),
      percentile(values, 0),
      percentile(values, 1)
    )
  end
end
if #rt_off > 0 and #rt_on > 0 then
  say(
    "| difference of the medians (on - off) | | %.1f | %.1f (of the p99s) | | |",
    percentile(rt_on, 0.5) - percentile(rt_off, 0.5),
    percentile(rt_on, 0.99) - percentile(rt_off, 0.99)
  )
end
say("")
local statuses, unexpected = {}, {}
for _, r in ipairs(all.on) do
  statuses[r.status or "?"] = (statuses[r.status or "?"] or 0) + 1
  if not r.expected then
    table.insert(unexpected, r.detail or "?")
  end
end
local status_text = {}
for _, name in ipairs({ "settled", "timedOut", "unavailable", "?" }) do
  if statuses[name] then
    table.insert(status_text, name .. " " .. statuses[name])
  end
end
say("status: %s (of %d edits with diagnostics)", table.concat(status_text, ", "), #all.on)
say(
  "introduced/resolved as expected (one F821, nothing else): %d of %d",
  #all.on - #unexpected,
  #all.on
)
for n, detail in ipairs(unexpected) do
  if n > 5 then
    say("  ... %d more", #unexpected - 5)
    break
  end
  say("  unexpected: %s", detail:gsub("\n%s*", " "))
end
