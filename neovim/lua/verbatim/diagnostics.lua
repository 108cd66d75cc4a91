---@brief
--- Answers the server's `verbatim/diagnostics` request: what the person's
--- language servers (and any other diagnostic source) report for documents,
--- at once (the baseline before an edit) or once they settled after the edit.
---
--- The `DiagnosticChanged` autocommand tells when a buffer's diagnostics
--- changed and at which LSP version the buffer was then. A wait ends when
--- every document has a change at the edit's version or later followed by a
--- quiet period, or at the timeout; the handler yields its coroutine
--- (vim.lsp.rpc runs server requests in one) meanwhile, so Neovim stays
--- responsive. A document with neither a language server other than Verbatim
--- attached nor any diagnostic is `unavailable`: nothing would ever report.

local api = vim.api

local M = {}

--- How often a wait looks again (ms).
M.POLL_MS = 20
--- How many diagnostic changes are kept per buffer.
local KEPT_CHANGES = 16

---@class verbatim.DiagnosticChange
---@field time integer when it happened (ms, monotonic)
---@field version integer|nil the buffer's LSP version then

--- The latest diagnostic changes of each buffer, oldest first.
---@type table<integer, verbatim.DiagnosticChange[]>
M.changes = {}

---@return integer
local function now_ms()
  return math.floor(vim.uv.hrtime() / 1e6)
end

---@param bufnr integer
---@return integer|nil
local function lsp_version(bufnr)
  return vim.lsp.util.buf_versions[bufnr]
end

--- The diagnostic namespaces of the Verbatim clients: their diagnostics
--- (if the server ever sent any) are not the person's language servers'.
---@return table<integer, boolean>
local function own_namespaces()
  local namespaces = {}
  for _, client in ipairs(vim.lsp.get_clients({ name = require("verbatim.lsp").NAME })) do
    namespaces[vim.lsp.diagnostic.get_namespace(client.id, false)] = true
    namespaces[vim.lsp.diagnostic.get_namespace(client.id, true)] = true
  end
  return namespaces
end

---@param bufnr integer
---@param diagnostics vim.Diagnostic[]
local function record(bufnr, diagnostics)
  local own = own_namespaces()
  if #diagnostics > 0 then
    local foreign = false
    for _, d in ipairs(diagnostics) do
      foreign = foreign or not own[d.namespace]
    end
    if not foreign then
      return
    end
  end
  local list = M.changes[bufnr] or {}
  M.changes[bufnr] = list
  table.insert(list, { time = now_ms(), version = lsp_version(bufnr) })
  if #list > KEPT_CHANGES then
    table.remove(list, 1)
  end
end

local GROUP = "verbatim.diagnostics"

--- Starts recording diagnostic changes; calling it again is harmless.
function M.enable()
  local group = api.nvim_create_augroup(GROUP, { clear = true })
  api.nvim_create_autocmd("DiagnosticChanged", {
    group = group,
    desc = "verbatim: remember when each buffer's diagnostics changed",
    callback = function(args)
      record(args.buf, (args.data or {}).diagnostics or {})
    end,
  })
  api.nvim_create_autocmd("BufWipeout", {
    group = group,
    desc = "verbatim: forget a wiped buffer's diagnostic changes",
    callback = function(args)
      M.changes[args.buf] = nil
    end,
  })
end

--- Stops recording diagnostic changes and forgets those recorded.
function M.disable()
  api.nvim_create_augroup(GROUP, { clear = true })
  M.changes = {}
end

--- The loaded buffer of a URI, if any (looking it up by name would create one).
---@param uri string
---@return integer|nil
local function buffer_of(uri)
  for _, bufnr in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(bufnr) and vim.uri_from_bufnr(bufnr) == uri then
      return bufnr
    end
  end
end

--- The language servers attached to a buffer, Verbatim's left out.
---@param bufnr integer
---@return vim.lsp.Client[]
local function other_clients(bufnr)
  local name = require("verbatim.lsp").NAME
  return vim.tbl_filter(function(client)
    return client.name ~= name
  end, vim.lsp.get_clients({ bufnr = bufnr }))
end

