-- End to end, review = "confirm": a real `verbatim lsp`, a real agent on its
-- socket, and the person's decisions through the public API, the :Verbatim
-- command and the review window's keys.
local H = require("helpers")
local api = vim.api
local verbatim = require("verbatim")

verbatim.setup({ cmd = { vim.env.VERBATIM_BIN, "lsp" } })

---@param lines string[]|nil
---@param needle string
local function has_line(lines, needle)
  return vim.tbl_contains(lines or {}, needle)
end

--- Moves into the review window and presses keys there.
---@param keys string
local function press_in_review(keys)
  local win = H.review_window()
  H.truthy(win, "the review window is open")
  api.nvim_set_current_win(win --[[@as integer]])
  api.nvim_feedkeys(keys, "xt", false)
end

H.test("an agent edits a buffer with unsaved changes; the person accepts", function()
  local original = "alpha\nbeta\ngamma\n"
  local root = H.workspace({ ["notes.txt"] = original })
  local path = root .. "/notes.txt"
  local buf, client = H.edit(path)
  api.nvim_buf_set_lines(buf, 0, 1, true, { "ALPHA" }) -- unsaved
  api.nvim_win_set_cursor(0, { 3, 2 })
  api.nvim_buf_set_mark(buf, "m", 1, 3, {})
  local editor_win = api.nvim_get_current_win()

  local agent = H.agent(client, "test-agent")
  local uri = vim.uri_from_fname(path)
  local read = H.read_until(agent, uri, function(t)
    return t:find("ALPHA", 1, true) ~= nil
  end)
  H.eq("editor", read.source)
  local id = agent:request("verbatim/strReplace", {
    uri = uri,
    oldStr = "beta",
    newStr = "BETA!",
    baseRev = read.rev,
    summary = "Shout beta",
  })

  local pending = H.wait_pending(1)
  H.eq("test-agent", pending[1].agent)
  H.eq("Shout beta", pending[1].summary)
  H.eq({ uri }, pending[1].uris)
  local win, lines = H.review_window()
  H.truthy(win, "the review window is open")
  H.eq(editor_win, api.nvim_get_current_win(), "the cursor stays in the person's window")
  H.truthy(lines[1]:find("test-agent", 1, true), "the review names the agent: " .. lines[1])
  H.truthy(has_line(lines, "  Shout beta"), "the review shows the summary")
  H.truthy(
    has_line(lines, "-beta") and has_line(lines, "+BETA!"),
    "the diff:\n" .. table.concat(lines, "\n")
  )
  H.truthy(has_line(lines, " ALPHA"), "the diff is against the unsaved buffer")
  H.eq(false, agent:answered(id), "the agent waits for the review")
  H.eq({ "ALPHA", "beta", "gamma" }, H.lines(buf))

  H.eq(true, (verbatim.accept()))
  local response = agent:wait(id)
  H.eq(nil, response.error)
  H.eq(true, response.result.applied)
  H.eq(false, response.result.modifiedByEditor)
  H.truthy(response.result.rev ~= read.rev, "a new rev")
  H.eq({ "ALPHA", "BETA!", "gamma" }, H.lines(buf))
  H.eq(true, vim.bo[buf].modified, "the buffer is modified")
  H.eq(original, H.read_file(path), "the file on disk is untouched")
  H.eq({ 3, 2 }, api.nvim_win_get_cursor(editor_win), "the cursor stays put")
  H.eq({ 1, 3 }, api.nvim_buf_get_mark(buf, "m"), "marks stay put")
  H.eq(nil, (H.review_window()), "the review window closes when nothing waits")
  H.eq({}, verbatim.pending())
  H.eq(response.result.rev, H.read_until(agent, uri).rev, "the result's rev is the document's rev")

  vim.cmd("silent undo")
  H.eq({ "ALPHA", "beta", "gamma" }, H.lines(buf), "one undo step takes the edit back")
end)

H.test("reject with a reason: the agent gets `rejected` with it", function()
  local s = H.scenario({ ["a.txt"] = "one\ntwo\n" }, "a.txt", "rejected-agent")
  local id = s:str_replace("two", "2", "Use digits")
  H.wait_pending(1)
  H.eq(true, verbatim.reject("prefer words here"))
  local response = s.agent:wait(id)
  H.eq(nil, response.result)
  H.eq("rejected", response.error.data.kind)
  H.eq(-33008, response.error.code)
  H.eq("prefer words here", response.error.data.reason)
  H.eq({ "one", "two" }, H.lines(s.buf))
  H.eq(false, vim.bo[s.buf].modified)
end)

