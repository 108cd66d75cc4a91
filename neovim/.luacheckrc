-- luacheck (Debian's lua-check), run by tests/style.sh. stylua decides the
-- layout, so line length is its business, not luacheck's.
std = "luajit"
globals = { "vim" }
max_line_length = false
exclude_files = { ".luacheckrc" }
