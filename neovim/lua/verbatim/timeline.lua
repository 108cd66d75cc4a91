---@brief
--- `:Verbatim timeline`: every agent's changes the server journaled, newest
--- first, grouped session → turn → edit → file, in a scratch buffer in the
--- manner of fugitive's `:Git log` and diffview.nvim's file history. <CR>
--- folds a level or opens a file's diff in its own language, `X` reverts
--- what is under the cursor (the revert comes back as an ordinary review),
--- `m` marks a file of a turn reviewed, `a`/`f` filter by agent or file.
--- It asks for the newest edits only (`timeline.max_edits`, 500 by default),
--- and `L` for twice as many.
---
--- The view speaks to the server through one function, `request(method,
--- params, callback)`: by default the Verbatim LSP client of the buffer the
--- timeline was opened from (else the first one running); `open({ request =
--- fn })` replaces it, which is how the tests feed it canned results.
---
--- A journal of 10,000 entries is a buffer of some 20,000 lines, so the view
--- is built for that: every line in one table and one `nvim_buf_set_lines`,
--- and no extmark per line (20,000 lines × 4 highlights cost half a second to
--- place). The highlights of each line are kept as a flat list of spans, and
--- a decoration provider draws them as ephemeral extmarks for the lines on
--- screen only, as Neovim's own Tree-sitter highlighter does. And most of
--- such a journal is not asked for at all: its newest 500 edits are some
--- 190 KB of JSON to decode instead of 3.8 MB, and 1,100 lines instead of
--- 21,000.

local api = vim.api
local protocol = require("verbatim.protocol")

local M = {}

M.BUF_NAME = "verbatim://timeline"
M.FILETYPE = "verbatim-timeline"

--- The namespace of the highlights (ephemeral, drawn by the decoration provider).
M.ns = api.nvim_create_namespace("verbatim.timeline")

--- How long a burst of `verbatim/journalChanged` is gathered into one refresh.
M.REFRESH_DELAY_MS = 50

--- The current time in seconds since the epoch; tests replace it.
M.now = os.time

---@alias verbatim.TimelineRequest fun(method: string, params: table, callback: fun(err: lsp.ResponseError|{ message: string }|nil, result: any))

---@class verbatim.TimelineNode What one line of the view shows.
---@field kind "header"|"session"|"turn"|"edit"|"file"
---@field session? verbatim.TimelineSession
---@field turn? verbatim.TimelineTurn
---@field turn_number? integer the turn's place in its session, the oldest 1 (nil: not known, older turns left out)
---@field edit? verbatim.TimelineEdit
---@field file? verbatim.TimelineFile
---@field reviewed? boolean for a file: marked reviewed for its turn

---@class verbatim.TimelineView
---@field buf integer
---@field request verbatim.TimelineRequest
---@field client_id integer|nil the Verbatim client the default request goes to (nil when injected)
---@field origin_uri string|nil the file of the buffer the timeline was opened from
---@field agent string|nil the agent filter
---@field uri string|nil the file filter
---@field max_edits integer|nil how many edits to ask for, the newest (nil: all)
---@field result verbatim.TimelineResult|nil the latest answer
---@field result_max_edits integer|nil the `maxEdits` the latest answer was asked with
---@field error string|nil why the latest request failed
---@field seq integer the number of the latest timeline request
---@field shown_seq integer the number of the request whose answer is shown; older answers are dropped
---@field filter_gen integer one more at each change of filters; answers asked with other filters are dropped
---@field placed boolean the cursor was put on the first change once
---@field refresh_timer boolean a refresh is scheduled
---@field stale boolean the journal changed while no window showed the view
---@field show_help boolean the long help is shown
---@field collapsed { sessions: table<string, true>, turns: table<string, true>, edits: table<string, true> }
---@field nodes verbatim.TimelineNode[] by line
---@field spans table<integer, (integer|string)[]> by line: start column, end column, group, ...
---@field agents table<string, true> every agent seen, for the filter
---@field files table<string, true> every file seen, for the filter
---@field paths verbatim.TimelinePaths file names as shown

--- By buffer number.
---@type table<integer, verbatim.TimelineView>
M.views = {}

local HEADER = { kind = "header" } ---@type verbatim.TimelineNode

--- A message; answers (a revert's comes once the person has reviewed it)
--- may arrive while they type in a terminal, hence verbatim.notice.
---@param msg string
---@param level? integer
local function notify(msg, level)
  require("verbatim.notice").notify("verbatim: " .. msg, level or vim.log.levels.INFO)
end

---@param err any
---@return string
local function error_message(err)
  if type(err) == "table" and type(err.message) == "string" then
    return err.message
  end
  return tostring(err)
end

-- Times ---------------------------------------------------------------------

--- Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm), so
--- that a UTC timestamp becomes epoch seconds without os.time(), which reads
--- its table as local time.
---@param y integer
---@param m integer
---@param d integer
---@return integer
local function days_from_civil(y, m, d)
  if m <= 2 then
    y = y - 1
  end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * ((m + 9) % 12) + 2) / 5) + d - 1
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

--- Seconds since the epoch of an RFC 3339 time, or nil.
---@param text any
---@return integer|nil
function M.parse_time(text)
  if type(text) ~= "string" then
    return nil
  end
  local y, mo, d, h, mi, s, rest =
    text:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)[Tt ](%d%d):(%d%d):(%d%d)(.*)$")
  if not y then
    return nil
  end
  local offset = 0
  local sign, oh, om = rest:match("([+-])(%d%d):?(%d%d)$")
  if sign then
    offset = (tonumber(oh) * 3600 + tonumber(om) * 60) * (sign == "-" and -1 or 1)
  end
  local days = days_from_civil(tonumber(y), tonumber(mo), tonumber(d))
  return days * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(s) - offset
end