--- Waits until the server offered the pending edit again.
--- The server keeps the edit's id across offers and counts them in
--- `verbatim.offer`.
---@param old_id integer
---@return verbatim.PendingInfo
local function wait_reoffer(old_id)
  local queue = require("verbatim.queue")
  local first = queue.items[1].proposal
  return H.wait_for("the edit offered again", function()
    local pending = verbatim.pending()
    local item = queue.items[1]
    local again = #pending == 1 and not item.moved and item.proposal ~= first
    if again then
      H.eq(old_id, pending[1].id, "the same id")
      H.eq(first.offer + 1, item.proposal.offer, "the next offer")
    end
    return again and pending[1] or nil
  end)
end

H.test(
  "the person types elsewhere while the edit waits: the diff follows, one accept lands both",
  function()
    local s = H.scenario({ ["a.txt"] = "one\ntwo\nthree\nfour\n" }, "a.txt", "slow-agent")
    local id = s:str_replace("three", "THREE", "Capitalise")
    local first = H.wait_pending(1)[1]
    -- The person types a line at the end, in insert mode, with the review open.
    api.nvim_win_set_cursor(0, { 4, 0 })
    api.nvim_feedkeys("onew last line\27", "xt", false)
    local again = wait_reoffer(first.id)
    H.eq(first.key, again.key, "the same edit in the review, in its place")
    H.eq(false, s.agent:answered(id), "the agent still waits for the person")
    local _, lines = H.review_window()
    H.truthy(
      has_line(lines, "-three") and has_line(lines, "+THREE"),
      table.concat(lines or {}, "\n")
    )
    H.truthy(has_line(lines, " new last line"), "the diff is against the typed text")

    H.eq(true, (verbatim.accept()), "one accept")
    local response = s.agent:wait(id)
    H.eq(nil, response.error)
    H.eq(true, response.result.applied)
    H.eq(true, response.result.rebased, vim.inspect(response.result))
    H.eq(s.read.rev, response.result.rebasedFrom)
    H.eq(false, response.result.modifiedByEditor)
    H.eq({ "one", "two", "THREE", "four", "new last line" }, H.lines(s.buf))
    H.eq({}, verbatim.pending())
    H.eq(nil, (H.review_window()), "the review window closes")
  end
)

H.test("accepting right after typing applies the edit once the server moved it", function()
  local s = H.scenario({ ["a.txt"] = "one\ntwo\nthree\n" }, "a.txt", "quick-agent")
  local id = s:str_replace("one", "ONE", "Capitalise")
  H.wait_pending(1)
  api.nvim_buf_set_lines(s.buf, -1, -1, true, { "typed" })
  local applied, _, later = verbatim.accept()
  H.eq(false, applied, "not this version: the buffer moved")
  H.eq(true, later)
  local response = s.agent:wait(id)
  H.eq(nil, response.error)
  H.eq(true, response.result.rebased, vim.inspect(response.result))
  H.eq({ "ONE", "two", "three", "typed" }, H.lines(s.buf))
  H.eq({}, verbatim.pending())
end)

H.test("rejecting right after typing: the agent gets `rejected`, no new offer", function()
  local s = H.scenario({ ["a.txt"] = "one\ntwo\n" }, "a.txt", "eager-agent")
  local id = s:str_replace("one", "ONE", "Capitalise")
  H.wait_pending(1)
  api.nvim_buf_set_lines(s.buf, -1, -1, true, { "typed" })
  H.eq(true, verbatim.reject("not now"))
  local response = s.agent:wait(id)
  H.eq("rejected", response.error.data.kind, vim.inspect(response.error))
  H.eq("not now", response.error.data.reason)
  H.eq({ "one", "two", "typed" }, H.lines(s.buf))
  vim.wait(200)
  H.eq({}, verbatim.pending(), "the edit is not offered for review again")
end)

H.test("the person types inside the quoted text: the agent gets stale, the typing stays", function()
  local s = H.scenario({ ["a.txt"] = "one\ntwo\nthree\n" }, "a.txt", "slow-agent")
  local id = s:str_replace("two", "TWO", "Capitalise")
  H.wait_pending(1)
  api.nvim_win_set_cursor(0, { 2, 1 })
  api.nvim_feedkeys("ihey\27", "xt", false)
  local response = s.agent:wait(id)
  H.eq(nil, response.result)
  H.eq("stale", response.error.data.kind, vim.inspect(response.error))
  H.eq({ 2, 2 }, response.error.data.changedLines, vim.inspect(response.error.data))
  H.eq({ "one", "theywo", "three" }, H.lines(s.buf))
  H.wait_pending(0)
  H.eq(nil, (H.review_window()), "the review window closes")
  H.eq(false, verbatim.accept(), "nothing left to accept")
end)

