---@brief
--- Starts `verbatim lsp` beside the person's other language servers: one
--- client per workspace root, attached to every normal file buffer whatever
--- its filetype, with the handlers Verbatim needs.

local api = vim.api
local config = require("verbatim.config")
local protocol = require("verbatim.protocol")

local M = {}

M.NAME = "verbatim"

--- The latest status each client's server sent, by client id.
---@type table<integer, verbatim.Status>
M.statuses = {}

local group = api.nvim_create_augroup("verbatim.lsp", { clear = true })

--- What the client implements, on top of Neovim's defaults.
---@return lsp.ClientCapabilities
function M.capabilities()
  return vim.tbl_deep_extend("force", vim.lsp.protocol.make_client_capabilities(), {
    general = { positionEncodings = { "utf-8", "utf-16", "utf-32" } },
    workspace = {
      applyEdit = true,
      workspaceEdit = {
        documentChanges = true,
        resourceOperations = { "create" },
        failureHandling = "abort",
        normalizesLineEndings = false,
        changeAnnotationSupport = { groupsOnLabel = false },
      },
    },
  })
end

---@return verbatim.InitializationOptions
function M.init_options()
  return {
    needsConfirmation = config.options.review == "confirm",
    statusNotifications = true,
    externalChanges = config.options.external_changes,
    diagnostics = true,
    hunkOutcomes = true,
    claudeCode = config.options.claude_code,
    geminiCli = config.options.gemini_cli,
    -- The plugin reads `verbatim` in workspace/applyEdit and verbatim/externalChange.
    verbatimExtensions = true,
  }
end

---@param status verbatim.Status|nil
---@return table<integer, boolean>
local function pending_ids(status)
  local ids = {}
  for _, pending in ipairs(status and status.pending or {}) do
    ids[pending.id] = true
  end
  return ids
end

--- Withdraws the edits the server no longer waits for: the agent cancelled
--- its request or went away, and an accept would change the buffer behind
--- its back. Status notifications may arrive out of order, so a fresh
--- `verbatim/status` confirms before anything is withdrawn.
---@param client_id integer
---@param status verbatim.Status
function M.reconcile(client_id, status)
  local queue = require("verbatim.queue")
  local known = pending_ids(status)
  local suspects = {}
  for _, item in ipairs(queue.items) do
    local id = item.proposal.pending_id
    -- A moved edit is answered already and waits for a new offer (see queue.lua).
    if item.proposal.client_id == client_id and id and not known[id] and not item.moved then
      table.insert(suspects, item)
    end
  end
  local client = vim.lsp.get_client_by_id(client_id)
  if #suspects == 0 or not client then
    return
  end
  client:request(protocol.methods.status, nil, function(err, fresh)
    if err or type(fresh) ~= "table" then
      return
    end
    local still = pending_ids(fresh)
    for _, item in ipairs(suspects) do
      local id = item.proposal.pending_id
      if queue.get(item.key) and not item.moved and not still[id] then
        queue.resolve(item, {
          applied = false,
          failureReason = "withdrawn: the server no longer waits for this edit",
        })
        require("verbatim.notice").notify(
          string.format("verbatim: %s was withdrawn by the agent", item.proposal.label),
          vim.log.levels.WARN
        )
      end
    end
  end)
end

---@param err lsp.ResponseError|nil
---@param status verbatim.Status
---@param ctx lsp.HandlerContext
local function on_status_changed(err, status, ctx)
  if err or type(status) ~= "table" then
    return
  end
  M.statuses[ctx.client_id] = status
  M.reconcile(ctx.client_id, status)
  api.nvim_exec_autocmds("User", { pattern = "VerbatimStatus", modeline = false })
end

--- The workspace root of a buffer: the nearest directory holding a root
--- marker, else the current directory.
---@param bufnr integer
---@return string
function M.root_dir(bufnr)
  return vim.fs.root(bufnr, config.options.root_markers) or vim.fn.getcwd()
end

--- The server command, with the log file appended.
---@return string[]
function M.cmd()
  local cmd = vim.deepcopy(config.options.cmd)
  local log = config.log_path()
  if log then
    vim.fn.mkdir(vim.fs.dirname(log), "p")
    vim.list_extend(cmd, { "--log-file", log })
  end
  return cmd
end

