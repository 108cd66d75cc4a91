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
    text.apply_to_buffer(buf, { edit(0, x, 0, x + 1, "🎉"), edit(1, 7, 1, 7 + check, "✔") }, enc)
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

H.test("random edits: the buffer always matches the prediction", function()
  math.randomseed(42)
  local alphabet = { "a", "b", "\n", "xy", "" }
  for round = 1, 300 do
    local lines = {}
    for i = 1, math.random(1, 5) do
      lines[i] = string.rep("abc", math.random(0, 2))
    end
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
      local new_text = ""
      for _ = 1, math.random(0, 3) do
        new_text = new_text .. alphabet[math.random(#alphabet)]
      end
      new_text = snap.line_ending == "\r\n" and new_text:gsub("\n", "\r\n") or new_text
      table.insert(edits, { range = { start = position(points[p]), ["end"] = position(points[p + 1]) }, newText = new_text })
    end
    local predicted = text.apply_to_text(snap, edits, "utf-16")
    text.apply_to_buffer(buf, edits, "utf-16")
    local actual = text.to_text(text.snapshot(buf))
    -- The one allowed difference: a removed final line ending stays.
    local kept_eol = eol and predicted .. snap.line_ending == actual
    if predicted ~= actual and not kept_eol then
      error(string.format(
        "round %d: %s eol=%s edits=%s\npredicted %q\nactual    %q",
        round, vim.inspect(lines), tostring(eol), vim.inspect(edits), predicted, actual
      ))
    end
    api.nvim_buf_delete(buf, { force = true })
  end
end)
