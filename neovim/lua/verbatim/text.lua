---@brief
--- Documents as the server sees them, and LSP text edits applied to them.
---
--- Neovim reports a buffer to language servers as its lines joined by the
--- 'fileformat' line ending, plus one more line ending when 'eol' is set
--- (vim.lsp._buf_get_full_text). LSP positions therefore address the buffer
--- lines, plus one empty "virtual" line after the final line ending. This
--- module converts positions with an explicit position encoding, clamps them
--- as the LSP specification says, and applies edits either to a copy of the
--- text (for the review) or to the buffer itself with nvim_buf_set_text, so
--- that cursors, marks and folds outside the changed text stay put.

local api = vim.api

local M = {}

local LINE_ENDINGS = { unix = "\n", dos = "\r\n", mac = "\r" }

---@class verbatim.Snapshot
---@field lines string[] the lines (1-based); for a snapshot of a buffer, only those read so far
---@field line_count? integer the number of lines (default: `#lines`)
---@field bufnr? integer the buffer the missing lines are read from, on demand
---@field eol boolean whether the text ends with a line ending
---@field line_ending string "\n", "\r\n" or "\r"

--- A snapshot of a buffer that reads lines only when they are asked for, so
--- that work on an edit stays proportional to the lines it touches. It is
--- valid until the buffer changes: use it without yielding.
---@param bufnr integer
---@return verbatim.Snapshot
function M.snapshot(bufnr)
  return {
    lines = {},
    line_count = api.nvim_buf_line_count(bufnr),
    bufnr = bufnr,
    eol = vim.bo[bufnr].eol,
    line_ending = LINE_ENDINGS[vim.bo[bufnr].fileformat] or "\n",
  }
end

---@param snapshot verbatim.Snapshot
---@return integer
function M.line_count(snapshot)
  return snapshot.line_count or #snapshot.lines
end

--- Lines `first` to `last` - 1 (0-based, end exclusive) of a snapshot, read
--- from its buffer with one call when they are not known yet.
---@param snapshot verbatim.Snapshot
---@param first integer
---@param last integer
---@return string[]
function M.get_lines(snapshot, first, last)
  local lines = snapshot.lines
  local result = {}
  for row = first, last - 1 do
    local line = lines[row + 1]
    if line == nil then
      -- Read the rest of the range at once.
      local fetched = api.nvim_buf_get_lines(snapshot.bufnr, row, last, true)
      for k, fetched_line in ipairs(fetched) do
        lines[row + k] = fetched_line
        result[row - first + k] = fetched_line
      end
      return result
    end
    result[row - first + 1] = line
  end
  return result
end

--- Line `row` (0-based) of a snapshot.
---@param snapshot verbatim.Snapshot
---@param row integer
---@return string
local function get_line(snapshot, row)
  return snapshot.lines[row + 1] or M.get_lines(snapshot, row, row + 1)[1]
end

--- The text the server sees for a snapshot.
---@param snapshot verbatim.Snapshot
---@return string
function M.to_text(snapshot)
  local lines = snapshot.bufnr and M.get_lines(snapshot, 0, M.line_count(snapshot))
    or snapshot.lines
  local text = table.concat(lines, snapshot.line_ending)
  if snapshot.eol then
    text = text .. snapshot.line_ending
  end
  return text
end

--- Splits text at every LSP line ending (`\r\n`, `\n`, `\r`). The result has
--- one more item than the text has line endings. Linear in the text: no
--- search goes over a byte twice (a search for "\r\n?" from each line start
--- used to scan to the end of a text without "\r", once per line).
---@param text string
---@return string[]
function M.split_lines(text)
  local lines = {}
  local count = 0
  local start = 1
  -- The next "\r" and "\n" at or after `start`, each found by a plain
  -- search that resumes only once `start` has passed it.
  local cr = text:find("\r", 1, true)
  local lf = text:find("\n", 1, true)
  while true do
    local s = cr and lf and math.min(cr, lf) or cr or lf
    count = count + 1
    if not s then
      lines[count] = text:sub(start)
      return lines
    end
    lines[count] = text:sub(start, s - 1)
    start = (s == cr and lf == s + 1) and s + 2 or s + 1
    if cr and cr < start then
      cr = text:find("\r", start, true)
    end
    if lf and lf < start then
      lf = text:find("\n", start, true)
    end
  end