H.test("an edit for a version the buffer has left is refused at once", function()
  local root = H.workspace({ ["a.txt"] = "one\n" })
  local path = root .. "/a.txt"
  local buf, client = H.edit(path)
  -- Straight to the handler: the server planned against an old version.
  local handler = require("verbatim.apply_edit").handler
  local range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 3 } }
  local result = handler(nil, {
    edit = {
      documentChanges = {
        {
          textDocument = {
            uri = vim.uri_from_fname(path),
            version = vim.lsp.util.buf_versions[buf] - 1,
          },
          edits = { { range = range, newText = "1" } },
        },
      },
    },
  }, { client_id = client.id, method = "workspace/applyEdit" })
  H.eq(false, result.applied)
  H.truthy(result.failureReason:find("changed in the editor", 1, true), result.failureReason)
  H.eq({ "one" }, H.lines(buf))
end)

H.test("multibyte text and emoji, with a utf-16 agent", function()
  local original = "héllo wörld 👋 end\nzweite Zeile ✓\n"
  local s = H.scenario({ ["u.txt"] = original }, "u.txt", "utf16-agent", "utf-16")
  local id = s.agent:request("verbatim/batchEdit", {
    summary = "Celebrate",
    edits = {
      { uri = s.uri, oldStr = "👋 end", newStr = "🎉 fin", baseRev = s.read.rev },
      { uri = s.uri, oldStr = "✓", newStr = "✔ ok" },
    },
  })
  H.wait_pending(1)
  verbatim.accept()
  local response = s.agent:wait(id)
  H.eq(nil, response.error)
  local doc = response.result.documents[1]
  H.eq(false, doc.modifiedByEditor)
  -- Ranges in the agent's encoding: "héllo wörld " is 12 UTF-16 units.
  H.eq({ line = 0, character = 12 }, doc.edits[1].range.start)
  H.eq({ line = 0, character = 18 }, doc.edits[1].range["end"])
  H.eq({ "héllo wörld 🎉 fin", "zweite Zeile ✔ ok" }, H.lines(s.buf))
  H.eq(original, H.read_file(s.path))
end)

H.test("a fileformat=dos buffer", function()
  local original = "one\r\ntwo\r\nthree\r\n"
  local s = H.scenario({ ["dos.txt"] = original }, "dos.txt", "dos-agent")
  H.eq("dos", vim.bo[s.buf].fileformat)
  H.eq("crlf", s.read.lineEnding)
  local id = s:str_replace("two\r\nthree", "2\r\n3\r\n3.5", "Digits")
  H.wait_pending(1)
  verbatim.accept()
  local response = s.agent:wait(id)
  H.eq(nil, response.error)
  H.eq(false, response.result.modifiedByEditor)
  H.eq({ "one", "2", "3", "3.5" }, H.lines(s.buf))
  H.eq("dos", vim.bo[s.buf].fileformat)
  H.eq(original, H.read_file(s.path))
  H.eq("one\r\n2\r\n3\r\n3.5\r\n", H.read_until(s.agent, s.uri).text)
end)

H.test("a file that is not loaded yet is loaded into a buffer, not written", function()
  local original = "first\nsecond\n"
  local s =
    H.scenario({ ["open.txt"] = "x\n", ["closed.txt"] = original }, "open.txt", "disk-agent")
  local path = s.root .. "/closed.txt"
  H.eq(-1, vim.fn.bufnr(path), "no buffer for the file yet")
  local uri = vim.uri_from_fname(path)
  local read = H.read_until(s.agent, uri)
  H.eq("disk", read.source)
  local id = s.agent:request("verbatim/strReplace", {
    uri = uri,
    oldStr = "second",
    newStr = "2nd",
    baseRev = read.rev,
    summary = "Abbreviate",
  })
  H.wait_pending(1)
  local buf = vim.fn.bufnr(path)
  H.truthy(buf > 0 and api.nvim_buf_is_loaded(buf), "the file is loaded for the review")
  H.eq({ "first", "second" }, H.lines(buf))
  verbatim.accept()
  local response = s.agent:wait(id)
  H.eq(nil, response.error)
  H.eq(true, response.result.applied)
  H.eq(false, response.result.modifiedByEditor)
  H.eq({ "first", "2nd" }, H.lines(buf))
  H.eq(true, vim.bo[buf].modified)
  H.eq(true, vim.bo[buf].buflisted)
  H.eq(original, H.read_file(path))
end)

