---@brief
--- Files changed on disk outside Neovim while they are open (an agent's own
--- file tools, a script, `sed -i`). The server watches the files of open
--- documents and decides (see `verbatim/externalChange` in docs/protocol.md):
--- a buffer without unsaved changes is reloaded; otherwise the change is
--- merged with the person's unsaved changes and offered as an ordinary
--- `workspace/applyEdit`, reviewed in the review window.
---
--- What this module adds on the Neovim side:
--- - A buffer-local `FileChangedShell` autocommand for every buffer the
---   plugin serves, so Neovim's own W12 warning and reload prompt never fire:
---   the server decides.
--- - The bookkeeping that lets the next `:w` write without asking "file
---   changed since reading it, really write?". Neovim asks whenever the
---   file's modification time differs from the one it stored when it last
---   read or wrote the file (`b_mtime_read`). `:checktime` with a
---   `FileChangedShell` autocommand updates only the timestamp that
---   `:checktime` itself compares (`b_mtime`), never `b_mtime_read`, and no
---   Lua API sets it. Reading the file does: so once a change on disk has
---   been settled (merged, rejected, or found in conflict), the buffer is
---   reloaded with `:edit!` and the reload undone at once. The text, the
---   'modified' flag and the undo history are the person's; the undo tree
---   keeps the disk's version as a branch (`g-`).
--- - `:VerbatimCompareDisk`: the buffer beside the file on disk, in diff mode.

local api = vim.api
local config = require("verbatim.config")
local queue = require("verbatim.queue")

local M = {}

--- How long an `offered` change waits for its `workspace/applyEdit` before
--- the buffer's timestamp is brought up to date anyway.
M.AWAIT_EDIT_MS = 2000

---@class verbatim.ExternalState
---@field kind verbatim.ExternalChangeKind the last change the server reported
---@field message string
---@field disk_path string where the file now is on disk
---@field needs_sync boolean the timestamp must be brought up to date once nothing waits on the buffer
---@field awaiting? integer vim.uv.now() when an `offered` change was announced and its edit not yet settled

--- By buffer number.
---@type table<integer, verbatim.ExternalState>
M.state = {}

--- Buffers whose `FileChangedShell` should answer "reload" (see `reload_from_disk`).
---@type table<integer, boolean>
local reload_requested = {}

local group = api.nvim_create_augroup("verbatim.external", { clear = true })
--- Whether the queue's changes are followed (see `enable`).
local listening = false

---@param msg string
---@param level integer
local function notify(msg, level)
  require("verbatim.notice").notify("verbatim: " .. msg, level)
end

--- Runs `fn` with the views of every window showing `bufnr` saved, and
--- restores them afterwards (a reload moves cursors).
---@param bufnr integer
---@param fn fun()
local function keeping_views(bufnr, fn)
  local views = {}
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    views[win] = api.nvim_win_call(win, vim.fn.winsaveview)
  end
  fn()
  for win, view in pairs(views) do
    if api.nvim_win_is_valid(win) and api.nvim_win_get_buf(win) == bufnr then
      api.nvim_win_call(win, function()
        vim.fn.winrestview(view)
      end)
    end
  end
end

--- `:checktime` for one buffer. The `FileChangedShell` autocommand keeps the
--- buffer as it is; Neovim stores the file's new timestamp, so it does not
--- warn about this change again (on focus, after a shell command).
---@param bufnr integer
local function checktime(bufnr)
  pcall(vim.cmd, "silent checktime " .. bufnr)
end

--- Reloads a buffer from disk, as undoable as Neovim makes reloads. First
--- through `:checktime`, answering `FileChangedShell` with "reload": Neovim's
--- own reload, which language servers see as a reload (`on_reload`). That
--- finds nothing when Neovim already stored the file's new timestamp (a
--- `:checktime` on focus did); then `:edit!`, which detaches every language
--- client from the buffer and attaches them again.
---@param bufnr integer
local function reload_from_disk(bufnr)
  keeping_views(bufnr, function()
    local tick = api.nvim_buf_get_changedtick(bufnr)
    reload_requested[bufnr] = true
    local ok, err = pcall(vim.cmd, "silent checktime " .. bufnr)
    reload_requested[bufnr] = nil
    if not ok then
      error(err, 0)
    end
    if api.nvim_buf_get_changedtick(bufnr) == tick then
      api.nvim_buf_call(bufnr, function()
        vim.cmd("silent keepjumps edit!")
      end)
    end
  end)
