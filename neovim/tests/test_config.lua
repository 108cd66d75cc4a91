-- Options, the help file, the :Verbatim command and the protocol mirror,
-- without a server.
local H = require("helpers")
local config = require("verbatim.config")
local plugin_root =
  vim.fn.fnamemodify(vim.api.nvim_get_runtime_file("lua/verbatim/init.lua", false)[1], ":h:h:h")

---@param fn fun()
---@return string[] messages passed to vim.notify
local function capture_notify(fn)
  local messages = {}
  local original = vim.notify
  vim.notify = function(msg)
    table.insert(messages, msg)
  end
  local ok, err = pcall(fn)
  vim.notify = original
  assert(ok, err)
  return messages
end

H.test("defaults", function()
  local resolved, unknown = config.resolve(nil)
  H.eq({}, unknown)
  H.eq({ "verbatim", "lsp" }, resolved.cmd)
  H.eq("confirm", resolved.review)
  H.eq("review", resolved.external_changes)
  H.eq(true, resolved.claude_code)
  H.eq({}, resolved.skip_filetypes)
  H.eq({ ".git" }, resolved.root_markers)
  H.eq("a", resolved.keymaps.accept)
  H.eq({ "]c", "[c" }, { resolved.keymaps.next_hunk, resolved.keymaps.prev_hunk })
  H.eq(#config.keymap_order, vim.tbl_count(resolved.keymaps), "every key has a place in the order")
end)

H.test("options are merged over the defaults, keymaps key by key", function()
  local resolved = config.resolve({ review = "auto", keymaps = { accept = "<CR>", close = false } })
  H.eq("auto", resolved.review)
  H.eq("<CR>", resolved.keymaps.accept)
  H.eq(false, resolved.keymaps.close)
  H.eq("r", resolved.keymaps.reject)
end)

H.test("invalid values are errors that name the option", function()
  for _, case in ipairs({
    { { review = "sometimes" }, "option review must be" },
    { { external_changes = "ask" }, 'option external_changes must be "review", "auto" or "off"' },
    { { cmd = {} }, "option cmd must be a non%-empty list of strings" },
    { { cmd = "verbatim lsp" }, "option cmd must be" },
    { { skip_filetypes = { 1 } }, "option skip_filetypes must be a list of strings" },
    { { auto_open = "yes" }, "option auto_open must be boolean" },
    { { claude_code = "yes" }, "option claude_code must be boolean" },
    { { keymaps = { accept = 1 } }, "option keymaps.accept must be a key" },
    { { keymaps = "a" }, "option keymaps must be" },
  }) do
    local ok, err = pcall(config.resolve, case[1])
    H.eq(false, ok, vim.inspect(case[1]))
    H.truthy(tostring(err):match(case[2]), tostring(err) .. " should match " .. case[2])
  end
end)

H.test("unknown keys are warned about, not fatal", function()
  local messages = capture_notify(function()
    config.set({ reveiw = "auto", keymaps = { acept = "a" } })
  end)
  H.eq(1, #messages)
  H.truthy(messages[1]:find("keymaps.acept", 1, true), messages[1])
  H.truthy(messages[1]:find("reveiw", 1, true), messages[1])
  H.eq("confirm", config.options.review)
  config.set({})
end)

H.test("the help file lists exactly the options of the schema", function()
  local gen = dofile(plugin_root .. "/scripts/gen_help.lua")
  local path = plugin_root .. "/doc/verbatim.txt"
  local current = vim.fn.readfile(path)
  local expected = gen.updated(path)
  if not vim.deep_equal(current, expected) then
    error(
      "doc/verbatim.txt is out of date; run: nvim -l scripts/gen_help.lua\nexpected section:\n"
        .. table.concat(gen.options_section(), "\n")
    )
  end
end)

H.test("the help file has valid, unique tags", function()
  local dir = H.tmpdir() .. "/doc"
  vim.fn.mkdir(dir, "p")
  vim.fn.writefile(vim.fn.readfile(plugin_root .. "/doc/verbatim.txt"), dir .. "/verbatim.txt")
  vim.cmd.helptags(vim.fn.fnameescape(dir)) -- raises E154 on a duplicate tag
  local tags = vim.fn.readfile(dir .. "/tags")
  H.truthy(#tags > 20, "tags generated")
  -- Every |link| points at a tag of this file or of Neovim's help.
  local text = table.concat(vim.fn.readfile(dir .. "/verbatim.txt"), "\n")
  local own = {}
  for _, line in ipairs(tags) do
    own[line:match("^(%S+)")] = true
  end
  for link in text:gmatch("|([%w%-%._():]+)|") do
    if not own[link] then
      H.truthy(#vim.fn.getcompletion(link, "help") > 0, "help link |" .. link .. "| resolves")
    end
  end
end)

H.test(":Verbatim exists before setup and completes its subcommands", function()
  H.eq(2, vim.fn.exists(":Verbatim"))
  H.eq(
    { "accept", "log", "next", "reject", "review", "status", "timeline" },
    vim.fn.getcompletion("Verbatim ", "cmdline")
  )
  H.eq({ "reject", "review" }, vim.fn.getcompletion("Verbatim re", "cmdline"))
  H.eq(2, vim.fn.exists(":VerbatimCompareDisk"))
  H.eq(2, vim.fn.exists(":VerbatimMention"))
  -- Loading the plugin file must not load the Lua modules.
  H.eq(nil, package.loaded["verbatim.lsp"])
end)

H.test("protocol.lua mirrors docs/protocol.md", function()
  local protocol = require("verbatim.protocol")
  local doc_path = plugin_root .. "/../docs/protocol.md"
  local doc = table.concat(vim.fn.readfile(doc_path), "\n")
  local documented = {}
  for code, kind in doc:gmatch("\n| (%-330%d%d) | `(%a+)` |") do
    documented[kind] = tonumber(code)
  end
  H.eq(documented, protocol.errors, "error codes")
  H.truthy(
    doc:find("Protocol version: **" .. protocol.PROTOCOL_VERSION .. "**", 1, true),
    "protocol version"
  )
  for _, method in pairs(protocol.methods) do
    H.truthy(doc:find("`" .. method .. "`", 1, true), method .. " is documented")
  end
  for method in doc:gmatch("### `(verbatim/%a+)`") do
    H.truthy(vim.tbl_contains(vim.tbl_values(protocol.methods), method), method .. " is mirrored")
  end
  -- Every initialization option the plugin sends is documented.
  for _, option in ipairs(vim.tbl_keys(require("verbatim.lsp").init_options())) do
    H.truthy(doc:find("| `" .. option .. "` |", 1, true), option .. " is documented")
  end
end)

H.test("annotation labels split into agent and summary", function()
  local protocol = require("verbatim.protocol")
  H.eq(
    { "claude-code", "Start x at 2" },
    { protocol.split_label("claude-code: Start x at 2", "Start x at 2") }
  )
  H.eq({ "a: b", "fix: it" }, { protocol.split_label("a: b: fix: it", "fix: it") })
  H.eq({ "agent #3", "x" }, { protocol.split_label("agent #3: x", nil) })
  H.eq(12, protocol.pending_id("verbatim/12"))
  H.eq(nil, protocol.pending_id("other/12"))
  H.eq(7, protocol.pending_id("verbatim/disk/7"))
  H.eq(true, protocol.is_disk_annotation("verbatim/disk/7"))
  H.eq(false, protocol.is_disk_annotation("verbatim/7"))
end)

H.test("require has no side effects: setup() creates highlights and autocommands", function()
  for _, name in ipairs({ "verbatim", "verbatim.review", "verbatim.lsp", "verbatim.external" }) do
    require(name)
  end
  local api = vim.api
  local function review_autocmds()
    local ok, autocmds = pcall(api.nvim_get_autocmds, { group = "verbatim.review" })
    return ok and #autocmds or 0
  end
  H.eq({}, api.nvim_get_hl(0, { name = "VerbatimReviewTitle" }), "no highlight before setup()")
  H.eq(0, review_autocmds(), "no autocommand before setup()")
  H.eq({}, api.nvim_get_autocmds({ group = "verbatim.lsp" }))

  for _ = 1, 2 do -- a second setup() replaces, not adds
    require("verbatim").setup({ cmd = { vim.env.VERBATIM_BIN, "lsp" } })
    H.eq("Title", api.nvim_get_hl(0, { name = "VerbatimReviewTitle" }).link)
    H.eq(1, review_autocmds(), "the ColorScheme autocommand")
    H.truthy(#api.nvim_get_autocmds({ group = "verbatim.lsp" }) > 0, "the attach autocommands")
  end
  vim.cmd("highlight clear")
  vim.api.nvim_exec_autocmds("ColorScheme", {})
  H.eq("Title", api.nvim_get_hl(0, { name = "VerbatimReviewTitle" }).link, "after a colour scheme")
end)
