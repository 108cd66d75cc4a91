-- Positions, encodings and text edits, without a server: the buffer after
-- text.apply_to_buffer() must hold exactly what text.apply_to_text() predicts.
local H = require("helpers")
local text = require("verbatim.text")
local api = vim.api

---@param lines string[]
---@param opts? { fileformat?: string, eol?: boolean }
---@return integer
local function scratch(lines, opts)
  opts = opts or {}
  local buf = api.nvim_create_buf(true, false)
  api.nvim_buf_set_lines(buf, 0, -1, true, lines)
  vim.bo[buf].fileformat = opts.fileformat or "unix"
  if opts.eol ~= nil then
    vim.bo[buf].eol = opts.eol
  end
  return buf
end

local function edit(sl, sc, el, ec, new_text)
  return {
    range = { start = { line = sl, character = sc }, ["end"] = { line = el, character = ec } },
    newText = new_text,
  }
end

H.test("positions count code units of the given encoding", function()
  local snap = { lines = { "héllo 👋 x" }, eol = true, line_ending = "\n" }
  -- "x" is character 9 in utf-16 (the emoji takes two units), 8 in utf-32.
  H.eq({ 0, 12 }, { text.to_row_col(snap, { line = 0, character = 12 }, "utf-8") })
  H.eq({ 0, 12 }, { text.to_row_col(snap, { line = 0, character = 9 }, "utf-16") })
  H.eq({ 0, 12 }, { text.to_row_col(snap, { line = 0, character = 8 }, "utf-32") })
  -- Past the end of a line: the end of the line.
  H.eq({ 0, 13 }, { text.to_row_col(snap, { line = 0, character = 99 }, "utf-16") })
  -- Past the end of the document: the end of the document (after the final newline).
  H.eq({ 1, 0 }, { text.to_row_col(snap, { line = 7, character = 3 }, "utf-16") })
  snap.eol = false
  H.eq({ 0, 13 }, { text.to_row_col(snap, { line = 7, character = 3 }, "utf-16") })
end)

H.test("an edit changes only its range; cursor and marks elsewhere stay put", function()
  local buf = scratch({ "one two three", "four five", "six" })
  api.nvim_set_current_buf(buf)
  api.nvim_win_set_cursor(0, { 3, 2 })
  api.nvim_buf_set_mark(buf, "m", 1, 8, {})
  local ns = api.nvim_create_namespace("test")
  local id = api.nvim_buf_set_extmark(buf, ns, 0, 10, {})
  text.apply_to_buffer(buf, { edit(1, 0, 1, 4, "FOUR\nand a half") }, "utf-8")
  H.eq({ "one two three", "FOUR", "and a half five", "six" }, H.lines(buf))
  H.eq({ 4, 2 }, api.nvim_win_get_cursor(0))
  H.eq({ 1, 8 }, api.nvim_buf_get_mark(buf, "m"))
  H.eq({ 0, 10 }, api.nvim_buf_get_extmark_by_id(buf, ns, id, {}))
end)

H.test("emoji and accents in utf-16 and utf-32", function()
  -- { encoding, where "x" starts, how long "✓" is }
  for _, case in ipairs({ { "utf-16", 9, 1 }, { "utf-32", 8, 1 }, { "utf-8", 12, 3 } }) do
    local buf = scratch({ "héllo 👋 x", "zweite ✓" })
    local enc, x, check = case[1], case[2], case[3]
    text.apply_to_buffer(
      buf,
      { edit(0, x, 0, x + 1, "🎉"), edit(1, 7, 1, 7 + check, "✔") },
      enc
    )
    H.eq({ "héllo 👋 🎉", "zweite ✔" }, H.lines(buf), enc)
  end
end)

H.test("dos buffers take edits whose text has CRLF line endings", function()
  local buf = scratch({ "one", "two", "three" }, { fileformat = "dos" })
  local snap = text.snapshot(buf)
  H.eq("one\r\ntwo\r\nthree\r\n", text.to_text(snap))
  local edits = { edit(1, 0, 2, 0, "TWO\r\nand more\r\n") }
  local predicted = text.apply_to_text(snap, edits, "utf-8")
  text.apply_to_buffer(buf, edits, "utf-8")
  H.eq({ "one", "TWO", "and more", "three" }, H.lines(buf))
  H.eq(predicted, text.to_text(text.snapshot(buf)))
end)

