---@brief
--- The option schema of Verbatim: type, default and description of every
--- option in one place. `setup()` validates against it and warns about
--- unknown keys; doc/verbatim.txt is checked against it by
--- tests/test_config.lua.

local M = {}

---@class verbatim.Keymaps
---@field accept string|false Apply the edit under review, as one undo step.
---@field reject string|false Refuse the edit under review, asking for a reason.
---@field accept_all string|false Apply this edit and every later one from the same agent.
---@field toggle_hunk string|false Leave out (or take back) the change under the cursor, or those in a visual selection.
---@field next_hunk string|false Move to the next change.
---@field prev_hunk string|false Move to the previous change.
---@field close string|false Close the review window; the edit stays pending.

---@class verbatim.InlineKeymaps
---@field accept string|false Accept the hunk under the cursor (Visual mode: every hunk the selection touches).
---@field reject string|false Reject the hunk under the cursor, asking for an optional reason.
---@field accept_all string|false Accept every hunk of the edit.
---@field reject_all string|false Reject the edit, asking for an optional reason.
---@field done string|false Send the decisions; hunks not decided are left out.
---@field next_hunk string|false Move to the next hunk.
---@field prev_hunk string|false Move to the previous hunk.
---@field hunk_object string|false The hunk text object (Visual and Operator-pending mode).
---@field open_window string|false Open the review window on this edit.

---@class verbatim.TimelineOptions
---@field max_edits integer|false How many edits the timeline asks for at first, the newest; false: all.

---@class verbatim.Config
---@field cmd string[] The command that starts the server.
---@field review "confirm"|"auto" Review every edit, or apply it at once.
---@field auto_open boolean Show the review window as soon as an edit arrives.
---@field external_changes "review"|"auto"|"off" What to do when an open file changes on disk outside Neovim.
---@field claude_code boolean Be the IDE Claude Code connects to: its Edit and Write are reviewed here.
---@field gemini_cli boolean Be the IDE companion of Gemini CLI and Qwen Code: their edits are reviewed here.
---@field skip_filetypes string[] Filetypes the server is not started for.
---@field root_markers string[] Files or directories that mark a workspace root.
---@field log_file string|false Where the server logs (relative to stdpath("log")), or false for stderr.
---@field keymaps verbatim.Keymaps Keys of the review window.
---@field review_ui "window"|"inline" Where edits are reviewed: the review window, or the document's own window.
---@field inline_strikethrough boolean Strike through the lines an edit removes, in the inline review.
---@field inline_keymaps verbatim.InlineKeymaps Buffer-local keys of the inline review.
---@field timeline verbatim.TimelineOptions The timeline (`:Verbatim timeline`).

---@class verbatim.OptionSpec
---@field type string the type as the help file shows it (checked by `check` when given)
---@field default any
---@field desc string one sentence for the help file
---@field check? fun(value: any): boolean, string? extra validation
---@field fields? table<string, verbatim.OptionSpec> the schema of a table option
---@field order? string[] the order of `fields` in the help file

---@param value any
---@return boolean, string?
local function list_of_strings(value)
  if not vim.islist(value) then
    return false, "a list of strings"
  end
  for _, item in ipairs(value) do
    if type(item) ~= "string" then
      return false, "a list of strings"
    end
  end
  return true
end

--- A check that accepts a non-empty string or false.
---@param what string what the string names, for the error message
---@return fun(value: any): boolean, string?
local function string_or_false(what)
  return function(value)
    if value == false or (type(value) == "string" and value ~= "") then
      return true
    end
    return false, what .. " or false"
  end
end

local key_or_false = string_or_false("a key (string)")

--- The keys of the review window, in the order the help file lists them.
local keymap_specs = {
  { "accept", "a", "Apply the edit, as one undo step." },
  { "reject", "r", "Refuse the edit; asks for a reason that goes back to the agent." },
  {
    "accept_all",
    "A",
    "Apply this edit and, for this session, every later one from the same agent.",
  },
  {
    "toggle_hunk",
    "x",
    "Leave out the change under the cursor, or in Visual mode every change the selection touches (press again to take them back).",
  },
  { "next_hunk", "]c", "Move to the next change (a count moves that many)." },
  { "prev_hunk", "[c", "Move to the previous change (a count moves that many)." },
  { "close", "q", "Close the review window; the edit stays pending." },
}

--- The keys of the inline review, in the order the help file lists them.
local inline_keymap_specs = {
  {
    "accept",
    "<LocalLeader>a",
    "Accept the hunk under the cursor; in Visual mode every hunk the selection touches.",
  },
  {
    "reject",
    "<LocalLeader>r",
    "Reject the hunk under the cursor (in Visual mode every hunk the selection touches); asks for an optional reason for the agent.",
  },
  { "accept_all", "<LocalLeader>A", "Accept every hunk of the edit and send the decision." },
  {
    "reject_all",
    "<LocalLeader>R",
    "Reject the whole edit; asks for an optional reason for the agent.",
  },
  {
    "done",
    "<LocalLeader>d",
    "Send the decisions now; the hunks not decided yet are left out.",
  },
  {
    "next_hunk",
    "]c",
    "Move to the next hunk (a count moves that many). Not mapped when you mapped the key yourself; in a diff-mode window the key keeps its own meaning.",
  },
  { "prev_hunk", "[c", "Move to the previous hunk (see next_hunk)." },
  {
    "hunk_object",
    "ih",
    "Text object (Visual and Operator-pending mode): the lines of the hunk under the cursor.",
  },
  { "open_window", "<LocalLeader>w", "Open the review window on this edit and move into it." },
}

