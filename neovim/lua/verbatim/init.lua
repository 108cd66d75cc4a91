---@brief
--- Verbatim for Neovim: AI agents edit the buffers you have open, by quoting
--- text; every edit is reviewed as a diff before it lands (see :help verbatim).
---
--- This module is the public API. Everything else lives in one module per
--- concern: config (options), lsp (starting the server), apply_edit (the
--- workspace/applyEdit handler), proposal (one edit, checked and applied),
--- text (positions and text edits), queue (pending edits), review (the
--- window), inline (the review in the document's own window), external
--- (files changed on disk outside Neovim), diagnostics (what language
--- servers report after an edit), claude_code (Claude Code's IDE protocol:
--- its port for terminals, the selection, :VerbatimMention, saving), health
--- (:checkhealth), commands (:Verbatim), timeline (:Verbatim timeline: the
--- journal of every agent's changes, their diffs and reverts).

local M = {}

--- Whether setup() ran.
M.did_setup = false

---@class verbatim.PendingInfo
---@field key integer this session's number for the edit (accept(key), reject(reason, key))
---@field id integer|nil the server's pending id
---@field agent string
---@field summary string
---@field label string
---@field uris string[]
---@field since integer os.time() of arrival
---@field client_id integer

--- Validates the options, creates the review window's highlight groups and
--- autocommands, then starts the server for every file buffer. Requiring a
--- module has no side effect: every step is here.
---@param opts? table see :help verbatim-options
function M.setup(opts)
  require("verbatim.config").set(opts)
  require("verbatim.review").setup()
  require("verbatim.inline").setup()
  require("verbatim.lsp").enable()
  M.did_setup = true
end

--- Applies the edit under review (or the one with `key`), without the
--- changes left out with `x`; `reason` says why they were left out and goes
--- back to the agent.
---@param key? integer
---@param reason? string
---@return boolean applied
---@return string|nil reason why it did not apply
---@return boolean|nil later the person typed: it applies once the server moved it over that
function M.accept(key, reason)
  return require("verbatim.review").accept(key, reason)
end

--- Refuses the edit under review (or the one with `key`); `reason` goes back
--- to the agent.
---@param reason? string
---@param key? integer
---@return boolean rejected
function M.reject(reason, key)
  return require("verbatim.review").reject(reason, key)
end

--- The edits waiting for review, oldest first.
---@return verbatim.PendingInfo[]
function M.pending()
  local result = {}
  for _, item in ipairs(require("verbatim.queue").items) do
    local p = item.proposal
    local uris = {}
    for _, doc in ipairs(p.documents) do
      table.insert(uris, doc.uri)
    end
    table.insert(result, {
      key = item.key,
      id = p.pending_id,
      agent = p.agent,
      summary = p.summary,
      label = p.label,
      uris = uris,
      since = item.since,
      client_id = p.client_id,
    })
  end
  return result
end

---@class verbatim.ClientStatus
---@field client_id integer
---@field root_dir string|nil
---@field claude_code_port integer|nil the port Claude Code connects to, when the server serves it
---@field server verbatim.Status|nil what the server last reported (agents, socket, its pending edits)

---@class verbatim.StatusInfo
---@field review "confirm"|"auto"
---@field clients verbatim.ClientStatus[]
---@field pending verbatim.PendingInfo[]
---@field trusted string[] agents whose edits apply without review this session

---@param statuses table<integer, verbatim.Status>
---@return verbatim.StatusInfo
local function status_info(statuses)
  local clients = {}
  for _, client in ipairs(require("verbatim.lsp").clients()) do
    table.insert(clients, {
      client_id = client.id,
      root_dir = client.root_dir,
      claude_code_port = require("verbatim.claude_code").ports[client.id],
      server = statuses[client.id],
    })
  end
  local trusted = vim.tbl_keys(require("verbatim.queue").trusted)
  table.sort(trusted)
  return {
    review = require("verbatim.config").options.review,
    clients = clients,
    pending = M.pending(),
    trusted = trusted,
  }
end

--- The running servers, their agents, and the edits waiting for review.
--- Without `on_status`, returns at once what each server last reported.
--- With it, asks each server for a fresh status without blocking Neovim and
--- calls `on_status` once all have answered or `timeout_ms` (default 1000)
--- has passed.
---@param on_status? fun(status: verbatim.StatusInfo)
---@param timeout_ms? integer
---@return verbatim.StatusInfo|nil
function M.status(on_status, timeout_ms)
  local lsp = require("verbatim.lsp")
  if not on_status then
    return status_info(lsp.statuses)
  end
  lsp.fetch_statuses(function(statuses)
    on_status(status_info(statuses))
  end, timeout_ms)
end

--- Opens the review window on the next pending edit and moves into it.
function M.review()
  require("verbatim.review").open({ enter = true })
end

--- Shows the next pending edit: see `:Verbatim next`.
---@return boolean shown whether an edit waits
function M.next()
  if require("verbatim.config").options.review_ui == "inline" then
    return require("verbatim.inline").next()
  end
  return require("verbatim.review").next()
end

--- Opens the server log.
function M.log()
  require("verbatim.commands").log()
end

--- Opens the timeline of every agent's changes: see `:Verbatim timeline`.
--- `opts.request` replaces the Verbatim client as the way to the server
--- (`fun(method, params, callback(err, result))`).
---@param opts? verbatim.TimelineOpenOptions
---@return integer buf the timeline's buffer
function M.timeline(opts)
  return require("verbatim.timeline").open(opts)
end

return M