end

--- Converts an LSP position to a 0-based (row, byte column) of the snapshot.
--- Row `line_count` is the virtual line after a final line ending (column 0).
--- Positions past the end of a line clamp to its end; lines past the end of
--- the document clamp to the end of the document.
---@param snapshot verbatim.Snapshot
---@param position lsp.Position
---@param encoding string "utf-8", "utf-16" or "utf-32"
---@return integer row
---@return integer col
function M.to_row_col(snapshot, position, encoding)
  local count = M.line_count(snapshot)
  local line, character = position.line, position.character
  if line >= count then
    if snapshot.eol then
      return count, 0
    end
    return count - 1, #get_line(snapshot, count - 1)
  end
  if character <= 0 then
    return line, 0
  end
  return line, vim.str_byteindex(get_line(snapshot, line), encoding, character, false)
end

--- Converts a 0-based (row, byte column) of the snapshot to an LSP position
--- in `encoding`; a column past the end of its line clamps to the end. Reads
--- only that line.
---@param snapshot verbatim.Snapshot
---@param row integer
---@param col integer
---@param encoding string "utf-8", "utf-16" or "utf-32"
---@return lsp.Position
function M.to_position(snapshot, row, col, encoding)
  local line = get_line(snapshot, row)
  col = math.max(0, math.min(col, #line))
  return { line = row, character = vim.str_utfindex(line, encoding, col, false) }
end

---@class verbatim.ResolvedEdit
---@field start_row integer
---@field start_col integer
---@field end_row integer
---@field end_col integer
---@field new_text string
---@field index integer the edit's place in the list it came from

--- Resolves LSP text edits against a snapshot, sorted from the last to the
--- first so that applying them in order never moves a later one.
---@param snapshot verbatim.Snapshot
---@param edits lsp.TextEdit[]
---@param encoding string
---@return verbatim.ResolvedEdit[]
function M.resolve(snapshot, edits, encoding)
  local resolved = {}
  for index, edit in ipairs(edits) do
    local sr, sc = M.to_row_col(snapshot, edit.range.start, encoding)
    local er, ec = M.to_row_col(snapshot, edit.range["end"], encoding)
    if er < sr or (er == sr and ec < sc) then
      sr, sc, er, ec = er, ec, sr, sc
    end
    table.insert(resolved, {
      start_row = sr,
      start_col = sc,
      end_row = er,
      end_col = ec,
      new_text = edit.newText,
      index = index,
    })
  end
  table.sort(resolved, function(a, b)
    if a.start_row ~= b.start_row then
      return a.start_row > b.start_row
    end
    if a.start_col ~= b.start_col then
      return a.start_col > b.start_col
    end
    return a.index > b.index
  end)
  return resolved
end

--- Applies resolved edits (last to first) to the text of rows `first` to
--- `last` of a snapshot, each row with its line ending (the last row of the
--- text has one only with 'eol'; row `line_count` is the empty virtual line).
--- Every edit must lie in those rows. Reads only those rows.
---@param snapshot verbatim.Snapshot
---@param first integer
---@param last integer
---@param resolved verbatim.ResolvedEdit[]
---@return string
local function apply_to_rows(snapshot, first, last, resolved)
  local count = M.line_count(snapshot)
  local ending = snapshot.line_ending
  local lines = M.get_lines(snapshot, first, math.min(last + 1, count))
  -- starts[row - first + 1]: the byte offset (0-based) of the row in the text.
  local starts = {}
  local offset = 0
  for k, line in ipairs(lines) do
    starts[k] = offset
    offset = offset + #line
    if first + k - 1 < count - 1 or snapshot.eol then
      offset = offset + #ending
    end
  end
  starts[#lines + 1] = offset -- the virtual line (or just past the text)
  local text = table.concat(lines, ending)
  if #lines > 0 and (first + #lines < count or snapshot.eol) then
    text = text .. ending
  end
  -- Edits in order from the first, as pieces of a new text: one copy of
  -- every unchanged byte, however many edits there are.
  local pieces = {}
  local done = 0 -- bytes of `text` consumed
  for k = #resolved, 1, -1 do
    local edit = resolved[k]
    local from = starts[edit.start_row - first + 1] + edit.start_col
    local to = starts[edit.end_row - first + 1] + edit.end_col
    table.insert(pieces, text:sub(done + 1, from))
    table.insert(pieces, edit.new_text)
    done = math.max(done, to)
  end
  table.insert(pieces, text:sub(done + 1))
  return table.concat(pieces)
end

---@class verbatim.EditGroup Edits on one block of neighbouring rows.
---@field first integer the first row (0-based)
---@field last integer the last row; `line_count` is the virtual line
---@field edits verbatim.ResolvedEdit[] last to first

--- Groups resolved edits (last to first) into blocks of rows that neither
--- overlap nor touch, in order from the first. `reach` more rows before an
--- edit belong to its block.
---@param resolved verbatim.ResolvedEdit[]
---@param reach integer
---@return verbatim.EditGroup[]
local function group_edits(resolved, reach)
  local groups = {}
  local k = #resolved
  while k >= 1 do
    local group = {
      first = math.max(0, resolved[k].start_row - reach),
      last = resolved[k].end_row,
      edits = { resolved[k] },
    }
    k = k - 1
    while k >= 1 and resolved[k].start_row - reach <= group.last + 1 do
      group.last = math.max(group.last, resolved[k].end_row)
      table.insert(group.edits, 1, resolved[k]) -- keeps last-to-first order
      k = k - 1
    end
    table.insert(groups, group)
  end
  return groups
end

--- Applies text edits to a copy of the snapshot's text.
---
--- The unchanged rows are joined straight from the snapshot's lines, with no
--- copy of them: on 20,000 lines a copied list of lines alone makes this
--- several times slower (large allocations are fresh memory from the system).
---@param snapshot verbatim.Snapshot
---@param edits lsp.TextEdit[]
---@param encoding string
---@return string
function M.apply_to_text(snapshot, edits, encoding)
  local count = M.line_count(snapshot)
  local ending = snapshot.line_ending
  local lines = snapshot.bufnr and M.get_lines(snapshot, 0, count) or snapshot.lines
  local pieces = {}
  local row = 0 -- the next row not in `pieces` yet
  for _, group in ipairs(group_edits(M.resolve(snapshot, edits, encoding), 0)) do
    if group.first > row then
      -- Rows followed by another one: each has its line ending.
      table.insert(pieces, table.concat(lines, ending, row + 1, group.first))
      table.insert(pieces, ending)
    end
    table.insert(pieces, apply_to_rows(snapshot, group.first, group.last, group.edits))
    row = group.last + 1
  end
  if row < count then
    table.insert(pieces, table.concat(lines, ending, row + 1, count))
    if snapshot.eol then
      table.insert(pieces, ending)
    end
  end
  return table.concat(pieces)
end

---@class verbatim.LineChange Lines of a snapshot and what the edits make of them.
---@field first integer the first line (0-based)
---@field before string[] lines `first` to `first + #before - 1`: every line an edit touches
---@field after string[] the lines that replace them

--- The edits as changes of whole lines, in order and never adjacent (edits on
--- neighbouring lines make one change). Reads and splits only the lines the
--- edits touch, so an edit costs the same in a file of any length.
---
--- Applying every change to the lines of the snapshot gives the lines of
--- `M.apply_to_text()` split by `M.split_lines()`, less the empty item after
--- a final line ending.
---@param snapshot verbatim.Snapshot
---@param edits lsp.TextEdit[]
---@param encoding string
---@return verbatim.LineChange[]
function M.line_changes(snapshot, edits, encoding)
  local count = M.line_count(snapshot)
  -- With "\r" line endings, text inserted at the start of a line can begin
  -- with "\n", which joins the line ending before it into one: the change
  -- then starts one line earlier, so that it holds both.
  local reach = snapshot.line_ending == "\r" and 1 or 0
  local changes = {}
  for _, group in ipairs(group_edits(M.resolve(snapshot, edits, encoding), reach)) do
    local after = M.split_lines(apply_to_rows(snapshot, group.first, group.last, group.edits))
    -- The rows' text ends with a line ending (or is the end of the text):
    -- the empty item after it is not a line.
    if after[#after] == "" then
      table.remove(after)
    end
    table.insert(changes, {
      first = group.first,
      before = M.get_lines(snapshot, group.first, math.min(group.last + 1, count)),
      after = after,
    })
  end
  return changes
end

--- Applies text edits to the buffer, touching only the replaced text.
---
--- An edit that reaches the virtual line after the final line ending replaces
--- that line ending too. 'eol' is never changed: Neovim's incremental sync
--- does not report it, so a buffer that lost it would disagree with what the
--- server sees (and 'fixeol' writes it back anyway). An edit that removes the
--- final line ending therefore leaves it in place; the server notices the
--- difference and tells the agent (`modifiedByEditor`).
---@param bufnr integer
---@param edits lsp.TextEdit[]
---@param encoding string
function M.apply_to_buffer(bufnr, edits, encoding)
  for _, edit in ipairs(M.resolve(M.snapshot(bufnr), edits, encoding)) do
    local count = api.nvim_buf_line_count(bufnr)
    local new_lines = M.split_lines(edit.new_text)
    if edit.end_row < count then
      api.nvim_buf_set_text(
        bufnr,
        edit.start_row,
        edit.start_col,
        edit.end_row,
        edit.end_col,
        new_lines
      )
    elseif edit.start_row == count then
      -- An insertion after the final line ending: whole new lines.
      if edit.new_text ~= "" then
        if new_lines[#new_lines] == "" then
          table.remove(new_lines)
        end
        api.nvim_buf_set_lines(bufnr, count, count, true, new_lines)
      end
    elseif edit.new_text == "" and edit.start_col == 0 then
      -- Whole lines deleted through the end: the text ends where the line
      -- before them ended, with its line ending.
      api.nvim_buf_set_lines(bufnr, edit.start_row, count, true, {})
    else
      -- Replaces the end of the text, final line ending included.
      if #new_lines > 1 and new_lines[#new_lines] == "" then
        table.remove(new_lines)
      end
      local last_line = api.nvim_buf_get_lines(bufnr, count - 1, count, true)[1]
      api.nvim_buf_set_text(bufnr, edit.start_row, edit.start_col, count - 1, #last_line, new_lines)
    end
  end
end

--- Replaces the whole text of a buffer whose server-side text is empty (a
--- file created by the edit, or an empty file on disk) by `text`.
---
--- Neovim reports an empty buffer as one line ending, not as an empty text;
--- replacing line by line keeps what the server sees and what a later `:write`
--- puts on disk equal to `text` (when it ends with a line ending, as 'fixeol'
--- makes every written file do).
---@param bufnr integer
---@param text string
function M.replace_empty_buffer(bufnr, text)
  local lines = M.split_lines(text)
  if #lines > 1 and lines[#lines] == "" then
    table.remove(lines)
  end
  api.nvim_buf_set_lines(bufnr, 0, -1, true, lines)
end

return M
