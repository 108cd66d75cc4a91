-- Generates the options section of doc/verbatim.txt from the schema in
-- lua/verbatim/config.lua, so the two cannot drift apart.
--   nvim -l scripts/gen_help.lua          rewrite doc/verbatim.txt in place
-- tests/test_config.lua checks the file is up to date.
local M = {}

local BEGIN = "Generated from lua/verbatim/config.lua by scripts/gen_help.lua:"
local END = "End of the generated list."
M.BEGIN, M.END = BEGIN, END

---@param value any
---@return string
local function show(value)
  return (vim.inspect(value, { newline = " ", indent = "" }))
end

---@param out string[]
---@param words string
---@param indent string
local function wrap(out, words, indent)
  local line = indent
  for word in words:gmatch("%S+") do
    if #line + #word + 1 > 78 and line ~= indent then
      table.insert(out, line)
      line = indent
    end
    line = line == indent and (indent .. word) or (line .. " " .. word)
  end
  if line ~= indent then
    table.insert(out, line)
  end
end

---@param out string[]
---@param name string
---@param spec verbatim.OptionSpec
local function entry(out, name, spec)
  local tag = "*verbatim-option-" .. name .. "*"
  local head = name
  table.insert(out, head .. string.rep(" ", math.max(1, 78 - #head - #tag)) .. tag)
  if spec.fields then
    table.insert(out, "    Type: table (the keys below)")
  else
    table.insert(out, string.format("    Type: %s, default: `%s`", spec.type, show(spec.default)))
  end
  wrap(out, spec.desc, "    ")
  table.insert(out, "")
end

--- The options section, from the markers' lines included.
---@return string[]
function M.options_section()
  local config = require("verbatim.config")
  local out = { BEGIN }
  for _, name in ipairs(config.order) do
    local spec = config.schema[name]
    entry(out, name, spec)
    if spec.fields then
      for _, field in ipairs(spec.order or config.keymap_order) do
        entry(out, name .. "." .. field, spec.fields[field])
      end
    end
  end
  table.insert(out, END)
  return out
end

---@param path string
---@return string[] lines of the file with the section regenerated
function M.updated(path)
  local lines = vim.fn.readfile(path)
  local first, last
  for i, line in ipairs(lines) do
    if line == BEGIN then
      first = i
    elseif line == END then
      last = i
    end
  end
  assert(first and last, "markers not found in " .. path)
  local result = vim.list_slice(lines, 1, first - 1)
  vim.list_extend(result, M.options_section())
  vim.list_extend(result, vim.list_slice(lines, last + 1))
  return result
end

if arg and arg[0] and arg[0]:match("gen_help%.lua$") then
  local root = vim.fn.fnamemodify(arg[0], ":p:h:h")
  vim.opt.runtimepath:prepend(root)
  local path = root .. "/doc/verbatim.txt"
  vim.fn.writefile(M.updated(path), path)
  print("updated " .. path)
end

return M
