-- A minimal agent for tests: LSP base protocol (Content-Length framed
-- JSON-RPC) over the server's Unix socket, driven by vim.uv inside the test
-- Neovim. Messages are decoded on the main loop, in wait predicates.

---@class verbatim.test.Agent
---@field pipe uv.uv_pipe_t
---@field buffer string bytes received and not framed yet
---@field bodies string[] framed, not decoded yet
---@field times integer[] when each of `bodies` arrived (vim.uv.hrtime)
---@field responses table<integer, table>
---@field arrived table<integer, integer> when the response to each request arrived (vim.uv.hrtime)
---@field notifications table[]
---@field closed boolean
local Agent = {}
Agent.__index = Agent

---@param socket string
---@return verbatim.test.Agent
function Agent.connect(socket)
  local pipe = assert(vim.uv.new_pipe(false))
  local done, connect_err = false, nil
  pipe:connect(socket, function(err)
    connect_err = err
    done = true
  end)
  assert(
    vim.wait(5000, function()
      return done
    end, 10),
    "connecting to " .. socket .. " timed out"
  )
  assert(not connect_err, "connecting to " .. socket .. ": " .. tostring(connect_err))
  local self = setmetatable({
    pipe = pipe,
    buffer = "",
    bodies = {},
    times = {},
    responses = {},
    arrived = {},
    notifications = {},
    next_id = 1,
    closed = false,
  }, Agent)
  pipe:read_start(function(err, chunk)
    if err or not chunk then
      self.closed = true
      return
    end
    self.buffer = self.buffer .. chunk
    while true do
      local header_end = self.buffer:find("\r\n\r\n", 1, true)
      if not header_end then
        break
      end
      local length =
        tonumber(self.buffer:sub(1, header_end):match("[Cc]ontent%-[Ll]ength:%s*(%d+)"))
      local body_start = header_end + 4
      if not length or #self.buffer < body_start + length - 1 then
        break
      end
      table.insert(self.bodies, self.buffer:sub(body_start, body_start + length - 1))
      table.insert(self.times, vim.uv.hrtime())
      self.buffer = self.buffer:sub(body_start + length)
    end
  end)
  return self
end

--- Decodes what arrived.
function Agent:pump()
  while #self.bodies > 0 do
    local body = table.remove(self.bodies, 1)
    local arrived = table.remove(self.times, 1)
    local msg = vim.json.decode(body, { luanil = { object = true, array = true } })
    if msg.id ~= nil and msg.method == nil then
      self.responses[msg.id] = msg
      self.arrived[msg.id] = arrived
    else
      table.insert(self.notifications, msg)
    end
  end
end

---@param msg table
function Agent:send(msg)
  msg.jsonrpc = "2.0"
  local body = vim.json.encode(msg)
  self.pipe:write(string.format("Content-Length: %d\r\n\r\n%s", #body, body))
end

--- Sends a request; returns its id.
---@param method string
---@param params any
---@return integer
function Agent:request(method, params)
  local id = self.next_id
  self.next_id = id + 1
  self:send({ id = id, method = method, params = params })
  return id
end

---@param method string
---@param params any
function Agent:notify(method, params)
  self:send({ method = method, params = params })
end

--- Waits for the response to request `id`.
---@param id integer
---@param timeout? integer
---@return table response with `result` or `error`
function Agent:wait(id, timeout)
  local ok = vim.wait(timeout or 15000, function()
    self:pump()
    return self.responses[id] ~= nil
  end, 10)
  assert(ok, "no response to request " .. id)
  return self.responses[id]
end

--- Whether request `id` was answered yet.
---@param id integer
---@return boolean
function Agent:answered(id)
  self:pump()
  return self.responses[id] ~= nil
end

---@param method string
---@param params any
---@param timeout? integer
---@return table response
function Agent:call(method, params, timeout)
  return self:wait(self:request(method, params), timeout)
end

---@param name string
---@param encoding string
---@return table initialize result
function Agent:initialize(name, encoding)
  local response = self:call("initialize", {
    processId = vim.NIL,
    clientInfo = { name = name, version = "0.0.1" },
    capabilities = { general = { positionEncodings = { encoding } } },
  })
  assert(response.result, "initialize failed: " .. vim.inspect(response.error))
  self:notify("initialized", vim.empty_dict())
  return response.result
end

function Agent:close()
  if not self.pipe:is_closing() then
    self.pipe:close()
  end
end

return Agent