H.test("edits at and across the final line ending", function()
  local cases = {
    -- { lines, eol, edit, predicted text, buffer text when it differs }
    { { "a", "b" }, true, edit(2, 0, 2, 0, "c\n"), "a\nb\nc\n" },
    { { "a", "b" }, true, edit(1, 0, 2, 0, ""), "a\n" },
    { { "a", "b" }, true, edit(1, 0, 2, 0, "x\ny\n"), "a\nx\ny\n" },
    { { "a", "b" }, false, edit(1, 1, 1, 1, "\n"), "a\nb\n" },
    { { "a", "b" }, false, edit(5, 0, 5, 0, "!"), "a\nb!" },
    { { "" }, true, edit(0, 0, 0, 0, "x\n"), "x\n\n" },
    -- Removing the final line ending: the buffer keeps 'eol' (see apply_to_buffer).
    { { "a", "b" }, true, edit(2, 0, 2, 0, "c"), "a\nb\nc", "a\nb\nc\n" },
    { { "a", "b" }, true, edit(0, 0, 2, 0, ""), "", "\n" },
    { { "a", "b" }, true, edit(1, 1, 2, 0, ""), "a\nb", "a\nb\n" },
  }
  for i, case in ipairs(cases) do
    local buf = scratch(case[1], { eol = case[2] })
    local predicted = text.apply_to_text(text.snapshot(buf), { case[3] }, "utf-8")
    H.eq(case[4], predicted, "prediction of case " .. i)
    text.apply_to_buffer(buf, { case[3] }, "utf-8")
    H.eq(case[5] or case[4], text.to_text(text.snapshot(buf)), "buffer of case " .. i)
    H.eq(case[2], vim.bo[buf].eol, "'eol' of case " .. i)
  end
end)

H.test("an empty base text is replaced without a stray empty line", function()
  local buf = scratch({ "" })
  text.replace_empty_buffer(buf, "fn main() {}\n")
  H.eq({ "fn main() {}" }, H.lines(buf))
  H.eq(true, vim.bo[buf].eol)
  text.replace_empty_buffer(buf, "a\nb")
  H.eq({ "a", "b" }, H.lines(buf))
end)

--- 1 to `max_count` lines of 0 to 2 times `unit`.
---@param max_count integer
---@param unit string
---@return string[]
local function random_lines(max_count, unit)
  local lines = {}
  for i = 1, math.random(1, max_count) do
    lines[i] = string.rep(unit, math.random(0, 2))
  end
  return lines
end

