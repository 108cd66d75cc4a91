---@brief
--- The edits that wait for the person, in arrival order, and the agents the
--- person trusts for the rest of the session.
---
--- Every pending edit holds a function that answers the server's
--- `workspace/applyEdit`; it is called exactly once: on accept, on reject, or
--- as soon as a buffer the edit touches changes (the edit can then no longer
--- apply, and the agent learns it at once instead of when the person gets
--- to it).

local api = vim.api

local M = {}

---@class verbatim.PendingEdit
---@field key integer this session's number for the edit
---@field proposal verbatim.Proposal
---@field answer fun(result: lsp.ApplyWorkspaceEditResult)
---@field since integer os.time() of arrival
---@field skipped table<integer, table<integer, boolean>> changes the person left out

---@type verbatim.PendingEdit[]
M.items = {}

--- Agents whose edits apply without review for the rest of the session.
---@type table<string, boolean>
M.trusted = {}

local next_key = 1
local watched = {} ---@type table<integer, boolean>

---@type fun()[]
local listeners = {}

--- Calls `fn` whenever the queue changes.
---@param fn fun()
function M.on_change(fn)
  table.insert(listeners, fn)
end

local function changed()
  for _, fn in ipairs(listeners) do
    local ok, err = pcall(fn)
    if not ok then
      vim.notify("verbatim: " .. tostring(err), vim.log.levels.ERROR)
    end
  end
  api.nvim_exec_autocmds("User", { pattern = "VerbatimPending", modeline = false })
end

---@param item verbatim.PendingEdit
---@return integer|nil
local function index_of(item)
  for i, other in ipairs(M.items) do
    if other == item then
      return i
    end
  end
end

--- Removes an edit from the queue and answers the server.
---@param item verbatim.PendingEdit
---@param result lsp.ApplyWorkspaceEditResult
function M.resolve(item, result)
  local index = index_of(item)
  if not index then
    return
  end
  table.remove(M.items, index)
  item.answer(result)
  changed()
end

--- Answers every edit whose buffers changed since it arrived.
local function refuse_stale()
  for _, item in ipairs(vim.list_slice(M.items)) do
    local reason = item.proposal:stale_reason()
    if reason then
      M.resolve(item, { applied = false, failureReason = reason })
      vim.notify(
        string.format("verbatim: withdrew %s (%s)", item.proposal.label, reason),
        vim.log.levels.WARN
      )
    end
  end
end

---@param bufnr integer
local function watch(bufnr)
  if watched[bufnr] then
    return
  end
  watched[bufnr] = true
  local function on_change()
    vim.schedule(refuse_stale)
    for _, item in ipairs(M.items) do
      if item.proposal:touches(bufnr) then
        return false
      end
    end
    watched[bufnr] = nil
    return true -- detach: no edit waits on this buffer any more
  end
  api.nvim_buf_attach(bufnr, false, {
    on_lines = on_change,
    on_reload = on_change,
    on_detach = function()
      watched[bufnr] = nil
      vim.schedule(refuse_stale)
    end,
  })
end

--- Adds an edit that waits for the person.
---@param proposal verbatim.Proposal
---@param answer fun(result: lsp.ApplyWorkspaceEditResult)
---@return verbatim.PendingEdit
function M.add(proposal, answer)
  local item = {
    key = next_key,
    proposal = proposal,
    answer = answer,
    since = os.time(),
    skipped = {},
  }
  next_key = next_key + 1
  table.insert(M.items, item)
  for _, doc in ipairs(proposal.documents) do
    if doc.bufnr then
      watch(doc.bufnr)
    end
  end
  changed()
  return item
end

--- Finds a pending edit by its session key, or the first one.
---@param key integer|nil
---@return verbatim.PendingEdit|nil
function M.get(key)
  if key == nil then
    return M.items[1]
  end
  for _, item in ipairs(M.items) do
    if item.key == key then
      return item
    end
  end
end

--- Applies a pending edit (without the changes the person left out).
---@param item verbatim.PendingEdit
---@return boolean applied
---@return string|nil reason
function M.accept(item)
  local applied, reason = item.proposal:apply(item.skipped)
  M.resolve(item, { applied = applied, failureReason = reason })
  if applied then
    require("verbatim.external").settled(item.proposal)
  end
  return applied, reason
end

--- Refuses a pending edit; `reason` goes back to the agent.
---@param item verbatim.PendingEdit
---@param reason string|nil
function M.reject(item, reason)
  if reason == "" then
    reason = nil
  end
  M.resolve(item, { applied = false, failureReason = reason })
  require("verbatim.external").settled(item.proposal)
end

--- Trusts an agent for the session and applies its pending edits.
---@param agent string
function M.trust(agent)
  M.trusted[agent] = true
  for _, item in ipairs(vim.list_slice(M.items)) do
    if item.proposal.agent == agent then
      M.accept(item)
    end
  end
end

--- Forgets the edits of a client that stopped; nobody waits for their answer.
---@param client_id integer
function M.drop_client(client_id)
  local kept = {}
  for _, item in ipairs(M.items) do
    if item.proposal.client_id ~= client_id then
      table.insert(kept, item)
    end
  end
  if #kept ~= #M.items then
    M.items = kept
    changed()
  end
end

return M