--- A buffer's diagnostics at `min_severity` or worse (1 error … 4 hint),
--- Verbatim's own left out; all of them without `min_severity`.
---@param bufnr integer
---@param min_severity integer|nil
---@return vim.Diagnostic[]
local function diagnostics_of(bufnr, min_severity)
  local own = own_namespaces()
  local result = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if not own[d.namespace] and (not min_severity or (d.severity or 1) <= min_severity) then
      table.insert(result, d)
    end
  end
  table.sort(result, function(a, b)
    if a.lnum ~= b.lnum then
      return a.lnum < b.lnum
    end
    if a.col ~= b.col then
      return a.col < b.col
    end
    return (a.severity or 1) < (b.severity or 1)
  end)
  return result
end

--- Whether anything reports diagnostics for a buffer.
---@param bufnr integer
---@return boolean
local function available(bufnr)
  return #other_clients(bufnr) > 0 or #diagnostics_of(bufnr, nil) > 0
end

--- An LSP position from a 0-based line and byte column, in `encoding`;
--- columns past the end of the line are clamped.
---@param bufnr integer
---@param lnum integer
---@param col integer|nil
---@param encoding string
---@return lsp.Position
local function position(bufnr, lnum, col, encoding)
  local line = api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1]
  if not line then
    return { line = lnum, character = 0 }
  end
  col = math.min(math.max(col or 0, 0), #line)
  return { line = lnum, character = vim.str_utfindex(line, encoding, col, false) }
end

--- A vim.diagnostic item as an LSP Diagnostic, its range in `encoding`.
---@param bufnr integer
---@param d vim.Diagnostic
---@param encoding string
---@return lsp.Diagnostic
function M.to_lsp(bufnr, d, encoding)
  local end_lnum = d.end_lnum or d.lnum
  local end_col = d.end_col or d.col
  return {
    range = {
      start = position(bufnr, d.lnum, d.col, encoding),
      ["end"] = position(bufnr, end_lnum, end_col, encoding),
    },
    severity = d.severity,
    code = d.code,
    source = d.source,
    message = d.message,
  }
end

---@param bufnr integer
---@param min_severity integer
---@param encoding string
---@return lsp.Diagnostic[]
local function lsp_diagnostics(bufnr, min_severity, encoding)
  return vim.tbl_map(function(d)
    return M.to_lsp(bufnr, d, encoding)
  end, diagnostics_of(bufnr, min_severity))
end

--- Who reports for a buffer: the sources of its diagnostics, then the
--- attached language servers not named by them.
---@param bufnr integer
---@return string[]
local function sources(bufnr)
  local result, seen = {}, {}
  local function add(name)
    if type(name) == "string" and name ~= "" and not seen[name:lower()] then
      seen[name:lower()] = true
      table.insert(result, name)
    end
  end
  for _, d in ipairs(diagnostics_of(bufnr, nil)) do
    add(d.source)
  end
  for _, client in ipairs(other_clients(bufnr)) do
    add(client.name)
  end
  return result
end

--- Whether a buffer's diagnostics changed at `version` or later, and have
--- been quiet for `quiet_ms` since the last change.
---@param bufnr integer
---@param version integer|nil nil: any change after `since`
---@param since integer
---@param quiet_ms integer
---@return boolean fresh
---@return boolean settled
local function freshness(bufnr, version, since, quiet_ms)
  local list = M.changes[bufnr] or {}
  local fresh = false
  for _, change in ipairs(list) do
    if version and change.version and change.version >= version then
      fresh = true
    elseif not version and change.time >= since then
      fresh = true
    end
  end
  local last = list[#list]
  return fresh, fresh and last ~= nil and now_ms() - last.time >= quiet_ms
end

--- Returns once `done()` is true or `timeout_ms` passed: yields the running
--- coroutine when there is one, else waits with vim.wait().
---@param done fun(): boolean
---@param timeout_ms integer
local function wait_until(done, timeout_ms)
  if done() then
    return
  end
  local co = coroutine.running()
  if not co or not coroutine.isyieldable() then
    vim.wait(timeout_ms, done, M.POLL_MS)
    return
  end
  local deadline = now_ms() + timeout_ms
  local timer = assert(vim.uv.new_timer())
  local finished = false
  timer:start(
    M.POLL_MS,
    M.POLL_MS,
    vim.schedule_wrap(function()
      if finished then
        return
      end
      if done() or now_ms() >= deadline then
        finished = true
        timer:stop()
        timer:close()
        local ok, err = coroutine.resume(co)
        if not ok then
          vim.notify(
            "verbatim: answering verbatim/diagnostics failed: " .. tostring(err),
            vim.log.levels.ERROR
          )
        end
      end
    end)
  )
  coroutine.yield()
end

--- Every other loaded file buffer's diagnostics at `min_severity`.
---@param skip table<integer, boolean>
---@param min_severity integer
---@param encoding string
---@return table<integer, lsp.Diagnostic[]>
local function other_buffers(skip, min_severity, encoding)
  local result = {}
  for _, bufnr in ipairs(api.nvim_list_bufs()) do
    if
      not skip[bufnr]
      and api.nvim_buf_is_loaded(bufnr)
      and vim.startswith(vim.uri_from_bufnr(bufnr), "file:")
    then
      result[bufnr] = lsp_diagnostics(bufnr, min_severity, encoding)
    end
  end
  return result
end

--- The request handler, to be installed in the Verbatim client's `handlers`.
---@param _ lsp.ResponseError|nil
---@param params verbatim.DiagnosticsParams
---@param ctx lsp.HandlerContext
---@return verbatim.DiagnosticsResult
function M.handler(_, params, ctx)
  params = type(params) == "table" and params or {}
  local started = now_ms()
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or "utf-16"
  local min_severity = params.minSeverity == "warning" and 2 or 1
  local wait = type(params.wait) == "table" and params.wait or nil

  local docs = {} ---@type { uri: string, bufnr: integer|nil, version: integer|nil }[]
  local skip = {} ---@type table<integer, boolean>
  for _, uri in ipairs(type(params.uris) == "table" and params.uris or {}) do
    local bufnr = buffer_of(uri)
    local version = wait and type(wait.versions) == "table" and wait.versions[uri] or nil
    table.insert(docs, { uri = uri, bufnr = bufnr, version = tonumber(version) })
    if bufnr then
      skip[bufnr] = true
    end
  end

  local status = {} ---@type table<integer, verbatim.DiagnosticsStatus>
  local before_others = nil ---@type table<integer, lsp.Diagnostic[]>|nil
  if wait then
    before_others = other_buffers(skip, min_severity, encoding)
    local quiet_ms = tonumber(wait.quietMs) or 300
    local timeout_ms = tonumber(wait.timeoutMs) or 2500
    local function settled()
      local all = true
      for i, doc in ipairs(docs) do
        if not doc.bufnr or not api.nvim_buf_is_loaded(doc.bufnr) or not available(doc.bufnr) then
          status[i] = "unavailable"
        else
          local _, quiet = freshness(doc.bufnr, doc.version, started, quiet_ms)
          status[i] = quiet and "settled" or "timedOut"
          all = all and quiet
        end
      end
      return all
    end
    wait_until(settled, timeout_ms)
    settled()
  end

  local waited = now_ms() - started
  local documents = {}
  for i, doc in ipairs(docs) do
    local bufnr = doc.bufnr
    local loaded = bufnr and api.nvim_buf_is_loaded(bufnr)
    local doc_status = status[i]
    if not doc_status then
      doc_status = (
        loaded and available(bufnr --[[@as integer]])
      ) and "settled" or "unavailable"
    end
    table.insert(documents, {
      uri = doc.uri,
      version = loaded and lsp_version(bufnr --[[@as integer]]) or vim.NIL,
      status = doc_status,
      waitedMs = waited,
      sources = loaded and sources(bufnr --[[@as integer]]) or {},
      diagnostics = loaded and lsp_diagnostics(bufnr --[[@as integer]], min_severity, encoding) or {},
    })
  end

  local others = {}
  if before_others then
    for bufnr, after in pairs(other_buffers(skip, min_severity, encoding)) do
      local list = M.changes[bufnr] or {}
      local changed = #list > 0 and list[#list].time >= started
      local before = before_others[bufnr] or {}
      if changed and not vim.deep_equal(before, after) then
        table.insert(others, { uri = vim.uri_from_bufnr(bufnr), before = before, after = after })
      end
    end
    table.sort(others, function(a, b)
      return a.uri < b.uri
    end)
  end
  return { documents = documents, others = others }
end

return M