--- A time as the view shows it, in local time: `HH:MM` today, `MM-DD HH:MM`
--- this year, `YYYY-MM-DD HH:MM` before.
---@param text any
---@param clock { today: string, year: string, shown: table<string, string> } now's date and year, and a cache
---@return string
local function show_time(text, clock)
  if type(text) ~= "string" then
    return "?"
  end
  -- The seconds of a UTC time are not shown: one entry per minute does.
  local key = (#text == 20 and text:byte(20) == 90) and text:sub(1, 16) or text
  local shown = clock.shown[key]
  if shown then
    return shown
  end
  local epoch = M.parse_time(text)
  if not epoch then
    shown = "?"
  else
    local date = os.date("%Y-%m-%d %H:%M", epoch) --[[@as string]]
    if date:sub(1, 10) == clock.today then
      shown = date:sub(12)
    elseif date:sub(1, 4) == clock.year then
      shown = date:sub(6)
    else
      shown = date
    end
  end
  clock.shown[key] = shown
  return shown
end

--- From one time to another, the date once when they share it.
---@param first any
---@param last any
---@param clock { today: string, year: string, shown: table<string, string> }
---@return string
local function show_span(first, last, clock)
  local a, b = show_time(first, clock), show_time(last, clock)
  if a == b then
    return a
  elseif #a == #b and #a > 5 and a:sub(1, -6) == b:sub(1, -6) then
    return a .. "–" .. b:sub(-5)
  end
  return a .. "–" .. b
end

---@return { today: string, year: string, shown: table<string, string> }
local function clock_now()
  local today = os.date("%Y-%m-%d", M.now()) --[[@as string]]
  return { today = today, year = today:sub(1, 4), shown = {} }
end

-- Building the lines -----------------------------------------------------------

--- What each outcome is called and how it is highlighted.
local OUTCOMES = {
  applied = { "applied", "VerbatimTimelineApplied" },
  reloaded = { "reloaded", "VerbatimTimelineApplied" },
  answeredLate = { "late", "VerbatimTimelineApplied" },
  deleted = { "deleted", "VerbatimTimelineApplied" },
  moved = { "moved", "VerbatimTimelineApplied" },
  partial = { "partial", "VerbatimTimelinePartial" },
  modifiedByEditor = { "modified", "VerbatimTimelinePartial" },
  differsFromAnswer = { "differs", "VerbatimTimelinePartial" },
  conflict = { "conflict", "VerbatimTimelinePartial" },
  savedOver = { "savedover", "VerbatimTimelinePartial" },
  rejected = { "rejected", "VerbatimTimelineRejected" },
  error = { "error", "VerbatimTimelineRejected" },
  notAnswered = { "unanswered", "VerbatimTimelineRejected" },
  reverted = { "reverted", "VerbatimTimelineReverted" },
}

--- Runs of spaces by length, to align the summaries after the outcomes.
local PADDING = {}
for i = 1, 10 do
  PADDING[i] = string.rep(" ", i)
end

--- The keys, one line (the header's second line).
M.HELP_LINE =
  "g? help · <CR> diff/fold · X revert · m reviewed · a agent · f file · F all · L older · R refresh · q close"

--- The keys, explained (g? shows them under the header).
M.HELP = {
  "  <CR>  on a file: its diff in a new tab (before | after, in the file's language);",
  "        on a session, turn or edit: fold or unfold it",
  "  X     revert what is under the cursor (a file of an edit, an edit, a turn or a",
  "        session), after you confirm; the revert is offered for review like any edit",
  "  m     mark the file under the cursor reviewed for its turn (again: unmark)",
  "  a     show one agent's changes (again: every agent's)",
  "  f     show the changes of one file (again: of every file)",
  "  L     show older changes: ask for twice as many edits (the first line says",
  "        when older ones are left out)",
  "  F     clear both filters      R  refresh      q  close      g?  this help",
}

-- The line being built: its parts, its length in bytes, its highlight spans.
local parts, part_count, line_len, building_spans = {}, 0, 0, {}

---@param text string
---@param group? string
local function put(text, group)
  if group and text ~= "" then
    local n = #building_spans
    building_spans[n + 1] = line_len
    building_spans[n + 2] = line_len + #text
    building_spans[n + 3] = group
  end
  part_count = part_count + 1
  parts[part_count] = text
  line_len = line_len + #text
end

---@return string line
---@return (integer|string)[]|nil spans
local function finish()
  local line = table.concat(parts, "", 1, part_count)
  local spans = building_spans[1] and building_spans or nil
  part_count, line_len, building_spans = 0, 0, {}
  return line, spans
end

---@param spans (integer|string)[]
---@param first integer
---@param last integer
---@param group string
local function append_span(spans, first, last, group)
  local k = #spans
  spans[k + 1], spans[k + 2], spans[k + 3] = first, last, group
end

---@param n integer
---@param one string
---@param many string
---@return string
local function count(n, one, many)
  return n .. " " .. (n == 1 and one or many)
end

--- A number with its thousands apart: 10,000.
---@param n integer
---@return string
local function thousands(n)
  local text = tostring(n)
  local first = #text % 3 == 0 and 3 or #text % 3
  return text:sub(1, first) .. text:sub(first + 1):gsub("(%d%d%d)", ",%1")
end

--- How many edits an answer holds (fewer than it counts in `edits` when
--- `maxEdits` or `limit` left some out).
---@param result verbatim.TimelineResult
---@return integer
local function edits_shown(result)
  local n = 0
  for _, session in ipairs(type(result.sessions) == "table" and result.sessions or {}) do
    for _, turn in ipairs(type(session.turns) == "table" and session.turns or {}) do
      n = n + (type(turn.edits) == "table" and #turn.edits or 0)
    end
  end
  return n
end

--- A turn's edits in all: `editCount`, more than it holds when `maxEdits`
--- cut it.
---@param turn verbatim.TimelineTurn
---@return integer
local function turn_edit_count(turn)
  local held = type(turn.edits) == "table" and #turn.edits or 0
  local total = tonumber(turn.editCount)
  return total and total > held and total or held
end

--- A short form of an opaque id, for display.
---@param id any
---@return string
local function short_id(id)
  id = tostring(id or "?")
  id = id:gsub("^auto:", "")
  if #id > 12 then
    return id:sub(1, 8) .. "…"
  end
  return id
end

---@class verbatim.TimelineBuildOptions
---@field collapsed { sessions: table<string, true>, turns: table<string, true>, edits: table<string, true> }
---@field agent? string the agent filter, shown in the header
---@field uri? string the file filter, shown in the header
---@field error? string shown instead of the result's lines
---@field max_edits? integer the `maxEdits` the result was asked with
---@field show_help? boolean
---@field paths? verbatim.TimelinePaths a cache of file names as shown

---@class verbatim.TimelinePaths File names as shown, by URI, for one working directory.
---@field cwd string
---@field home string
---@field names table<string, string>

--- A cache of file names as shown; a new one when the working directory changed.
---@param cache? verbatim.TimelinePaths
---@return verbatim.TimelinePaths
function M.paths(cache)
  local cwd = vim.fn.getcwd()
  if cache and cache.cwd == cwd then
    return cache
  end
  return { cwd = cwd, home = vim.uv.os_homedir() or "", names = {} }
end

--- A file's name as shown: relative to the working directory, `~` for home
--- (as fnamemodify's `:~:.`, without its cost for thousands of files).
---@param uri string
---@param cache verbatim.TimelinePaths
---@return string
local function display_path(uri, cache)
  local name = cache.names[uri]
  if name then
    return name
  end
  local path
  if uri:sub(1, 7) == "file://" and not uri:find("%", 8, true) then
    path = uri:sub(8)
  else
    local ok, fname = pcall(vim.uri_to_fname, uri)
    path = ok and fname or uri
  end
  local cwd, home = cache.cwd, cache.home
  if cwd ~= "" and cwd ~= "/" and path:sub(1, #cwd + 1) == cwd .. "/" then
    name = path:sub(#cwd + 2)
  elseif home ~= "" and home ~= "/" and path:sub(1, #home + 1) == home .. "/" then
    name = "~" .. path:sub(#home + 1)
  else
    name = path
  end
  cache.names[uri] = name
  return name
end
M.display_path = display_path

-- Edit and file lines are most of a large timeline. Each is built as one
-- string with its highlights placed by arithmetic, in a function of its own:
-- LuaJIT gives up compiling a loop body that keeps too many values alive
-- ("register coalescing too complex"), and an interpreted loop over 20,000
-- lines costs several times as much.

--- An edit's line: fold mark, time, outcome, agent (when not the session's),
--- summary, and the number of files when they are not shown.
---@param edit verbatim.TimelineEdit
---@param file_count integer
---@param closed boolean
---@param session_agent string|nil
---@param clock { today: string, year: string, shown: table<string, string> }
---@return string
---@return (integer|string)[]
local function edit_line(edit, file_count, closed, session_agent, clock)
  local shown_outcome = type(edit.revertedBy) == "string" and "reverted" or tostring(edit.outcome)
  local outcome = OUTCOMES[shown_outcome] or { shown_outcome, "VerbatimTimelineOutcome" }
  local fold = closed and "    ▸ " or "    ▾ "
  local time = show_time(edit.time, clock)
  local label = outcome[1]
  local at_label = #fold + #time + 2
  -- stylua: ignore
  local sp = {
    4, #fold - 1, "VerbatimTimelineFold",
    #fold, #fold + #time, "VerbatimTimelineTime",
    at_label, at_label + #label, outcome[2],
  }
  local pad = PADDING[math.max(1, 10 - #label)]
  local at_agent = at_label + #label + #pad
  local agent = edit.agent
  if type(agent) == "string" and agent ~= session_agent then
    append_span(sp, at_agent, at_agent + #agent, "VerbatimTimelineAgent")
    agent = agent .. "  "
  else
    agent = ""
  end
  local summary = edit.summary
  if type(summary) ~= "string" then
    summary = ""
  elseif summary:find("\n", 1, true) then
    summary = summary:gsub("\n", " ")
  end
  local tail = ""
  if closed or file_count == 0 then
    local at = at_agent + #agent + #summary + 2
    tail = "  (" .. count(file_count, "file", "files") .. ")"
    append_span(sp, at, at + #tail - 2, "VerbatimTimelineId")
  end
  -- One concatenation: every string made on the way would cost as much.
  return fold .. time .. "  " .. label .. pad .. agent .. summary .. tail, sp
end

--- A file's line: reviewed mark, name, lines added and removed, its outcome
--- when not the edit's, and why it cannot be reverted.
---@param file verbatim.TimelineFile
---@param edit_outcome string|nil
---@param reviewed boolean
---@param paths verbatim.TimelinePaths
---@return string
---@return (integer|string)[]
local function file_line(file, edit_outcome, reviewed, paths)
  local mark = reviewed and "✓" or "·"
  local path = display_path(tostring(file.uri), paths)
  local added = "+" .. tostring(file.added or 0)
  local removed = "-" .. tostring(file.removed or 0)
  local at_path = 9 + #mark
  local at_added = at_path + #path + 2
  local at_removed = at_added + #added + 1
  local line = "        " .. mark .. " " .. path .. "  " .. added .. " " .. removed
  -- stylua: ignore
  local sp = {
    8, 8 + #mark, reviewed and "VerbatimTimelineReviewed" or "VerbatimTimelineFold",
    at_path, at_path + #path, "VerbatimTimelineFile",
    at_added, at_added + #added, "VerbatimTimelineAdded",
    at_removed, at_removed + #removed, "VerbatimTimelineRemoved",
  }
  local outcome = file.outcome
  if outcome ~= edit_outcome and outcome ~= nil then
    local shown = OUTCOMES[outcome] or { tostring(outcome), "VerbatimTimelineOutcome" }
    local at = #line + 2
    line = line .. "  " .. shown[1]
    append_span(sp, at, #line, shown[2])
  end
  if file.revertible == false then
    local at = #line + 2
    line = line .. "  not revertible (" .. tostring(file.whyNot or "?") .. ")"
    append_span(sp, at, #line, "VerbatimTimelineId")
  end
  return line, sp
end

--- The view's lines for a timeline result, with what each line shows and
--- its highlights. Pure: no buffer is touched.
---@param result verbatim.TimelineResult|nil nil: not answered yet
---@param opts verbatim.TimelineBuildOptions
---@return string[] lines
---@return verbatim.TimelineNode[] nodes
---@return table<integer, (integer|string)[]> spans by line
function M.build(result, opts)
  local collapsed = opts.collapsed
  local paths = M.paths(opts.paths)
  local clock = clock_now()
  local lines, nodes, spans = {}, {}, {}
  local n = 0
  local function emit(node)
    n = n + 1
    lines[n], spans[n] = finish()
    nodes[n] = node
  end

  local sessions = result and type(result.sessions) == "table" and result.sessions or {}
  -- An answer `maxEdits` cut (it holds as many edits as it was asked for)
  -- may leave out older turns of its last session: their numbers, counted
  -- from the oldest, are not known there.
  local shown_edits = result and edits_shown(result) or 0
  local cut_by_max = result ~= nil
    and result.truncated == true
    and opts.max_edits ~= nil
    and shown_edits >= opts.max_edits
  local cut_session = cut_by_max and sessions[#sessions] or nil
  put("Verbatim timeline", "VerbatimTimelineTitle")
  if result then
    local entries = tonumber(result.entries) or 0
    put(
      " · "
        .. count(#sessions, "session", "sessions")
        .. ", "
        .. thousands(entries)
        .. (entries == 1 and " entry read" or " entries read")
    )
    if result.truncated == true then
      -- Cut by `maxEdits`, or else by the server's limit of sessions, which
      -- L cannot lift.
      local total = tonumber(result.edits)
      if cut_by_max and total and total > shown_edits then
        put(
          " · newest "
            .. thousands(shown_edits)
            .. " of "
            .. thousands(total)
            .. " edits shown · L for older",
          "VerbatimTimelinePartial"
        )
      else
        put(" · older sessions left out", "VerbatimTimelinePartial")
      end
    end
  elseif not opts.error then
    put(" · loading…")
  end
  if opts.agent then
    put(" · agent ")
    put(opts.agent, "VerbatimTimelineFilter")
  end
  if opts.uri then
    put(" · file ")
    put(display_path(opts.uri, paths), "VerbatimTimelineFilter")
  end
  emit(HEADER)
  put(M.HELP_LINE, "VerbatimTimelineHelp")
  emit(HEADER)
  if opts.show_help then
    for _, line in ipairs(M.HELP) do
      put(line, "VerbatimTimelineHelp")
      emit(HEADER)
    end
  end
  if opts.error then
    put("  Could not read the timeline: " .. opts.error:gsub("\n", " "), "VerbatimTimelineRejected")
    emit(HEADER)
    return lines, nodes, spans
  end
  if result and #sessions == 0 then
    put(
      (opts.agent or opts.uri) and "  Nothing journaled matches the filters (F clears them)."
        or "  Nothing journaled yet.",
      "VerbatimTimelineHelp"
    )
    emit(HEADER)
  end

  for _, session in ipairs(sessions) do
    local turns = type(session.turns) == "table" and session.turns or {}
    local session_id = tostring(session.session)
    local session_closed = collapsed.sessions[session_id]
    local session_agent = session.agent
    local edit_count = 0
    for _, turn in ipairs(turns) do
      edit_count = edit_count + (type(turn.edits) == "table" and #turn.edits or 0)
    end
    put(session_closed and "▸ " or "▾ ", "VerbatimTimelineFold")
    put(
      type(session_agent) == "string" and session_agent or tostring(session.source or "?"),
      "VerbatimTimelineAgent"
    )
    put("  ")
    put(show_span(session.started, session.ended, clock), "VerbatimTimelineTime")
    put("  " .. count(#turns, "turn", "turns") .. ", " .. count(edit_count, "edit", "edits"))
    if session == cut_session then
      put(" shown", "VerbatimTimelinePartial")
    end
    -- Changes on disk are one session named after their source: the agent's
    -- place already says "disk".
    local source = tostring(session.source or "")
    if session_id ~= source then
      put("  " .. source .. " session " .. short_id(session_id), "VerbatimTimelineId")
    end
    emit({ kind = "session", session = session })

    if not session_closed then
      for turn_index, turn in ipairs(turns) do
        local edits = type(turn.edits) == "table" and turn.edits or {}
        local turn_files = type(turn.files) == "table" and turn.files or {}
        local turn_key = session_id .. "\0" .. tostring(turn.turn)
        local turn_closed = collapsed.turns[turn_key]
        local turn_number = session ~= cut_session and #turns - turn_index + 1 or nil
        local reviewed_by_uri, reviewed = {}, 0
        for _, f in ipairs(turn_files) do
          if f.reviewed == true then
            reviewed_by_uri[f.uri] = true
            reviewed = reviewed + 1
          end
        end
        put(turn_closed and "  ▸ " or "  ▾ ", "VerbatimTimelineFold")
        put("turn " .. (turn_number or "?"), "VerbatimTimelineTurn")
        put("  ")
        put(show_span(turn.started, turn.ended, clock), "VerbatimTimelineTime")
        local edit_total = turn_edit_count(turn)
        if edit_total > #edits then
          -- `maxEdits` cut this turn: its older edits are not in the answer.
          put("  ")
          put(
            "showing " .. #edits .. " of " .. count(edit_total, "edit", "edits"),
            "VerbatimTimelinePartial"
          )
        else
          put("  " .. count(#edits, "edit", "edits"))
        end
        if #turn_files > 0 then
          put(", ")
          put(
            reviewed .. "/" .. count(#turn_files, "file", "files") .. " reviewed",
            reviewed == #turn_files and "VerbatimTimelineReviewed" or nil
          )
        end
        put("  " .. short_id(turn.turn), "VerbatimTimelineId")
        emit({ kind = "turn", session = session, turn = turn, turn_number = turn_number })

        if not turn_closed then
          for _, edit in ipairs(edits) do
            local files = type(edit.files) == "table" and edit.files or {}
            local edit_closed = collapsed.edits[tostring(edit.writeId)] == true
            n = n + 1
            lines[n], spans[n] = edit_line(edit, #files, edit_closed, session_agent, clock)
            nodes[n] = {
              kind = "edit",
              session = session,
              turn = turn,
              turn_number = turn_number,
              edit = edit,
            }
            if not edit_closed then
              for _, file in ipairs(files) do
                local is_reviewed = reviewed_by_uri[file.uri] == true
                n = n + 1
                lines[n], spans[n] = file_line(file, edit.outcome, is_reviewed, paths)
                nodes[n] = {
                  kind = "file",
                  session = session,
                  turn = turn,
                  turn_number = turn_number,
                  edit = edit,
                  file = file,
                  reviewed = is_reviewed,
                }
              end
            end
          end
        end
      end
    end
  end
  return lines, nodes, spans
end

-- The buffer -----------------------------------------------------------------

local provider_set = false

--- Highlight groups, linked by default (a colour scheme may set them).
function M.create_highlights()
  for name, link in pairs({
    VerbatimTimelineTitle = "Title",
    VerbatimTimelineHelp = "Comment",
    VerbatimTimelineFold = "NonText",
    VerbatimTimelineAgent = "Identifier",
    VerbatimTimelineTurn = "Statement",
    VerbatimTimelineTime = "Number",
    VerbatimTimelineId = "Comment",
    VerbatimTimelineSummary = "Normal",
    VerbatimTimelineFile = "Directory",
    VerbatimTimelineAdded = "Added",
    VerbatimTimelineRemoved = "Removed",
    VerbatimTimelineApplied = "DiagnosticOk",
    VerbatimTimelinePartial = "DiagnosticWarn",
    VerbatimTimelineRejected = "DiagnosticError",
    VerbatimTimelineReverted = "DiagnosticInfo",
    VerbatimTimelineOutcome = "Normal",
    VerbatimTimelineReviewed = "DiagnosticOk",
    VerbatimTimelineFilter = "WarningMsg",
  }) do
    api.nvim_set_hl(0, name, { link = link, default = true })
  end
end

--- The decoration provider and the autocommands, once.
local function set_up()
  if provider_set then
    return
  end
  provider_set = true
  M.create_highlights()
  local group = api.nvim_create_augroup("verbatim.timeline", { clear = true })
  api.nvim_create_autocmd("ColorScheme", {
    group = group,
    desc = "verbatim: the timeline's highlight groups",
    callback = M.create_highlights,
  })
  api.nvim_set_decoration_provider(M.ns, {
    on_win = function(_, _, buf)
      return M.views[buf] ~= nil
    end,
    on_line = function(_, _, buf, row)
      local view = M.views[buf]
      local spans = view and view.spans[row + 1]
      if not spans then
        return
      end
      for i = 1, #spans, 3 do
        api.nvim_buf_set_extmark(buf, M.ns, row, spans[i], {
          end_col = spans[i + 1],
          hl_group = spans[i + 2],
          ephemeral = true,
        })
      end
    end,
  })
end

--- Whether two nodes show the same thing (of two answers, or before and
--- after a fold), to keep the cursor on it.
---@param a verbatim.TimelineNode
---@param b verbatim.TimelineNode
---@return boolean
local function same_node(a, b)
  local kind = a.kind
  if kind ~= b.kind then
    return false
  elseif kind == "file" then
    return a.file.id == b.file.id
  elseif kind == "edit" then
    return a.edit.writeId == b.edit.writeId
  elseif kind == "turn" then
    return a.turn.turn == b.turn.turn and a.session.session == b.session.session
  elseif kind == "session" then
    return a.session.session == b.session.session
  end
  return false
end

--- Rebuilds the view's lines from its latest result; cursors stay on what
--- they were on.
---@param view verbatim.TimelineView
function M.render(view)
  local buf = view.buf
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  local wins = vim.fn.win_findbuf(buf)
  local cursors = {}
  for _, win in ipairs(wins) do
    local row = api.nvim_win_get_cursor(win)[1]
    local node = view.nodes[row]
    cursors[win] = { row = row, node = node and node.kind ~= "header" and node or nil }
  end
  view.paths = M.paths(view.paths)
  local lines, nodes, spans = M.build(view.result, {
    collapsed = view.collapsed,
    agent = view.agent,
    uri = view.uri,
    error = view.error,
    max_edits = view.result_max_edits,
    show_help = view.show_help,
    paths = view.paths,
  })
  view.nodes, view.spans = nodes, spans
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  -- The first answer puts the cursor on the newest change, as a log does.
  local first_change = nil
  if not view.placed and view.result then
    view.placed = true
    for i, node in ipairs(nodes) do
      if node.kind ~= "header" then
        first_change = i
        break
      end
    end
  end
  for win, cursor in pairs(cursors) do
    local row = math.min(cursor.row, #lines)
    if first_change then
      row = first_change
    elseif cursor.node then
      for i = 1, #nodes do
        if same_node(nodes[i], cursor.node) then
          row = i
          break
        end
      end
    end
    api.nvim_win_set_cursor(win, { row, 0 })
  end
end

--- Remembers the agents and files of a result, for the filters: the server's
--- lists of every agent and file of the journals (older than the edits loaded
--- too), and those of the edits loaded (an older server sends no lists).
---@param view verbatim.TimelineView
---@param result verbatim.TimelineResult
local function remember(view, result)
  for kind, seen in pairs({ agents = view.agents, files = view.files }) do
    for _, choice in ipairs(type(result[kind]) == "table" and result[kind] or {}) do
      if type(choice) == "table" and type(choice.value) == "string" then
        seen[choice.value] = true
      end
    end
  end
  for _, session in ipairs(type(result.sessions) == "table" and result.sessions or {}) do
    if type(session.agent) == "string" then
      view.agents[session.agent] = true
    end
    for _, turn in ipairs(type(session.turns) == "table" and session.turns or {}) do
      for _, edit in ipairs(type(turn.edits) == "table" and turn.edits or {}) do
        if type(edit.agent) == "string" then
          view.agents[edit.agent] = true
        end
        for _, file in ipairs(type(edit.files) == "table" and edit.files or {}) do
          if type(file.uri) == "string" then
            view.files[file.uri] = true
          end
          if type(file.newUri) == "string" then
            view.files[file.newUri] = true
          end
        end
      end
    end
  end
end

--- Asks the server for the timeline (with the view's filters) and shows it.
--- An answer is dropped when a later one is shown already, or when the
--- filters changed since it was asked for; answers are not waited for, so a
--- burst of refreshes never starves the view.
---@param view verbatim.TimelineView
function M.refresh(view)
  view.stale = false
  view.seq = view.seq + 1
  local seq, gen, max_edits = view.seq, view.filter_gen, view.max_edits
  ---@type verbatim.TimelineParams
  local params = { agent = view.agent, uri = view.uri, maxEdits = max_edits }
  view.request(protocol.methods.timeline, params, function(err, result)
    if M.views[view.buf] ~= view or gen ~= view.filter_gen or seq < view.shown_seq then
      return
    end
    view.shown_seq = seq
    if err then
      view.error = error_message(err)
    elseif type(result) ~= "table" then
      view.error = "the server sent no timeline"
    else
      view.error = nil
      view.result, view.result_max_edits = result, max_edits
      remember(view, result)
    end
    M.render(view)
  end)
end

--- Refreshes a moment later, once for a burst of calls.
---@param view verbatim.TimelineView
function M.schedule_refresh(view)
  if view.refresh_timer then
    return
  end
  view.refresh_timer = true
  vim.defer_fn(function()
    view.refresh_timer = false
    if M.views[view.buf] == view then
      M.refresh(view)
    end
  end, M.REFRESH_DELAY_MS)
end

--- `verbatim/journalChanged`: every view showing those files refreshes, now
--- if a window shows it, else when one does again.
---@param params verbatim.JournalChangedParams|nil
---@param client_id? integer the client it came from
function M.on_journal_changed(params, client_id)
  local uris = type(params) == "table" and type(params.uris) == "table" and params.uris or nil
  for _, view in pairs(M.views) do
    local concerns = not (view.client_id and client_id and view.client_id ~= client_id)
    if concerns and view.uri and uris then
      concerns = vim.tbl_contains(uris, view.uri)
    end
    if concerns then
      if #vim.fn.win_findbuf(view.buf) > 0 then
        M.schedule_refresh(view)
      else
        view.stale = true
      end
    end
  end
end

--- The default request function: the Verbatim client of `bufnr`, else the
--- first one running. The view remembers which, to take only that server's
--- `verbatim/journalChanged`.
---@param view verbatim.TimelineView
---@param bufnr integer
---@return verbatim.TimelineRequest
local function client_request(view, bufnr)
  local lsp = require("verbatim.lsp")
  local first = lsp.client_for(bufnr) or lsp.clients()[1]
  view.client_id = first and first.id or nil
  return function(method, params, callback)
    local client = view.client_id and vim.lsp.get_client_by_id(view.client_id) or nil
    if not client or client:is_stopped() then
      client = lsp.clients()[1]
      view.client_id = client and client.id or nil
    end
    if not client then
      callback({
        message = "no Verbatim server is running (open a file of the workspace; :checkhealth verbatim)",
      })
      return
    end
    local sent = client:request(method, params, function(err, result)
      callback(err, result)
    end)
    if not sent then
      callback({ message = "the Verbatim server did not take the request" })
    end
  end
end

-- Actions ----------------------------------------------------------------------

---@param view verbatim.TimelineView
---@return verbatim.TimelineNode|nil
local function node_at_cursor(view)
  local row = api.nvim_win_get_cursor(0)[1]
  local node = view.nodes[row]
  return node and node.kind ~= "header" and node or nil
end

--- Folds or unfolds a session, turn or edit.
---@param view verbatim.TimelineView
---@param node verbatim.TimelineNode
function M.toggle(view, node)
  local set, key
  if node.kind == "session" then
    set, key = view.collapsed.sessions, tostring(node.session.session)
  elseif node.kind == "turn" then
    set, key =
      view.collapsed.turns, tostring(node.session.session) .. "\0" .. tostring(node.turn.turn)
  elseif node.kind == "edit" then
    set, key = view.collapsed.edits, tostring(node.edit.writeId)
  else
    return
  end
  set[key] = not set[key] or nil
  M.render(view)
end

--- A text as lines; a CRLF text loses its CRs only when `other` is CRLF too,
--- so that a change of line endings still shows.
---@param text string
---@param other string
---@return string[]
local function text_lines(text, other)
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  local function all_crlf(t)
    return t:find("\r\n", 1, true) ~= nil
      and select(2, t:gsub("\n", "")) == select(2, t:gsub("\r\n", ""))
  end
  if all_crlf(text) and (other == "" or all_crlf(other)) then
    for i, line in ipairs(lines) do
      lines[i] = line:gsub("\r$", "")
    end
  end
  return lines
end

local scratch_count = 0

--- A read-only scratch buffer; `q` closes its tab page.
---@param lines string[]
---@param name string
---@param filetype string|nil
---@return integer
local function scratch(lines, name, filetype)
  local buf = api.nvim_create_buf(false, true)
  if vim.fn.bufexists(name) == 1 then
    -- The same entry shown twice: both tab pages keep their buffers.
    scratch_count = scratch_count + 1
    name = name .. " #" .. scratch_count
  end
  api.nvim_buf_set_name(buf, name)
  vim.bo[buf].undolevels = -1
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].modifiable = false
  if filetype and filetype ~= "" then
    vim.bo[buf].filetype = filetype
  end
  vim.keymap.set("n", "q", function()
    if not pcall(vim.cmd.tabclose) then
      pcall(vim.cmd.close)
    end
  end, { buffer = buf, nowait = true, desc = "verbatim: close the diff" })
  return buf
end

--- Shows what one entry changed in a new tab page: its texts before and
--- after side by side in diff mode, in the file's language; or the journal's
--- unified diff, when the texts were not kept.
---@param entry verbatim.TimelineEntry
---@return integer|nil before the buffers shown (nil: the unified diff only)
---@return integer|nil after
---@return integer|nil diff
function M.show_entry(entry)
  ---@param uri any
  ---@return string path
  ---@return string shown in buffer names: relative, without a leading slash
  local function names(uri)
    uri = tostring(uri)
    local ok, fname = pcall(vim.uri_to_fname, uri)
    local path = ok and fname or uri
    return path, (vim.fn.fnamemodify(path, ":~:."):gsub("^/", ""))
  end
  local path, shown = names(entry.uri)
  local prefix = "verbatim://timeline/" .. tostring(entry.id)
  local before, after = entry.before, entry.after
  if type(before) == "string" and type(after) == "string" then
    -- A moved file is shown under its new name after.
    local after_path, after_shown = path, shown
    if type(entry.newUri) == "string" then
      after_path, after_shown = names(entry.newUri)
    end
    local before_lines, after_lines = text_lines(before, after), text_lines(after, before)
    local left = scratch(
      before_lines,
      prefix .. "/before/" .. shown,
      vim.filetype.match({ filename = path, contents = before_lines })
    )
    local right = scratch(
      after_lines,
      prefix .. "/after/" .. after_shown,
      vim.filetype.match({ filename = after_path, contents = after_lines })
    )
    vim.cmd("tab sbuffer " .. left)
    vim.cmd("diffthis")
    vim.cmd("rightbelow vertical sbuffer " .. right)
    vim.cmd("diffthis")
    return left, right, nil
  end
  if type(entry.diff) ~= "string" or entry.diff == "" then
    notify("nothing of this change was kept to show (" .. shown .. ")", vim.log.levels.WARN)
    return nil, nil, nil
  end
  local diff = scratch(text_lines(entry.diff, ""), prefix .. "/diff/" .. shown, "diff")
  vim.cmd("tab sbuffer " .. diff)
  return nil, nil, diff
end

--- <CR>: a file's diff, or a fold.
---@param view verbatim.TimelineView
function M.activate(view)
  local node = node_at_cursor(view)
  if not node then
    return
  end
  if node.kind ~= "file" then
    M.toggle(view, node)
    return
  end
  view.request(protocol.methods.timeline_entry, { id = node.file.id }, function(err, entry)
    if err then
      notify(error_message(err), vim.log.levels.ERROR)
    elseif type(entry) ~= "table" then
      notify("the server sent nothing for " .. tostring(node.file.id), vim.log.levels.ERROR)
    else
      M.show_entry(entry)
    end
  end)
end

--- What `X` reverts on a line: the params of `verbatim/revert` and the
--- question that confirms it; or nil and why not.
---@param node verbatim.TimelineNode
---@param result? verbatim.TimelineResult the timeline shown, to count what a turn reverts
---@return verbatim.RevertParams|nil
---@return string question, or why it cannot be reverted
function M.revert_target(node, result)
  local function edit_words(edit)
    local summary = type(edit.summary) == "string"
        and edit.summary ~= ""
        and ('"' .. edit.summary .. '"')
      or "the edit"
    return summary
      .. " ("
      .. (type(edit.agent) == "string" and (edit.agent .. ", ") or "")
      .. show_time(edit.time, clock_now())
      .. ")"
  end
  if node.kind == "file" then
    local file = node.file
    if file.revertible == false then
      return nil,
        string.format(
          "%s of this edit cannot be reverted (%s)",
          display_path(tostring(file.uri), M.paths()),
          tostring(file.whyNot or "not revertible")
        )
    end
    return { ids = { file.id } },
      string.format(
        "Revert %s as changed by %s?",
        display_path(tostring(file.uri), M.paths()),
        edit_words(node.edit)
      )
  elseif node.kind == "edit" then
    local files = type(node.edit.files) == "table" and #node.edit.files or 0
    return { ids = { node.edit.writeId } },
      string.format("Revert %s, %s?", edit_words(node.edit), count(files, "file", "files"))
  elseif node.kind == "turn" then
    -- The server reverts every edit of the turn, and a turn the agent named
    -- spans sessions when the agent's writes do (each `verbatim` command line
    -- run is a session of its own): count them all.
    local edits, sessions = 0, 0
    local shown = result and type(result.sessions) == "table" and result.sessions
      or { node.session }
    for _, session in ipairs(shown) do
      for _, turn in ipairs(type(session.turns) == "table" and session.turns or {}) do
        if turn.turn == node.turn.turn then
          edits = edits + turn_edit_count(turn)
          sessions = sessions + 1
        end
      end
    end
    local agent = tostring(node.session.agent or node.session.session)
    if sessions > 1 then
      return { turn = node.turn.turn },
        string.format(
          "Revert turn %s of %s (%s in %d sessions)?",
          short_id(node.turn.turn),
          agent,
          count(edits, "edit", "edits"),
          sessions
        )
    end
    edits = turn_edit_count(node.turn)
    return { turn = node.turn.turn },
      string.format(
        "Revert turn %s of %s (%s)?",
        node.turn_number and tostring(node.turn_number) or short_id(node.turn.turn),
        agent,
        count(edits, "edit", "edits")
      )
  elseif node.kind == "session" then
    local turns = type(node.session.turns) == "table" and #node.session.turns or 0
    -- The last session of a cut answer may have older turns the view does
    -- not show; the server reverts them too.
    local sessions = result and type(result.sessions) == "table" and result.sessions or {}
    local cut = result and result.truncated == true and sessions[#sessions] == node.session
    return { session = node.session.session },
      string.format(
        "Revert the whole session of %s (%s)?",
        tostring(node.session.agent or node.session.session),
        count(turns, "turn", "turns") .. (cut and " shown, and any older ones" or "")
      )
  end
  return nil, "nothing to revert on this line"
end

--- X: reverts what is under the cursor, once confirmed. The revert reaches
--- Neovim as an ordinary review; its result's message is shown when the
--- person has decided.
---@param view verbatim.TimelineView
function M.revert(view)
  local node = node_at_cursor(view)
  if not node then
    return
  end
  local params, question = M.revert_target(node, view.result)
  if not params then
    notify(question, vim.log.levels.WARN)
    return
  end
  vim.ui.select(
    { "Revert (offered for review)", "Cancel" },
    { prompt = question, kind = "verbatim.revert" },
    function(_, choice)
      if choice ~= 1 then
        return
      end
      view.request(protocol.methods.revert, params, function(err, result)
        if err then
          notify(error_message(err), vim.log.levels.ERROR)
        elseif type(result) == "table" then
          local level = (result.outcome == "rejected" or result.outcome == "partial")
              and vim.log.levels.WARN
            or vim.log.levels.INFO
          notify(
            type(result.message) == "string" and result.message
              or ("revert " .. tostring(result.outcome)),
            level
          )
        end
        if M.views[view.buf] == view then
          M.schedule_refresh(view)
        end
      end)
    end
  )
end

--- m: marks the file under the cursor reviewed for its turn, or unmarks it.
---@param view verbatim.TimelineView
function M.toggle_reviewed(view)
  local node = node_at_cursor(view)
  if not node or node.kind ~= "file" then
    notify("m marks a file line (under an edit) reviewed for its turn", vim.log.levels.WARN)
    return
  end
  local turn, uri = node.turn, node.file.uri
  ---@type verbatim.MarkReviewedParams
  local params = { turn = turn.turn, uri = uri, reviewed = not node.reviewed }
  view.request(protocol.methods.mark_reviewed, params, function(err, result)
    if err then
      notify(error_message(err), vim.log.levels.ERROR)
      return
    end
    local reviewed = type(result) == "table" and result.reviewed == true
    -- The mark is the turn's, in every session that shows the turn, and in
    -- the answer shown now: a newer one may have come while it was kept.
    local turns = { turn }
    local shown = view.result and type(view.result.sessions) == "table" and view.result.sessions
      or {}
    for _, session in ipairs(shown) do
      for _, other in ipairs(type(session.turns) == "table" and session.turns or {}) do
        if other.turn == turn.turn and other ~= turn then
          table.insert(turns, other)
        end
      end
    end
    for i, t in ipairs(turns) do
      t.files = type(t.files) == "table" and t.files or {}
      local found = false
      for _, f in ipairs(t.files) do
        if f.uri == uri then
          f.reviewed, found = reviewed, true
        end
      end
      if not found and i == 1 then
        table.insert(t.files, { uri = uri, reviewed = reviewed })
      end
    end
    if M.views[view.buf] == view then
      M.render(view)
      -- A timeline asked for before the mark was kept (on opening, or after
      -- a change) answers without it, and would take it off the screen: drop
      -- that answer and ask again.
      if view.seq > view.shown_seq then
        view.shown_seq = view.seq + 1
        M.refresh(view)
      end
    end
  end)
end

---@param view verbatim.TimelineView
---@param what "agent"|"uri"
---@param value string|nil
local function set_filter(view, what, value)
  view[what] = value
  view.filter_gen = view.filter_gen + 1
  M.refresh(view)
end

--- a: show one agent's changes; again: every agent's.
---@param view verbatim.TimelineView
function M.filter_agent(view)
  if view.agent then
    set_filter(view, "agent", nil)
    return
  end
  local agents = vim.tbl_keys(view.agents)
  table.sort(agents)
  if #agents == 0 then
    notify("no agent in the timeline yet", vim.log.levels.WARN)
    return
  end
  vim.ui.select(
    agents,
    { prompt = "Show the changes of", kind = "verbatim.agent" },
    function(choice)
      if choice and M.views[view.buf] == view then
        set_filter(view, "agent", choice)
      end
    end
  )
end

--- f: show the changes of one file (the one under the cursor or the current
--- file first, then every file seen); again: of every file.
---@param view verbatim.TimelineView
function M.filter_file(view)
  if view.uri then
    set_filter(view, "uri", nil)
    return
  end
  local node = node_at_cursor(view)
  local items, seen = {}, {}
  local function add(uri)
    if uri and not seen[uri] then
      seen[uri] = true
      table.insert(items, uri)
    end
  end
  add(node and node.kind == "file" and node.file.uri or nil)
  add(view.origin_uri)
  local rest = vim.tbl_keys(view.files)
  table.sort(rest)
  for _, uri in ipairs(rest) do
    add(uri)
  end
  if #items == 0 then
    notify("no file in the timeline yet", vim.log.levels.WARN)
    return
  end
  view.paths = M.paths(view.paths)
  vim.ui.select(items, {
    prompt = "Show the changes of the file",
    kind = "verbatim.file",
    format_item = function(uri)
      return display_path(uri, view.paths) .. (uri == view.origin_uri and "  (current file)" or "")
    end,
  }, function(choice)
    if choice and M.views[view.buf] == view then
      set_filter(view, "uri", choice)
    end
  end)
end

--- L: older changes. Asks for twice as many edits as the answer shown was
--- asked for; the cursor stays on what it is on (M.render).
---@param view verbatim.TimelineView
function M.more(view)
  local result, asked = view.result, view.result_max_edits
  if not result then
    return
  elseif result.truncated ~= true then
    notify("every change is shown")
  elseif not asked or edits_shown(result) < asked then
    notify(
      "older sessions are left out: the server sends at most 200 (a or f shows fewer)",
      vim.log.levels.WARN
    )
  else
    view.max_edits = math.max(view.max_edits or 0, asked) * 2
    M.refresh(view)
  end
end

--- F: every agent's changes to every file.
---@param view verbatim.TimelineView
function M.clear_filters(view)
  view.agent, view.uri = nil, nil
  view.filter_gen = view.filter_gen + 1
  M.refresh(view)
end

--- The buffer-local keys, also listed by M.HELP_LINE and M.HELP.
---@param view verbatim.TimelineView
local function map_keys(view)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, function()
      fn(view)
    end, {
      buffer = view.buf,
      nowait = true,
      silent = true,
      desc = "verbatim timeline: " .. desc,
    })
  end
  map("<CR>", M.activate, "open the file's diff, or fold")
  map("X", M.revert, "revert what is under the cursor")
  map("m", M.toggle_reviewed, "mark the file reviewed for its turn")
  map("a", M.filter_agent, "filter by agent")
  map("f", M.filter_file, "filter by file")
  map("F", M.clear_filters, "clear the filters")
  map("L", M.more, "show older changes")
  map("R", M.refresh, "refresh")
  map("g?", function(v)
    v.show_help = not v.show_help
    M.render(v)
  end, "help")
  map("q", function(v)
    if not pcall(api.nvim_win_close, 0, false) then
      api.nvim_buf_delete(v.buf, { force = true })
    end
  end, "close")
end

---@class verbatim.TimelineOpenOptions
---@field request? verbatim.TimelineRequest how to reach the server (default: the Verbatim client)
---@field agent? string start filtered to this agent
---@field uri? string start filtered to this file
---@field mods? string command modifiers for the split (`:tab`, `:vertical`...); default "topleft"

--- Opens the timeline (or shows the one open) and asks for a fresh copy.
---@param opts? verbatim.TimelineOpenOptions
---@return integer buf
function M.open(opts)
  opts = opts or {}
  set_up()
  local origin = api.nvim_get_current_buf()
  local origin_uri = nil
  if vim.bo[origin].buftype == "" and api.nvim_buf_get_name(origin) ~= "" then
    origin_uri = vim.uri_from_bufnr(origin)
  end

  local view = nil
  for _, v in pairs(M.views) do
    view = v
  end
  if not view then
    local buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_name(buf, M.BUF_NAME)
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].swapfile = false
    -- Each render replaces every line: no undo history of them to keep.
    vim.bo[buf].undolevels = -1
    vim.bo[buf].modifiable = false
    view = {
      buf = buf,
      seq = 0,
      shown_seq = 0,
      filter_gen = 0,
      -- false in the options: every edit.
      max_edits = (require("verbatim.config").options.timeline or {}).max_edits or nil,
      placed = false,
      refresh_timer = false,
      stale = false,
      show_help = false,
      collapsed = { sessions = {}, turns = {}, edits = {} },
      nodes = {},
      spans = {},
      agents = {},
      files = {},
      paths = M.paths(),
    }
    M.views[buf] = view
    map_keys(view)
    api.nvim_create_autocmd("BufWipeout", {
      buffer = buf,
      desc = "verbatim: forget the timeline view",
      callback = function()
        M.views[buf] = nil
      end,
    })
    api.nvim_create_autocmd("BufWinEnter", {
      buffer = buf,
      desc = "verbatim: refresh a timeline whose journal changed while hidden",
      callback = function()
        if view.stale then
          M.refresh(view)
        end
      end,
    })
    vim.bo[buf].filetype = M.FILETYPE
  end
  view.origin_uri = origin_uri or view.origin_uri
  if opts.request then
    view.request, view.client_id = opts.request, nil
  elseif not view.request then
    view.request = client_request(view, origin)
  end
  if opts.agent ~= nil or opts.uri ~= nil then
    view.agent = opts.agent or view.agent
    view.uri = opts.uri or view.uri
    view.filter_gen = view.filter_gen + 1
  end

  -- A window of this tab page showing the timeline is reused, unless
  -- modifiers (`:tab`, `:vertical`...) ask for a new one.
  local explicit = opts.mods ~= nil and opts.mods ~= ""
  local win = nil
  for _, w in ipairs(vim.fn.win_findbuf(view.buf)) do
    if api.nvim_win_get_tabpage(w) == api.nvim_get_current_tabpage() then
      win = w
    end
  end
  if win and not explicit then
    api.nvim_set_current_win(win)
  else
    vim.cmd((explicit and opts.mods or "topleft") .. " sbuffer " .. view.buf)
    win = api.nvim_get_current_win()
    for option, value in pairs({
      wrap = false,
      number = false,
      relativenumber = false,
      list = false,
      spell = false,
      cursorline = true,
      foldcolumn = "0",
      signcolumn = "no",
    }) do
      api.nvim_set_option_value(option, value, { win = win, scope = "local" })
    end
  end
  M.render(view)
  M.refresh(view)
  return view.buf
end

return M
