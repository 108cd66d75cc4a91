-- Usage: nvim -l neovim/bench/timeline.lua [--entries 10000] [--runs 15] [--max-edits 500]
--
-- How long `:Verbatim timeline` takes to put a journal of --entries entries
-- on screen. A synthetic `verbatim/timeline` result shaped as
-- docs/protocol.md documents it (tests/helpers/timeline_data.lua: sessions
-- of 5 turns of 10 edits of one file each, so 200 sessions, the server's
-- default limit, at 10,000 entries) is encoded as the server would send it:
-- by default as it answers the plugin's `maxEdits = 500` (the newest 500
-- edits, older sessions left out, `truncated`), with --max-edits 0 the whole
-- journal (what the plugin asks for with `timeline = { max_edits = false }`).
-- Each run starts from no timeline buffer and times:
--
--   decode   vim.json.decode of the result's JSON (what the LSP client does
--            before the plugin sees it)
--   open     require("verbatim.timeline").open() with a request function that
--            answers at once: the buffer, its lines, and a `redraw` that draws
--            the window (highlights included: the decoration provider runs
--            for the lines on screen)
--   fold     <CR> on the first session line (fold it), then `redraw`
--   refresh  the same answer again (a `verbatim/journalChanged`), then `redraw`
--
-- Prints each run, then the best, median and worst of each measure in
-- wall-clock time and in the CPU time of this process (os.clock()), which a
-- machine busy with other work inflates less. The best run is the one least
-- disturbed: noise only ever adds time. To tell a slow or busy machine, it
-- also times a plain Lua loop of 10^7 steps before each run. The issue's
-- target: decode + open ≤ 100 ms at 10,000 entries.

local script_dir = vim.fs.dirname(vim.fs.normalize(debug.getinfo(1, "S").source:sub(2)))
package.path = script_dir .. "/?.lua;" .. package.path
local harness = require("harness")
local say, percentile = harness.say, harness.percentile
vim.opt.runtimepath:prepend(harness.repo .. "/neovim")

local opts = harness.parse_args({ entries = "10000", runs = "15", ["max-edits"] = "500" })
local entries, runs = tonumber(opts.entries), tonumber(opts.runs)
local max_edits = tonumber(opts["max-edits"])
max_edits = max_edits and max_edits > 0 and max_edits or nil

local json = vim.json.encode(require("helpers.timeline_data").result(entries, max_edits))
-- The view asks for what the answer models, and says what it left out.
require("verbatim.config").set({ timeline = { max_edits = max_edits or false } })
local timeline = require("verbatim.timeline")

local results = { decode = {}, open = {}, fold = {}, refresh = {}, total = {} }
local reference = {}
local cpu = { decode = {}, open = {}, fold = {}, refresh = {}, total = {} }
local line_count
for run = 1, runs do
  for _, buf in ipairs(vim.tbl_keys(timeline.views)) do
    vim.api.nvim_buf_delete(buf, { force = true })
  end
  vim.cmd("silent! only")
  collectgarbage("collect")
  local r0 = vim.uv.hrtime()
  local x = 0
  for i = 1, 1e7 do
    x = x + i % 3
  end
  assert(x > 0)
  table.insert(reference, (vim.uv.hrtime() - r0) / 1e6)

  local c0, t0 = os.clock(), vim.uv.hrtime()
  -- As Neovim's LSP client decodes a message (vim/lsp/rpc.lua).
  local result = vim.json.decode(json, { luanil = { object = true } })
  local c1, t1 = os.clock(), vim.uv.hrtime()
  local buf = timeline.open({
    request = function(_, _, callback)
      callback(nil, result)
    end,
  })
  vim.cmd("redraw")
  local c2, t2 = os.clock(), vim.uv.hrtime()
  line_count = vim.api.nvim_buf_line_count(buf)
  local shown = vim.fn.screenstring(3, 1) .. vim.fn.screenstring(3, 3)
  assert(
    shown == "▾c" or shown == "▾g" or shown == "▾v",
    "the timeline is on screen: " .. shown
  )

  local view = timeline.views[buf]
  vim.api.nvim_win_set_cursor(0, { 3, 0 })
  local c3, t3 = os.clock(), vim.uv.hrtime()
  timeline.activate(view)
  vim.cmd("redraw")
  local c4, t4 = os.clock(), vim.uv.hrtime()
  timeline.toggle(view, view.nodes[3])
  local c5, t5 = os.clock(), vim.uv.hrtime()
  timeline.refresh(view)
  vim.cmd("redraw")
  local c6, t6 = os.clock(), vim.uv.hrtime()

  local row = {
    decode = (t1 - t0) / 1e6,
    open = (t2 - t1) / 1e6,
    fold = (t4 - t3) / 1e6,
    refresh = (t6 - t5) / 1e6,
    total = (t2 - t0) / 1e6,
  }
  for key, value in pairs(row) do
    table.insert(results[key], value)
  end
  local cpu_row = {
    decode = (c1 - c0) * 1e3,
    open = (c2 - c1) * 1e3,
    fold = (c4 - c3) * 1e3,
    refresh = (c6 - c5) * 1e3,
    total = (c2 - c0) * 1e3,
  }
  for key, value in pairs(cpu_row) do
    table.insert(cpu[key], value)
  end
  say(
    "run %2d: reference loop %5.1f ms  decode %6.1f ms  open %6.1f ms  (decode + open %6.1f ms)  fold %6.1f ms  refresh %6.1f ms",
    run,
    reference[#reference],
    row.decode,
    row.open,
    row.total,
    row.fold,
    row.refresh
  )
end

say(
  "%d entries, %s, %d lines, %d KiB of JSON, %d runs (Neovim %s)",
  entries,
  max_edits and ("maxEdits " .. max_edits) or "every edit",
  line_count,
  math.floor(#json / 1024),
  runs,
  tostring(vim.version())
)
say(
  "reference loop: best %.1f ms, median %.1f ms",
  math.min(unpack(reference)),
  percentile(reference, 0.5)
)
for _, key in ipairs({ "decode", "open", "total", "fold", "refresh" }) do
  local values = results[key]
  say(
    "%-11s best %6.1f  median %6.1f  worst %6.1f ms   (CPU time: best %6.1f  median %6.1f  worst %6.1f ms)",
    key == "total" and "decode+open" or key,
    math.min(unpack(values)),
    percentile(values, 0.5),
    math.max(unpack(values)),
    math.min(unpack(cpu[key])),
    percentile(cpu[key], 0.5),
    math.max(unpack(cpu[key]))
  )
end
vim.cmd("qall!")
