-- End to end, review = "auto": edits apply at once, still only to buffers.
local H = require("helpers")
local api = vim.api
local verbatim = require("verbatim")

verbatim.setup({ cmd = { vim.env.VERBATIM_BIN, "lsp" }, review = "auto" })

local agent ---@type verbatim.test.Agent
H.after_all = function()
  if agent then
    agent:close()
  end
end

H.test("the server is told not to ask for confirmation", function()
  local root = H.workspace({ ["a.txt"] = "a\n" })
  local _, client = H.edit(root .. "/a.txt")
  H.eq({ needsConfirmation = false, statusNotifications = true }, client.config.init_options)
end)

H.test("an edit applies at once, to the buffer only", function()
  local original = "one\ntwo\n"
  local root = H.workspace({ ["a.txt"] = original, ["b.txt"] = "bee\n" })
  local path = root .. "/a.txt"
  local buf, client = H.edit(path)
  agent = H.agent(client, "auto-agent")
  local uri = vim.uri_from_fname(path)
  local read = H.read_until(agent, uri)
  local response = agent:call("verbatim/strReplace", {
    uri = uri, oldStr = "two", newStr = "2", baseRev = read.rev, summary = "Digits",
  })
  H.eq(nil, response.error)
  H.eq(true, response.result.applied)
  H.eq(false, response.result.modifiedByEditor)
  H.eq({ "one", "2" }, H.lines(buf))
  H.eq(true, vim.bo[buf].modified)
  H.eq(original, H.read_file(path))
  H.eq({}, verbatim.pending())
  H.eq(nil, (H.review_window()))

  -- A file that is not loaded yet.
  local other = root .. "/b.txt"
  local other_uri = vim.uri_from_fname(other)
  local disk = H.read_until(agent, other_uri)
  response = agent:call("verbatim/strReplace", {
    uri = other_uri, oldStr = "bee", newStr = "b", baseRev = disk.rev, summary = "Shorter",
  })
  H.eq(nil, response.error)
  H.eq({ "b" }, H.lines(vim.fn.bufnr(other)))
  H.eq("bee\n", H.read_file(other))
end)

H.test("a stale baseRev is refused by the server and changes nothing", function()
  local root = H.workspace({ ["a.txt"] = "one\n" })
  local path = root .. "/a.txt"
  local buf, client = H.edit(path)
  local a = H.agent(client, "stale-agent")
  local uri = vim.uri_from_fname(path)
  local read = H.read_until(a, uri)
  api.nvim_buf_set_lines(buf, 0, -1, true, { "ONE" })
  H.read_until(a, uri, function(t)
    return t == "ONE\n"
  end)
  local response = a:call("verbatim/strReplace", {
    uri = uri, oldStr = "ONE", newStr = "1", baseRev = read.rev, summary = "Digits",
  })
  H.eq("stale", response.error.data.kind)
  H.eq({ "ONE" }, H.lines(buf))
  a:close()
end)
