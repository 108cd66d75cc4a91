---@brief
--- The `workspace/applyEdit` handler of the Verbatim client.
---
--- Neovim's default handler ignores change annotations and answers
--- `applied: true` even when it skipped a stale edit. This one checks every
--- version exactly, answers `applied: false` with a reason whenever it does
--- not apply, and lets the person review the edit first: the handler runs in
--- a coroutine (vim.lsp.rpc wraps server requests in one), so it yields until
--- the person decides.

local config = require("verbatim.config")
local proposal_mod = require("verbatim.proposal")
local queue = require("verbatim.queue")

local M = {}

---@param proposal verbatim.Proposal
---@return boolean
local function needs_review(proposal)
  if proposal.origin == "disk" then
    -- The server follows `external_changes` for these.
    return proposal.needs_confirmation
  end
  if queue.trusted[proposal.agent] then
    return false
  end
  return config.options.review == "confirm" or proposal.needs_confirmation
end

---@param reason string
---@return lsp.ApplyWorkspaceEditResult
local function refused(reason)
  return { applied = false, failureReason = reason }
end

--- The handler, to be installed in the client's `handlers`.
---@param _ lsp.ResponseError|nil
---@param params lsp.ApplyWorkspaceEditParams
---@param ctx lsp.HandlerContext
---@return lsp.ApplyWorkspaceEditResult
function M.handler(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then
    return refused("the Verbatim client has stopped")
  end
  local proposal, err = proposal_mod.build(params, client)
  if not proposal then
    return refused(err --[[@as string]])
  end
  -- The server's new offer of an edit the person typed around during review.
  local moved = queue.moved_edit(proposal)
  local ok, reason = proposal:prepare()
  if not ok then
    if moved then
      -- The person typed again on its way: the server moves it once more.
      queue.expect_offer(moved)
    end
    return refused(reason --[[@as string]])
  end

  if not moved and not needs_review(proposal) then
    local applied, why = proposal:apply()
    if applied then
      require("verbatim.notice").notify("verbatim: applied " .. proposal.label, vim.log.levels.INFO)
      require("verbatim.external").settled(proposal)
    end
    return queue.answer_for(proposal, {}, applied, why, false, nil)
  end

  local co = coroutine.running()
  if not co or not coroutine.isyieldable() then
    return refused("Neovim cannot wait for a review here (the handler is not in a coroutine)")
  end
  local waiting, early_result = false, nil
  local enqueue = moved and function(p, answer)
    queue.reoffer(moved, p, answer)
  end or queue.add
  enqueue(proposal, function(result)
    if not waiting then
      -- Answered before the handler yielded.
      early_result = result
      return
    end
    local resumed, resume_err = coroutine.resume(co, result)
    if not resumed then
      vim.notify(
        "verbatim: answering the server failed: " .. tostring(resume_err),
        vim.log.levels.ERROR
      )
    end
  end)
  if early_result then
    return early_result
  end
  waiting = true
  return coroutine.yield()
end

return M
