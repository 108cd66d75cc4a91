-- Defines :Verbatim; everything else loads on first use.
if vim.g.loaded_verbatim then
  return
end
vim.g.loaded_verbatim = true

vim.api.nvim_create_user_command("Verbatim", function(args)
  require("verbatim.commands").run(args)
end, {
  nargs = "*",
  desc = "Verbatim: status, review, log, accept, reject, timeline",
  complete = function(arg_lead, line)
    return require("verbatim.commands").complete(arg_lead, line)
  end,
})

vim.api.nvim_create_user_command("VerbatimCompareDisk", function()
  require("verbatim.external").compare()
end, { desc = "Verbatim: compare the buffer with the file on disk (diff mode)" })

vim.api.nvim_create_user_command("VerbatimMention", function(args)
  require("verbatim.claude_code").mention(args)
end, {
  range = true,
  desc = "Verbatim: put this file (or the lines of the range) into Claude Code's prompt",
})
