---@brief
--- The edits that wait for the person, in arrival order, and the agents the
--- person trusts for the rest of the session.
---
--- Every pending edit holds a function that answers the server's
--- `workspace/applyEdit`; it is called exactly once: on accept, on reject, or
--- when a buffer the edit touches changes. In that last case the person
--- typed while the edit waited: an agent's edit is answered `applied: false`
--- once the typing settles, stays in the review, and waits for the server to
--- move it over what was typed and offer it again; the offer takes its place
--- (same key, same window), and an accept given in between applies it on
--- arrival. When no offer comes (the typing touched the edit's text: the
--- agent is told `stale`), the edit leaves the review with a message.

local api = vim.api

local M = {}

---@class verbatim.PendingEdit
---@field key integer this session's number for the edit
---@field proposal verbatim.Proposal
---@field answer fun(result: lsp.ApplyWorkspaceEditResult)
---@field since integer os.time() of arrival
---@field skipped table<integer, table<integer, boolean>> changes the person left out
---@field moved? boolean the buffer changed: answered, waiting for the server's new offer
---@field accepted? boolean the person accepted while the edit was moved; it applies on arrival
---@field accept_reason? string why the person left changes out, given with that accept
---@field decision? lsp.ApplyWorkspaceEditResult the person rejected while the edit was moved
---@field waits? integer how many times it waited for a new offer (the last wait counts)

---@type verbatim.PendingEdit[]
M.items = {}

--- Agents whose edits apply without review for the rest of the session.
---@type table<string, boolean>
M.trusted = {}

--- How long the buffer must stay still after a change before a pending edit
--- is answered and moved (each move is a round trip to the server, which
--- moves one edit a bounded number of times).
M.SETTLE_MS = 300
--- How long a moved edit waits for the server's new offer.
M.REOFFER_WAIT_MS = 3000
--- What the agent's first offer is answered when the person types.
M.MOVED_REASON = "the document changed during review; the server offers it again"

local next_key = 1
local watched = {} ---@type table<integer, boolean>
--- Moved edits waiting for the server's new offer, in the queue or rejected.
---@type verbatim.PendingEdit[]
local moving = {}
---@type uv.uv_timer_t|nil
local settle_timer = nil

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

--- Where `item` stands in the queue (1 is the oldest), or nil when it left.
---@param item verbatim.PendingEdit
---@return integer|nil
function M.position(item)
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
  local index = M.position(item)
  if not index then
    return
  end
  table.remove(M.items, index)
  if item.moved then
    -- Already answered; the server's new offer gets this answer.
    item.decision = result
  else
    item.answer(result)
  end
  changed()
end

---@param list verbatim.PendingEdit[]
---@param item verbatim.PendingEdit
local function remove(list, item)
  for i, other in ipairs(list) do
    if other == item then
      table.remove(list, i)
      return
    end
  end
end

--- Answers an edit whose buffer moved and waits for the server to offer it
--- again over what the person typed.
---@param item verbatim.PendingEdit
local function move(item)
  item.answer({ applied = false, failureReason = M.MOVED_REASON })
  item.moved = true
  table.insert(moving, item)
  M.expect_offer(item)
  changed()
end

--- (Re)starts the wait for a moved edit's new offer; when none comes, the
--- edit leaves the review.
---@param item verbatim.PendingEdit
function M.expect_offer(item)
  item.waits = (item.waits or 0) + 1
  local wait = item.waits
  vim.defer_fn(function()
    if not item.moved or item.waits ~= wait then
      return
    end
    remove(moving, item)
    local index = M.position(item)
    if index then
      table.remove(M.items, index)
      require("verbatim.notice").notify(
        string.format(
          "verbatim: withdrew %s: your changes touched the text it replaces, so it no longer"
            .. " applies (the agent was told to read the file again)",
          item.proposal.label
        ),
        vim.log.levels.WARN
      )
      changed()
    end
  end, M.REOFFER_WAIT_MS)
end

--- Answers every edit whose buffers changed since it arrived: an agent's
--- edit is moved (see `move`), anything else is withdrawn.
local function refuse_stale()
  for _, item in ipairs(vim.list_slice(M.items)) do
    local reason = not item.moved and item.proposal:stale_reason()
    if reason and item.proposal:movable() then
      move(item)
    elseif reason then
      M.resolve(item, { applied = false, failureReason = reason })
      require("verbatim.notice").notify(
        string.format("verbatim: withdrew %s (%s)", item.proposal.label, reason),
        vim.log.levels.WARN
      )
    end
  end
end

--- Runs `refuse_stale` once the buffers have been still for `M.SETTLE_MS`.
local function refuse_stale_when_settled()
  settle_timer = settle_timer or assert(vim.uv.new_timer())
  settle_timer:stop()
  settle_timer:start(M.SETTLE_MS, 0, vim.schedule_wrap(refuse_stale))
