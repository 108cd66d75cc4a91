-- End to end, review = "auto": edits apply at once, still only to buffers.
local H = require("helpers")
local api = vim.api
local verbatim = require("verbatim")

verbatim.setup({ cmd = { vim.env.VERBATIM_BIN, "lsp" }, review = "auto" })

H.test("the server is told not to ask for confirmation", function()
  local root = H.workspace({ ["a.txt"] = "a\n" })
  local _, client = H.edit(root .. "/a.txt")
  H.eq({
    needsConfirmation = false,
    statusNotifications = true,
    externalChanges = "review",
    diagnostics = true,
    hunkOutcomes = true,
    claudeCode = true,
    geminiCli = true,
    verbatimExtensions = true,
  }, client.config.init_options)
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
    uri = other_uri,
    oldStr = "bee",
    newStr = "b",
    baseRev = disk.rev,
    summary = "Shorter",
  })
  H.eq(nil, response.error)
  H.eq({ "b" }, H.lines(vim.fn.bufnr(other)))
  H.eq("bee\n", H.read_file(other))
end)

H.test(
  "an older baseRev: rebased over the person's change elsewhere, stale under the quote",
  function()
    local s = H.scenario({ ["a.txt"] = "one\ntwo\n" }, "a.txt", "stale-agent")
    api.nvim_buf_set_lines(s.buf, 0, 1, true, { "ONE" })
    H.read_until(s.agent, s.uri, function(t)
      return t == "ONE\ntwo\n"
    end)
    -- The person changed the quoted text: refused, nothing changes.
    local response = s.agent:wait(s:str_replace("one", "1", "Digits"))
    H.eq("stale", response.error.data.kind)
    H.eq({ 1, 1 }, response.error.data.changedLines)
    H.eq({ "ONE", "two" }, H.lines(s.buf))
    -- The person's change is elsewhere: the edit moves over it.
    response = s.agent:wait(s:str_replace("two", "2", "Digits"))
    H.eq(nil, response.error)
    H.eq(true, response.result.rebased)
    H.eq(s.read.rev, response.result.rebasedFrom)
    H.eq({ "ONE", "2" }, H.lines(s.buf))
  end
)

---@param count integer
---@return string
local function numbered_text(count)
  local lines = {}
  for n = 1, count do
    lines[n] = string.format("line %06d: local value = compute(alpha, beta)", n)
  end
  return table.concat(lines, "\n") .. "\n"
end

H.test(
  "an agent's edit of a 20,000-line buffer costs at most 40 times one of a 1,000-line buffer",
  function()
    -- Linear work would cost 20 times, quadratic 400 times; in fact most of
    -- the path costs the same whatever the size.
    local root =
      H.workspace({ ["small.txt"] = numbered_text(1000), ["large.txt"] = numbered_text(20000) })
    local _, client = H.edit(root .. "/small.txt")
    local large_buf = H.edit(root .. "/large.txt")
    local agent = H.agent(client, "guard-agent")
    ---@param count integer
    ---@return fun(): integer
    local function edit_near_end(count)
      local uri = vim.uri_from_fname(root .. (count == 1000 and "/small.txt" or "/large.txt"))
      H.read_until(agent, uri)
      local row = count - 10
      return function()
        row = row + 1 -- a new line every time
        local old = string.format("line %06d:", row)
        local sent = vim.uv.hrtime()
        local id = agent:request(
          "verbatim/strReplace",
          { uri = uri, oldStr = old, newStr = old:upper(), summary = "Guard" }
        )
        local response = agent:wait(id)
        H.eq(true, response.result and response.result.applied, vim.inspect(response))
        return agent.arrived[id] - sent
      end
    end
    H.assert_cost_ratio(
      "an edit through the server (auto), 1,000 vs 20,000 lines",
      40,
      edit_near_end(1000),
      edit_near_end(20000),
      7
    )
    H.eq(
      "LINE 019997: local value = compute(alpha, beta)",
      api.nvim_buf_get_lines(large_buf, 19996, 19997, true)[1]
    )
  end
)