H.test("a new file becomes a buffer; the disk stays untouched until :write", function()
  local s = H.scenario({ ["open.txt"] = "x\n" }, "open.txt", "writer")
  local path = s.root .. "/src/new.rs"
  local id = s.agent:request("verbatim/write", {
    uri = vim.uri_from_fname(path),
    text = "fn main() {}\n",
    summary = "Add entry point",
  })
  H.wait_pending(1)
  local _, lines = H.review_window()
  H.truthy(has_line(lines, "--- /dev/null"), "shown as a new file")
  verbatim.accept()
  local response = s.agent:wait(id)
  H.eq(nil, response.error)
  H.eq(false, response.result.modifiedByEditor)
  local buf = vim.fn.bufnr(path)
  H.eq({ "fn main() {}" }, H.lines(buf))
  H.eq(true, vim.bo[buf].modified)
  H.eq(nil, H.read_file(path), "nothing on disk")
  api.nvim_buf_call(buf, function()
    vim.cmd("silent write")
  end)
  H.eq("fn main() {}\n", H.read_file(path), ":write creates the file and its directory")
end)

--- A file of 20 lines with "old value" on lines 2 and 18: an edit of both
--- makes two changes (hunks) far apart.
---@param name string
---@return verbatim.test.Scenario
---@return integer request id
local function two_change_edit(name)
  local lines = {}
  for i = 1, 20 do
    lines[i] = "line " .. i
  end
  lines[2], lines[18] = "old value", "old value"
  local s = H.scenario({ ["p.txt"] = table.concat(lines, "\n") .. "\n" }, "p.txt", name)
  local id = s:str_replace("old value", "new value", "Renew", { replaceAll = true })
  H.wait_pending(1)
  return s, id
end

--- Records what the plugin answers the server for the first pending edit.
---@return table answers
local function capture_answers()
  local answers = {}
  local item = require("verbatim.queue").items[1]
  local answer = item.answer
  item.answer = function(result)
    table.insert(answers, vim.deepcopy(result))
    answer(result)
  end
  return answers
end

--- Answers the next vim.ui.input() with `reply` and records its prompt.
---@param reply string|nil
---@return table prompts
---@return fun() restore vim.ui.input when it was not called
local function answer_input(reply)
  local prompts = {}
  local input = vim.ui.input
  local function restore()
    vim.ui.input = input
  end
  vim.ui.input = function(opts, on_confirm)
    restore()
    table.insert(prompts, opts.prompt)
    on_confirm(reply)
  end
  return prompts, restore
end

--- The window lines (1-based) of the changes' removed lines "-old value".
---@return integer[]
local function change_rows()
  local rows = {}
  for i, line in ipairs(select(2, H.review_window()) or {}) do
    if line == "-old value" then
      table.insert(rows, i)
    end
  end
  return rows
end

