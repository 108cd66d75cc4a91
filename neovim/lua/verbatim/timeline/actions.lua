---@brief
--- What the timeline's keys and the server's notifications do
--- (`:Verbatim timeline`, timeline.lua): ask the server for the timeline
--- again (at once, or once for a burst of `verbatim/journalChanged`), fold,
--- open a change's diff, revert, mark a file reviewed, filter by agent or
--- file, ask for older edits; and the keys that do it.

local api = vim.api
local model = require("verbatim.timeline.model")
local protocol = require("verbatim.protocol")
local timeline_view = require("verbatim.timeline.view")

local M = {}

--- How long a burst of `verbatim/journalChanged` is gathered into one refresh.
M.REFRESH_DELAY_MS = 50

local notify = timeline_view.notify

-- Asking the server ------------------------------------------------------------

---@param err any
---@return string
local function error_message(err)
  if type(err) == "table" and type(err.message) == "string" then
    return err.message
  end
  return tostring(err)
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
    if model.views[view.buf] ~= view or gen ~= view.filter_gen or seq < view.shown_seq then
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
      model.remember(view, result)
    end
    timeline_view.render(view)
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
    if model.views[view.buf] == view then
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
  for _, view in pairs(model.views) do
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

-- The keys -------------------------------------------------------------------

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
  timeline_view.render(view)
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
      timeline_view.show_entry(entry)
    end
  end)
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
  local params, question = model.revert_target(node, view.result)
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
        if model.views[view.buf] == view then
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
    if model.views[view.buf] == view then
      timeline_view.render(view)
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
      if choice and model.views[view.buf] == view then
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
  view.paths = model.paths(view.paths)
  vim.ui.select(items, {
    prompt = "Show the changes of the file",
    kind = "verbatim.file",
    format_item = function(uri)
      return model.display_path(uri, view.paths)
        .. (uri == view.origin_uri and "  (current file)" or "")
    end,
  }, function(choice)
    if choice and model.views[view.buf] == view then
      set_filter(view, "uri", choice)
    end
  end)
end

--- L: older changes. Asks for twice as many edits as the answer shown was
--- asked for; the cursor stays on what it is on (timeline/view.lua).
---@param view verbatim.TimelineView
function M.more(view)
  local result, asked = view.result, view.result_max_edits
  if not result then
    return
  elseif result.truncated ~= true then
    notify("every change is shown")
  elseif not asked or model.edits_shown(result) < asked then
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

--- The buffer-local keys, also listed by the view's HELP_LINE and HELP.
---@param view verbatim.TimelineView
function M.map_keys(view)
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
    timeline_view.render(v)
  end, "help")
  map("q", function(v)
    if not pcall(api.nvim_win_close, 0, false) then
      api.nvim_buf_delete(v.buf, { force = true })
    end
  end, "close")
end

return M
