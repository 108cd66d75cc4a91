-- End to end (review = "auto"): edits around line endings, CRLF pairs and
-- the end of the text reach the server exactly as predicted.
local H = require("helpers")
require("verbatim").setup({ cmd = { vim.env.VERBATIM_BIN, "lsp" }, review = "auto" })

-- { file, oldStr, newStr, live text when it differs from the request }
local cases = {
  { "one\r\ntwo\r\n", "one\r\ntwo", "one\r\nX\r\ntwo" },
  { "a\r\n\r\nb\r\n", "a\r\n\r\nb", "a\r\nb" },
  { "a\r\nb\r\n", "a\r\nb", "a\r\n\r\n\r\nb" },
  { "x\r\ny\r\n", "y\r\n", "y\r\nz\r\n" },
  { "x\r\ny\r\n", "x\r\ny\r\n", "x\r\n" },
  { "x\ny\n", "y\n", "" },
  { "x\ny", "y", "y\n" },
  { "é\n👋\n", "é\n👋", "👋\né" },
  -- Neovim cannot drop the final line ending through LSP sync ('eol' is not
  -- part of it): the buffer keeps it and the agent is told.
  { "x\ny\n", "x\ny\n", "q", "q\n" },
}

for i, case in ipairs(cases) do
  H.test(
    string.format(
      "case %d: %s -> %s in %s",
      i,
      vim.inspect(case[2]),
      vim.inspect(case[3]),
      vim.inspect(case[1])
    ),
    function()
      local s = H.scenario({ ["f.txt"] = case[1] }, "f.txt", "line-endings")
      H.eq(case[1], s.read.text, "Neovim reports the file's text")
      local response = s.agent:wait(s:str_replace(case[2], case[3], "s"))
      H.eq(nil, response.error)
      local first, last = case[1]:find(case[2], 1, true)
      local expected = case[1]:sub(1, first - 1) .. case[3] .. case[1]:sub(last + 1)
      H.eq(case[4] or expected, H.read_until(s.agent, s.uri).text, "the server's live text")
      H.eq(case[4] ~= nil, response.result.modifiedByEditor)
      H.eq(case[1], H.read_file(s.path), "the disk is untouched")
    end
  )
end
