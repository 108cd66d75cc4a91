---@brief
--- Messages that arrive on their own (an agent's edit, a change on disk), not
--- in answer to a command. The person may be typing in a terminal window
--- then (Claude Code runs in one): there, a message longer than the screen
--- line brings Neovim's "Press ENTER" prompt, which takes the next key they
--- type to the program in the terminal. So in a terminal window a message is
--- shortened to one screen line.

local api = vim.api

local M = {}

--- Whether the current window shows a terminal.
---@return boolean
function M.in_terminal()
  return vim.bo[api.nvim_get_current_buf()].buftype == "terminal"
end

--- `text` cut to `width` display cells, ending in "…" when cut.
---@param text string
---@param width integer
---@return string
function M.shorten(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  local chars = vim.fn.strchars(text)
  local cut = math.min(chars, math.max(width - 1, 0))
  while cut > 0 and vim.fn.strdisplaywidth(vim.fn.strcharpart(text, 0, cut)) > width - 1 do
    cut = cut - 1
  end
  return vim.fn.strcharpart(text, 0, cut) .. "…"
end

--- vim.notify, on one screen line while the person is in a terminal window.
--- `tail` (how to act on the message) is kept whole; `msg` is shortened.
---@param msg string
---@param level integer
---@param tail? string
function M.notify(msg, level, tail)
  tail = tail or ""
  if M.in_terminal() then
    local first_line = msg:match("^[^\n]*")
    local room = math.max(10, vim.v.echospace - 1 - vim.fn.strdisplaywidth(tail))
    msg = M.shorten(first_line, room)
  end
  vim.notify(msg .. tail, level)
end

return M
