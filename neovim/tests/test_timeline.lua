-- :Verbatim timeline, against canned answers shaped exactly as docs/protocol.md
-- documents them ("Timeline and revert"): the view is given a request
-- function that records what it is asked and answers from a table. One case
-- goes through the plugin's own LSP client to an in-process fake server, for
-- the default request function and `verbatim/journalChanged`.
local H = require("helpers")
local api = vim.api
local timeline = require("verbatim.timeline")
local data = require("helpers.timeline_data")

-- 2026-12-03T10:05:00Z: the canned edits of that morning are "today" in any
-- time zone, so their times show as HH:MM (computed below in local time).
timeline.now = function()
  return 1796292300
end

--- HH:MM of an RFC 3339 time, in local time, as the view shows today's times.
---@param text string
---@return string
local function hm(text)
  return os.date("%H:%M", timeline.parse_time(text)) --[[@as string]]
end

--- MM-DD HH:MM, as the view shows the times of other days of the year.
---@param text string
---@return string
local function mdhm(text)
  return os.date("%m-%d %H:%M", timeline.parse_time(text)) --[[@as string]]
end

local CANNED = [[
{ "sessions": [
    { "session": "01a23bcb-5f1e-4c6a-9d2e-7b8c9d0e1f2a", "agent": "codex", "source": "editor",
      "started": "2026-12-03T10:01:02Z", "ended": "2026-12-03T10:04:40Z",
      "turns": [
        { "turn": "01a23bcb-3138-4d2a-8e1f-2a3b4c5d6e7f",
          "started": "2026-12-03T10:03:00Z", "ended": "2026-12-03T10:04:40Z",
          "files": [{ "uri": "file:///p/a.txt", "reviewed": false },
                    { "uri": "file:///p/src/b.rs", "reviewed": true }],
          "edits": [
            { "writeId": "18c3-41233-9", "time": "2026-12-03T10:04:40Z", "agent": "codex",
              "summary": "apply_patch a.txt b.rs", "outcome": "partial",
              "files": [{ "id": "18c3-41233-9.0", "uri": "file:///p/a.txt", "outcome": "applied",
                          "added": 3, "removed": 1, "revertible": true },
                        { "id": "18c3-41233-9.1", "uri": "file:///p/src/b.rs", "outcome": "rejected",
                          "added": 0, "removed": 0, "revertible": false, "whyNot": "nothingWritten" }] },
            { "writeId": "18c3-41233-7", "time": "2026-12-03T10:03:05Z", "agent": "codex",
              "summary": "apply_patch a.txt", "outcome": "applied", "revertedBy": "18c4-41233-12",
              "files": [{ "id": "18c3-41233-7.0", "uri": "file:///p/a.txt", "outcome": "applied",
                          "added": 2, "removed": 2, "revertible": true }] } ] },
        { "turn": "auto:18c3-41233-2",
          "started": "2026-12-03T10:01:02Z", "ended": "2026-12-03T10:01:02Z",
          "files": [{ "uri": "file:///p/src/b.rs", "reviewed": false }],
          "edits": [
            { "writeId": "18c3-41233-2", "time": "2026-12-03T10:01:02Z", "agent": "codex",
              "summary": "Rename run to start", "outcome": "applied",
              "files": [{ "id": "18c3-41233-2.0", "uri": "file:///p/src/b.rs", "outcome": "applied",
                          "added": 1, "removed": 1, "revertible": true }] } ] } ] },
    { "session": "disk", "source": "disk",
      "started": "2026-12-02T18:00:00Z", "ended": "2026-12-02T18:00:00Z",
      "turns": [
        { "turn": "auto:17aa-1-1", "started": "2026-12-02T18:00:00Z", "ended": "2026-12-02T18:00:00Z",
          "files": [{ "uri": "file:///p/a.txt", "reviewed": false }],
          "edits": [
            { "writeId": "17aa-1-1", "time": "2026-12-02T18:00:00Z",
              "summary": "Changed on disk outside the editor: a.txt", "outcome": "reloaded",
              "files": [{ "id": "17aa-1-1.0", "uri": "file:///p/a.txt", "outcome": "reloaded",
                          "added": 1, "removed": 0, "revertible": true }] } ] } ] } ],
  "entries": 5, "truncated": false }
]]

--- The lines the canned timeline shows, all unfolded.
---@return string[]
local function expected_lines()
  return {
    "Verbatim timeline · 2 sessions, 5 entries read",
    timeline.HELP_LINE,
    "▾ codex  "
      .. hm("2026-12-03T10:01:02Z")
      .. "–"
      .. hm("2026-12-03T10:04:40Z")
      .. "  2 turns, 3 edits  editor session 01a23bcb…",
    "  ▾ turn 2  "
      .. hm("2026-12-03T10:03:00Z")
      .. "–"
      .. hm("2026-12-03T10:04:40Z")
      .. "  2 edits, 1/2 files reviewed  01a23bcb…",
    "    ▾ " .. hm("2026-12-03T10:04:40Z") .. "  partial   apply_patch a.txt b.rs",
    "        · /p/a.txt  +3 -1  applied",
    "        ✓ /p/src/b.rs  +0 -0  rejected  not revertible (nothingWritten)",
    "    ▾ " .. hm("2026-12-03T10:03:05Z") .. "  reverted  apply_patch a.txt",
    "        · /p/a.txt  +2 -2",
    "  ▾ turn 1  " .. hm("2026-12-03T10:01:02Z") .. "  1 edit, 0/1 file reviewed  18c3-41233-2",
    "    ▾ " .. hm("2026-12-03T10:01:02Z") .. "  applied   Rename run to start",
    "        · /p/src/b.rs  +1 -1",
    "▾ disk  " .. mdhm("2026-12-02T18:00:00Z") .. "  1 turn, 1 edit",
    "  ▾ turn 1  " .. mdhm("2026-12-02T18:00:00Z") .. "  1 edit, 0/1 file reviewed  17aa-1-1",
    "    ▾ "
      .. mdhm("2026-12-02T18:00:00Z")
      .. "  reloaded  Changed on disk outside the editor: a.txt",
    "        · /p/a.txt  +1 -0",
  }
end

-- Line numbers in the unfolded canned view.
local LINE = {
  codex_session = 3,
  turn2 = 4,
  edit9 = 5,
  file9_0 = 6,
  file9_1 = 7,
  edit7 = 8,
  file7_0 = 9,
  turn1 = 10,
  edit2 = 11,
  file2_0 = 12,
  disk_session = 13,
}

---@class verbatim.test.Stub
---@field calls { method: string, params: table }[]
---@field answers table<string, fun(params: table): any, any> by method: the error and the result
---@field request verbatim.TimelineRequest

