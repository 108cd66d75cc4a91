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
---@field lines string[] the buffer's lines
---@field eol boolean whether the text ends with a line ending
---@field line_ending string "\n", "\r\n" or "\r"

---@param bufnr integer
---@return verbatim.Snapshot
function M.snapshot(bufnr)
  return {
    lines = api.nvim_buf_get_lines(bufnr, 0, -1, true),
    eol = vim.bo[bufnr].eol,
    line_ending = LINE_ENDINGS[vim.bo[bufnr].fileformat] or "\n",
  }
end

--- The text the server sees for a snapshot.
---@param snapshot verbatim.Snapshot
---@return string
function M.to_text(snapshot)
  local text = table.concat(snapshot.lines, snapshot.line_ending)
  if snapshot.eol then
    text = text .. snapshot.line_ending
  end
  return text
end

--- Splits text at every LSP line ending (`\r\n`, `\n`, `\r`). The result has
--- one more item than the text has line endings.
---@param text string
---@return string[]
function M.split_lines(text)
  local lines = {}
  local start = 1
  while true do
    local s, e = text:find("\r\n?", start)
    local n = text:find("\n", start, true)
    if n and (not s or n < s) then
      s, e = n, n
    end
    if not s then
      table.insert(lines, text:sub(start))
      return lines
    end
    table.insert(lines, text:sub(start, s - 1))
    start = e + 1
  end
end

--- Converts an LSP position to a 0-based (row, byte column) of the snapshot.
--- Row `#lines` is the virtual line after a final line ending (column 0).
--- Positions past the end of a line clamp to its end; lines past the end of
--- the document clamp to the end of the document.
---@param snapshot verbatim.Snapshot
---@param position lsp.Position
---@param encoding string "utf-8", "utf-16" or "utf-32"
---@return integer row
---@return integer col
function M.to_row_col(snapshot, position, encoding)
  local count = #snapshot.lines
  local line, character = position.line, position.character
  if line >= count then
    if snapshot.eol then
      return count, 0
    end
    return count - 1, #snapshot.lines[count]
  end
  local text = snapshot.lines[line + 1]
  if character <= 0 then
    return line, 0
  end
  return line, vim.str_byteindex(text, encoding, character, false)
end

--- The byte offset (0-based) of a row and column in `M.to_text(snapshot)`.
---@param snapshot verbatim.Snapshot
---@param row integer
---@param col integer
---@return integer
local function to_offset(snapshot, row, col)
  local offset = 0
  local ending = #snapshot.line_ending
  for i = 1, row do
    offset = offset + #snapshot.lines[i] + ending
  end
  return offset + col
end

---@class verbatim.ResolvedEdit
---@field start_row integer
---@field start_col integer
---@field end_row integer
---@field end_col integer
---@field new_text string

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

--- Applies text edits to a copy of the snapshot's text.
---@param snapshot verbatim.Snapshot
---@param edits lsp.TextEdit[]
---@param encoding string
---@return string
function M.apply_to_text(snapshot, edits, encoding)
  local text = M.to_text(snapshot)
  for _, edit in ipairs(M.resolve(snapshot, edits, encoding)) do
    local first = to_offset(snapshot, edit.start_row, edit.start_col)
    local last = to_offset(snapshot, edit.end_row, edit.end_col)
    text = text:sub(1, first) .. edit.new_text .. text:sub(last + 1)
  end
  return text
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