---@param bufnr integer
---@return vim.lsp.ClientConfig
function M.client_config(bufnr)
  return {
    name = M.NAME,
    cmd = M.cmd(),
    root_dir = M.root_dir(bufnr),
    capabilities = M.capabilities(),
    init_options = M.init_options(),
    -- The server waits a bounded time for the didChange that carries an
    -- applied edit, and agents read the live text: send changes at once
    -- instead of after Neovim's default 150 ms debounce.
    flags = { debounce_text_changes = 0 },
    handlers = {
      ["workspace/applyEdit"] = require("verbatim.apply_edit").handler,
      [protocol.methods.status_changed] = on_status_changed,
      [protocol.methods.external_change] = function(err, params, ctx)
        require("verbatim.external").handler(err, params, ctx)
      end,
      [protocol.methods.diagnostics] = function(err, params, ctx)
        return require("verbatim.diagnostics").handler(err, params, ctx)
      end,
      [protocol.methods.save_document] = function(err, params, ctx)
        return require("verbatim.claude_code").save_document(err, params, ctx)
      end,
      -- Only an open timeline cares; the module is not loaded for it.
      [protocol.methods.journal_changed] = function(_, params, ctx)
        local timeline = package.loaded["verbatim.timeline"]
        if timeline then
          timeline.on_journal_changed(params, ctx.client_id)
        end
      end,
    },
    on_init = function(client, result)
      -- The server's Claude Code port (when it serves Claude Code) goes into
      -- the environment of the terminals started from now on.
      require("verbatim.claude_code").on_init(client, result)
      -- Likewise Gemini CLI's and Qwen Code's variables.
      require("verbatim.gemini_cli").on_init(client, result)
    end,
    on_exit = function(_, _, client_id)
      vim.schedule(function()
        M.statuses[client_id] = nil
        require("verbatim.claude_code").on_exit(client_id)
        require("verbatim.gemini_cli").on_exit(client_id)
        require("verbatim.queue").drop_client(client_id)
      end)
    end,
  }
end

--- Whether Verbatim should run for a buffer.
---@param bufnr integer
---@return boolean
function M.wants(bufnr)
  if not api.nvim_buf_is_valid(bufnr) or not api.nvim_buf_is_loaded(bufnr) then
    return false
  end
  if vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return false
  end
  return not vim.tbl_contains(config.options.skip_filetypes, vim.bo[bufnr].filetype)
end

--- The Verbatim client attached to a buffer, if any.
---@param bufnr integer
---@return vim.lsp.Client|nil
function M.client_for(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = M.NAME })[1]
end

--- Starts (or reuses) the server for a buffer's root and attaches to it.
---@param bufnr integer
---@return integer|nil client_id
function M.attach(bufnr)
  if not M.wants(bufnr) then
    return nil
  end
  local existing = M.client_for(bufnr)
  if existing then
    return existing.id
  end
  if vim.fn.executable(config.options.cmd[1]) ~= 1 then
    vim.notify_once(
      string.format(
        "verbatim: %q not found; install the verbatim binary or set `cmd` in setup() (:checkhealth verbatim)",
        config.options.cmd[1]
      ),
      vim.log.levels.WARN
    )
    return nil
  end
  return vim.lsp.start(M.client_config(bufnr), { bufnr = bufnr })
end

---@param bufnr integer
local function detach_if_skipped(bufnr)
  local client = M.client_for(bufnr)
  if client and vim.tbl_contains(config.options.skip_filetypes, vim.bo[bufnr].filetype) then
    vim.lsp.buf_detach_client(bufnr, client.id)
  end
end

--- Attaches to every loaded buffer now and to every buffer read later.
function M.enable()
  api.nvim_clear_autocmds({ group = group })
  require("verbatim.external").enable()
  require("verbatim.diagnostics").enable()
  require("verbatim.claude_code").enable()
  api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost" }, {
    group = group,
    desc = "verbatim: start the server for file buffers",
    callback = function(args)
      -- After the filetype is known (filetype detection runs in the same
      -- events), and out of the autocommand.
      vim.schedule(function()
        M.attach(args.buf)
      end)
    end,
  })
  api.nvim_create_autocmd("FileType", {
    group = group,
    desc = "verbatim: honour skip_filetypes",
    callback = function(args)
      detach_if_skipped(args.buf)
    end,
  })
  for _, bufnr in ipairs(api.nvim_list_bufs()) do
    M.attach(bufnr)
  end
end

--- Stops attaching to new buffers and stops every Verbatim client.
function M.disable()
  api.nvim_clear_autocmds({ group = group })
  require("verbatim.diagnostics").disable()
  require("verbatim.claude_code").disable()
  for _, client in ipairs(M.clients()) do
    client:stop()
  end
end

--- Every running Verbatim client.
---@return vim.lsp.Client[]
function M.clients()
  return vim.lsp.get_clients({ name = M.NAME })
end

--- Asks each server for its status without blocking, and calls `on_done`
--- with every client's latest status once all have answered or `timeout_ms`
--- (default 1000) has passed; a server that did not answer keeps the last
--- `verbatim/statusChanged` it sent.
---@param on_done fun(statuses: table<integer, verbatim.Status>)
---@param timeout_ms? integer
function M.fetch_statuses(on_done, timeout_ms)
  local waiting = 0
  local done = false
  local timer = nil ---@type uv.uv_timer_t|nil
  local function finish()
    if done then
      return
    end
    done = true
    if timer and not timer:is_closing() then
      timer:stop()
      timer:close()
    end
    on_done(M.statuses)
  end
  for _, client in ipairs(M.clients()) do
    if client.initialized then
      local sent = client:request(protocol.methods.status, nil, function(err, result)
        if not err and type(result) == "table" then
          M.statuses[client.id] = result
        end
        waiting = waiting - 1
        if waiting == 0 then
          finish()
        end
      end)
      if sent then
        waiting = waiting + 1
      end
    end
  end
  if waiting == 0 then
    vim.schedule(finish)
  else
    timer = vim.defer_fn(finish, timeout_ms or 1000)
  end
end

return M
