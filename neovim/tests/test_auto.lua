-- End to end, review = "auto": edits apply at once, still only to buffers.
local H = require("helpers")
local api = vim.api
local verbatim = require("verbatim")

verbatim.setup({ cmd = { vim.env.VERBATIM_BIN, "lsp" }, review = "auto" })

H.test("the server is told not to ask for confirmation", function()
  local root = H.workspace({ ["a.txt"] = "a\n" })
  local _, client = H.edit(root .. "/a.txt")
  H.eq({ needsConfirmation = false, statusNotifications = true }, client.config.init_options)
end)

H.test("an edit applies at once, to the buffer only", function()
  local original = "one\ntwo\n"
  local s = H.scenario({ ["a.txt"] = original, ["b.txt"] = "bee\n" }, "a.txt", "auto-agent")
  local buf, path, root, agent = s.buf, s.path, s.root, s.agent
  local response = agent:wait(s:str_replace("two", "2", "Digits"))
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
  local s = H.scenario({ ["a.txt"] = "one\n" }, "a.txt", "stale-agent")
  api.nvim_buf_set_lines(s.buf, 0, -1, true, { "ONE" })
  H.read_until(s.agent, s.uri, function(t)
    return t == "ONE\n"
  end)
  local response = s.agent:wait(s:str_replace("ONE", "1", "Digits"))
  H.eq("stale", response.error.data.kind)
  H.eq({ "ONE" }, H.lines(s.buf))
end)
