---@brief
--- Claude Code's IDE protocol, the Neovim side (docs/protocol.md, "Claude
--- Code's IDE protocol"). The server itself is the IDE that Claude Code
--- connects to: its Edit and Write tools become ordinary reviews
--- (`workspace/applyEdit`, agent "Claude Code"). This module adds what only
--- the editor knows:
--- - the server's port in Neovim's environment (`CLAUDE_CODE_SSE_PORT`,
---   `ENABLE_IDE_INTEGRATION`), inherited by every :terminal and job started
---   afterwards, so that a `claude` started there connects by itself;
--- - the person's selection (`verbatim/selectionChanged`), debounced, read
---   from the selected lines only;
--- - :VerbatimMention (`verbatim/atMention`);
--- - the answer to `verbatim/saveDocument`.

local api = vim.api
local protocol = require("verbatim.protocol")
local text = require("verbatim.text")

local M = {}

M.ENV_PORT = "CLAUDE_CODE_SSE_PORT"
M.ENV_ENABLE = "ENABLE_IDE_INTEGRATION"
--- How long the cursor must rest before its selection is sent.
M.DEBOUNCE_MS = 100

--- The Claude Code port of each client whose server serves it, by client id.
---@type table<integer, integer>
M.ports = {}
--- Client ids with a port, in the order they initialized (the newest last).
---@type integer[]
local order = {}
--- What the environment held before the plugin first set it (`false`: unset).
---@type { port: string|false, enable: string|false }|nil
local saved_env = nil
--- The port the plugin last put into the environment.
---@type string|nil
local env_port = nil

--- The last selection sent to each client, so an unchanged one is not sent again.
---@type table<integer, verbatim.SelectionChangedParams>
local last_sent = {}
---@type uv.uv_timer_t|nil
local timer = nil

local group = api.nvim_create_augroup("verbatim.claude_code", { clear = true })

---@param msg string
---@param level integer
local function notify(msg, level)
  vim.notify("verbatim: " .. msg, level)
end

--- The port a server announced in its `initialize` result, if any.
---@param capabilities table|nil the server's capabilities
---@return integer|nil
function M.announced_port(capabilities)
  local experimental = type(capabilities) == "table" and capabilities.experimental or nil
  local verbatim = type(experimental) == "table" and experimental.verbatim or nil
  local claude = type(verbatim) == "table" and verbatim.claudeCode or nil
  local port = type(claude) == "table" and claude.port or nil
  if type(port) == "number" and port > 0 and port < 65536 and port % 1 == 0 then
    return port
  end
  return nil
end

