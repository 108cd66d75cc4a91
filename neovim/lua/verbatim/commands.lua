---@brief
--- The :Verbatim command and its subcommands.

local api = vim.api

local M = {}

---@param fmt string
---@param ... any
local function say(fmt, ...)
  vim.notify(string.format(fmt, ...), vim.log.levels.INFO)
end

--- The status as lines of text.
---@param status verbatim.StatusInfo
---@return string[]
function M.format_status(status)
  local lines = { "Verbatim (review = " .. status.review .. ")" }
  if #status.clients == 0 then
    table.insert(lines, "  no server running (open a file, or see :checkhealth verbatim)")
  end
  for _, client in ipairs(status.clients) do
    table.insert(lines, string.format("  server for %s", client.root_dir or "?"))
    if client.claude_code_port then
      local in_env = require("verbatim.claude_code").env_port() == client.claude_code_port
      table.insert(
        lines,
        string.format(
          "    Claude Code: port %d%s",
          client.claude_code_port,
          in_env and " (CLAUDE_CODE_SSE_PORT of new terminals)" or ""
        )
      )
    else
      table.insert(lines, "    Claude Code: not served")
    end
    local server = client.server
    if server then
      table.insert(lines, "    agent socket: " .. tostring(server.socket))
      local agents = server.agents or {}
      if #agents == 0 then
        table.insert(lines, "    no agent connected")
      end
      for _, agent in ipairs(agents) do
        table.insert(
          lines,
          string.format(
            "    agent #%s %s%s, %d edit(s) pending",
            tostring(agent.id),
            agent.name or "?",
            agent.version and (" " .. agent.version) or "",
            agent.pendingEdits or 0
          )
        )
      end
    else
      table.insert(lines, "    (no status from the server yet)")
    end
  end
  if #status.pending == 0 then
    table.insert(lines, "  no edit waits for review")
  else
    table.insert(lines, string.format("  %d edit(s) wait for review:", #status.pending))
    for _, item in ipairs(status.pending) do
      local files = vim.tbl_map(function(uri)
        return vim.fn.fnamemodify(vim.uri_to_fname(uri), ":~:.")
      end, item.uris)
      table.insert(
        lines,
        string.format("    %d. %s  (%s)", item.key, item.label, table.concat(files, ", "))
      )
    end
  end
  if #status.trusted > 0 then
    table.insert(lines, "  trusted this session: " .. table.concat(status.trusted, ", "))
  end
  return lines
end

--- Opens the server's log file (or, when the server logs to stderr, its
--- lines from Neovim's LSP log) in a split, at the end.
function M.log()
  local config = require("verbatim.config")
  local path = config.log_path()
  if path then
    if vim.fn.filereadable(path) == 0 then
      vim.notify("verbatim: no log yet at " .. path, vim.log.levels.INFO)
      return
    end
    vim.cmd("botright split " .. vim.fn.fnameescape(path))
    vim.bo.readonly = true
    vim.bo.autoread = true
    vim.cmd("normal! G")
    return
  end
  local lsp_log = vim.lsp.log.get_filename()
  local needle = string.format('"%s"\t"stderr"', config.options.cmd[1])
  local lines = {}
  local ok, all = pcall(vim.fn.readfile, lsp_log)
  for _, line in ipairs(ok and all or {}) do
    if line:find(needle, 1, true) then
      table.insert(lines, line)
    end
  end
  if #lines == 0 then
    lines = { "No output from " .. config.options.cmd[1] .. " in " .. lsp_log }
  end
  vim.cmd("botright new")
  local buf = api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  api.nvim_win_set_cursor(0, { #lines, 0 })
end

--- `:Verbatim timeline [{file}]`: the timeline, filtered to {file} when given
--- (`%` is the current file).
---@param rest string
---@param args vim.api.keyset.create_user_command.command_args
local function timeline(rest, args)
  local uri = nil
  if rest ~= "" then
    local path = vim.fn.expand(rest)
    if path == "" then
      vim.notify("verbatim: no file name for " .. rest, vim.log.levels.ERROR)
      return
    end
    uri = vim.uri_from_fname(vim.fn.fnamemodify(path, ":p"))
  end
  require("verbatim").timeline({ uri = uri, mods = args.mods })
end

---@type table<string, fun(rest: string, args: vim.api.keyset.create_user_command.command_args)>
local subcommands = {
  status = function()
    require("verbatim").status(function(status)
      say("%s", table.concat(M.format_status(status), "\n"))
    end)
  end,
  review = function()
    require("verbatim").review()
  end,
  log = function()
    M.log()
  end,
  timeline = timeline,
  next = function()
    if not require("verbatim").next() then
      say("verbatim: no edit waits for review")
    end
  end,
  accept = function(rest)
    local applied, reason, later = require("verbatim").accept(nil, rest ~= "" and rest or nil)
    if not applied and not later and reason then
      say("verbatim: %s", reason)
    end
  end,
  reject = function(rest)
    if not require("verbatim").reject(rest ~= "" and rest or nil) then
      say("verbatim: no edit waits for review")
    end
  end,
}

--- Runs `:Verbatim {subcommand} [args]`.
---@param args vim.api.keyset.create_user_command.command_args
function M.run(args)
  local name, rest = (args.args or ""):match("^%s*(%S*)%s*(.-)%s*$")
  if name == "" then
    name = "status"
  end
  local fn = subcommands[name]
  if not fn then
    vim.notify(
      string.format(
        "verbatim: unknown subcommand %q (one of: %s)",
        name,
        table.concat(M.names(), ", ")
      ),
      vim.log.levels.ERROR
    )
    return
  end
  fn(rest, args)
end

---@return string[]
function M.names()
  local names = vim.tbl_keys(subcommands)
  table.sort(names)
  return names
end

---@param arg_lead string
---@param line string
---@return string[]
function M.complete(arg_lead, line)
  if line:match("^%s*%S+%s+timeline%s") then
    return vim.fn.getcompletion(arg_lead, "file")
  end
  if line:match("^%s*%S+%s+%S+%s") then
    return {}
  end
  return vim.tbl_filter(function(name)
    return vim.startswith(name, arg_lead)
  end, M.names())
end

return M
