---@brief
--- The timeline's view (`:Verbatim timeline`, timeline.lua): the lines of
--- the buffer built from an answer, the highlights a decoration provider
--- draws for the lines on screen, the buffer rendered again with the cursors
--- kept on what they were on, and a change shown in a tab page of its own.
---
--- A journal of 10,000 entries is a buffer of some 20,000 lines, so the view
--- is built for that: every line in one table and one `nvim_buf_set_lines`,
--- and no extmark per line (20,000 lines × 4 highlights cost half a second to
--- place). The highlights of each line are kept as a flat list of spans, and
--- a decoration provider draws them as ephemeral extmarks for the lines on
--- screen only, as Neovim's own Tree-sitter highlighter does.

local api = vim.api
local model = require("verbatim.timeline.model")

local M = {}

--- The namespace of the highlights (ephemeral, drawn by the decoration provider).
M.ns = api.nvim_create_namespace("verbatim.timeline")

local show_time, show_span, clock_now = model.show_time, model.show_span, model.clock_now
local count, thousands, short_id = model.count, model.thousands, model.short_id
local edits_shown, turn_edit_count = model.edits_shown, model.turn_edit_count
local display_path = model.display_path

--- A message; answers (a revert's comes once the person has reviewed it)
--- may arrive while they type in a terminal, hence verbatim.notice.
---@param msg string
---@param level? integer
function M.notify(msg, level)
  require("verbatim.notice").notify("verbatim: " .. msg, level or vim.log.levels.INFO)
end

local HEADER = { kind = "header" } ---@type verbatim.TimelineNode

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

---@class verbatim.TimelineBuildOptions
---@field collapsed { sessions: table<string, true>, turns: table<string, true>, edits: table<string, true> }
---@field agent? string the agent filter, shown in the header
---@field uri? string the file filter, shown in the header
---@field error? string shown instead of the result's lines
---@field max_edits? integer the `maxEdits` the result was asked with
---@field show_help? boolean
---@field paths? verbatim.TimelinePaths a cache of file names as shown

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

---@class verbatim.TimelineLines The view's lines as they are built.
---@field lines string[]
---@field nodes verbatim.TimelineNode[] by line
---@field spans table<integer, (integer|string)[]> by line
---@field n integer how many lines so far

---@class verbatim.TimelineBuilding What every line of one build needs.
---@field collapsed { sessions: table<string, true>, turns: table<string, true>, edits: table<string, true> }
---@field clock { today: string, year: string, shown: table<string, string> }
---@field paths verbatim.TimelinePaths
---@field cut_session verbatim.TimelineSession|nil the last session, when `maxEdits` cut the answer

--- Ends the line being built (`put`) as the next line of `out`.
---@param out verbatim.TimelineLines
---@param node verbatim.TimelineNode what the line shows
local function emit(out, node)
  local n = out.n + 1
  out.n = n
  out.lines[n], out.spans[n] = finish()
  out.nodes[n] = node
end

--- The first line: how much was read and shown, and the filters.
---@param result verbatim.TimelineResult|nil
---@param opts verbatim.TimelineBuildOptions
---@param sessions verbatim.TimelineSession[]
---@param paths verbatim.TimelinePaths
---@return verbatim.TimelineSession|nil cut_session the last session, when `maxEdits` cut the answer
local function title(result, opts, sessions, paths)
  -- An answer `maxEdits` cut (it holds as many edits as it was asked for)
  -- may leave out older turns of its last session: their numbers, counted
  -- from the oldest, are not known there.
  local shown_edits = result and edits_shown(result) or 0
  local cut_by_max = result ~= nil
    and result.truncated == true
    and opts.max_edits ~= nil
    and shown_edits >= opts.max_edits
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
  return cut_by_max and sessions[#sessions] or nil
end

--- The lines of a turn's edits and, unless folded, their files.
---@param out verbatim.TimelineLines
---@param node verbatim.TimelineNode the turn's
---@param reviewed_by_uri table<string, true> the files marked reviewed for the turn
---@param b verbatim.TimelineBuilding
local function edit_lines(out, node, reviewed_by_uri, b)
  local lines, nodes, spans, n = out.lines, out.nodes, out.spans, out.n
  local session, turn, turn_number = node.session, node.turn, node.turn_number
  local session_agent, paths = session.agent, b.paths
  for _, edit in ipairs(type(turn.edits) == "table" and turn.edits or {}) do
    local files = type(edit.files) == "table" and edit.files or {}
    local edit_closed = b.collapsed.edits[tostring(edit.writeId)] == true
    n = n + 1
    lines[n], spans[n] = edit_line(edit, #files, edit_closed, session_agent, b.clock)
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
  out.n = n
end

--- A turn's line: fold mark, number, times, edits, files reviewed; then,
--- unless folded, its edits.
---@param out verbatim.TimelineLines
---@param session verbatim.TimelineSession
---@param turn verbatim.TimelineTurn
---@param turn_number integer|nil
---@param b verbatim.TimelineBuilding
local function turn_lines(out, session, turn, turn_number, b)
  local edits = type(turn.edits) == "table" and turn.edits or {}
  local turn_files = type(turn.files) == "table" and turn.files or {}
  local turn_key = tostring(session.session) .. "\0" .. tostring(turn.turn)
  local turn_closed = b.collapsed.turns[turn_key]
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
  put(show_span(turn.started, turn.ended, b.clock), "VerbatimTimelineTime")
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
  local node = { kind = "turn", session = session, turn = turn, turn_number = turn_number }
  emit(out, node)
  if not turn_closed then
    edit_lines(out, node, reviewed_by_uri, b)
  end
end

--- A session's line: fold mark, agent, times, turns and edits; then,
--- unless folded, its turns.
---@param out verbatim.TimelineLines
---@param session verbatim.TimelineSession
---@param b verbatim.TimelineBuilding
local function session_lines(out, session, b)
  local turns = type(session.turns) == "table" and session.turns or {}
  local session_id = tostring(session.session)
  local session_closed = b.collapsed.sessions[session_id]
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
  put(show_span(session.started, session.ended, b.clock), "VerbatimTimelineTime")
  put("  " .. count(#turns, "turn", "turns") .. ", " .. count(edit_count, "edit", "edits"))
  if session == b.cut_session then
    put(" shown", "VerbatimTimelinePartial")
  end
  -- Changes on disk are one session named after their source: the agent's
  -- place already says "disk".
  local source = tostring(session.source or "")
  if session_id ~= source then
    put("  " .. source .. " session " .. short_id(session_id), "VerbatimTimelineId")
  end
  emit(out, { kind = "session", session = session })
  if not session_closed then
    for turn_index, turn in ipairs(turns) do
      local turn_number = session ~= b.cut_session and #turns - turn_index + 1 or nil
      turn_lines(out, session, turn, turn_number, b)
    end
  end
end

--- The view's lines for a timeline result, with what each line shows and
--- its highlights. Pure: no buffer is touched.
---@param result verbatim.TimelineResult|nil nil: not answered yet
---@param opts verbatim.TimelineBuildOptions
---@return string[] lines
---@return verbatim.TimelineNode[] nodes
---@return table<integer, (integer|string)[]> spans by line
function M.build(result, opts)
  local paths = model.paths(opts.paths)
  local out = { lines = {}, nodes = {}, spans = {}, n = 0 }
  local sessions = result and type(result.sessions) == "table" and result.sessions or {}
  local cut_session = title(result, opts, sessions, paths)
  emit(out, HEADER)
  put(M.HELP_LINE, "VerbatimTimelineHelp")
  emit(out, HEADER)
  if opts.show_help then
    for _, line in ipairs(M.HELP) do
      put(line, "VerbatimTimelineHelp")
      emit(out, HEADER)
    end
  end
  if opts.error then
    put("  Could not read the timeline: " .. opts.error:gsub("\n", " "), "VerbatimTimelineRejected")
    emit(out, HEADER)
    return out.lines, out.nodes, out.spans
  end
  if result and #sessions == 0 then
    put(
      (opts.agent or opts.uri) and "  Nothing journaled matches the filters (F clears them)."
        or "  Nothing journaled yet.",
      "VerbatimTimelineHelp"
    )
    emit(out, HEADER)
  end
  ---@type verbatim.TimelineBuilding
  local b = {
    collapsed = opts.collapsed,
    clock = clock_now(),
    paths = paths,
    cut_session = cut_session,
  }
  for _, session in ipairs(sessions) do
    session_lines(out, session, b)
  end
  return out.lines, out.nodes, out.spans
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
function M.set_up()
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
      return model.views[buf] ~= nil
    end,
    on_line = function(_, _, buf, row)
      local view = model.views[buf]
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
  view.paths = model.paths(view.paths)
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
        if model.same_node(nodes[i], cursor.node) then
          row = i
          break
        end
      end
    end
    api.nvim_win_set_cursor(win, { row, 0 })
  end
end

-- A change in a tab page ------------------------------------------------------

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
    M.notify("nothing of this change was kept to show (" .. shown .. ")", vim.log.levels.WARN)
    return nil, nil, nil
  end
  local diff = scratch(text_lines(entry.diff, ""), prefix .. "/diff/" .. shown, "diff")
  vim.cmd("tab sbuffer " .. diff)
  return nil, nil, diff
end

return M