--- The client whose port the environment should hold: the one whose root
--- holds the current directory (the deepest), where `:terminal` starts
--- `claude`; else the newest.
---@return integer|nil client_id
local function preferred_client()
  local cwd = vim.fs.normalize(vim.fn.getcwd())
  local best, best_len = nil, -1
  for _, id in ipairs(order) do
    local client = vim.lsp.get_client_by_id(id)
    local root = client and client.root_dir and vim.fs.normalize(client.root_dir)
    if root and (cwd == root or vim.startswith(cwd, root .. "/")) and #root >= best_len then
      best, best_len = id, #root
    end
  end
  return best or order[#order]
end

--- Puts the preferred server's port into the environment, or gives the
--- environment back what it held when no server serves Claude Code. Leaves
--- it alone once someone else changed `CLAUDE_CODE_SSE_PORT`.
local function update_env()
  if env_port and vim.env[M.ENV_PORT] ~= env_port then
    -- Set by the person (or another plugin) after us: theirs to keep.
    env_port, saved_env = nil, nil
  end
  local id = preferred_client()
  if id then
    if not saved_env then
      saved_env = { port = vim.env[M.ENV_PORT] or false, enable = vim.env[M.ENV_ENABLE] or false }
    end
    env_port = tostring(M.ports[id])
    vim.env[M.ENV_PORT] = env_port
    vim.env[M.ENV_ENABLE] = "true"
  elseif env_port then
    vim.env[M.ENV_PORT] = saved_env and saved_env.port or nil
    vim.env[M.ENV_ENABLE] = saved_env and saved_env.enable or nil
    env_port, saved_env = nil, nil
  end
end

--- The port the environment holds for terminals started now, if it is a
--- Verbatim server's.
---@return integer|nil
function M.env_port()
  if env_port and vim.env[M.ENV_PORT] == env_port then
    return tonumber(env_port)
  end
  return nil
end

--- Called once a client has initialized: remembers the server's port.
---@param client vim.lsp.Client
---@param result? table the `initialize` result
function M.on_init(client, result)
  local port = M.announced_port(client.server_capabilities)
    or M.announced_port(result and result.capabilities)
  if not port then
    return
  end
  M.ports[client.id] = port
  table.insert(order, client.id)
  update_env()
end

--- Called when a client exited.
---@param client_id integer
function M.on_exit(client_id)
  last_sent[client_id] = nil
  if not M.ports[client_id] then
    return
  end
  M.ports[client_id] = nil
  for i, id in ipairs(order) do
    if id == client_id then
      table.remove(order, i)
      break
    end
  end
  update_env()
end

local VISUAL = { v = "v", V = "V", ["\22"] = "\22", s = "v", S = "V", ["\19"] = "\22" }
--- Modes whose cursor or selection is sent. Not the command line (`:` from
--- Visual mode must not replace the selection with a cursor), nor prompts.
local SENT_MODES = { n = true, i = true, R = true }

---@param a integer[] getpos()
---@param b integer[]
---@return boolean
local function before(a, b)
  return a[2] < b[2] or (a[2] == b[2] and a[3] <= b[3])
end

--- The selection in the current window (or the cursor, as an empty range)
--- in `encoding`, reading only the selected lines. Nil in a mode whose
--- position is not the person's selection (command line, prompts).
---@param encoding string
---@return verbatim.SelectionChangedParams|nil
function M.selection(encoding)
  local bufnr = api.nvim_get_current_buf()
  local mode = api.nvim_get_mode().mode
  local first = mode:sub(1, 1)
  local visual = VISUAL[first]
  if not visual and not SENT_MODES[first] then
    return nil
  end
  local snapshot = text.snapshot(bufnr)
  local uri = vim.uri_from_bufnr(bufnr)
  if not visual then
    local cursor = api.nvim_win_get_cursor(0)
    local pos = text.to_position(snapshot, cursor[1] - 1, cursor[2], encoding)
    return { uri = uri, text = "", range = { start = pos, ["end"] = vim.deepcopy(pos) } }
  end
  local a, b = vim.fn.getpos("v"), vim.fn.getpos(".")
  local s, e = a, b
  if not before(a, b) then
    s, e = b, a
  end
  local start_row, end_row = s[2] - 1, e[2] - 1
  local start_col, end_col
  if visual == "V" then
    start_col, end_col = 0, math.huge
  else
    if visual == "\22" then
      -- An LSP range cannot be a block: its top left to its bottom right.
      s, e = { 0, s[2], math.min(a[3], b[3]) }, { 0, e[2], math.max(a[3], b[3]) }
    end
    start_col = s[3] - 1
    local last_line = api.nvim_buf_get_lines(bufnr, end_row, end_row + 1, false)[1] or ""
    if vim.o.selection == "exclusive" then
      end_col = e[3] - 1
    elseif e[3] <= #last_line then
      -- Past the last selected character, whatever its length in bytes.
      end_col = e[3] + vim.str_utf_end(last_line, e[3])
    else
      end_col = #last_line
    end
  end
  local region = vim.fn.getregion(a, b, { type = visual })
  return {
    uri = uri,
    text = table.concat(region, "\n"),
    range = {
      start = text.to_position(snapshot, start_row, start_col, encoding),
      ["end"] = text.to_position(snapshot, end_row, end_col, encoding),
    },
  }
end

--- Sends the current window's selection to its buffer's server, when that
--- server serves Claude Code and the selection changed. Special buffers
--- (the review window, terminals, help) are never attached, and never sent.
function M.send_selection()
  local bufnr = api.nvim_get_current_buf()
  if vim.bo[bufnr].buftype ~= "" then
    return
  end
  local client = require("verbatim.lsp").client_for(bufnr)
  if not client or not M.ports[client.id] then
    return
  end
  local params = M.selection(client.offset_encoding or "utf-16")
  if not params or vim.deep_equal(last_sent[client.id], params) then
    return
  end
  last_sent[client.id] = params
  client:notify(protocol.methods.selection_changed, params)
end

--- Sends the selection once the cursor has rested for `M.DEBOUNCE_MS`.
local function schedule_selection()
  if next(M.ports) == nil then
    return
  end
  timer = timer or assert(vim.uv.new_timer())
  timer:stop()
  timer:start(M.DEBOUNCE_MS, 0, vim.schedule_wrap(M.send_selection))
end

--- The line range (1-based, inclusive) as an LSP range, to the end of the last line.
---@param bufnr integer
---@param line1 integer
---@param line2 integer
---@param encoding string
---@return lsp.Range
local function line_range(bufnr, line1, line2, encoding)
  local snapshot = text.snapshot(bufnr)
  return {
    start = { line = line1 - 1, character = 0 },
    ["end"] = text.to_position(snapshot, line2 - 1, math.huge, encoding),
  }
end

--- Whether a status lists Claude Code among the connected agents.
---@param status verbatim.Status|nil
---@return boolean
local function lists_claude(status)
  for _, agent in ipairs(type(status) == "table" and status.agents or {}) do
    if agent.name == "Claude Code" then
      return true
    end
  end
  return false
end

--- `:VerbatimMention`: puts the current file, or the lines of the range, into
--- Claude Code's prompt (`verbatim/atMention`).
---@param args? { range: integer, line1: integer, line2: integer } of the command
---@return boolean sent
function M.mention(args)
  local bufnr = api.nvim_get_current_buf()
  local client = require("verbatim.lsp").client_for(bufnr)
  if not client then
    notify(
      "this buffer has no Verbatim server, so Claude Code cannot be told about it",
      vim.log.levels.WARN
    )
    return false
  end
  if not M.ports[client.id] then
    notify(
      "no server serves Claude Code here (claude_code = false, or a verbatim binary without it;"
        .. " :checkhealth verbatim)",
      vim.log.levels.WARN
    )
    return false
  end
  local params = { uri = vim.uri_from_bufnr(bufnr) } ---@type verbatim.AtMentionParams
  local where = vim.fn.fnamemodify(api.nvim_buf_get_name(bufnr), ":~:.")
  if args and args.range and args.range > 0 then
    params.range = line_range(bufnr, args.line1, args.line2, client.offset_encoding or "utf-16")
    where = string.format("%s#L%d-%d", where, args.line1, args.line2)
  end
  client:notify(protocol.methods.at_mention, params)
  -- Whether anyone received it: the server's fresh status says (the last
  -- one it sent may be older than Claude Code's connection).
  client:request(protocol.methods.status, nil, function(err, status)
    if err or lists_claude(status) then
      notify("sent " .. where .. " to Claude Code", vim.log.levels.INFO)
    else
      notify(
        string.format(
          "sent %s, but Claude Code is not connected: start `claude` in a :terminal of this Neovim"
            .. " (or run /ide in Claude Code)",
          where
        ),
        vim.log.levels.WARN
      )
    end
  end)
  return true
end

--- The message of a Vim error, without the Lua location in front of it.
---@param err any
---@return string
local function vim_error(err)
  local msg = tostring(err)
  return msg:match("Vim%(%a+%):(.*)$") or msg:match("^[^:]+:%d+: (.*)$") or msg
end

--- The `verbatim/saveDocument` handler: `:write` for that buffer, without
--- changing the current window.
---@param _ lsp.ResponseError|nil
---@param params verbatim.SaveDocumentParams
---@param ctx lsp.HandlerContext
---@return verbatim.SaveDocumentResult|nil
---@return lsp.ResponseError|nil
function M.save_document(_, params, ctx)
  if type(params) ~= "table" or type(params.uri) ~= "string" then
    return nil,
      vim.lsp.rpc.rpc_response_error(
        vim.lsp.protocol.ErrorCodes.InvalidParams,
        "verbatim/saveDocument needs {uri}"
      )
  end
  local bufnr = require("verbatim.proposal").attached_buffer(ctx.client_id, params.uri)
  local path = vim.fn.fnamemodify(vim.uri_to_fname(params.uri), ":~:.")
  if not bufnr then
    return { saved = false, message = path .. " is not open in Neovim" }
  end
  local ok, err = pcall(api.nvim_buf_call, bufnr, function()
    vim.cmd("silent write")
  end)
  if not ok then
    return { saved = false, message = path .. ": " .. vim_error(err) }
  end
  if vim.bo[bufnr].modified then
    return { saved = false, message = path .. " still has unsaved changes after :write" }
  end
  return { saved = true }
end

--- Follows the cursor and the current directory (unless both `claude_code`
--- and `gemini_cli` are off: the selection is Gemini CLI's context too).
function M.enable()
  api.nvim_clear_autocmds({ group = group })
  local options = require("verbatim.config").options
  if not options.claude_code and not options.gemini_cli then
    return
  end
  api.nvim_create_autocmd({ "CursorMoved", "CursorMovedI", "ModeChanged", "BufEnter" }, {
    group = group,
    desc = "verbatim: tell Claude Code what is selected",
    callback = schedule_selection,
  })
  api.nvim_create_autocmd("DirChanged", {
    group = group,
    desc = "verbatim: CLAUDE_CODE_SSE_PORT names the server of the new directory",
    callback = function()
      if env_port then
        update_env()
      end
    end,
  })
end

--- Stops following the cursor.
function M.disable()
  api.nvim_clear_autocmds({ group = group })
  if timer then
    timer:stop()
  end
end

return M
