-- A second Neovim, driven over RPC from the test's Neovim, for what needs
-- Neovim's own main loop: Terminal mode, CursorMoved, keys typed as a person
-- types them (nvim_input). The child runs the same minimal init (the plugin
-- from this checkout) with the test's environment.

---@class verbatim.test.Child
---@field chan integer
local Child = {}
Child.__index = Child

---@type verbatim.test.Child[]
local children = {}

--- Starts a child Neovim.
---@param env? table<string, string> more environment variables
---@return verbatim.test.Child
function Child.start(env)
  local tests = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
  local chan = vim.fn.jobstart({
    vim.v.progpath,
    "--embed",
    "--headless",
    "-i",
    "NONE",
    "-u",
    tests .. "/minimal_init.lua",
  }, { rpc = true, env = env })
  assert(chan > 0, "could not start a child Neovim")
  local self = setmetatable({ chan = chan }, Child)
  table.insert(children, self)
  -- Messages for the person are kept, to be read by the test.
  self:lua([[
    _G.notes = {}
    vim.notify = function(msg, level)
      table.insert(_G.notes, { msg = msg, level = level })
    end
  ]])
  return self
end

--- Runs Lua in the child; `...` are its arguments; returns its result.
---@param code string
---@param ... any
---@return any
function Child:lua(code, ...)
  return vim.rpcrequest(self.chan, "nvim_exec_lua", code, { ... })
end

--- Types keys as a person does: the child's main loop takes them.
---@param keys string in nvim_input() notation
function Child:input(keys)
  vim.rpcrequest(self.chan, "nvim_input", keys)
end

--- The child's mode (nvim_get_mode().mode).
---@return string
function Child:mode()
  return vim.rpcrequest(self.chan, "nvim_get_mode").mode
end

--- Waits (10 s at most) until Lua `code`, given `...`, returns a truthy
--- value in the child.
---@param what string
---@param code string
---@param ... any
---@return any
function Child:wait_for(what, code, ...)
  local value
  local args = { ... }
  local ok = vim.wait(10000, function()
    value = self:lua(code, unpack(args))
    return value ~= nil and value ~= vim.NIL and value ~= false
  end, 20)
  if not ok then
    error("timed out waiting in the child Neovim for " .. what, 2)
  end
  return value
end

--- The messages the child showed the person (vim.notify), oldest first.
---@return { msg: string, level: integer|nil }[]
function Child:notes()
  return self:lua("return _G.notes")
end

--- The screen as the child draws it, in the manner of mini.test's
--- `expect_screenshot`: its text, one line per screen row, and the same
--- rows with each cell's attributes as a character ("0" for none, then "1",
--- "2"… in the order they first appear, so that the numbers of Neovim's
--- attribute table do not matter).
---@return string[] text
---@return string[] attrs
function Child:screenshot()
  return unpack(self:lua([[
    vim.cmd("redraw!")
    local text, attrs, names = {}, {}, { [0] = "0" }
    local symbols = "123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    local used = 0
    for row = 1, vim.o.lines do
      local cells, marks = {}, {}
      for col = 1, vim.o.columns do
        cells[col] = vim.fn.screenstring(row, col)
        local attr = vim.fn.screenattr(row, col)
        if not names[attr] then
          used = used + 1
          names[attr] = symbols:sub(used, used)
        end
        marks[col] = names[attr]
      end
      text[row] = table.concat(cells)
      attrs[row] = table.concat(marks)
    end
    return { text, attrs }
  ]]))
end

--- Compares the child's screen (Child:screenshot) with
--- tests/screenshots/`name`: the text rows, a ruler, the attribute rows. The
--- file is written when missing, or with VERBATIM_UPDATE_SCREENSHOTS=1.
---@param name string
function Child:expect_screenshot(name)
  local H = require("helpers")
  local text, attrs = self:screenshot()
  local tests = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
  local expected_path = tests .. "/screenshots/" .. name
  local ruler = "--|" .. string.rep("-", self:lua("return vim.o.columns") - 1)
  local shot = { ruler }
  for row, line in ipairs(text) do
    table.insert(shot, string.format("%02d|%s", row, line))
  end
  table.insert(shot, ruler)
  for row, line in ipairs(attrs) do
    table.insert(shot, string.format("%02d|%s", row, line))
  end
  if vim.env.VERBATIM_UPDATE_SCREENSHOTS == "1" or not H.read_file(expected_path) then
    vim.fn.mkdir(vim.fs.dirname(expected_path), "p")
    vim.fn.writefile(shot, expected_path)
    H.note("wrote " .. expected_path)
  end
  local expected = vim.fn.readfile(expected_path)
  if not vim.deep_equal(expected, shot) then
    error(
      "the screen differs from "
        .. expected_path
        .. " (VERBATIM_UPDATE_SCREENSHOTS=1 rewrites it)\nexpected:\n"
        .. table.concat(expected, "\n")
        .. "\nactual:\n"
        .. table.concat(shot, "\n"),
      2
    )
  end
end

function Child:stop()
  pcall(vim.rpcnotify, self.chan, "nvim_command", "qall!")
  vim.fn.jobwait({ self.chan }, 2000)
  pcall(vim.fn.jobstop, self.chan)
end

--- Stops every child still running.
function Child.stop_all()
  for _, child in ipairs(children) do
    child:stop()
  end
  children = {}
end

return Child
