---@brief
--- What the two review UIs do with a pending edit's hunks, written once: the
--- review window (review.lua, a unified diff in a buffer of its own) and the
--- inline review (inline.lua, marks in the document's own window). As in
--- gitsigns, where `hunks.lua` knows where hunks are and `actions.lua` what
--- the person does with them, each UI knows where its hunks are on screen and
--- calls here to act on them: accept (telling the person when the edit did
--- not apply), ask the reason for the agent, leave hunks out, move from hunk
--- to hunk, take the lines of a Visual selection, say the keys, and set up
--- its highlight groups and its following of the queue.

local api = vim.api
local queue = require("verbatim.queue")

local M = {}

--- Who asks, for a change made on disk (`proposal.origin == "disk"`): no
--- agent is behind it.
M.DISK_CHANGE = "a change made on disk outside Neovim, merged with your unsaved changes"

--- Accepts a pending edit without the hunks left out (`item.skipped`);
--- `reason` (why they were left out) goes back to the agent. Tells the
--- person when the edit did not apply, or applies later.
---@param item verbatim.PendingEdit
---@param reason? string
---@return boolean applied
---@return string|nil reason
---@return boolean|nil later the buffer changed: it applies when the server offers it again
function M.accept(item, reason)
  local applied, failure, later = queue.accept(item, reason)
  if later then
    vim.notify("verbatim: accepted " .. item.proposal.label .. "; " .. failure, vim.log.levels.INFO)
  elseif not applied and failure then
    vim.notify("verbatim: not applied: " .. failure, vim.log.levels.WARN)
  end
  return applied, failure, later
end

--- Asks for the reason to give the agent (optional: an empty answer is
--- none); `on_reason` is called with it, unless the person cancels the
--- prompt, which decides nothing.
---@param on_reason fun(reason: string)
function M.ask_reason(on_reason)
  vim.ui.input({ prompt = "Reason for the agent (optional): " }, function(reason)
    if reason ~= nil then
      on_reason(reason)
    end
  end)
end

--- Leaves hunk `hunk` of document `doc` out of an edit (or takes it back,
--- `left_out` false), in a table shaped as `item.skipped`, which
--- `:Verbatim accept`, the review window and the inline review all read.
---@param skipped table<integer, table<integer, boolean>>
---@param doc integer
---@param hunk integer
---@param left_out boolean
function M.leave_out(skipped, doc, hunk, left_out)
  skipped[doc] = skipped[doc] or {}
  skipped[doc][hunk] = left_out or nil
end

--- The row `count` hunks down ("next") or up ("prev") from `row`, given
--- each hunk's first row, top to bottom; it stops at the last hunk, as `]c`
--- does in diff mode. Nil when no hunk is that way.
---@param firsts integer[] sorted
---@param row integer
---@param direction "next"|"prev"
---@param count? integer
---@return integer|nil
function M.step(firsts, row, direction, count)
  local target
  for _ = 1, count or 1 do
    local found
    if direction == "next" then
      for _, first in ipairs(firsts) do
        if first > row then
          found = first
          break
        end
      end
    else
      for k = #firsts, 1, -1 do
        if firsts[k] < row then
          found = firsts[k]
          break
        end
      end
    end
    if not found then
      break
    end
    row, target = found, found
  end
  return target
end

--- The lines of the Visual selection (1-based, the first the smaller), once
--- Visual mode is left.
---@return integer first
---@return integer last
function M.visual_lines()
  local first, last = vim.fn.line("v"), vim.fn.line(".")
  vim.cmd("normal! \27")
  return math.min(first, last), math.max(first, last)
end

--- "key what" for each entry whose key is set (a key set to false in the
--- options has no entry).
---@param entries { [1]: string|false|nil, [2]: string }[] the key and what it does
---@param show? fun(lhs: string): string how a key is written (default: as it is)
---@return string[]
function M.key_help(entries, show)
  local help = {}
  for _, entry in ipairs(entries) do
    if entry[1] then
      table.insert(help, (show and show(entry[1]) or entry[1]) .. " " .. entry[2])
    end
  end
  return help
end

--- Links highlight groups by default (a colour scheme may set them).
---@param links table<string, string> group -> the group it links to
function M.link_highlights(links)
  for name, link in pairs(links) do
    api.nvim_set_hl(0, name, { link = link, default = true })
  end
end

--- The review UIs that follow the queue already, by augroup.
local following = {} ---@type table<string, true>

---@class verbatim.ReviewUi
---@field group string its augroup (replaced at each setup)
---@field desc string what its ColorScheme autocommand does
---@field define_highlights fun() creates its highlight groups
---@field refresh fun() draws it again after the queue changed

--- Sets up one review UI: creates its highlight groups (again after a
--- colour scheme loads) and has it drawn again whenever the queue changes.
--- Called from `require("verbatim").setup()`; calling it again is harmless.
---@param ui verbatim.ReviewUi
function M.setup_ui(ui)
  ui.define_highlights()
  api.nvim_create_autocmd("ColorScheme", {
    group = api.nvim_create_augroup(ui.group, { clear = true }),
    desc = ui.desc,
    callback = ui.define_highlights,
  })
  if not following[ui.group] then
    following[ui.group] = true
    queue.on_change(ui.refresh)
  end
end

return M