--- A keymap option's fields, their defaults, and their order.
---@param specs table[] { name, default, description }
---@return table<string, verbatim.OptionSpec> fields
---@return table<string, string> defaults
---@return string[] order
local function keymap_fields(specs)
  local fields, defaults, order = {}, {}, {}
  for _, entry in ipairs(specs) do
    local name, default, desc = entry[1], entry[2], entry[3]
    fields[name] = { type = "string|false", default = default, desc = desc, check = key_or_false }
    defaults[name] = default
    table.insert(order, name)
  end
  return fields, defaults, order
end
local keymap_schema, keymap_defaults, keymap_order = keymap_fields(keymap_specs)
local inline_schema, inline_defaults, inline_order = keymap_fields(inline_keymap_specs)

--- The options of the timeline, in the order the help file lists them.
local timeline_order = { "max_edits" }
---@type table<string, verbatim.OptionSpec>
local timeline_schema = {
  max_edits = {
    type = "integer|false",
    default = 500,
    desc = "How many edits `:Verbatim timeline` asks the server for, the newest: a journal of 10,000 entries then shows as fast as one of 500. The header says when older ones are left out, and `L` asks for twice as many. false asks for every edit (the server still shows at most 200 sessions).",
    check = function(value)
      if value == false or (type(value) == "number" and value >= 1 and value % 1 == 0) then
        return true
      end
      return false, "a positive integer or false"
    end,
  },
}

--- Every option, in the order the help file lists them.
---@type table<string, verbatim.OptionSpec>
M.schema = {
  cmd = {
    type = "string[]",
    default = { "verbatim", "lsp" },
    desc = "The command that starts the server; its first item is the executable.",
    check = function(value)
      local ok = list_of_strings(value)
      if not ok or #value == 0 then
        return false, "a non-empty list of strings"
      end
      return true
    end,
  },
  review = {
    type = '"confirm"|"auto"',
    default = "confirm",
    desc = 'How edits land: "confirm" shows each one for review; "auto" applies it at once.',
    check = function(value)
      if value == "confirm" or value == "auto" then
        return true
      end
      return false, '"confirm" or "auto"'
    end,
  },
  external_changes = {
    type = '"review"|"auto"|"off"',
    default = "review",
    desc = 'When a file open in Neovim is changed on disk by another program (an agent\'s own file tools, a script): "review" offers the change merged with your unsaved changes for review; "auto" applies the merge at once; "off" leaves the buffer alone and keeps Neovim\'s own warnings. A buffer without unsaved changes is reloaded unless "off". See |verbatim-external-changes|.',
    check = function(value)
      if value == "review" or value == "auto" or value == "off" then
        return true
      end
      return false, '"review", "auto" or "off"'
    end,
  },
  claude_code = {
    type = "boolean",
    default = true,
    desc = "Be the IDE that Claude Code connects to: the server serves Claude Code's IDE protocol, Claude Code's Edit and Write tools are reviewed here like any agent's edit, and a `claude` started in a |:terminal| of this Neovim connects by itself (CLAUDE_CODE_SSE_PORT and ENABLE_IDE_INTEGRATION are set for terminals and jobs). false serves nothing. See |verbatim-claude-code|.",
  },
  gemini_cli = {
    type = "boolean",
    default = true,
    desc = "Be the IDE companion of Gemini CLI and Qwen Code: the server serves their IDE companion interface (MCP over HTTP on 127.0.0.1, discovery files under $TMPDIR/gemini/ide and ~/.qwen/ide), each edit they propose is reviewed here like any agent's edit before they write it, and the open files, cursor and selection reach them. A `gemini` or `qwen` started in a |:terminal| of this Neovim connects by itself (GEMINI_CLI_IDE_SERVER_PORT, GEMINI_CLI_IDE_WORKSPACE_PATH, GEMINI_CLI_IDE_AUTH_TOKEN, GEMINI_CLI_IDE_PID, QWEN_CODE_IDE_SERVER_PORT and QWEN_CODE_IDE_WORKSPACE_PATH are set for terminals and jobs); it needs `ide.enabled` in its settings or /ide enable. false serves nothing. See |verbatim-gemini-cli|.",
  },
  auto_open = {
    type = "boolean",
    default = true,
    desc = 'Show the review window as soon as an edit arrives (the cursor stays where it is). With review_ui = "inline" the window opens only when asked for.',
  },
  skip_filetypes = {
    type = "string[]",
    default = {},
    desc = "Filetypes the server is not started for. Agents can still edit such files.",
    check = list_of_strings,
  },
  root_markers = {
    type = "string[]",
    default = { ".git" },
    desc = "Names that mark a workspace root; without one, the current directory is the root.",
    check = list_of_strings,
  },
  log_file = {
    type = "string|false",
    default = "verbatim.log",
    desc = "Where the server writes its log (passed as --log-file); a relative name is taken in stdpath('log'); false leaves the log on stderr, which Neovim keeps in its LSP log.",
    check = string_or_false("a file name"),
  },
  keymaps = {
    type = "table",
    default = keymap_defaults,
    desc = "Keys of the review window; false disables a key.",
    fields = keymap_schema,
    order = keymap_order,
  },
  review_ui = {
    type = '"window"|"inline"',
    default = "window",
    desc = 'Where edits are reviewed: "window" in the review window (a unified diff at the bottom of the tab page); "inline" in the document\'s own window, hunk by hunk at the cursor, with the keys of |verbatim-option-inline_keymaps|. See |verbatim-inline|.',
    check = function(value)
      if value == "window" or value == "inline" then
        return true
      end
      return false, '"window" or "inline"'
    end,
  },
  inline_strikethrough = {
    type = "boolean",
    default = false,
    desc = "In the inline review, strike through the lines an edit removes (besides their background).",
  },
  inline_keymaps = {
    type = "table",
    default = inline_defaults,
    desc = "Keys of the inline review, mapped in a buffer only while an edit of it waits (and removed after); false disables a key. In Visual mode, accept and reject act on every hunk the selection touches.",
    fields = inline_schema,
    order = inline_order,
  },
  timeline = {
    type = "table",
    default = { max_edits = timeline_schema.max_edits.default },
    desc = "The timeline of every agent's changes (|verbatim-timeline|).",
    fields = timeline_schema,
    order = timeline_order,
  },
}