end

--- Moves an edit now when the person typed a moment ago, rather than when
--- the typing settles: a decision must reach the edit the server offers next.
---@param item verbatim.PendingEdit
local function move_now(item)
  if not item.moved and item.proposal:stale_reason() and item.proposal:movable() then
    move(item)
  end
end

---@param a verbatim.Proposal
---@param b verbatim.Proposal
---@return boolean whether `b` is `a` offered again: same label, documents and new texts
local function same_edit(a, b)
  if a.client_id ~= b.client_id or a.label ~= b.label or #a.documents ~= #b.documents then
    return false
  end
  for i, doc in ipairs(a.documents) do
    local other = b.documents[i]
    if doc.uri ~= other.uri or #doc.edits ~= #other.edits then
      return false
    end
    for j, e in ipairs(doc.edits) do
      if e.newText ~= other.edits[j].newText then
        return false
      end
    end
  end
  return true
end

--- The moved edit that `proposal` offers again, if any. A server that
--- numbers its offers (`verbatim.offer`) keeps the edit's id across them;
--- an older one gives a new id, and the edit is known by its label and texts.
---@param proposal verbatim.Proposal
---@return verbatim.PendingEdit|nil
function M.moved_edit(proposal)
  for _, item in ipairs(moving) do
    local old = item.proposal
    if proposal.offer and old.offer and proposal.pending_id then
      if
        old.client_id == proposal.client_id
        and old.pending_id == proposal.pending_id
        and proposal.offer > old.offer
      then
        return item
      end
    elseif same_edit(old, proposal) then
      return item
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
    refuse_stale_when_settled()
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

--- Puts the server's new offer of a moved edit in its place: the same key,
--- the same place in the queue. Applies it at once when the person accepted
--- in between, refuses it when they rejected.
---@param item verbatim.PendingEdit
---@param proposal verbatim.Proposal prepared
---@param answer fun(result: lsp.ApplyWorkspaceEditResult)
function M.reoffer(item, proposal, answer)
  remove(moving, item)
  item.moved = nil
  if item.decision then
    answer(item.decision)
    return
  end
  -- Changes left out stay left out when the edit still has the same changes.
  for index, doc in ipairs(proposal.documents) do
    if #(doc.hunks or {}) ~= #(item.proposal.documents[index].hunks or {}) then
      item.skipped = {}
      break
    end
  end
  item.proposal = proposal
  item.answer = answer
  for _, doc in ipairs(proposal.documents) do
    if doc.bufnr then
      watch(doc.bufnr)
    end
  end
  if item.accepted then
    M.accept(item, item.accept_reason)
  else
    changed()
  end
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

--- Whether the person left out any change of a pending edit.
---@param item verbatim.PendingEdit
---@return integer how many changes are left out
function M.left_out(item)
  local count = 0
  for _, doc_skipped in pairs(item.skipped) do
    for _, skipped in pairs(doc_skipped) do
      if skipped then
        count = count + 1
      end
    end
  end
  return count
end

--- The answer to the server for an edit applied without the changes in
--- `skipped`: with the server's hunks, which of them were kept, and the
--- person's reason when something was left out (see docs/protocol.md, Hunks).
---@param proposal verbatim.Proposal
---@param skipped table<integer, table<integer, boolean>>
---@param applied boolean
---@param failure string|nil why it did not apply
---@param partial boolean some change was left out
---@param reason string|nil the person's words
---@return lsp.ApplyWorkspaceEditResult
function M.answer_for(proposal, skipped, applied, failure, partial, reason)
  if reason == "" then
    reason = nil
  end
  if not applied then
    -- Nothing kept: the person's reason is the refusal's.
    return { applied = false, failureReason = (partial and reason) or failure }
  end
  return {
    applied = true,
    hunks = proposal:hunk_outcomes(skipped),
    reason = partial and reason or nil,
  }
end

--- Applies a pending edit (without the changes the person left out).
---@param item verbatim.PendingEdit
---@param reason? string why the person left changes out (goes back to the agent)
---@return boolean applied
---@return string|nil reason
---@return boolean|nil later it applies when the server offers it again
function M.accept(item, reason)
  move_now(item)
  if item.moved then
    item.accepted = true
    item.accept_reason = reason
    return false,
      "the document changed; the edit applies as soon as it is moved over the change",
      true
  end
  local applied, failure, partial = item.proposal:apply(item.skipped)
  M.resolve(item, M.answer_for(item.proposal, item.skipped, applied, failure, partial, reason))
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
  -- Else the server would take the refusal of an old version for a move, and offer it again.
  move_now(item)
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
  for _, item in ipairs(vim.list_slice(moving)) do
    if item.proposal.client_id == client_id then
      remove(moving, item)
      item.moved = nil
    end
  end
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
