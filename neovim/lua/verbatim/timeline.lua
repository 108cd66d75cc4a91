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
--- Most of a journal of 10,000 entries is not asked for at all: its newest
--- 500 edits are some 190 KB of JSON to decode instead of 3.8 MB, and 1,100
--- lines instead of 21,000 (timeline/view.lua says how the lines are drawn).
---
--- This file opens the view and is the one to require; the rest is split by
--- concern, each part usable on its own:
---   timeline/model.lua    the views' state and what they say of an answer (pure)
---   timeline/view.lua     the lines, their highlights, the buffer, a change's diff
---   timeline/actions.lua  what the keys and `verbatim/journalChanged` do

local api = vim.api
local actions = require("verbatim.timeline.actions")
local model = require("verbatim.timeline.model")
local timeline_view = require("verbatim.timeline.view")

local M = {}

M.BUF_NAME = "verbatim://timeline"
M.FILETYPE = "verbatim-timeline"

-- What the parts offer, here under the names the plugin and its tests use.
M.views = model.views
M.parse_time = model.parse_time
M.paths = model.paths
M.display_path = model.display_path
M.revert_target = model.revert_target
M.ns = timeline_view.ns
M.HELP_LINE = timeline_view.HELP_LINE
M.HELP = timeline_view.HELP
M.build = timeline_view.build
M.create_highlights = timeline_view.create_highlights
M.render = timeline_view.render
M.show_entry = timeline_view.show_entry
M.REFRESH_DELAY_MS = actions.REFRESH_DELAY_MS
M.refresh = actions.refresh
M.schedule_refresh = actions.schedule_refresh
M.on_journal_changed = actions.on_journal_changed
M.toggle = actions.toggle
M.activate = actions.activate
M.revert = actions.revert
M.toggle_reviewed = actions.toggle_reviewed
M.filter_agent = actions.filter_agent
M.filter_file = actions.filter_file
M.more = actions.more
M.clear_filters = actions.clear_filters

-- `now`, the clock (the current time in seconds since the epoch), is the
-- model's: tests set `require("verbatim.timeline").now` to fix it, and that
-- must reach the model, which reads it.
setmetatable(M, {
  __index = function(_, key)
    if key == "now" then
      return model.now
    end
  end,
  __newindex = function(t, key, value)
    if key == "now" then
      model.now = value
    else
      rawset(t, key, value)
    end
  end,
})

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

--- The timeline's buffer and its view, new: its keys, and its autocommands
--- (forget the view when the buffer is wiped out; refresh when shown again
--- after the journal changed).
---@return verbatim.TimelineView
local function create_view()
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(buf, M.BUF_NAME)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  -- Each render replaces every line: no undo history of them to keep.
  vim.bo[buf].undolevels = -1
  vim.bo[buf].modifiable = false
  local view = {
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
    paths = model.paths(),
  }
  model.views[buf] = view
  actions.map_keys(view)
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    desc = "verbatim: forget the timeline view",
    callback = function()
      model.views[buf] = nil
    end,
  })
  api.nvim_create_autocmd("BufWinEnter", {
    buffer = buf,
    desc = "verbatim: refresh a timeline whose journal changed while hidden",
    callback = function()
      if view.stale then
        actions.refresh(view)
      end
    end,
  })
  vim.bo[buf].filetype = M.FILETYPE
  return view
end

--- Shows the view in a window of this tab page and moves there.
---@param view verbatim.TimelineView
---@param mods string|nil command modifiers for a new window
local function show(view, mods)
  -- A window of this tab page showing the timeline is reused, unless
  -- modifiers (`:tab`, `:vertical`...) ask for a new one.
  local explicit = mods ~= nil and mods ~= ""
  local win = nil
  for _, w in ipairs(vim.fn.win_findbuf(view.buf)) do
    if api.nvim_win_get_tabpage(w) == api.nvim_get_current_tabpage() then
      win = w
    end
  end
  if win and not explicit then
    api.nvim_set_current_win(win)
  else
    vim.cmd((explicit and mods or "topleft") .. " sbuffer " .. view.buf)
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
  timeline_view.set_up()
  local origin = api.nvim_get_current_buf()
  local origin_uri = nil
  if vim.bo[origin].buftype == "" and api.nvim_buf_get_name(origin) ~= "" then
    origin_uri = vim.uri_from_bufnr(origin)
  end

  local view = nil
  for _, v in pairs(model.views) do
    view = v
  end
  view = view or create_view()
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

  show(view, opts.mods)
  timeline_view.render(view)
  actions.refresh(view)
  return view.buf
end

return M
