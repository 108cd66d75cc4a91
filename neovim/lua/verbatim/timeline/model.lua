---@brief
--- The timeline's model (`:Verbatim timeline`, timeline.lua): the state of
--- each view, and what the view says of the server's answer, without a
--- buffer or a window: times in local time, counts, file names as shown,
--- which line shows the same thing in two answers, the agents and files to
--- filter by, and what `X` reverts on a line. Pure, but for the clock and
--- the working directory.

local M = {}

--- The current time in seconds since the epoch; tests replace it (through
--- `require("verbatim.timeline").now`).
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
M.show_time = show_time

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
M.show_span = show_span

---@return { today: string, year: string, shown: table<string, string> }
local function clock_now()
  local today = os.date("%Y-%m-%d", M.now()) --[[@as string]]
  return { today = today, year = today:sub(1, 4), shown = {} }
end
M.clock_now = clock_now

-- Words and numbers ------------------------------------------------------------

---@param n integer
---@param one string
---@param many string
---@return string
local function count(n, one, many)
  return n .. " " .. (n == 1 and one or many)
end
M.count = count

--- A number with its thousands apart: 10,000.
---@param n integer
---@return string
local function thousands(n)
  local text = tostring(n)
  local first = #text % 3 == 0 and 3 or #text % 3
  return text:sub(1, first) .. text:sub(first + 1):gsub("(%d%d%d)", ",%1")
end
M.thousands = thousands

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
M.edits_shown = edits_shown

--- A turn's edits in all: `editCount`, more than it holds when `maxEdits`
--- cut it.
---@param turn verbatim.TimelineTurn
---@return integer
local function turn_edit_count(turn)
  local held = type(turn.edits) == "table" and #turn.edits or 0
  local total = tonumber(turn.editCount)
  return total and total > held and total or held
end
M.turn_edit_count = turn_edit_count

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
M.short_id = short_id

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

-- Nodes and results ---------------------------------------------------------------

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
M.same_node = same_node

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
M.remember = remember

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

return M
