-- Starting the server: which buffers, which roots, what the client
-- advertises; status notifications, discovery, :checkhealth, :Verbatim log.
local H = require("helpers")
local api = vim.api
local verbatim = require("verbatim")

verbatim.setup({ cmd = { vim.env.VERBATIM_BIN, "lsp" }, skip_filetypes = { "markdown" } })

---@param bufnr integer
---@return vim.lsp.Client|nil
local function verbatim_client(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = "verbatim" })[1]
end

H.test("the client advertises what the plugin implements", function()
  local root = H.workspace({ ["a.lua"] = "return 1\n" })
  local _, client = H.edit(root .. "/a.lua")
  local caps = client.config.capabilities
  H.eq(true, caps.workspace.applyEdit)
  H.eq(true, caps.workspace.workspaceEdit.documentChanges)
  H.eq({ "create" }, caps.workspace.workspaceEdit.resourceOperations)
  H.truthy(caps.workspace.workspaceEdit.changeAnnotationSupport, "changeAnnotationSupport")
  H.eq({ "utf-8", "utf-16", "utf-32" }, caps.general.positionEncodings)
  H.eq({
    needsConfirmation = true,
    statusNotifications = true,
    externalChanges = "review",
    diagnostics = true,
    hunkOutcomes = true,
    claudeCode = true,
    geminiCli = true,
    verbatimExtensions = true,
  }, client.config.init_options)
  H.eq(0, client.flags.debounce_text_changes)
  H.eq("utf-8", client.offset_encoding)
  H.eq(root, client.root_dir)
  local log = vim.fn.stdpath("log") .. "/verbatim.log"
  H.eq({ vim.env.VERBATIM_BIN, "lsp", "--log-file", log }, client.config.cmd)
end)

H.test("one server per root, any filetype; not for special buffers", function()
  local root1 = H.workspace({ ["x.txt"] = "x\n", ["sub/y.py"] = "y = 1\n", ["noext"] = "z\n" })
  local root2 = H.workspace({ ["w.txt"] = "w\n" })
  local b1, c1 = H.edit(root1 .. "/x.txt")
  local b2, c2 = H.edit(root1 .. "/sub/y.py")
  local b3, c3 = H.edit(root1 .. "/noext")
  local _, c4 = H.edit(root2 .. "/w.txt")
  H.eq(c1.id, c2.id)
  H.eq(c1.id, c3.id, "a file without filetype is attached too")
  H.truthy(c4.id ~= c1.id, "another root, another server")
  H.eq(root2, c4.root_dir)
  H.eq("python", vim.bo[b2].filetype)
  H.eq("", vim.bo[b3].filetype)
  H.truthy(b1 ~= b2, "distinct buffers")
  vim.cmd("help help")
  local help = api.nvim_get_current_buf()
  vim.cmd("new")
  local scratch = api.nvim_get_current_buf()
  vim.cmd("terminal true")
  local term = api.nvim_get_current_buf()
  vim.wait(100)
  for _, buf in ipairs({ help, scratch, term }) do
    H.eq(nil, verbatim_client(buf), "not attached to " .. vim.bo[buf].buftype .. " buffer " .. buf)
  end
  vim.cmd("only")
end)

H.test("without a root marker the current directory is the root", function()
  local dir = H.tmpdir() .. "/plain"
  H.write_file(dir .. "/f.txt", "f\n")
  vim.cmd.cd(vim.fn.fnameescape(dir))
  local _, client = H.edit(dir .. "/f.txt")
  H.eq(vim.fn.getcwd(), client.root_dir)
  vim.cmd.cd("-")
end)

H.test("skipped filetypes get no server, yet agents can edit them", function()
  local root = H.workspace({ ["a.txt"] = "a\n", ["doc.md"] = "# Title\n" })
  local _, client = H.edit(root .. "/a.txt")
  vim.cmd.edit(vim.fn.fnameescape(root .. "/doc.md"))
  local md = api.nvim_get_current_buf()
  vim.wait(100)
  H.eq("markdown", vim.bo[md].filetype)
  H.eq(nil, verbatim_client(md))
  local agent = H.agent(client, "md-agent")
  local uri = vim.uri_from_fname(root .. "/doc.md")
  local read = H.read_until(agent, uri)
  H.eq("disk", read.source)
  local id = agent:request("verbatim/strReplace", {
    uri = uri,
    oldStr = "Title",
    newStr = "Heading",
    baseRev = read.rev,
    summary = "Rename",
  })
  H.wait_pending(1)
  verbatim.accept()
  local response = agent:wait(id)
  H.eq(nil, response.error)
  H.eq({ "# Heading" }, H.lines(md))
end)

