-- What the Neovim benchmarks share: their arguments, printing, percentiles, and
-- an editor to measure: `nvim --headless --listen SOCK` in isolated XDG
-- directories, driven over its RPC socket, with an agent (the plugin tests'
-- agent, which notes when each response arrives) on the Verbatim server's
-- socket.

local uv = vim.uv

local M = {}

local script_dir = vim.fs.dirname(vim.fs.normalize(debug.getinfo(1, "S").source:sub(2)))
M.repo = vim.fs.dirname(vim.fs.dirname(script_dir))

package.path = table.concat({
  M.repo .. "/neovim/tests/?.lua",
  M.repo .. "/neovim/tests/?/init.lua",
  package.path,
}, ";")
M.Agent = require("helpers.agent")

--- Fills `opts` from `--key value` arguments; an unknown or incomplete one
--- ends the script with exit code 2.
---@param opts table<string, string>
---@return table<string, string> opts
function M.parse_args(opts)
  local argv = _G.arg or {}
  local i = 1
  while i <= #argv do
    local key = argv[i]:match("^%-%-(.+)$")
    if not key or opts[key] == nil or argv[i + 1] == nil then
      io.stderr:write("unknown or incomplete argument: " .. argv[i] .. "\n")
      os.exit(2)
    end
    opts[key] = argv[i + 1]
    i = i + 2
  end
  return opts
end

---@param fmt string
function M.say(fmt, ...)
  io.stdout:write(string.format(fmt, ...) .. "\n")
  io.stdout:flush()
end

---@param ns integer
---@return number
function M.ms(ns)
  return ns / 1e6
end

---@param values number[]
---@param p number 0..1
---@return number|nil nil for no values
function M.percentile(values, p)
  if #values == 0 then
    return nil
  end
  local sorted = vim.list_slice(values)
  table.sort(sorted)
  return sorted[math.max(1, math.ceil(p * #sorted))]
end

---@class verbatim.bench.Editor
---@field process vim.SystemObj
---@field sock string
---@field dir string
---@field channel integer 0 until connected
---@field agent verbatim.test.Agent|nil
local Editor = {}
Editor.__index = Editor

--- Starts a headless Neovim with `init` (the text of its init file), its
--- working directory `root`, everything it writes under `dir`.
---@param nvim string
---@param dir string
---@param root string
---@param init string
---@return verbatim.bench.Editor
function M.start_editor(nvim, dir, root, init)
  local init_file = dir .. "/init.lua"
  vim.fn.writefile(vim.split(init, "\n"), init_file)
  local env = { VIMINIT = "", NVIM = "" }
  for _, name in ipairs({ "CONFIG", "DATA", "STATE", "CACHE" }) do
    local sub = dir .. "/" .. name:lower()
    vim.fn.mkdir(sub, "p")
    env["XDG_" .. name .. "_HOME"] = sub
  end
  env.VERBATIM_RUNTIME_DIR = dir .. "/rt"
  vim.fn.mkdir(env.VERBATIM_RUNTIME_DIR, "p", tonumber("700", 8))
  local sock = dir .. "/nvim.sock"
  local process = vim.system(
    { nvim, "--headless", "-i", "NONE", "-n", "-u", init_file, "--listen", sock },
    { env = env, cwd = root, stdin = false }
  )
  return setmetatable({ process = process, sock = sock, dir = dir, channel = 0 }, Editor)
end

--- Waits for the editor's socket and connects to it.
function Editor:connect()
  assert(
    vim.wait(10000, function()
      return uv.fs_stat(self.sock) ~= nil
    end, 5),
    "the editor did not listen on " .. self.sock
  )
  self.channel = vim.fn.sockconnect("pipe", self.sock, { rpc = true })
end

--- Runs Lua in the editor and returns its result.
---@param code string
function Editor:exec(code, ...)
  return vim.rpcrequest(self.channel, "nvim_exec_lua", code, { ... })
end

--- Connects an agent to the Verbatim server of the current buffer (its client
--- must be attached), and checks that the server holds the buffer at `path`.
---@param path string
---@return verbatim.test.Agent agent
---@return string uri
function Editor:connect_agent(path)
  local socket = self:exec([[
    local c = vim.lsp.get_clients({ bufnr = 0, name = 'verbatim' })[1]
    return c:request_sync('verbatim/status', nil, 5000).result.socket]])
  self.agent = M.Agent.connect(socket)
  self.agent:initialize("bench", "utf-16")
  local uri = vim.uri_from_fname(path)
  local read = self.agent:call("verbatim/read", { uri = uri }, 10000)
  assert(read.result and read.result.source == "editor", "the server does not see the buffer")
  return self.agent, uri
end

--- Closes the agent, quits the editor (killing it if it lingers) and deletes
--- its directory.
function Editor:finish()
  if self.agent then
    self.agent:close()
  end
  if self.channel > 0 then
    pcall(vim.rpcnotify, self.channel, "nvim_command", "qall!")
    pcall(vim.fn.chanclose, self.channel)
  end
  if not self.process:wait(3000).code then
    self.process:kill("sigkill")
  end
  vim.fn.delete(self.dir, "rf")
end

return M