--- 0 to 3 random items of `alphabet`, joined.
---@param alphabet string[]
---@return string
local function random_text(alphabet)
  local new_text = ""
  for _ = 1, math.random(0, 3) do
    new_text = new_text .. alphabet[math.random(#alphabet)]
  end
  return new_text
end

H.test("random edits: the buffer always matches the prediction", function()
  math.randomseed(42)
  local alphabet = { "a", "b", "\n", "xy", "" }
  for round = 1, 300 do
    local lines = random_lines(5, "abc")
    local eol = math.random() < 0.7
    local buf = scratch(lines, { eol = eol, fileformat = math.random() < 0.3 and "dos" or "unix" })
    local snap = text.snapshot(buf)
    -- Disjoint edits: sorted random offsets into the text, paired up.
    local full = text.to_text(snap)
    local points = {}
    for _ = 1, math.random(1, 3) * 2 do
      table.insert(points, math.random(0, #full))
    end
    table.sort(points)
    local function position(offset)
      local line, col = 0, 0
      local i = 1
      while i <= offset do
        local c = full:sub(i, i)
        if c == "\r" and full:sub(i + 1, i + 1) == "\n" then
          if i + 1 <= offset then
            line, col = line + 1, 0
            i = i + 2
          else
            break -- inside a CRLF pair: stay before it
          end
        elseif c == "\n" or c == "\r" then
          line, col = line + 1, 0
          i = i + 1
        else
          col = col + 1
          i = i + 1
        end
      end
      return { line = line, character = col }
    end
    local edits = {}
    for p = 1, #points, 2 do
      local new_text = random_text(alphabet)
      new_text = snap.line_ending == "\r\n" and new_text:gsub("\n", "\r\n") or new_text
      table.insert(edits, {
        range = { start = position(points[p]), ["end"] = position(points[p + 1]) },
        newText = new_text,
      })
    end
    local predicted = text.apply_to_text(snap, edits, "utf-16")
    text.apply_to_buffer(buf, edits, "utf-16")
    local actual = text.to_text(text.snapshot(buf))
    -- The one allowed difference: a removed final line ending stays.
    local kept_eol = eol and predicted .. snap.line_ending == actual
    if predicted ~= actual and not kept_eol then
      error(
        string.format(
          "round %d: %s eol=%s edits=%s\npredicted %q\nactual    %q",
          round,
          vim.inspect(lines),
          tostring(eol),
          vim.inspect(edits),
          predicted,
          actual
        )
      )
    end
    api.nvim_buf_delete(buf, { force = true })
  end
end)

H.test("line changes give the lines of the whole predicted text", function()
  local proposal = require("verbatim.proposal")
  math.randomseed(7)
  local alphabet = { "a", "b", "\n", "\r", "\r\n", "xy", "" }
  for round = 1, 400 do
    local lines = random_lines(8, "ab")
    local eol = math.random() < 0.7
    if not eol and lines[#lines] == "" then
      -- Lines { "a", "" } without 'eol' are the text "a\n", as { "a" } with
      -- it: the whole text's lines cannot tell which, the buffer's can.
      lines[#lines] = "z"
    end
    local fileformat = ({ "unix", "dos", "mac" })[math.random(3)]
    local buf = scratch(lines, { eol = eol, fileformat = fileformat })
    local full_snapshot = { lines = lines, eol = eol, line_ending = text.snapshot(buf).line_ending }
    local edits = {}
    local row = 0
    -- Disjoint edits in order, some on neighbouring lines, some at the end.
    while #edits < 3 and row <= #lines do
      local start_row = row + math.random(0, 2)
      local end_row = start_row + math.random(0, 1)
      local start_col = math.random(0, 3)
      local end_col = end_row > start_row and math.random(0, 3) or start_col + math.random(0, 2)
      local new_text = random_text(alphabet)
      table.insert(edits, edit(start_row, start_col, end_row, end_col, new_text))
      row = end_row + 1
    end
    -- What the whole text becomes, as lines.
    local predicted = text.split_lines(text.apply_to_text(full_snapshot, edits, "utf-8"))
    if predicted[#predicted] == "" then
      table.remove(predicted)
    end
    -- What the changes make of the buffer's lines, read on demand.
    local changes = text.line_changes(text.snapshot(buf), edits, "utf-8")
    local rebuilt = vim.list_slice(lines)
    for c = #changes, 1, -1 do
      local change = changes[c]
      for _ = 1, #change.before do
        table.remove(rebuilt, change.first + 1)
      end
      for k, line in ipairs(change.after) do
        table.insert(rebuilt, change.first + k, line)
      end
    end
    local what = string.format(
      "round %d: %s %s eol=%s edits=%s",
      round,
      vim.inspect(lines),
      fileformat,
      eol,
      vim.inspect(edits)
    )
    H.eq(predicted, rebuilt, what)
    -- The hunks turn the current lines into the predicted ones, and the
    -- review has every line they show.
    local doc = {}
    proposal.diff_changes(doc, text.snapshot(buf), changes)
    local from_hunks = vim.list_slice(lines)
    for h = #doc.hunks, 1, -1 do
      local hunk = doc.hunks[h]
      local at = hunk.count_a == 0 and hunk.start_a or hunk.start_a - 1
      for j = 1, hunk.count_a do
        H.eq(lines[hunk.start_a + j - 1], doc.before_lines[hunk.start_a + j - 1], what)
        table.remove(from_hunks, at + 1)
      end
      for j = 1, hunk.count_b do
        table.insert(from_hunks, at + j, doc.after_lines[hunk.start_b + j - 1])
      end
    end
    H.eq(predicted, from_hunks, "hunks of " .. what)
    H.eq(#lines, doc.line_count, what)
    api.nvim_buf_delete(buf, { force = true })
  end
end)

-- Complexity guards: 20 times the lines may cost up to 40 times as much
-- (linear work costs 20 times, quadratic 400 times). Ratios, not timings, so
-- that a slow machine passes.
--
-- A whole-text function on 20,000 lines allocates 20 times the memory, and
-- fresh memory costs more per byte than memory just freed (the large strings
-- and tables come straight from the system: page faults). So that this does
-- not pass for superlinear work, the 1,000-line side runs on 20 different
-- texts, keeps every result, and counts a twentieth of its time.

local PIECES = 20

---@param count integer
---@param tag? string
---@return string[]
local function numbered_lines(count, tag)
  local lines = {}
  for n = 1, count do
    lines[n] =
      string.format("line %s%06d: local value = compute(alpha, beta) -- ✓ 👋", tag or "", n)
  end
  return lines
end

--- A measure for H.cost_ratio: the time of `fn` on each of `inputs`, divided
--- by their number.
---@param inputs any[]
---@param fn fun(input: any): any
---@return fun(): number
local function per_input(inputs, fn)
  return function()
    -- Kept, so that the time includes holding every result, as a caller would.
    local results = {} -- luacheck: no unused
    local started = vim.uv.hrtime()
    for k, input in ipairs(inputs) do
      results[k] = fn(input)
    end
    return (vim.uv.hrtime() - started) / #inputs
  end
end

---@param make fun(tag: string): any
---@return any[]
local function pieces(make)
  local inputs = {}
  for k = 1, PIECES do
    inputs[k] = make(k .. ":")
  end
  return inputs
end

H.test("split_lines is linear in the text", function()
  for name, ending in pairs({ LF = "\n", CRLF = "\r\n" }) do
    local function text_of(count, tag)
      return table.concat(numbered_lines(count, tag), ending) .. ending
    end
    local small = pieces(function(tag)
      return text_of(1000, tag)
    end)
    local large = text_of(20000)
    H.eq(20001, #text.split_lines(large))
    H.assert_cost_ratio(
      "split_lines (" .. name .. "), 1,000 vs 20,000 lines",
      40,
      per_input(small, text.split_lines),
      per_input({ large }, text.split_lines)
    )
  end
end)

H.test("position conversion and edits are linear in the text, and constant on a buffer", function()
  --- An edit on the last line but one, in utf-16 (the emoji, after "✓ ").
  ---@param count integer
  local function edit_near_end(count)
    return { edit(count - 2, 53, count - 2, 55, "🎉\nnew line") }
  end
  local large_lines = numbered_lines(20000)
  local small_buf, large_buf = scratch(numbered_lines(1000)), scratch(large_lines)
  H.eq(
    { 998, 55 },
    { text.to_row_col(text.snapshot(small_buf), { line = 998, character = 53 }, "utf-16") }
  )
  local function positions(buf, count)
    return function()
      for _ = 1, 100 do
        text.to_row_col(text.snapshot(buf), { line = count - 2, character = 53 }, "utf-16")
      end
    end
  end
  H.assert_cost_ratio(
    "to_row_col on a buffer, 1,000 vs 20,000 lines",
    40,
    positions(small_buf, 1000),
    positions(large_buf, 20000)
  )

  -- Short lines: the 20,000-line text (about 120 kB) stays below the size
  -- from which LuaJIT takes every allocation straight from the system.
  local function short_lines(count, tag)
    local lines = {}
    for n = 1, count do
      lines[n] = string.format("%s%d", tag or "", n)
    end
    return lines
  end
  -- One edit every 50 lines: the old conversion of positions to offsets
  -- counted from the first line for every edit, quadratic in this case.
  local function spread_edits(count)
    local edits = {}
    for row = 10, count - 1, 50 do
      table.insert(edits, edit(row, 1, row, 2, "x\ny"))
    end
    return edits
  end
  local small = pieces(function(tag)
    return { lines = short_lines(1000, tag), eol = true, line_ending = "\n" }
  end)
  local large = { lines = short_lines(20000), eol = true, line_ending = "\n" }
  H.eq(
    "1\n2\n",
    text
      .apply_to_text({ lines = short_lines(3), eol = true, line_ending = "\n" }, {}, "utf-8")
      :sub(1, 4)
  )
  H.assert_cost_ratio(
    "apply_to_text, 1,000 vs 20,000 lines",
    40,
    per_input(small, function(snapshot)
      return text.apply_to_text(snapshot, spread_edits(1000), "utf-16")
    end),
    per_input({ large }, function(snapshot)
      return text.apply_to_text(snapshot, spread_edits(20000), "utf-16")
    end)
  )

  local function changes(buf, count)
    return function()
      for _ = 1, 100 do
        text.line_changes(text.snapshot(buf), edit_near_end(count), "utf-16")
      end
    end
  end
  H.eq({
    {
      first = 19998,
      before = { large_lines[19999] },
      after = { large_lines[19999]:sub(1, 55) .. "🎉", "new line" },
    },
  }, text.line_changes(text.snapshot(large_buf), edit_near_end(20000), "utf-16"))
  H.assert_cost_ratio(
    "line_changes on a buffer, 1,000 vs 20,000 lines",
    40,
    changes(small_buf, 1000),
    changes(large_buf, 20000)
  )
end)