--- A request function that records every call and answers at once from
--- `answers` (by default the canned timeline, and `{ reviewed = … }`).
---@return verbatim.test.Stub
local function stub()
  local self = { calls = {} }
  self.answers = {
    ["verbatim/timeline"] = function()
      return nil, vim.json.decode(CANNED)
    end,
    ["verbatim/markReviewed"] = function(params)
      return nil, { reviewed = params.reviewed }
    end,
  }
  self.request = function(method, params, callback)
    table.insert(self.calls, { method = method, params = vim.deepcopy(params) })
    local answer = self.answers[method]
    if answer then
      callback(answer(params))
    else
      callback({ code = -32601, message = "no canned answer for " .. method })
    end
  end
  return self
end

---@param s verbatim.test.Stub
---@param method string
---@return { method: string, params: table }[]
local function calls_of(s, method)
  return vim.tbl_filter(function(call)
    return call.method == method
  end, s.calls)
end

--- Closes every timeline and diff tab, leaving one empty window.
local function reset()
  for buf in pairs(timeline.views) do
    if api.nvim_buf_is_valid(buf) then
      api.nvim_buf_delete(buf, { force = true })
    end
  end
  vim.cmd("silent! tabonly")
  vim.cmd("silent! only")
  vim.cmd("enew")
end

--- Opens the timeline on a stub; returns its buffer and the stub.
---@param s? verbatim.test.Stub
---@return integer buf
---@return verbatim.test.Stub
local function open(s)
  reset()
  s = s or stub()
  local buf = timeline.open({ request = s.request })
  return buf, s
end

