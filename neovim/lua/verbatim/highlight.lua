---@brief
--- Highlighting for the review window, on top of its `filetype=diff`: the
--- code of each change in the file's own language (Tree-sitter, when Neovim
--- has a parser for it) and, for a changed line paired with its new version,
--- the words that differ (as gitsigns' hunk preview does).

local M = {}

--- Splits a line into words, runs of blanks, and single other characters.
---@param line string
---@return string[]
local function tokens(line)
  local result = {}
  local pos = 1
  while pos <= #line do
    local _, last = line:find("^[%w_]+", pos)
    if not last then
      _, last = line:find("^%s+", pos)
    end
    if not last then
      -- One character, counting a UTF-8 sequence as one.
      _, last = line:find("^[%z\1-\127\194-\244][\128-\191]*", pos)
    end
    last = last or pos
    table.insert(result, line:sub(pos, last))
    pos = last + 1
  end
  return result
end

---@param list string[]
---@return integer[] offsets byte offset (0-based) of each token, and one past the last
local function offsets(list)
  local result, at = {}, 0
  for i, token in ipairs(list) do
    result[i] = at
    at = at + #token
  end
  result[#list + 1] = at
  return result
end

--- The byte ranges (0-based, end exclusive) that differ between a line and
--- its new version, word by word.
---@param old string
---@param new string
---@return integer[][] old_ranges { start, end } in `old`
---@return integer[][] new_ranges { start, end } in `new`
function M.word_changes(old, new)
  local a, b = tokens(old), tokens(new)
  local at_a, at_b = offsets(a), offsets(b)
  local text_a = #a > 0 and (table.concat(a, "\n") .. "\n") or ""
  local text_b = #b > 0 and (table.concat(b, "\n") .. "\n") or ""
  local old_ranges, new_ranges = {}, {}
  local hunks = vim.diff(text_a, text_b, { result_type = "indices", algorithm = "histogram" })
  ---@cast hunks integer[][]
  for _, h in ipairs(hunks) do
    local start_a, count_a, start_b, count_b = h[1], h[2], h[3], h[4]
    if count_a > 0 then
      table.insert(old_ranges, { at_a[start_a], at_a[start_a + count_a] })
    end
    if count_b > 0 then
      table.insert(new_ranges, { at_b[start_b], at_b[start_b + count_b] })
    end
  end
  return old_ranges, new_ranges
end

--- The Tree-sitter language of a file, when Neovim can parse it.
---@param path string
---@param bufnr integer|nil the file's buffer, whose 'filetype' is used when loaded
---@return string|nil
function M.language(path, bufnr)
  local filetype
  if bufnr and vim.api.nvim_buf_is_loaded(bufnr) then
    filetype = vim.bo[bufnr].filetype
  end
  if not filetype or filetype == "" then
    filetype = vim.filetype.match({ filename = path })
  end
  if not filetype then
    return nil
  end
  local lang = vim.treesitter.language.get_lang(filetype) or filetype
  local ok, added = pcall(vim.treesitter.language.add, lang)
  if not ok or not added then
    return nil
  end
  local has_query, query = pcall(vim.treesitter.query.get, lang, "highlights")
  return (has_query and query) and lang or nil
end

---@class verbatim.CodeSpan
---@field line integer index into the lines given (1-based)
---@field first integer byte column (0-based)
---@field last integer byte column, exclusive
---@field hl string highlight group

--- The Tree-sitter highlight captures of some lines of code, cut at line
--- ends. Returns nothing when the text cannot be parsed.
---@param lines string[]
---@param lang string
---@return verbatim.CodeSpan[]
function M.code_spans(lines, lang)
  local text = table.concat(lines, "\n")
  local ok, spans = pcall(function()
    local query = assert(vim.treesitter.query.get(lang, "highlights"))
    local parser = vim.treesitter.get_string_parser(text, lang)
    local tree = parser:parse()[1]
    local result = {}
    for id, node in query:iter_captures(tree:root(), text, 0, -1) do
      local name = query.captures[id]
      if not name:match("^_") and name ~= "spell" and name ~= "nospell" then
        local start_row, start_col, end_row, end_col = node:range()
        for row = start_row, end_row do
          local line = lines[row + 1] or ""
          local first = row == start_row and start_col or 0
          local last = row == end_row and end_col or #line
          if last > first then
            table.insert(result, {
              line = row + 1,
              first = first,
              last = last,
              hl = "@" .. name .. "." .. lang,
            })
          end
        end
      end
    end
    return result
  end)
  return ok and spans or {}
end

return M
