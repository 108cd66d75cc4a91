-- The init file of every test Neovim: the plugin from this checkout and
-- nothing else (run.sh points the XDG directories at a fresh temp tree).
local tests = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
local plugin = vim.fn.fnamemodify(tests, ":h")
vim.opt.runtimepath:prepend(plugin)
package.path = table.concat({ tests .. "/?.lua", tests .. "/?/init.lua", package.path }, ";")
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"
vim.opt.more = false
