---@brief
--- Gemini CLI's and Qwen Code's IDE companion, the Neovim side (docs/protocol.md,
--- "Gemini CLI's IDE companion"). The server serves the interface itself and
--- writes the discovery files; this module puts what the server announces
--- (`capabilities.experimental.verbatim.geminiCli.env`: the port, token,
--- workspace path and IDE pid) into Neovim's environment, inherited by every
--- :terminal and job started afterwards, so that a `gemini` or `qwen` started
--- there connects to this Neovim by itself. The context it reads (open files,
--- cursor, selection) comes from the selection that `verbatim.claude_code`
--- sends.

local M = {}

--- The variables each client's server asked for, by client id.
---@type table<integer, table<string, string>>
M.envs = {}
--- Client ids with an environment, in the order they initialized (newest last).
---@type integer[]
local order = {}
--- What the environment held before the plugin set each variable (`false`: unset).
---@type table<string, string|false>
local saved = {}

--- The environment a server announced in its `initialize` result, if any.
---@param capabilities table|nil the server's capabilities
---@return table<string, string>|nil
function M.announced_env(capabilities)
  local experimental = type(capabilities) == "table" and capabilities.experimental or nil
  local verbatim = type(experimental) == "table" and experimental.verbatim or nil
  local gemini = type(verbatim) == "table" and verbatim.geminiCli or nil
  local env = type(gemini) == "table" and gemini.env or nil
  if type(env) ~= "table" then
    return nil
  end
  local clean = {}
  for name, value in pairs(env) do
    if type(name) == "string" and name:match("^[A-Z_]+$") and type(value) == "string" then
      clean[name] = value
    end
  end
  return next(clean) and clean or nil
end

--- Puts the newest client's variables into the environment, or gives back what
--- it held when no client announces any.
local function update_env()
  local id = order[#order]
  local env = id and M.envs[id] or {}
  for name, value in pairs(env) do
    if saved[name] == nil then
      saved[name] = vim.env[name] or false
    end
    vim.env[name] = value
  end
  for name, before in pairs(saved) do
    if env[name] == nil then
      vim.env[name] = before or nil
      saved[name] = nil
    end
  end
end

--- Called once a client has initialized.
---@param client vim.lsp.Client
---@param result? table the `initialize` result
function M.on_init(client, result)
  local env = M.announced_env(client.server_capabilities)
    or M.announced_env(result and result.capabilities)
  if not env then
    return
  end
  M.envs[client.id] = env
  table.insert(order, client.id)
  update_env()
end

--- Called when a client exited.
---@param client_id integer
function M.on_exit(client_id)
  if not M.envs[client_id] then
    return
  end
  M.envs[client_id] = nil
  for i, id in ipairs(order) do
    if id == client_id then
      table.remove(order, i)
      break
    end
  end
  update_env()
end

--- The port a Gemini CLI started in a new terminal connects to, if any.
---@return integer|nil
function M.port()
  local id = order[#order]
  return id and tonumber(M.envs[id].GEMINI_CLI_IDE_SERVER_PORT) or nil
end

return M