---@param keys string
local function press(keys)
  api.nvim_feedkeys(api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

---@param row integer
local function cursor(row)
  api.nvim_win_set_cursor(0, { row, 0 })
end

--- Runs `fn` with vim.notify recorded; returns the messages and levels.
---@param fn fun()
---@return { msg: string, level: integer }[]
local function notes_of(fn)
  local notes = {}
  local original = vim.notify
  vim.notify = function(msg, level)
    table.insert(notes, { msg = msg, level = level })
  end
  local ok, err = pcall(fn)
  vim.notify = original
  assert(ok, err)
  return notes
end

--- Runs `fn` with vim.ui.select answering `choose(items, opts)` (an index, or
--- nil to cancel); returns every prompt it showed and the items.
---@param choose fun(items: any[], opts: table): integer|nil
---@param fn fun()
---@return { prompt: string, items: any[], shown: string[] }[]
local function selecting(choose, fn)
  local asked = {}
  local original = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    local shown = vim.tbl_map(opts.format_item or tostring, items)
    table.insert(asked, { prompt = opts.prompt, items = items, shown = shown })
    local index = choose(items, opts)
    on_choice(index and items[index] or nil, index)
  end
  local ok, err = pcall(fn)
  vim.ui.select = original
  assert(ok, err)
  return asked
end

-- Files are shown relative to the working directory; /p is outside it.
vim.cmd.cd(vim.fn.fnameescape(H.tmpdir()))

H.test("renders sessions, turns, edits and files, newest first", function()
  local buf, s = open()
  H.eq(expected_lines(), H.lines(buf))
  H.eq("verbatim-timeline", vim.bo[buf].filetype)
  H.eq("nofile", vim.bo[buf].buftype)
  H.eq(false, vim.bo[buf].modifiable)
  H.eq(timeline.BUF_NAME, api.nvim_buf_get_name(buf))
  H.eq(
    { { method = "verbatim/timeline", params = { maxEdits = 500 } } },
    s.calls,
    "no filter sent; the newest 500 edits"
  )
  H.eq(LINE.codex_session, api.nvim_win_get_cursor(0)[1], "the cursor on the newest session")
  -- Highlights are spans drawn by the decoration provider: none is stored.
  local view = timeline.views[buf]
  H.eq({ 8, 10, "VerbatimTimelineFold", 11, 19, "VerbatimTimelineFile" }, {
    unpack(view.spans[LINE.file9_0], 1, 6),
  })
  H.eq({}, api.nvim_buf_get_extmarks(buf, timeline.ns, 0, -1, {}))
  H.eq("VerbatimTimelineReverted", view.spans[LINE.edit7][9], "a reverted edit")
  H.eq("VerbatimTimelineReviewed", view.spans[LINE.file9_1][3], "a reviewed file")
end)

H.test(
  "an edit by another agent than its session's, folded, with a summary of two lines",
  function()
    local result = vim.json.decode([[{ "sessions": [
    { "session": "s1", "agent": "claude-code", "source": "editor",
      "started": "2026-12-03T10:00:00Z", "ended": "2026-12-03T10:00:00Z",
      "turns": [{ "turn": "t1", "started": "2026-12-03T10:00:00Z", "ended": "2026-12-03T10:00:00Z",
        "files": [],
        "edits": [{ "writeId": "w1", "time": "2026-12-03T10:00:00Z", "agent": "verbatim-cli",
          "summary": "First line\nsecond line", "outcome": "modifiedByEditor",
          "files": [{ "id": "w1.0", "uri": "file:///p/x.txt", "outcome": "modifiedByEditor",
                      "added": 1, "removed": 1, "revertible": true }] }] }] }],
    "entries": 1, "truncated": false }]])
    local lines, nodes, spans = timeline.build(result, {
      collapsed = { sessions = {}, turns = {}, edits = { w1 = true } },
    })
    local time = hm("2026-12-03T10:00:00Z")
    H.eq("  ▾ turn 1  " .. time .. "  1 edit  t1", lines[4], "no files: no reviewed count")
    local line = "    ▸ " .. time .. "  modified  verbatim-cli  First line second line  (1 file)"
    H.eq(line, lines[5])
    H.eq(5, #lines, "the file is folded away")
    H.eq("edit", nodes[5].kind)
    local function text_of(group)
      local sp = spans[5]
      for i = 1, #sp, 3 do
        if sp[i + 2] == group then
          return line:sub(sp[i] + 1, sp[i + 1])
        end
      end
    end
    H.eq("▸", text_of("VerbatimTimelineFold"))
    H.eq(time, text_of("VerbatimTimelineTime"))
    H.eq("modified", text_of("VerbatimTimelinePartial"))
    H.eq("verbatim-cli", text_of("VerbatimTimelineAgent"))
    H.eq("(1 file)", text_of("VerbatimTimelineId"))
  end
)

H.test("an empty journal, filters that match nothing, a truncated timeline", function()
  local s = stub()
  s.answers["verbatim/timeline"] = function(params)
    if params.agent then
      return nil, { sessions = {}, entries = 5, truncated = false }
    end
    return nil, { sessions = {}, entries = 0, truncated = true }
  end
  local buf = open(s)
  H.eq(
    "Verbatim timeline · 0 sessions, 0 entries read · older sessions left out",
    H.lines(buf)[1]
  )
  H.eq("  Nothing journaled yet.", H.lines(buf)[3])
  timeline.views[buf].agents.codex = true
  selecting(function()
    return 1
  end, function()
    press("a")
  end)
  H.eq("Verbatim timeline · 0 sessions, 5 entries read · agent codex", H.lines(buf)[1])
  H.eq("  Nothing journaled matches the filters (F clears them).", H.lines(buf)[3])
end)

--- Runs `fn` with the option timeline.max_edits set to `max`.
---@param max integer|false
---@param fn fun()
local function with_max_edits(max, fn)
  local config = require("verbatim.config")
  config.set({ timeline = { max_edits = max } })
  local ok, err = pcall(fn)
  config.set({})
  assert(ok, err)
end

H.test("timeline.max_edits: validated, sent as maxEdits; false sends no bound", function()
  local config = require("verbatim.config")
  H.eq({ max_edits = 500 }, config.resolve({}).timeline)
  H.eq(false, config.resolve({ timeline = { max_edits = false } }).timeline.max_edits)
  for _, bad in ipairs({ 0, -1, 2.5, "500", true }) do
    local ok, err = pcall(config.resolve, { timeline = { max_edits = bad } })
    H.eq(false, ok, vim.inspect(bad))
    H.truthy(
      tostring(err):find("option timeline.max_edits must be a positive integer or false", 1, true),
      tostring(err)
    )
  end
  with_max_edits(false, function()
    local _, s = open()
    H.eq({}, s.calls[1].params, "no bound")
  end)
  with_max_edits(3, function()
    local _, s = open()
    H.eq({ maxEdits = 3 }, s.calls[1].params)
  end)
end)

H.test(
  "a timeline maxEdits cut: the header and a cut turn say so; L asks for twice as many",
  function()
    local s = stub()
    s.answers["verbatim/timeline"] = function(params)
      return nil, data.cut(vim.json.decode(CANNED), params.maxEdits)
    end
    with_max_edits(1, function()
      local buf = open(s)
      local lines = H.lines(buf)
      H.eq(
        "Verbatim timeline · 1 session, 5 entries read · newest 1 of 4 edits shown · L for older",
        lines[1]
      )
      H.eq(timeline.HELP_LINE, lines[2])
      H.truthy(timeline.HELP_LINE:find(" · L older · ", 1, true), "L is listed")
      H.truthy(
        vim.endswith(lines[3], "  1 turn, 1 edit shown  editor session 01a23bcb…"),
        lines[3]
      )
      -- Older turns of the session are left out: its turns' numbers are not known.
      H.eq(
        "  ▾ turn ?  "
          .. hm("2026-12-03T10:03:00Z")
          .. "–"
          .. hm("2026-12-03T10:04:40Z")
          .. "  showing 1 of 2 edits, 1/2 files reviewed  01a23bcb…",
        lines[4]
      )
      local spans = timeline.views[buf].spans[4]
      H.eq("VerbatimTimelinePartial", spans[12], "the cut is highlighted")
      H.eq("showing 1 of 2 edits", lines[4]:sub(spans[10] + 1, spans[11]))
      H.eq(7, #lines, "session, turn, edit, 2 files")
      -- X on the cut turn counts every edit the server reverts.
      local _, question = timeline.revert_target(timeline.views[buf].nodes[4])
      H.eq("Revert turn 01a23bcb… of codex (2 edits)?", question)
      _, question = timeline.revert_target(timeline.views[buf].nodes[3], timeline.views[buf].result)
      H.eq("Revert the whole session of codex (1 turn shown, and any older ones)?", question)

      -- L, the cursor on the file of the newest edit: twice as many, the cursor stays.
      cursor(6)
      local file_line = lines[6]
      press("L")
      H.eq({ maxEdits = 2 }, s.calls[#s.calls].params)
      lines = H.lines(buf)
      H.eq(
        "Verbatim timeline · 1 session, 5 entries read · newest 2 of 4 edits shown · L for older",
        lines[1]
      )
      H.truthy(lines[4]:find("  2 edits, 1/2 files reviewed  ", 1, true), lines[4])
      H.eq(file_line, lines[api.nvim_win_get_cursor(0)[1]])
      H.eq(6, api.nvim_win_get_cursor(0)[1])
      -- Again, from a line further down: the whole journal, turns numbered again.
      cursor(LINE.file7_0)
      press("L")
      H.eq({ maxEdits = 4 }, s.calls[#s.calls].params)
      H.eq(expected_lines(), H.lines(buf))
      H.eq(LINE.file7_0, api.nvim_win_get_cursor(0)[1])
      -- Nothing is left out: L asks for nothing more.
      local count = #s.calls
      local notes = notes_of(function()
        press("L")
      end)
      H.eq(count, #s.calls)
      H.eq({ { msg = "verbatim: every change is shown", level = vim.log.levels.INFO } }, notes)
    end)
  end
)

H.test("a timeline cut by the server's limit of sessions: L cannot help", function()
  local s = stub()
  s.answers["verbatim/timeline"] = function()
    local result = vim.json.decode(CANNED)
    table.remove(result.sessions)
    result.edits, result.truncated = 4, true
    for _, turn in ipairs(result.sessions[1].turns) do
      turn.editCount = #turn.edits
    end
    return nil, result
  end
  local buf = open(s)
  H.eq("Verbatim timeline · 1 session, 5 entries read · older sessions left out", H.lines(buf)[1])
  H.eq(expected_lines()[4], H.lines(buf)[4], "turns numbered")
  local count = #s.calls
  local notes = notes_of(function()
    press("L")
  end)
  H.eq(count, #s.calls)
  H.eq(vim.log.levels.WARN, notes[1].level)
  H.truthy(notes[1].msg:find("at most 200", 1, true), notes[1].msg)
end)

H.test("counts of a long journal are shown with their thousands apart", function()
  local lines = timeline.build(
    { sessions = {}, entries = 10000, edits = 10000, truncated = true },
    { collapsed = { sessions = {}, turns = {}, edits = {} }, max_edits = 0 }
  )
  H.eq(
    "Verbatim timeline · 0 sessions, 10,000 entries read · newest 0 of 10,000 edits shown · L for older",
    lines[1]
  )
end)

H.test("<CR> folds and unfolds an edit, a turn and a session; the cursor stays", function()
  local buf = open()
  local all = expected_lines()
  cursor(LINE.edit9)
  press("<CR>")
  local lines = H.lines(buf)
  H.eq(#all - 2, #lines)
  H.eq(all[LINE.edit9]:gsub("▾", "▸", 1) .. "  (2 files)", lines[LINE.edit9])
  H.eq(all[LINE.edit7], lines[LINE.edit9 + 1])
  H.eq(LINE.edit9, api.nvim_win_get_cursor(0)[1])

  cursor(LINE.turn2)
  press("<CR>")
  H.eq((all[LINE.turn2]:gsub("▾", "▸", 1)), H.lines(buf)[LINE.turn2])
  H.eq(all[LINE.turn1], H.lines(buf)[LINE.turn2 + 1])

  cursor(LINE.codex_session)
  press("<CR>")
  H.eq(
    { all[1], all[2], all[3]:gsub("▾", "▸", 1), unpack(all, LINE.disk_session) },
    H.lines(buf)
  )
  press("<CR>")
  press("j<CR>")
  press("j<CR>")
  H.eq(all, H.lines(buf), "every fold open again")
  H.eq(LINE.edit9, api.nvim_win_get_cursor(0)[1])

  -- Header lines do nothing; g? shows the long help and hides it again.
  cursor(1)
  press("<CR>")
  H.eq(all, H.lines(buf))
  press("g?")
  H.eq(timeline.HELP, { unpack(H.lines(buf), 3, 2 + #timeline.HELP) })
  press("g?")
  H.eq(all, H.lines(buf))
end)

H.test("<CR> on a file opens its diff in a new tab, in the file's language", function()
  local s = stub()
  s.answers["verbatim/timelineEntry"] = function(params)
    return nil,
      vim.json.decode(
        string.format(
          [[{ "id": %q, "uri": "file:///p/src/b.rs", "newUri": null,
            "before": "fn run() {}\nfn main() { run() }\n",
            "after": "fn start() {}\nfn main() { start() }\n",
            "diff": "--- a/src/b.rs\n+++ b/src/b.rs\n@@ -1,2 +1,2 @@\n-fn run() {}\n+fn start() {}\n" }]],
          params.id
        )
      )
  end
  open(s)
  local timeline_tab = api.nvim_get_current_tabpage()
  cursor(LINE.file2_0)
  press("<CR>")
  H.eq({ method = "verbatim/timelineEntry", params = { id = "18c3-41233-2.0" } }, s.calls[#s.calls])
  H.truthy(api.nvim_get_current_tabpage() ~= timeline_tab, "a new tab page")
  local wins = api.nvim_tabpage_list_wins(0)
  H.eq(2, #wins)
  local before, after = api.nvim_win_get_buf(wins[1]), api.nvim_win_get_buf(wins[2])
  H.eq({ "fn run() {}", "fn main() { run() }" }, H.lines(before))
  H.eq({ "fn start() {}", "fn main() { start() }" }, H.lines(after))
  for _, win in ipairs(wins) do
    H.eq(true, vim.wo[win].diff, "diff mode")
    H.eq("rust", vim.bo[api.nvim_win_get_buf(win)].filetype)
    H.eq(false, vim.bo[api.nvim_win_get_buf(win)].modifiable)
  end
  H.truthy(api.nvim_buf_get_name(before):find("before/", 1, true), api.nvim_buf_get_name(before))
  H.truthy(api.nvim_buf_get_name(after):find("after/", 1, true), api.nvim_buf_get_name(after))
  -- q closes the tab; the same diff opens again.
  press("q")
  H.eq(timeline_tab, api.nvim_get_current_tabpage())
  press("<CR>")
  H.eq(2, #api.nvim_list_tabpages())
  vim.cmd("tabclose")
end)

H.test("<CR> on a file whose texts were not kept shows the journal's diff", function()
  local s = stub()
  s.answers["verbatim/timelineEntry"] = function()
    return nil,
      vim.json.decode([[{ "id": "17aa-1-1.0", "uri": "file:///p/a.txt", "newUri": null,
        "before": null, "after": null,
        "diff": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n one\n+two\n" }]])
  end
  open(s)
  cursor(#H.lines(0))
  press("<CR>")
  H.eq("diff", vim.bo.filetype)
  H.eq({ "--- a/a.txt", "+++ b/a.txt", "@@ -1 +1,2 @@", " one", "+two" }, H.lines(0))
  H.eq(1, #api.nvim_tabpage_list_wins(0))
  vim.cmd("tabclose")
  -- Neovim's LSP client decodes null members of objects as absent.
  local _, _, diff =
    timeline.show_entry({ id = "17aa-1-1.0", uri = "file:///p/a.txt", diff = "+two\n" })
  H.eq({ "+two" }, H.lines(assert(diff)))
  vim.cmd("tabclose")

  -- CRLF texts on both sides lose their CRs; an error is shown with its message.
  local left, right = timeline.show_entry({
    id = "x.0",
    uri = "file:///p/c.lua",
    before = "a = 1\r\nb = 2\r\n",
    after = "a = 1\r\nb = 3\r\n",
  })
  H.eq({ "a = 1", "b = 2" }, H.lines(assert(left)))
  H.eq({ "a = 1", "b = 3" }, H.lines(assert(right)))
  H.eq("lua", vim.bo[assert(right)].filetype)
  vim.cmd("tabclose")
  s.answers["verbatim/timelineEntry"] = function()
    return {
      code = -33020,
      message = "No entry 17aa-1-1.0 in the journals read.",
      data = { kind = "unknownEntry" },
    }
  end
  local notes = notes_of(function()
    press("<CR>")
  end)
  H.eq(1, #api.nvim_list_tabpages())
  H.eq({
    { msg = "verbatim: No entry 17aa-1-1.0 in the journals read.", level = vim.log.levels.ERROR },
  }, notes)
end)

H.test("X reverts a file, an edit, a turn, a session: once confirmed", function()
  local s = stub()
  s.answers["verbatim/revert"] = function(params)
    return nil,
      vim.json.decode(
        string.format(
          [[{ "writeId": "18c4-41233-20", "outcome": "applied", "reverts": [%q],
            "files": [{ "uri": "file:///p/a.txt", "via": "editor", "action": "edit", "hunks": 1,
                        "outcome": "applied", "conflicts": [] }],
            "message": "Reverted 1 edit in a.txt." }]],
          (params.ids or { "all" })[1]
        )
      )
  end
  open(s)
  local refreshes = #calls_of(s, "verbatim/timeline")
  local cases = {
    { LINE.file9_0, { ids = { "18c3-41233-9.0" } }, "Revert /p/a.txt as changed by" },
    { LINE.edit9, { ids = { "18c3-41233-9" } }, 'Revert "apply_patch a.txt b.rs" (codex, ' },
    {
      LINE.turn2,
      { turn = "01a23bcb-3138-4d2a-8e1f-2a3b4c5d6e7f" },
      "Revert turn 2 of codex (2 edits)?",
    },
    {
      LINE.codex_session,
      { session = "01a23bcb-5f1e-4c6a-9d2e-7b8c9d0e1f2a" },
      "Revert the whole session of codex (2 turns)?",
    },
  }
  for _, case in ipairs(cases) do
    local row, params, question = case[1], case[2], case[3]
    local before = #calls_of(s, "verbatim/revert")
    local asked
    local notes = notes_of(function()
      asked = selecting(function()
        return 2 -- Cancel
      end, function()
        cursor(row)
        press("X")
      end)
    end)
    H.eq(1, #asked)
    H.truthy(vim.startswith(asked[1].prompt, question), asked[1].prompt .. " / " .. question)
    H.eq(before, #calls_of(s, "verbatim/revert"), "cancelled: nothing sent")
    H.eq({}, notes)
    notes = notes_of(function()
      selecting(function()
        return 1
      end, function()
        cursor(row)
        press("X")
      end)
    end)
    local sent = calls_of(s, "verbatim/revert")
    H.eq(before + 1, #sent)
    H.eq(params, sent[#sent].params, "no dryRun, exactly one of ids, turn, session")
    H.eq({ { msg = "verbatim: Reverted 1 edit in a.txt.", level = vim.log.levels.INFO } }, notes)
  end
  -- A file that cannot be reverted is said so, and nothing is asked or sent.
  local before = #s.calls
  local asked
  local notes = notes_of(function()
    asked = selecting(function()
      return 1
    end, function()
      cursor(LINE.file9_1)
      press("X")
    end)
  end)
  H.eq({}, asked)
  H.eq(before, #s.calls)
  H.eq({
    {
      msg = "verbatim: /p/src/b.rs of this edit cannot be reverted (nothingWritten)",
      level = vim.log.levels.WARN,
    },
  }, notes)
  -- A revert refreshes the timeline.
  H.wait_for("the refresh after the revert", function()
    return #calls_of(s, "verbatim/timeline") > refreshes
  end)
end)

H.test("X on a turn that spans sessions counts every edit the server reverts", function()
  -- Each `verbatim` command line run is a session: an agent's turn of three
  -- runs is three sessions, and `{ turn = … }` reverts all three edits.
  local function session(n)
    return {
      session = "cli-" .. n,
      agent = "two",
      source = "editor",
      started = "2026-12-03T10:0" .. n .. ":00Z",
      ended = "2026-12-03T10:0" .. n .. ":00Z",
      turns = {
        {
          turn = "two-1",
          started = "2026-12-03T10:0" .. n .. ":00Z",
          ended = "2026-12-03T10:0" .. n .. ":00Z",
          files = { { uri = "file:///p/f" .. n, reviewed = false } },
          edits = {
            {
              writeId = "w" .. n,
              time = "2026-12-03T10:0" .. n .. ":00Z",
              agent = "two",
              summary = "edit " .. n,
              outcome = "applied",
              files = {
                {
                  id = "w" .. n .. ".0",
                  uri = "file:///p/f" .. n,
                  outcome = "applied",
                  added = 1,
                  removed = 1,
                  revertible = true,
                },
              },
            },
          },
        },
      },
    }
  end
  local s = stub()
  s.answers["verbatim/timeline"] = function()
    return nil,
      { sessions = { session(3), session(2), session(1) }, entries = 3, truncated = false }
  end
  s.answers["verbatim/revert"] = function()
    return nil,
      {
        writeId = "w4",
        outcome = "applied",
        reverts = {},
        files = {},
        message = "Reverted 3 entries.",
      }
  end
  local buf = open(s)
  local row = vim.fn.index(
    H.lines(buf),
    "  ▾ turn 1  " .. hm("2026-12-03T10:02:00Z") .. "  1 edit, 0/1 file reviewed  two-1"
  ) + 1
  H.truthy(row > 0, table.concat(H.lines(buf), "\n"))
  local asked = selecting(function()
    return 1
  end, function()
    cursor(row)
    press("X")
  end)
  H.eq("Revert turn two-1 of two (3 edits in 3 sessions)?", asked[1].prompt)
  H.eq({ turn = "two-1" }, calls_of(s, "verbatim/revert")[1].params)
  -- One session's turn is counted as before.
  local params, question = timeline.revert_target(timeline.views[buf].nodes[row])
  H.eq({ turn = "two-1" }, params)
  H.eq("Revert turn 1 of two (1 edit)?", question)
end)

H.test("X shows the server's errors and partial outcomes with their messages", function()
  local s = stub()
  local answer
  s.answers["verbatim/revert"] = function()
    return answer()
  end
  open(s)
  for _, case in ipairs({
    {
      function()
        return {
          code = -33019,
          message = "Nothing of turn 1 can be reverted: its one edit was rejected (nothing was written).",
          data = { kind = "notRevertible", ids = { "18c3-41233-2.0" }, why = "nothingWritten" },
        }
      end,
      "verbatim: Nothing of turn 1 can be reverted: its one edit was rejected (nothing was written).",
      vim.log.levels.ERROR,
    },
    {
      function()
        return {
          code = -33020,
          message = "No turn auto:18c3-41233-2 in the journals read.",
          data = { kind = "unknownEntry", turn = "auto:18c3-41233-2" },
        }
      end,
      "verbatim: No turn auto:18c3-41233-2 in the journals read.",
      vim.log.levels.ERROR,
    },
    {
      function()
        return {
          code = -33008,
          message = "The revert was rejected in the editor.",
          data = { kind = "rejected", reason = vim.NIL },
        }
      end,
      "verbatim: The revert was rejected in the editor.",
      vim.log.levels.ERROR,
    },
    {
      function()
        return nil,
          vim.json.decode(
            [[{ "writeId": "18c4-41233-21", "outcome": "partial", "reverts": ["18c3-41233-2.0"],
            "files": [{ "uri": "file:///p/src/b.rs", "via": "editor", "action": "edit", "hunks": 2,
              "outcome": "partial", "conflicts": [{ "startLine": 14, "endLine": 15, "current": "let x = 3;\n",
              "reverted": "let x = 1;\n", "chosen": "current" }] }],
            "message": "Reverted 1 edit in b.rs; 1 conflict kept as it is now (lines 14-15)." }]]
          )
      end,
      "verbatim: Reverted 1 edit in b.rs; 1 conflict kept as it is now (lines 14-15).",
      vim.log.levels.WARN,
    },
  }) do
    answer = case[1]
    local notes = notes_of(function()
      selecting(function()
        return 1
      end, function()
        cursor(LINE.turn1)
        press("X")
      end)
    end)
    H.eq({ { msg = case[2], level = case[3] } }, notes)
  end
  H.eq({ turn = "auto:18c3-41233-2" }, calls_of(s, "verbatim/revert")[1].params)
end)

H.test("m marks a file reviewed for its turn, and again unmarks it", function()
  local buf, s = open()
  cursor(LINE.file9_0)
  press("m")
  H.eq({
    method = "verbatim/markReviewed",
    params = {
      turn = "01a23bcb-3138-4d2a-8e1f-2a3b4c5d6e7f",
      uri = "file:///p/a.txt",
      reviewed = true,
    },
  }, s.calls[#s.calls])
  local lines = H.lines(buf)
  H.eq("        ✓ /p/a.txt  +3 -1  applied", lines[LINE.file9_0])
  H.eq("        ✓ /p/a.txt  +2 -2", lines[LINE.file7_0], "the same file of the same turn")
  H.truthy(lines[LINE.turn2]:find("2/2 files reviewed", 1, true), lines[LINE.turn2])
  H.eq("VerbatimTimelineReviewed", timeline.views[buf].spans[LINE.turn2][12])
  H.eq(LINE.file9_0, api.nvim_win_get_cursor(0)[1])
  press("m")
  H.eq(false, s.calls[#s.calls].params.reviewed)
  H.eq("        · /p/a.txt  +3 -1  applied", H.lines(buf)[LINE.file9_0])
  -- Not on a file line; and an error.
  local notes = notes_of(function()
    cursor(LINE.edit9)
    press("m")
  end)
  H.eq("verbatim/markReviewed", s.calls[#s.calls].method)
  H.eq(2, #calls_of(s, "verbatim/markReviewed"))
  H.eq(vim.log.levels.WARN, notes[1].level)
  s.answers["verbatim/markReviewed"] = function()
    return {
      code = -33020,
      message = "No turn 01a23bcb-3138-4d2a-8e1f-2a3b4c5d6e7f in the journals read.",
    }
  end
  notes = notes_of(function()
    cursor(LINE.file2_0)
    press("m")
  end)
  H.eq("verbatim: No turn 01a23bcb-3138-4d2a-8e1f-2a3b4c5d6e7f in the journals read.", notes[1].msg)
  H.eq("        · /p/src/b.rs  +1 -1", H.lines(buf)[LINE.file2_0], "unchanged")
end)

H.test("m while a timeline is on its way: the other answer does not take the mark away", function()
  local timelines = {}
  local marked = {}
  local hold_marks = false
  local buf = open({
    request = function(method, params, callback)
      if method ~= "verbatim/markReviewed" then
        table.insert(timelines, callback)
      elseif hold_marks then
        table.insert(marked, callback)
      else
        table.insert(marked, params)
        callback(nil, { reviewed = params.reviewed })
      end
    end,
  })
  timelines[1](nil, vim.json.decode(CANNED))
  -- A refresh (R, or a change journaled) is on its way when m is pressed.
  press("R")
  cursor(LINE.file9_0)
  press("m")
  H.eq(1, #marked)
  H.eq("        ✓ /p/a.txt  +3 -1  applied", H.lines(buf)[LINE.file9_0])
  H.eq(3, #timelines, "asked again, after the mark was kept")
  -- The answer asked for before the mark comes late, without it: dropped.
  timelines[2](nil, vim.json.decode(CANNED))
  H.eq("        ✓ /p/a.txt  +3 -1  applied", H.lines(buf)[LINE.file9_0])
  -- The answer asked for after it has it.
  local fresh = vim.json.decode(CANNED)
  fresh.sessions[1].turns[1].files[1].reviewed = true
  timelines[3](nil, fresh)
  H.eq("        ✓ /p/a.txt  +3 -1  applied", H.lines(buf)[LINE.file9_0])
  H.truthy(H.lines(buf)[LINE.turn2]:find("2/2 files reviewed", 1, true), H.lines(buf)[LINE.turn2])
  -- With nothing on its way, a mark asks for nothing more.
  press("m")
  H.eq(2, #marked)
  H.eq(3, #timelines)
  H.eq("        · /p/a.txt  +3 -1  applied", H.lines(buf)[LINE.file9_0])
  -- The timeline answers first, while the mark is being kept: the mark goes
  -- to the answer shown, in every session that shows its turn.
  hold_marks = true
  press("R")
  press("m")
  local two_sessions = vim.json.decode(CANNED)
  local copy = vim.deepcopy(two_sessions.sessions[1])
  copy.session = "01a23bcb-0000-4c6a-9d2e-7b8c9d0e1f2a"
  copy.turns = { copy.turns[1] }
  table.insert(two_sessions.sessions, copy)
  timelines[4](nil, two_sessions)
  H.eq("        · /p/a.txt  +3 -1  applied", H.lines(buf)[LINE.file9_0])
  marked[3](nil, { reviewed = true })
  local lines = H.lines(buf)
  H.eq("        ✓ /p/a.txt  +3 -1  applied", lines[LINE.file9_0])
  H.eq(
    "        ✓ /p/a.txt  +3 -1  applied",
    lines[#lines - 3],
    "the same turn in the other session"
  )
  H.eq(4, #timelines, "nothing was on its way any more")
end)

H.test("a and f filter by agent and by file; again, or F, clears", function()
  local buf, s = open()
  local asked = selecting(function(items)
    return vim.fn.index(items, "codex") + 1
  end, function()
    press("a")
  end)
  H.eq({ "codex" }, asked[1].items, "the agents seen")
  H.eq({ agent = "codex", maxEdits = 500 }, s.calls[#s.calls].params)
  H.truthy(H.lines(buf)[1]:find(" · agent codex", 1, true), H.lines(buf)[1])
  press("a")
  H.eq({ maxEdits = 500 }, s.calls[#s.calls].params, "a again clears")

  -- f offers the file under the cursor first, then every file seen.
  cursor(LINE.file2_0)
  asked = selecting(function()
    return 1
  end, function()
    press("f")
  end)
  H.eq({ "file:///p/src/b.rs", "file:///p/a.txt" }, asked[1].items)
  H.eq({ "/p/src/b.rs", "/p/a.txt" }, asked[1].shown)
  H.eq({ uri = "file:///p/src/b.rs", maxEdits = 500 }, s.calls[#s.calls].params)
  H.truthy(H.lines(buf)[1]:find(" · file /p/src/b.rs", 1, true), H.lines(buf)[1])
  press("f")
  H.eq({ maxEdits = 500 }, s.calls[#s.calls].params, "f again clears")

  cursor(1)
  selecting(function()
    return 1
  end, function()
    press("a")
    press("f")
  end)
  H.eq({ agent = "codex", uri = "file:///p/a.txt", maxEdits = 500 }, s.calls[#s.calls].params)
  press("F")
  H.eq({ maxEdits = 500 }, s.calls[#s.calls].params, "F clears both")
  H.eq("Verbatim timeline · 2 sessions, 5 entries read", H.lines(buf)[1])

  -- Cancelled: nothing changes.
  local count = #s.calls
  selecting(function()
    return nil
  end, function()
    press("a")
  end)
  H.eq(count, #s.calls)
end)

H.test("a and f offer every agent and file the server lists, not only the loaded edits", function()
  local s = stub()
  s.answers["verbatim/timeline"] = function()
    local result = vim.json.decode(CANNED)
    result.agents = {
      { value = "codex", edits = 40, latest = "2026-12-03T10:04:40Z" },
      { value = "gemini", edits = 3, latest = "2026-11-01T09:00:00Z" },
    }
    result.files = {
      { value = "file:///p/a.txt", edits = 30, latest = "2026-12-03T10:04:40Z" },
      { value = "file:///p/old.txt", edits = 2, latest = "2026-11-01T09:00:00Z" },
    }
    result.sessions[1].turns[1].edits[1].files[1].newUri = "file:///p/moved.txt"
    return nil, result
  end
  open(s)
  cursor(1)
  local asked = selecting(function(items)
    return vim.fn.index(items, "gemini") + 1
  end, function()
    press("a")
  end)
  H.truthy(vim.tbl_contains(asked[1].items, "codex"), vim.inspect(asked[1].items))
  H.truthy(vim.tbl_contains(asked[1].items, "gemini"), "an agent only the server's list has")
  H.eq({ agent = "gemini", maxEdits = 500 }, s.calls[#s.calls].params)
  press("a")
  asked = selecting(function(items)
    return vim.fn.index(items, "file:///p/old.txt") + 1
  end, function()
    press("f")
  end)
  for _, uri in ipairs({
    "file:///p/a.txt",
    "file:///p/src/b.rs",
    "file:///p/old.txt",
    "file:///p/moved.txt",
  }) do
    H.truthy(vim.tbl_contains(asked[1].items, uri), uri .. " in " .. vim.inspect(asked[1].items))
  end
  H.eq({ uri = "file:///p/old.txt", maxEdits = 500 }, s.calls[#s.calls].params)
end)

H.test("f offers the file the timeline was opened from", function()
  reset()
  local root = H.workspace({ ["here.txt"] = "x\n" })
  vim.cmd.edit(vim.fn.fnameescape(root .. "/here.txt"))
  local uri = vim.uri_from_bufnr(0)
  local s = stub()
  timeline.open({ request = s.request })
  cursor(1)
  local asked = selecting(function()
    return 1
  end, function()
    press("f")
  end)
  H.eq(uri, asked[1].items[1])
  H.truthy(asked[1].shown[1]:find("(current file)", 1, true), asked[1].shown[1])
  H.eq({ uri = uri, maxEdits = 500 }, s.calls[#s.calls].params)
end)

H.test(
  "R refreshes; verbatim/journalChanged refreshes a visible timeline at once, a hidden one when shown",
  function()
    local buf, s = open()
    local view = timeline.views[buf]
    press("R")
    H.eq(2, #calls_of(s, "verbatim/timeline"))
    -- A burst of notifications is one refresh.
    for _ = 1, 5 do
      timeline.on_journal_changed({ uris = { "file:///p/a.txt" } })
    end
    H.wait_for("the refresh", function()
      return #calls_of(s, "verbatim/timeline") == 3
    end)
    vim.wait(timeline.REFRESH_DELAY_MS * 3)
    H.eq(3, #calls_of(s, "verbatim/timeline"))
    -- The refreshed answer is shown: a new edit on top, the cursor stays on its line.
    s.answers["verbatim/timeline"] = function()
      local result = vim.json.decode(CANNED)
      table.insert(result.sessions[1].turns[1].edits, 1, {
        writeId = "18c3-41233-11",
        time = "2026-12-03T10:05:00Z",
        agent = "codex",
        summary = "One more",
        outcome = "applied",
        files = {
          {
            id = "18c3-41233-11.0",
            uri = "file:///p/a.txt",
            outcome = "applied",
            added = 1,
            removed = 0,
            revertible = true,
          },
        },
      })
      return nil, result
    end
    cursor(LINE.edit7)
    timeline.on_journal_changed({ uris = { "file:///p/a.txt" } })
    H.wait_for("the new edit", function()
      return H.lines(buf)[LINE.edit9]:find("One more", 1, true)
    end)
    H.eq(LINE.edit7 + 2, api.nvim_win_get_cursor(0)[1], "still on the same edit")

    -- Filtered to a file, changes of other files do not refresh.
    view.uri = "file:///p/src/b.rs"
    local count = #calls_of(s, "verbatim/timeline")
    timeline.on_journal_changed({ uris = { "file:///p/a.txt" } })
    vim.wait(timeline.REFRESH_DELAY_MS * 3)
    H.eq(count, #calls_of(s, "verbatim/timeline"))
    view.uri = nil

    -- Hidden (its window closed, the buffer kept): refreshed when shown again.
    vim.bo[buf].bufhidden = "hide"
    vim.cmd("tab split")
    vim.cmd("enew")
    timeline.on_journal_changed({ uris = { "file:///p/a.txt" } })
    -- Still visible in the first tab page: refreshed.
    H.wait_for("the refresh", function()
      return #calls_of(s, "verbatim/timeline") == count + 1
    end)
    vim.cmd("tabonly")
    H.eq(0, #vim.fn.win_findbuf(buf))
    timeline.on_journal_changed({ uris = { "file:///p/a.txt" } })
    vim.wait(timeline.REFRESH_DELAY_MS * 3)
    H.eq(count + 1, #calls_of(s, "verbatim/timeline"), "not while hidden")
    vim.cmd("buffer " .. buf)
    H.eq(count + 2, #calls_of(s, "verbatim/timeline"), "once shown")
  end
)

H.test("an answer to an older request, or asked with other filters, is dropped", function()
  local pending = {}
  local buf = open({
    request = function(_, params, callback)
      table.insert(pending, { params = params, callback = callback })
    end,
  })
  local view = timeline.views[buf]
  H.eq("Verbatim timeline · loading…", H.lines(buf)[1])
  timeline.refresh(view)
  pending[2].callback(nil, vim.json.decode(CANNED))
  H.eq(expected_lines(), H.lines(buf))
  pending[1].callback(nil, { sessions = {}, entries = 0, truncated = false })
  H.eq(expected_lines(), H.lines(buf), "the older answer came late: dropped")
  -- Asked without a filter, answered after the agent filter was set: dropped.
  timeline.refresh(view)
  selecting(function()
    return 1
  end, function()
    press("a")
  end)
  H.eq({ maxEdits = 500 }, pending[3].params)
  H.eq({ agent = "codex", maxEdits = 500 }, pending[4].params)
  pending[4].callback(nil, { sessions = {}, entries = 9, truncated = false })
  H.eq("Verbatim timeline · 0 sessions, 9 entries read · agent codex", H.lines(buf)[1])
  pending[3].callback(nil, vim.json.decode(CANNED))
  H.eq("Verbatim timeline · 0 sessions, 9 entries read · agent codex", H.lines(buf)[1])
end)

H.test("a failed request is shown in the buffer; R asks again", function()
  local s = stub()
  s.answers["verbatim/timeline"] = function()
    return { code = -33015, message = "Reading the journal failed: permission denied" }
  end
  local buf = open(s)
  H.eq("Verbatim timeline", H.lines(buf)[1])
  H.eq(
    "  Could not read the timeline: Reading the journal failed: permission denied",
    H.lines(buf)[3]
  )
  s.answers["verbatim/timeline"] = function()
    return nil, vim.json.decode(CANNED)
  end
  press("R")
  H.eq(expected_lines(), H.lines(buf))
end)

H.test("q closes the timeline; :Verbatim timeline opens it again, or goes to it", function()
  local buf = open()
  H.eq(2, #api.nvim_tabpage_list_wins(0), "a split")
  press("q")
  H.eq(1, #api.nvim_tabpage_list_wins(0))
  H.eq(false, api.nvim_buf_is_valid(buf), "wiped")
  H.eq(nil, next(timeline.views))
  -- Alone in its tab page: q still closes it.
  buf = open()
  vim.cmd("only")
  press("q")
  H.eq(false, api.nvim_buf_is_valid(buf))
  -- Opened twice: one view, the cursor goes to it.
  buf = open()
  vim.cmd("wincmd p")
  local again = timeline.open()
  H.eq(buf, again)
  H.eq(buf, api.nvim_get_current_buf())
  H.eq(1, vim.tbl_count(timeline.views))
end)

H.test(
  ":Verbatim timeline [file] through the Verbatim client; journalChanged reaches it",
  function()
    reset()
    local root = H.workspace({ ["w.txt"] = "w\n" })
    vim.cmd.edit(vim.fn.fnameescape(root .. "/w.txt"))
    local file_buf = api.nvim_get_current_buf()
    local log = {
      notifications = {},
      requests = {},
      answers = { ["verbatim/timeline"] = vim.json.decode(CANNED) },
    }
    local client, dispatchers = H.fake_verbatim(file_buf, nil, log)
    local function timeline_requests()
      return vim.tbl_filter(function(r)
        return r.method == "verbatim/timeline"
      end, log.requests)
    end
    vim.cmd("Verbatim timeline %")
    local buf = api.nvim_get_current_buf()
    H.eq(timeline.BUF_NAME, api.nvim_buf_get_name(buf))
    H.wait_for("the timeline from the server", function()
      return H.lines(buf)[3] == expected_lines()[3] and H.lines(buf)
    end)
    H.eq(
      { uri = vim.uri_from_fname(root .. "/w.txt"), maxEdits = 500 },
      timeline_requests()[1].params
    )
    H.eq(client.id, timeline.views[buf].client_id)
    -- The server's notification, through the plugin's handler.
    dispatchers.notification(
      "verbatim/journalChanged",
      { uris = { vim.uri_from_fname(root .. "/w.txt") } }
    )
    H.wait_for("the refresh", function()
      return #timeline_requests() == 2
    end)
    -- Unfiltered, opened in a new tab page (command modifiers apply).
    press("F")
    vim.cmd("tab Verbatim timeline")
    H.eq({ maxEdits = 500 }, timeline_requests()[#timeline_requests()].params)
    H.eq(2, #api.nvim_list_tabpages())
    vim.cmd("tabonly")
    client:stop(true)
    H.wait_for("the client to stop", function()
      return vim.lsp.get_client_by_id(client.id) == nil
    end)
    -- Without a server, the view says so.
    press("R")
    H.wait_for("the message", function()
      return (H.lines(buf)[3] or ""):find("no Verbatim server is running", 1, true)
    end)
  end
)

H.test(
  "a large timeline: its lines set at once, its highlights drawn for the screen only",
  function()
    local small, large = data.result(500), data.result(10000)
    local answer = small
    local buf = open({
      request = function(_, _, callback)
        callback(nil, answer)
      end,
    })
    local view = timeline.views[buf]
    local set_lines_calls = 0
    local original = api.nvim_buf_set_lines
    api.nvim_buf_set_lines = function(...)
      set_lines_calls = set_lines_calls + 1
      return original(...)
    end
    local ok, err = pcall(function()
      answer = large
      timeline.refresh(view)
    end)
    api.nvim_buf_set_lines = original
    assert(ok, err)
    H.eq(1, set_lines_calls, "one nvim_buf_set_lines")
    H.eq(2 + 10000 * 2 + 200 * 6, api.nvim_buf_line_count(buf))
    vim.cmd("redraw")
    H.eq({}, api.nvim_buf_get_extmarks(buf, timeline.ns, 0, -1, {}), "no stored extmark")
    -- Linear in the size: 20 times the entries, at most about 20 times the time.
    H.assert_cost_ratio("the timeline of 500 vs 10,000 entries", 60, function()
      answer = small
      timeline.refresh(view)
    end, function()
      answer = large
      timeline.refresh(view)
    end, 3)
  end
)

H.test("screenshot: the timeline and a diff as Neovim draws them", function()
  local Child = require("helpers.child")
  local child = Child.start({ TZ = "UTC" })
  child:lua(
    [[
    local canned = ...
    vim.o.columns, vim.o.lines = 72, 18
    vim.o.laststatus, vim.o.ruler, vim.o.showmode, vim.o.showcmd = 0, false, false, false
    vim.cmd("colorscheme default")
    vim.o.background = "dark"
    local timeline = require("verbatim.timeline")
    timeline.now = function() return 1796292300 end
    local answers = {
      ["verbatim/timeline"] = vim.json.decode(canned),
      ["verbatim/timelineEntry"] = {
        id = "18c3-41233-2.0",
        uri = "file:///p/src/b.rs",
        before = "fn run() {}\nfn main() {\n    run();\n}\n",
        after = "fn start() {}\nfn main() {\n    start();\n}\n",
      },
    }
    timeline.open({
      mods = "",
      request = function(method, _, callback) callback(nil, answers[method]) end,
    })
    vim.cmd("only")
    vim.api.nvim_win_set_cursor(0, { 12, 0 })
  ]],
    CANNED
  )
  child:expect_screenshot("timeline.txt")
  child:input("<CR>")
  child:wait_for("the diff tab page", "return #vim.api.nvim_list_tabpages() == 2")
  child:lua("vim.o.showtabline = 0")
  child:expect_screenshot("timeline_diff.txt")
  child:stop()
end)