H.test("a skipped-filetype buffer with unsaved changes is not edited blindly", function()
  local root = H.workspace({ ["a.txt"] = "a\n", ["doc.md"] = "# Title\n" })
  local _, client = H.edit(root .. "/a.txt")
  vim.cmd.edit(vim.fn.fnameescape(root .. "/doc.md"))
  local md = api.nvim_get_current_buf()
  api.nvim_buf_set_lines(md, 0, -1, true, { "# Title", "unsaved" })
  local agent = H.agent(client, "md-agent-2")
  local uri = vim.uri_from_fname(root .. "/doc.md")
  local read = H.read_until(agent, uri)
  local response = agent:call("verbatim/strReplace", {
    uri = uri,
    oldStr = "Title",
    newStr = "Heading",
    baseRev = read.rev,
    summary = "Rename",
  })
  H.eq("rejected", response.error.data.kind)
  H.truthy(response.error.data.reason:find("not on disk", 1, true), response.error.data.reason)
  H.eq({ "# Title", "unsaved" }, H.lines(md))
end)

H.test("beside another language server on the same buffer", function()
  -- A second, in-process server that records what it is sent.
  local seen = {}
  local fake_server = H.fake_server(
    { textDocumentSync = { openClose = true, change = 2 } },
    function(method, params)
      table.insert(seen, { method = method, params = params })
    end
  )
  local root = H.workspace({ ["s.txt"] = "shared\n" })
  local path = root .. "/s.txt"
  local buf, client = H.edit(path)
  local other_id = vim.lsp.start(
    { name = "other", cmd = fake_server, root_dir = root },
    { bufnr = buf }
  )
  H.wait_for("the other client", function()
    local other = vim.lsp.get_client_by_id(other_id)
    return other and other.initialized
  end)
  H.eq(2, #vim.lsp.get_clients({ bufnr = buf }))
  local agent = H.agent(client, "neighbour")
  local uri = vim.uri_from_fname(path)
  local read = H.read_until(agent, uri)
  local id = agent:request("verbatim/strReplace", {
    uri = uri,
    oldStr = "shared",
    newStr = "SHARED",
    baseRev = read.rev,
    summary = "Loud",
  })
  H.wait_pending(1)
  verbatim.accept()
  H.eq(nil, agent:wait(id).error)
  H.wait_for("the other server to get the change", function()
    for _, msg in ipairs(seen) do
      if msg.method == "textDocument/didChange" then
        return true
      end
    end
  end)
  vim.lsp.get_client_by_id(other_id):stop(true)
end)

H.test("status: notifications, :Verbatim status, discovery file", function()
  local root = H.workspace({ ["a.txt"] = "a\n" })
  local _, client = H.edit(root .. "/a.txt")
  local events = 0
  api.nvim_create_autocmd("User", {
    pattern = "VerbatimStatus",
    callback = function()
      events = events + 1
    end,
  })
  H.agent(client, "status-agent")
  local lsp = require("verbatim.lsp")
  local status = H.wait_for("a status notification naming the agent", function()
    local s = lsp.statuses[client.id]
    if s then
      for _, a in ipairs(s.agents or {}) do
        if a.name == "status-agent" then
          return s
        end
      end
    end
  end)
  H.truthy(events > 0, "User VerbatimStatus fired")
  H.eq(true, status.editorConnected)
  -- The discovery file lies in VERBATIM_RUNTIME_DIR and names the socket.
  H.eq(vim.env.VERBATIM_RUNTIME_DIR, vim.fs.dirname(status.discoveryFile))
  local discovery = vim.json.decode(H.read_file(status.discoveryFile))
  H.eq(status.socket, discovery.socket)
  H.eq(1, discovery.protocolVersion)
  H.eq({ vim.uri_from_fname(root) }, discovery.workspaceFolders)
  H.eq("Neovim", discovery.clientInfo.name)

  local messages = {}
  local notify = vim.notify
  vim.notify = function(msg)
    table.insert(messages, msg)
  end
  vim.cmd("Verbatim status")
  H.eq({}, messages, ":Verbatim status returns before the server answers")
  H.wait_for(":Verbatim status reports", function()
    return #messages > 0
  end)
  vim.notify = notify
  local text = table.concat(messages, "\n")
  H.truthy(text:find("status-agent", 1, true), text)
  H.truthy(text:find(status.socket, 1, true), text)
end)

H.test(":checkhealth verbatim", function()
  vim.cmd("checkhealth verbatim")
  local text = table.concat(api.nvim_buf_get_lines(0, 0, -1, true), "\n")
  H.truthy(text:find("Neovim 0.11", 1, true), text)
  H.truthy(text:find("found " .. vim.env.VERBATIM_BIN, 1, true), text)
  H.truthy(text:find("version: verbatim 0.1", 1, true), text)
  H.truthy(text:find("agent socket: ", 1, true), text)
  H.truthy(
    text:find(
      "runtime directory (agents find servers here): " .. vim.env.VERBATIM_RUNTIME_DIR,
      1,
      true
    ),
    "the runtime directory, as the server reports it: " .. text
  )
  H.truthy(not text:find("ERROR", 1, true), text)
  vim.cmd("tabclose")
end)

H.test(":Verbatim log opens the server log", function()
  vim.cmd("Verbatim log")
  H.eq(vim.fn.stdpath("log") .. "/verbatim.log", api.nvim_buf_get_name(0))
  H.truthy(api.nvim_buf_line_count(0) > 1, "the log has lines")
  vim.cmd("close")
end)