--- The order options appear in the help file and in error messages.
M.order = {
  "cmd",
  "review",
  "external_changes",
  "claude_code",
  "gemini_cli",
  "auto_open",
  "skip_filetypes",
  "root_markers",
  "log_file",
  "keymaps",
  "review_ui",
  "inline_strikethrough",
  "inline_keymaps",
  "timeline",
}
M.keymap_order = keymap_order

---@return verbatim.Config
function M.defaults()
  local defaults = {}
  for name, spec in pairs(M.schema) do
    defaults[name] = vim.deepcopy(spec.default)
  end
  return defaults
end

--- The options in effect.
---@type verbatim.Config
M.options = M.defaults()

---@param path string
---@param spec verbatim.OptionSpec
---@param value any
local function check_value(path, spec, value)
  local ok, expected
  if spec.check then
    ok, expected = spec.check(value)
  else
    ok, expected = type(value) == spec.type, spec.type
  end
  if spec.type == "table" and type(value) ~= "table" then
    ok, expected = false, expected or "a table"
  end
  if not ok then
    error(
      string.format("verbatim: option %s must be %s, got %s", path, expected, vim.inspect(value)),
      0
    )
  end
end

---@param warnings string[]
---@param prefix string
---@param given table
---@param known table<string, any>
local function collect_unknown(warnings, prefix, given, known)
  for key in pairs(given) do
    if known[key] == nil then
      table.insert(warnings, prefix .. tostring(key))
    end
  end
  table.sort(warnings)
end

--- Validates `opts` against the schema and merges it over the defaults.
--- Raises an error for an invalid value; returns the unknown keys, which the
--- caller warns about.
---@param opts table|nil
---@return verbatim.Config config
---@return string[] unknown keys such as "foo" or "keymaps.bar"
function M.resolve(opts)
  opts = opts or {}
  if type(opts) ~= "table" then
    error("verbatim: setup() expects a table of options, got " .. vim.inspect(opts), 0)
  end
  local result = M.defaults()
  local unknown = {}
  collect_unknown(unknown, "", opts, M.schema)
  for name, spec in pairs(M.schema) do
    local value = opts[name]
    if value ~= nil then
      check_value(name, spec, value)
      if spec.fields then
        local nested_unknown = {}
        collect_unknown(nested_unknown, name .. ".", value, spec.fields)
        vim.list_extend(unknown, nested_unknown)
        for field, field_spec in pairs(spec.fields) do
          if value[field] ~= nil then
            check_value(name .. "." .. field, field_spec, value[field])
            result[name][field] = value[field]
          end
        end
      else
        result[name] = vim.deepcopy(value)
      end
    end
  end
  return result, unknown
end

--- The server's log file, or nil when it logs to stderr.
---@return string|nil
function M.log_path()
  local name = M.options.log_file
  if not name then
    return nil
  end
  if name:sub(1, 1) == "/" or name:sub(1, 1) == "~" then
    return vim.fs.normalize(name)
  end
  return vim.fs.joinpath(vim.fn.stdpath("log") --[[@as string]], name)
end

--- Validates and stores the options; warns once about unknown keys.
---@param opts table|nil
---@return verbatim.Config
function M.set(opts)
  local resolved, unknown = M.resolve(opts)
  if #unknown > 0 then
    vim.notify(
      "verbatim: unknown option(s) ignored: " .. table.concat(unknown, ", "),
      vim.log.levels.WARN
    )
  end
  M.options = resolved
  return resolved
end

return M