end

--- Reloads a buffer that has no unsaved changes. Returns false when it has
--- some by now (the person typed after the server decided).
---@param bufnr integer
---@return boolean
local function reload(bufnr)
  if vim.bo[bufnr].modified then
    return false
  end
  reload_from_disk(bufnr)
  return true
end

---@param bufnr integer
---@return boolean
local function undo_enabled(bufnr)
  local levels = vim.bo[bufnr].undolevels
  if levels == -123456 then -- the buffer uses the global value
    levels = vim.go.undolevels
  end
  return levels >= 0
end

--- Reads a file as lines of the buffer's encoding (UTF-8 inside Neovim).
---@param path string
---@param bufnr integer
---@return string[]|nil
local function disk_lines(path, bufnr)
  local fd = io.open(path, "rb")
  if not fd then
    return nil
  end
  local data = fd:read("*a")
  fd:close()
  local fenc = vim.bo[bufnr].fileencoding
  if fenc ~= "" and fenc ~= "utf-8" then
    data = vim.iconv(data, fenc, "utf-8") or data
  end
  data = data:gsub("^\239\187\191", "")
  local lines = vim.split(data, "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  for i, line in ipairs(lines) do
    lines[i] = line:gsub("\r$", "")
  end
  return lines
end

--- Brings Neovim's stored timestamp of the file up to date without changing
--- the buffer's text, so that the next `:w` writes without a prompt. A
--- modified buffer that holds exactly what the file now holds (an edit the
--- person accepted, which the agent then wrote itself, as Claude Code does)
--- ends unmodified: it is what is on disk.
---@param bufnr integer
function M.sync(bufnr)
  if not api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local path = api.nvim_buf_get_name(bufnr)
  if not vim.uv.fs_stat(path) then
    return -- deleted: writing recreates the file, without a prompt
  end
  if not vim.bo[bufnr].modified then
    checktime(bufnr)
    return
  end
  local before = api.nvim_buf_get_lines(bufnr, 0, -1, true)
  local same_as_disk = vim.deep_equal(disk_lines(path, bufnr), before)
  local undo = undo_enabled(bufnr)
  if not same_as_disk and not undo then
    return -- a reload could not be undone; Neovim will ask on :w
  end
  -- Keep the whole buffer for undo whatever its size ('undoreload' is global).
  local undoreload = vim.go.undoreload
  vim.go.undoreload = -1
  local ok, err = pcall(keeping_views, bufnr, function()
    reload_from_disk(bufnr)
    -- The reload is one undo step. Undone, the person's text is back; for a
    -- buffer that holds the disk's text it changes nothing, and `u` then
    -- takes back the person's last change (the accepted edit), not the reload.
    if
      undo
      and (same_as_disk or not vim.deep_equal(api.nvim_buf_get_lines(bufnr, 0, -1, true), before))
    then
      api.nvim_buf_call(bufnr, function()
        vim.cmd("silent undo")
      end)
    end
  end)
  vim.go.undoreload = undoreload
  if not vim.deep_equal(api.nvim_buf_get_lines(bufnr, 0, -1, true), before) then
    -- Never lose the person's text, whatever happened above.
    api.nvim_buf_set_lines(bufnr, 0, -1, true, before)
  elseif same_as_disk then
    -- What the file holds. The reload marked every undo state as changed,
    -- so undoing from here makes the buffer modified again, and redoing
    -- back makes it unmodified.
    vim.bo[bufnr].modified = false
  end
  if not ok then
    notify("could not update the file's timestamp: " .. tostring(err), vim.log.levels.WARN)
  end
end

--- Whether something still waits on the buffer: an edit under review (a
--- reload would make it stale), or an announced change whose edit has not
--- arrived or been decided yet.
---@param bufnr integer
---@param st verbatim.ExternalState
---@return boolean
local function busy(bufnr, st)
  if st.awaiting and vim.uv.now() - st.awaiting < M.AWAIT_EDIT_MS then
    return true
  end
  for _, item in ipairs(queue.items) do
    if item.proposal:touches(bufnr) then
      return true
    end
  end
  return false
end

--- Brings every buffer's timestamp up to date that waits for it and on
--- which nothing waits any more.
function M.flush()
  for bufnr, st in pairs(M.state) do
    if not api.nvim_buf_is_loaded(bufnr) then
      M.state[bufnr] = nil
    elseif st.needs_sync and not busy(bufnr, st) then
      st.needs_sync = false
      st.awaiting = nil
      M.sync(bufnr)
    end
  end
end

--- Called once the person accepted or rejected an edit (or it applied without
--- review): a change made on disk is settled for its buffers.
---@param proposal verbatim.Proposal
function M.settled(proposal)
  if proposal.origin == "disk" then
    for _, doc in ipairs(proposal.documents) do
      local st = doc.bufnr and M.state[doc.bufnr]
      if st then
        st.awaiting = nil
      end
    end
  end
  -- After the answer has gone to the server.
  vim.schedule(M.flush)
end

--- The `verbatim/externalChange` handler.
---@param _ lsp.ResponseError|nil
---@param params verbatim.ExternalChangeParams
---@param ctx lsp.HandlerContext
function M.handler(_, params, ctx)
  if type(params) ~= "table" or type(params.uri) ~= "string" then
    return
  end
  local bufnr = require("verbatim.proposal").attached_buffer(ctx.client_id, params.uri)
  if not bufnr then
    return
  end
  local kind = params.kind
  local message = type(params.message) == "string" and params.message or ""
  local disk_path = vim.uri_to_fname(params.uri)
  if kind == "moved" and type(params.movedTo) == "string" then
    disk_path = vim.uri_to_fname(params.movedTo)
  end
  local st = M.state[bufnr] or { needs_sync = false }
  M.state[bufnr] = st
  st.kind, st.message, st.disk_path = kind, message, disk_path

  local compare = " (:VerbatimCompareDisk compares the buffer with the file on disk)"
  if kind == "reload" then
    if not reload(bufnr) then
      -- The person typed after the server decided. Neovim's own "really
      -- write?" question on :w stays, as the last guard of the disk's text.
      notify(
        vim.fn.fnamemodify(disk_path, ":~:.")
          .. " changed on disk, but you changed the buffer meanwhile, so it was not reloaded;"
          .. " :w asks before writing over it"
          .. compare,
        vim.log.levels.WARN
      )
    end
  elseif kind == "offered" then
    st.awaiting = vim.uv.now()
    st.needs_sync = true
    vim.defer_fn(M.flush, M.AWAIT_EDIT_MS + 50)
    if type(params.conflicts) == "table" and #params.conflicts > 0 then
      notify(message .. compare, vim.log.levels.WARN)
    end
  elseif kind == "conflict" then
    st.needs_sync = true
    notify(message .. compare, vim.log.levels.WARN)
  elseif kind == "synced" then
    st.needs_sync = true
  elseif kind == "moved" then
    notify(message .. compare, vim.log.levels.WARN)
  elseif kind == "deleted" then
    notify(message, vim.log.levels.WARN)
  end
  -- A buffer that will be brought up to date needs no :checktime now: every
  -- :checktime meanwhile (on focus, after a shell command) meets the
  -- FileChangedShell autocommand, so W12 cannot fire.
  if not st.needs_sync then
    checktime(bufnr)
  end
  M.flush()
end

--- Opens the file on disk beside the buffer in diff mode: a read-only
--- scratch buffer; closing its window ends the diff.
---@param bufnr? integer default: the current buffer
---@return integer|nil scratch the buffer holding the disk's text
function M.compare(bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  if bufnr == 0 then
    bufnr = api.nvim_get_current_buf()
  end
  local st = M.state[bufnr]
  local path = st and st.disk_path or api.nvim_buf_get_name(bufnr)
  if path == "" then
    notify("this buffer has no file to compare with", vim.log.levels.WARN)
    return nil
  end
  local lines = disk_lines(path, bufnr)
  if not lines then
    notify(vim.fn.fnamemodify(path, ":~:.") .. " is not on disk", vim.log.levels.WARN)
    return nil
  end
  local scratch = api.nvim_create_buf(false, true)
  vim.bo[scratch].bufhidden = "wipe"
  api.nvim_buf_set_lines(scratch, 0, -1, true, lines)
  vim.bo[scratch].modifiable = false
  vim.bo[scratch].readonly = true
  vim.bo[scratch].filetype = vim.bo[bufnr].filetype
  pcall(api.nvim_buf_set_name, scratch, "verbatim://disk/" .. path)

  if api.nvim_get_current_buf() ~= bufnr then
    local wins = vim.fn.win_findbuf(bufnr)
    if #wins > 0 then
      api.nvim_set_current_win(wins[1])
    else
      api.nvim_set_current_buf(bufnr)
    end
  end
  local win = api.nvim_get_current_win()
  vim.cmd("diffthis")
  vim.cmd("rightbelow vertical sbuffer " .. scratch)
  vim.cmd("diffthis")
  vim.keymap.set("n", "q", "<Cmd>close<CR>", {
    buffer = scratch,
    desc = "verbatim: close the comparison with the disk",
  })
  api.nvim_create_autocmd("BufWipeout", {
    buffer = scratch,
    once = true,
    desc = "verbatim: end the diff with the disk",
    callback = function()
      vim.schedule(function()
        if api.nvim_win_is_valid(win) then
          api.nvim_win_call(win, function()
            vim.cmd("diffoff")
          end)
        end
      end)
    end,
  })
  return scratch
end

---@param bufnr integer
local function guard(bufnr)
  api.nvim_clear_autocmds({ group = group, buffer = bufnr, event = "FileChangedShell" })
  api.nvim_create_autocmd("FileChangedShell", {
    group = group,
    buffer = bufnr,
    desc = "verbatim: the server decides what a change on disk does to this buffer",
    callback = function()
      local reason = vim.v.fcs_reason
      if reload_requested[bufnr] and reason ~= "deleted" then
        vim.v.fcs_choice = "reload"
      elseif reason == "time" or reason == "mode" then
        -- Not a change of the text: Neovim's own handling (silent for a new
        -- timestamp alone; W16 for a new mode).
        vim.v.fcs_choice = "ask"
      else
        -- Keep the buffer: the server reloads it, offers a merge, or tells.
        vim.v.fcs_choice = ""
      end
    end,
  })
end

--- Guards every buffer the plugin serves, now and later (unless
--- `external_changes` is "off").
function M.enable()
  api.nvim_clear_autocmds({ group = group })
  if not listening then
    -- Once no edit waits on a buffer, its timestamp catches up with the disk.
    listening = true
    queue.on_change(function()
      vim.schedule(M.flush)
    end)
  end
  if config.options.external_changes == "off" then
    return
  end
  ---@param fn fun(bufnr: integer)
  ---@return fun(args: vim.api.keyset.create_autocmd.callback_args)
  local function for_verbatim(fn)
    return function(args)
      local client = vim.lsp.get_client_by_id(args.data.client_id)
      if client and client.name == require("verbatim.lsp").NAME then
        fn(args.buf)
      end
    end
  end
  api.nvim_create_autocmd("LspAttach", {
    group = group,
    desc = "verbatim: guard served buffers against Neovim's own reload prompt",
    callback = for_verbatim(guard),
  })
  api.nvim_create_autocmd("LspDetach", {
    group = group,
    desc = "verbatim: give buffers no longer served Neovim's own reload prompt back",
    -- `:edit!` detaches and attaches again: the buffer's state stays
    -- (M.flush forgets unloaded buffers).
    callback = for_verbatim(function(bufnr)
      api.nvim_clear_autocmds({ group = group, buffer = bufnr, event = "FileChangedShell" })
    end),
  })
  for _, client in ipairs(vim.lsp.get_clients({ name = require("verbatim.lsp").NAME })) do
    for bufnr in pairs(client.attached_buffers) do
      guard(bufnr)
    end
  end
end

return M