H.test(
  "leave out one change of two and accept with a reason: the agent learns which and why",
  function()
    local s, id = two_change_edit("partial-agent")
    local proposal = require("verbatim.queue").items[1].proposal
    H.eq(true, proposal.by_server_hunk, "the review's changes are the server's hunks")
    H.eq(2, #proposal.documents[1].hunks)
    local answers = capture_answers()
    local rows = change_rows()
    H.eq(2, #rows, "two changes are shown")
    -- In the review window: leave out the first change, then accept with the key.
    press_in_review("")
    api.nvim_win_set_cursor(0, { rows[1], 0 })
    api.nvim_feedkeys("x", "xt", false)
    H.truthy(has_line(select(2, H.review_window()), "-old value"), "still listed")
    local prompts = answer_input("keep the old name in the public API")
    api.nvim_feedkeys("a", "xt", false)
    H.eq({ "Why leave out 1 change? (optional, for the agent): " }, prompts)
    local response = s.agent:wait(id)
    local now = H.lines(s.buf)
    H.eq({ "old value", "new value" }, { now[2], now[18] }, "exactly the kept change")
    H.eq(nil, response.error)
    H.eq(true, response.result.applied)
    H.eq({
      {
        applied = true,
        hunks = { { index = 0, accepted = false }, { index = 1, accepted = true } },
        reason = "keep the old name in the public API",
      },
    }, answers, "what the plugin answers")
    H.eq(true, response.result.partial, vim.inspect(response.result))
    H.eq(false, response.result.modifiedByEditor)
    H.eq("keep the old name in the public API", response.result.reason)
    local outcome = vim.tbl_map(function(h)
      return { h.index, h.accepted, h.line }
    end, response.result.hunks)
    H.eq({ { 0, false, 2 }, { 1, true, 18 } }, outcome)
  end
)

H.test("a change left out stays left out when the edit is offered again", function()
  local s, id = two_change_edit("moved-agent")
  local rows = change_rows()
  press_in_review("")
  api.nvim_win_set_cursor(0, { rows[1], 0 })
  api.nvim_feedkeys("x", "xt", false)
  local first = verbatim.pending()[1]
  -- The person types between the two changes while the edit waits.
  api.nvim_buf_set_lines(s.buf, 9, 10, true, { "line 10, typed" })
  wait_reoffer(first.id)
  H.eq({ { true } }, require("verbatim.queue").items[1].skipped)
  H.eq(true, (verbatim.accept(nil, "not that one")))
  local response = s.agent:wait(id)
  H.eq(nil, response.error)
  H.eq(true, response.result.partial, vim.inspect(response.result))
  H.eq("not that one", response.result.reason)
  local now = H.lines(s.buf)
  H.eq({ "old value", "line 10, typed", "new value" }, { now[2], now[10], now[18] })
end)

H.test("a full accept reports every hunk kept; no question asked", function()
  local s, id = two_change_edit("full-agent")
  local answers = capture_answers()
  local prompts, restore = answer_input("unused")
  press_in_review("a")
  restore()
  local response = s.agent:wait(id)
  H.eq(nil, response.error)
  H.eq({}, prompts, "nothing left out: no question")
  H.eq({
    { applied = true, hunks = { { index = 0, accepted = true }, { index = 1, accepted = true } } },
  }, answers)
  H.eq(nil, response.result.partial)
  H.eq(false, response.result.modifiedByEditor)
end)

H.test("leaving out every change with a reason: the agent gets `rejected` with it", function()
  local s, id = two_change_edit("none-agent")
  local answers = capture_answers()
  press_in_review("ggVGx")
  answer_input("not now")
  api.nvim_feedkeys("a", "xt", false)
  local response = s.agent:wait(id)
  H.eq({ { applied = false, failureReason = "not now" } }, answers)
  H.eq("rejected", response.error.data.kind)
  H.eq("not now", response.error.data.reason)
  H.eq(false, vim.bo[s.buf].modified, "the buffer is untouched")
end)

H.test("cancelling the question keeps the edit waiting; :Verbatim accept {reason}", function()
  local s, id = two_change_edit("cancel-agent")
  local answers = capture_answers()
  local rows = change_rows()
  press_in_review("")
  api.nvim_win_set_cursor(0, { rows[2], 0 })
  api.nvim_feedkeys("x", "xt", false)
  answer_input(nil)
  api.nvim_feedkeys("a", "xt", false)
  H.eq(1, #verbatim.pending(), "still waiting")
  H.eq(false, s.agent:answered(id))
  vim.cmd("Verbatim accept only the first one for now")
  s.agent:wait(id)
  H.eq("only the first one for now", answers[1].reason)
  local now = H.lines(s.buf)
  H.eq({ "new value", "old value" }, { now[2], now[18] })
end)

H.test("]c and [c move between changes; x over a visual range leaves them all out", function()
  local lines = {}
  for i = 1, 30 do
    lines[i] = "line " .. i
  end
  -- Three changes far enough apart (more than twice the context) to stay apart.
  lines[2], lines[14], lines[26] = "old value", "old value", "old value"
  local s = H.scenario({ ["n.txt"] = table.concat(lines, "\n") .. "\n" }, "n.txt", "nav-agent")
  local id = s:str_replace("old value", "new value", "Renew", { replaceAll = true })
  H.wait_pending(1)
  local _, review = H.review_window()
  review = review or {}
  H.truthy(
    review[3]:find("x leave out change (or selection)", 1, true)
      and review[3]:find("]c/[c next/previous change", 1, true),
    "the header names the keys: " .. review[3]
  )
  local changes = {} -- the window's lines of the three changes, top to bottom
  for i, line in ipairs(review) do
    if line == "-old value" then
      table.insert(changes, i)
    end
  end
  H.eq(3, #changes, table.concat(review, "\n"))

  press_in_review("gg")
  for _, step in ipairs({
    { "]c", 1, "]c goes to the first change" },
    { "]c", 2, "]c goes to the second change" },
    { "[c", 1, "[c goes back" },
    { "2]c", 3, "a count skips changes" },
    { "]c", 3, "]c stays on the last change" },
    { "9[c", 1, "[c stops at the first change" },
  }) do
    api.nvim_feedkeys(step[1], "xt", false)
    H.eq(changes[step[2]], api.nvim_win_get_cursor(0)[1], step[3])
  end

  local item = require("verbatim.queue").items[1]
  local function left_out()
    local result = {}
    for hunk in pairs(item.skipped[1] or {}) do
      table.insert(result, hunk)
    end
    table.sort(result)
    return result
  end
  -- From inside the first change to inside the second: both are left out.
  api.nvim_feedkeys("V" .. (changes[2] - changes[1]) .. "jx", "xt", false)
  H.eq("n", api.nvim_get_mode().mode, "back in Normal mode")
  H.eq({ 1, 2 }, left_out())
  local _, marked = H.review_window()
  H.truthy(has_line(marked, "-old value"), "left-out changes stay listed")
  -- The same range again: all were left out, so all come back.
  api.nvim_win_set_cursor(0, { changes[1], 0 })
  api.nvim_feedkeys("V" .. (changes[2] - changes[1]) .. "jx", "xt", false)
  H.eq({}, left_out())
  -- A range over a left-out change and others leaves them all out.
  api.nvim_win_set_cursor(0, { changes[2], 0 })
  api.nvim_feedkeys("x", "xt", false)
  H.eq({ 2 }, left_out())
  api.nvim_feedkeys("ggVGx", "xt", false)
  H.eq({ 1, 2, 3 }, left_out())
  -- Take the last one back with x in Normal mode; only it lands.
  api.nvim_feedkeys("G[cx", "xt", false)
  H.eq({ 1, 2 }, left_out())
  answer_input("")
  api.nvim_feedkeys("a", "xt", false)
  local response = s.agent:wait(id)
  H.eq(nil, response.error)
  H.eq(true, response.result.applied)
  H.eq(true, response.result.partial, vim.inspect(response.result))
  H.eq(false, response.result.modifiedByEditor)
  H.eq(nil, response.result.reason, "an empty answer gives no reason")
  local now = H.lines(s.buf)
  H.eq({ "old value", "old value", "new value" }, { now[2], now[14], now[26] })
end)

H.test(
  "server hunks become changes: an insertion and a deletion, as vim.diff() sees them",
  function()
    local proposal = require("verbatim.proposal")
    local text = require("verbatim.text")
    local lines = { "a", "b", "c", "d", "e", "f", "g", "h" }
    local snapshot = { lines = lines, eol = true, line_ending = "\n" }
    local function range(l1, c1, l2, c2)
      return { start = { line = l1, character = c1 }, ["end"] = { line = l2, character = c2 } }
    end
    local edits = {
      { range = range(1, 0, 1, 0), newText = "x\n" }, -- insert a line before b
      { range = range(5, 0, 6, 0), newText = "" }, -- delete f
      { range = range(7, 0, 7, 1), newText = "H" }, -- h -> H, next to the deletion
    }
    local layout = proposal.server_hunk_layout(snapshot, edits, {
      { index = 0, edits = { 1 } },
      { index = 1, edits = { 2, 3 } },
    }, "utf-8")
    assert(layout)
    local after = text.split_lines(text.apply_to_text(snapshot, edits, "utf-8"))
    table.remove(after) -- the empty item after the final line ending
    local expected = proposal.hunks(lines, after)
    H.eq(
      { { 1, 0, 2, 1 }, { 6, 3, 7, 2 } },
      vim.tbl_map(function(h)
        return { h.start_a, h.count_a, h.start_b, h.count_b }
      end, layout.hunks)
    )
    H.eq(3, #expected, "vim.diff() splits the second hunk at the unchanged g")
    H.eq(
      { 1, 0, 2, 1 },
      { expected[1].start_a, expected[1].count_a, expected[1].start_b, expected[1].count_b }
    )
    H.eq({ 0 }, layout.hunks[1].indexes)
    H.eq({ 2, 3 }, layout.hunks[2].edits)
    H.eq({ "x" }, { layout.after_lines[2] })
    H.eq({ "g", "H" }, { layout.after_lines[7], layout.after_lines[8] })
    H.eq(
      { "f", "g", "h" },
      { layout.before_lines[6], layout.before_lines[7], layout.before_lines[8] }
    )
  end
)

H.test("a hunk's note: its first sentence at the hunk, the rest once", function()
  local note_parts = require("verbatim.proposal").note_parts
  for _, case in ipairs({
    {
      "Conflict: line 2. Accepting it drops that.",
      "Conflict: line 2",
      "Accepting it drops that.",
    },
    { "One sentence.", "One sentence", "" },
    { "No end", "No end", "" },
    { "v1.2 is kept. More", "v1.2 is kept", "More" },
    { string.rep("é", 100), string.rep("é", 79) .. "…", "" },
  }) do
    H.eq({ case[2], case[3] }, { note_parts(case[1]) }, case[1])
  end
end)

H.test("word_changes marks the words that differ", function()
  local word_changes = require("verbatim.highlight").word_changes
  for _, case in ipairs({
    { "local x = 1", "local x = 2", { { 10, 11 } }, { { 10, 11 } } },
    { "a b", "a b", {}, {} },
    { "call(x)", "call(x, y)", {}, { { 6, 9 } } },
    { "héllo wörld", "héllo world", { { 7, 13 } }, { { 7, 12 } } },
    { "", "new", {}, { { 0, 3 } } },
  }) do
    local old, new = word_changes(case[1], case[2])
    H.eq({ case[3], case[4] }, { old, new }, case[1] .. " -> " .. case[2])
  end
end)

H.test("a Lua change is coloured as Lua, its changed word marked", function()
  local s =
    H.scenario({ ["m.lua"] = "local M = {}\nlocal x = 1\nreturn M\n" }, "m.lua", "lua-agent")
  local id = s:str_replace("local x = 1", "local x = 2", "Two")
  H.wait_pending(1)
  local win, review = H.review_window()
  local buf = api.nvim_win_get_buf(win --[[@as integer]])
  local minus, plus
  for i, line in ipairs(review or {}) do
    if line == "-local x = 1" then
      minus = i - 1
    elseif line == "+local x = 2" then
      plus = i - 1
    end
  end
  H.truthy(minus and plus, table.concat(review or {}, "\n"))
  local ns = api.nvim_get_namespaces()["verbatim.review"]
  ---@param row integer
  ---@return table<string, integer[]> highlight -> start columns, on that row
  local function marks_on(row)
    local result = {}
    for _, mark in
      ipairs(api.nvim_buf_get_extmarks(buf, ns, { row, 0 }, { row, -1 }, {
        details = true,
      }))
    do
      local hl = mark[4].hl_group or mark[4].line_hl_group
      result[hl] = result[hl] or {}
      table.insert(result[hl], mark[3])
    end
    return result
  end
  local added, removed = marks_on(plus), marks_on(minus)
  H.eq({ 0 }, added.VerbatimReviewAdd, "the added line's background")
  H.eq({ 0 }, removed.VerbatimReviewDelete, "the removed line's background")
  H.eq({ 11 }, added.VerbatimReviewAddText, "the changed word, after the + sign")
  H.eq({ 11 }, removed.VerbatimReviewDeleteText)
  H.eq({ 1 }, added["@keyword.lua"], "`local` in Lua's colours: " .. vim.inspect(added))
  H.truthy(added["@number.lua"], "the number in Lua's colours: " .. vim.inspect(added))
  press_in_review("a")
  H.eq(nil, s.agent:wait(id).error)
end)

H.test("edits queue up; `A` accepts the rest from that agent for the session", function()
  local s =
    H.scenario({ ["a.txt"] = "a1\n", ["b.txt"] = "b1\n", ["c.txt"] = "c1\n" }, "a.txt", "bulk")
  local buf_b = H.edit(s.root .. "/b.txt")
  local buf_c = H.edit(s.root .. "/c.txt")
  local bulk = s.agent
  local other = H.agent(s.client, "other")
  local function send(agent, name, new)
    local uri = vim.uri_from_fname(s.root .. "/" .. name)
    local read = H.read_until(agent, uri)
    return agent:request("verbatim/strReplace", {
      uri = uri,
      oldStr = read.text:sub(1, 2),
      newStr = new,
      baseRev = read.rev,
      summary = "set " .. name,
    })
  end
  local id1 = send(bulk, "a.txt", "A1")
  H.wait_pending(1)
  local id2 = send(other, "b.txt", "B1")
  H.wait_pending(2)
  local id3 = send(bulk, "c.txt", "C1")
  local pending = H.wait_pending(3)
  H.eq(
    { "bulk", "other", "bulk" },
    vim.tbl_map(function(p)
      return p.agent
    end, pending)
  )
  local _, lines = H.review_window()
  H.truthy(lines[3]:find("edit 1 of 3", 1, true), "the queue is visible: " .. lines[3])
  -- :Verbatim next goes through the queue, back to the first after the last.
  vim.cmd("Verbatim next")
  _, lines = H.review_window()
  H.truthy(lines[3]:find("edit 2 of 3", 1, true), ":Verbatim next: " .. lines[3])
  vim.cmd("Verbatim next")
  vim.cmd("Verbatim next")
  _, lines = H.review_window()
  H.truthy(lines[3]:find("edit 1 of 3", 1, true), "back to the first: " .. lines[3])
  local status = verbatim.status()
  H.eq(3, #status.pending)
  local text = table.concat(require("verbatim.commands").format_status(status), "\n")
  H.truthy(text:find("3 edit(s) wait for review", 1, true), text)

  press_in_review("A")
  H.eq(nil, bulk:wait(id1).error)
  H.eq(nil, bulk:wait(id3).error)
  H.eq({ "A1" }, H.lines(s.buf))
  H.eq({ "C1" }, H.lines(buf_c))
  H.eq(1, #verbatim.pending(), "the other agent still waits")
  H.eq(false, other:answered(id2))
  -- A later edit from the trusted agent applies without review.
  local read = H.read_until(bulk, s.uri, function(t)
    return t == "A1\n"
  end)
  local id4 = bulk:request("verbatim/strReplace", {
    uri = s.uri,
    oldStr = "A1",
    newStr = "A2",
    baseRev = read.rev,
    summary = "again",
  })
  H.eq(nil, bulk:wait(id4).error)
  H.eq({ "A2" }, H.lines(s.buf))
  verbatim.reject()
  H.eq("rejected", other:wait(id2).error.data.kind)
  H.eq({ "b1" }, H.lines(buf_b))
end)

H.test(":Verbatim commands drive the review", function()
  local s = H.scenario({ ["a.txt"] = "keep\n" }, "a.txt", "cmd-agent")
  local id = s:str_replace("keep", "drop", "Drop it")
  H.wait_pending(1)
  vim.cmd("Verbatim review")
  H.eq("verbatim://review", api.nvim_buf_get_name(0), ":Verbatim review moves into the window")
  vim.cmd("Verbatim reject not this one")
  H.eq("not this one", s.agent:wait(id).error.data.reason)
  H.eq({ "keep" }, H.lines(s.buf))

  id = s:str_replace("keep", "kept", "Past tense")
  H.wait_pending(1)
  vim.cmd("Verbatim accept")
  H.eq(nil, s.agent:wait(id).error)
  H.eq({ "kept" }, H.lines(s.buf))
end)

H.test("an agent that cancels its request withdraws its edit from the review", function()
  local s = H.scenario({ ["a.txt"] = "one\ntwo\n" }, "a.txt", "fickle")
  local id = s:str_replace("one", "1", "First")
  H.wait_pending(1)
  s.agent:notify("$/cancelRequest", { id = id })
  H.wait_pending(0)
  H.eq(nil, (H.review_window()))
  H.eq({ "one", "two" }, H.lines(s.buf))
  H.eq(false, vim.bo[s.buf].modified)
end)

H.test("auto_open = false: only a message; the review window's keys", function()
  local config = require("verbatim.config")
  config.options.auto_open = false
  local s = H.scenario({ ["a.txt"] = "one\n" }, "a.txt", "quiet-agent")
  local id = s:str_replace("one", "1", "Digit")
  H.wait_pending(1)
  H.eq(nil, (H.review_window()), "no window opens by itself")
  config.options.auto_open = true

  vim.cmd("Verbatim review")
  -- q closes the window; the edit keeps waiting.
  api.nvim_feedkeys("q", "xt", false)
  H.eq(nil, (H.review_window()))
  H.eq(1, #verbatim.pending())
  H.eq(false, s.agent:answered(id))

  -- r asks for a reason; cancelling the prompt keeps the edit.
  local answers = { nil, "too terse" }
  local prompts = 0
  local input = vim.ui.input
  vim.ui.input = function(_, on_confirm)
    prompts = prompts + 1
    on_confirm(answers[prompts])
  end
  vim.cmd("Verbatim review")
  api.nvim_feedkeys("r", "xt", false)
  H.eq(1, #verbatim.pending(), "a cancelled prompt rejects nothing")
  api.nvim_feedkeys("r", "xt", false)
  vim.ui.input = input
  H.eq("too terse", s.agent:wait(id).error.data.reason)
  H.eq({ "one" }, H.lines(s.buf))
  H.eq(nil, (H.review_window()))
end)

H.test(
  "a 20,000-line file: an edit near the end, reviewed and accepted, leaves it exact",
  function()
    local lines = {}
    for n = 1, 20000 do
      lines[n] = string.format("line %05d of a large file", n)
    end
    local s =
      H.scenario({ ["large.txt"] = table.concat(lines, "\n") .. "\n" }, "large.txt", "large-agent")
    local id = s:str_replace(
      "line 19990 of a large file",
      "line 19990, edited\nand one more",
      "Edit near the end"
    )
    H.wait_pending(1)
    local _, review = H.review_window()
    for _, expected in ipairs({
      "@@ -19987,7 +19987,8 @@",
      " line 19987 of a large file",
      "-line 19990 of a large file",
      "+line 19990, edited",
      "+and one more",
      " line 19993 of a large file",
    }) do
      H.truthy(
        has_line(review, expected),
        expected .. " in the review:\n" .. table.concat(review or {}, "\n")
      )
    end
    H.eq(false, has_line(review, " line 19986 of a large file"), "three lines of context")

    press_in_review("a")
    local response = s.agent:wait(id)
    H.eq(nil, response.error)
    H.eq(true, response.result.applied)
    H.eq(false, response.result.modifiedByEditor)
    local expected = vim.list_slice(lines)
    expected[19990] = "line 19990, edited"
    table.insert(expected, 19991, "and one more")
    H.eq(expected, H.lines(s.buf))
    local want = table.concat(expected, "\n") .. "\n"
    H.eq(want, H.read_until(s.agent, s.uri).text, "the server sees the same text")
  end
)
