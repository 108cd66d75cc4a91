-- Diagnostics after an edit, with a real language server: `ruff server`
-- (run.sh installs ruff and sets VERBATIM_RUFF) on Python buffers. The
-- handler of verbatim/diagnostics called directly, then through the server
-- for an agent's edit.
local H = require("helpers")
local api = vim.api
local verbatim = require("verbatim")
local diagnostics = require("verbatim.diagnostics")

verbatim.setup({ cmd = { vim.env.VERBATIM_BIN, "lsp" }, review = "auto" })

H.truthy(vim.env.VERBATIM_RUFF, "VERBATIM_RUFF names the ruff binary (run.sh sets it)")
vim.cmd("filetype on")
api.nvim_create_autocmd("FileType", {
  pattern = "python",
  callback = function(args)
    vim.lsp.start({
      name = "ruff",
      cmd = { vim.env.VERBATIM_RUFF, "server" },
      root_dir = vim.fs.root(args.buf, ".git"),
    }, { bufnr = args.buf })
  end,
})

local SOURCE = "import os\n\nprint(os.name)\n"

--- Opens a Python file with ruff and Verbatim attached, once ruff has
--- reported on it.
---@param root string
---@param name string
---@return integer bufnr
---@return vim.lsp.Client verbatim client
local function open_python(root, name)
  local path = root .. "/" .. name
  local buf, client = H.edit(path)
  H.wait_for("ruff to attach and report", function()
    local ruff = vim.lsp.get_clients({ bufnr = buf, name = "ruff" })[1]
    return ruff and ruff.initialized and diagnostics.changes[buf] ~= nil
  end)
  return buf, client
end

--- Calls the handler in a coroutine, as vim.lsp.rpc does, and waits for its answer.
---@param client vim.lsp.Client
---@param params verbatim.DiagnosticsParams
---@return verbatim.DiagnosticsResult
local function ask(client, params)
  local result
  local co = coroutine.create(function()
    result = diagnostics.handler(nil, params, {
      client_id = client.id,
      method = "verbatim/diagnostics",
    })
  end)
  local ok, err = coroutine.resume(co)
  assert(ok, err)
  return H.wait_for("the answer to verbatim/diagnostics", function()
    return result
  end, 10000)
end

---@param list lsp.Diagnostic[]
---@return string[] "code@line:character"
local function codes(list)
  return vim.tbl_map(function(d)
    return string.format("%s@%d:%d", d.code, d.range.start.line, d.range.start.character)
  end, list)
end

H.test("the handler: the baseline at once, then fresh diagnostics after a change", function()
  local root = H.workspace({ ["app.py"] = SOURCE })
  local buf, client = open_python(root, "app.py")
  local uri = vim.uri_from_bufnr(buf)

  local baseline = ask(client, { uris = { uri }, minSeverity = "warning" })
  local doc = baseline.documents[1]
  H.eq("settled", doc.status)
  H.eq(vim.lsp.util.buf_versions[buf], doc.version)
  H.eq({}, doc.diagnostics, "nothing wrong yet")
  H.eq({ "ruff" }, doc.sources, "the attached server, when it reports nothing")
  H.eq({}, baseline.others)

  -- An undefined name on line 3 (0-based 2), column 6: F821, an error.
  api.nvim_buf_set_lines(buf, 2, 3, true, { "print(foo)" })
  local version = vim.lsp.util.buf_versions[buf]
  local after = ask(client, {
    uris = { uri },
    minSeverity = "error",
    wait = { versions = { [uri] = version }, quietMs = 300, timeoutMs = 2500 },
  })
  doc = after.documents[1]
  H.eq("settled", doc.status, vim.inspect(after))
  H.eq({ "F821@2:6" }, codes(doc.diagnostics), "errors only: the unused import is a warning")
  H.eq(1, doc.diagnostics[1].severity)
  H.eq("Ruff", doc.diagnostics[1].source)
  H.eq({ line = 2, character = 9 }, doc.diagnostics[1].range["end"])
  H.truthy(doc.diagnostics[1].message:find("foo", 1, true), doc.diagnostics[1].message)
  H.eq({ "Ruff" }, doc.sources)
  H.truthy(doc.waitedMs >= 300, "waited for a quiet period: " .. doc.waitedMs)
  H.truthy(doc.waitedMs < 2500, "did not wait for the timeout: " .. doc.waitedMs)

  local warnings = ask(client, { uris = { uri }, minSeverity = "warning" })
  H.eq({ "F401@0:7", "F821@2:6" }, codes(warnings.documents[1].diagnostics))
end)

H.test("the handler: ranges in the client's encoding; a version never reached times out", function()
  local root = H.workspace({ ["uni.py"] = 'x = "é😀"; print(bar)\n' })
  local buf, client = open_python(root, "uni.py")
  local uri = vim.uri_from_bufnr(buf)
  H.wait_for("F821 on the line", function()
    return #vim.diagnostic.get(buf, { severity = vim.diagnostic.severity.ERROR }) > 0
  end)
  local result = ask(client, { uris = { uri }, minSeverity = "error" })
  local d = result.documents[1].diagnostics[1]
  H.eq("F821", d.code)
  -- `bar` starts at byte 20: the client negotiated utf-8 with the server.
  H.eq("utf-8", client.offset_encoding)
  H.eq(20, d.range.start.character)
  local error = vim.diagnostic.get(buf, { severity = 1 })[1]
  H.eq(17, diagnostics.to_lsp(buf, error, "utf-16").range.start.character, "é 1 unit, 😀 2")
  H.eq(16, diagnostics.to_lsp(buf, error, "utf-32").range.start.character)

  local started = vim.uv.hrtime()
  local late = ask(client, {
    uris = { uri },
    minSeverity = "error",
    wait = {
      versions = { [uri] = vim.lsp.util.buf_versions[buf] + 1000 },
      quietMs = 300,
      timeoutMs = 600,
    },
  })
  local took = (vim.uv.hrtime() - started) / 1e6
  H.eq("timedOut", late.documents[1].status)
  H.truthy(took >= 550 and took < 3000, "answered at the timeout: " .. took)
  H.eq({ "F821@0:20" }, codes(late.documents[1].diagnostics), "what is known, all the same")
end)

H.test("the handler: a buffer without a language server is unavailable, at once", function()
  local root = H.workspace({ ["notes.txt"] = "hello\n" })
  local buf, client = H.edit(root .. "/notes.txt")
  local uri = vim.uri_from_bufnr(buf)
  local started = vim.uv.hrtime()
  local result = ask(client, {
    uris = { uri, "file:///nowhere/gone.py" },
    minSeverity = "error",
    wait = {
      versions = { [uri] = vim.lsp.util.buf_versions[buf] },
      quietMs = 300,
      timeoutMs = 2500,
    },
  })
  H.truthy((vim.uv.hrtime() - started) / 1e6 < 1000, "no wait for nothing")
  H.eq("unavailable", result.documents[1].status)
  H.eq({}, result.documents[1].diagnostics)
  H.eq({}, result.documents[1].sources)
  H.eq("unavailable", result.documents[2].status, "a document not open in Neovim")
  H.eq(vim.NIL, result.documents[2].version)
end)

H.test("the handler: other documents whose errors changed during the wait", function()
  local root = H.workspace({ ["a.py"] = SOURCE, ["b.txt"] = "caller\n" })
  local other = H.edit(root .. "/b.txt")
  local buf, client = open_python(root, "a.py")
  local uri = vim.uri_from_bufnr(buf)
  local ns = api.nvim_create_namespace("test.linter")
  api.nvim_buf_set_lines(buf, 2, 3, true, { "print(foo)" })
  -- Another source reports on another buffer while the server waits.
  vim.defer_fn(function()
    vim.diagnostic.set(ns, other, {
      { lnum = 0, col = 0, end_col = 6, severity = 1, message = "broken caller", source = "lint" },
    })
  end, 100)
  local result = ask(client, {
    uris = { uri },
    minSeverity = "error",
    wait = {
      versions = { [uri] = vim.lsp.util.buf_versions[buf] },
      quietMs = 300,
      timeoutMs = 2500,
    },
  })
  H.eq("settled", result.documents[1].status)
  H.eq(1, #result.others, vim.inspect(result.others))
  H.eq(vim.uri_from_bufnr(other), result.others[1].uri)
  H.eq({}, result.others[1].before)
  H.eq("broken caller", result.others[1].after[1].message)
  vim.diagnostic.reset(ns, other)
end)

H.test("an agent's edit introduces F821, the next resolves it; a .txt is unavailable", function()
  local root = H.workspace({ ["app.py"] = SOURCE, ["notes.txt"] = "hello\n" })
  local buf, client = open_python(root, "app.py")
  local agent = H.agent(client, "diag-agent")
  local uri = vim.uri_from_bufnr(buf)

  local broke = agent:call("verbatim/strReplace", {
    uri = uri,
    oldStr = "print(os.name)",
    newStr = "print(foo)",
    summary = "Print foo",
    diagnostics = true,
  })
  H.eq(nil, broke.error)
  H.eq({ "import os", "", "print(foo)" }, H.lines(buf))
  local d = broke.result.diagnostics
  H.eq("settled", d.status, vim.inspect(d))
  H.eq(1, #d.introduced, vim.inspect(d))
  H.eq("F821", d.introduced[1].code)
  H.eq(3, d.introduced[1].line)
  H.eq(7, d.introduced[1].column)
  H.eq("print(foo)", d.introduced[1].text)
  H.eq({}, d.resolved)
  H.eq({ "Ruff" }, d.sources)

  local fixed = agent:call("verbatim/strReplace", {
    uri = uri,
    oldStr = "print(foo)",
    newStr = "print(os.name)",
    summary = "Print the OS name",
    diagnostics = true,
  })
  H.eq(nil, fixed.error)
  d = fixed.result.diagnostics
  H.eq("settled", d.status, vim.inspect(d))
  H.eq({}, d.introduced)
  H.eq(1, #d.resolved, vim.inspect(d))
  H.eq("F821", d.resolved[1].code)
  H.eq(3, d.resolved[1].line)

  local txt = H.edit(root .. "/notes.txt")
  local txt_uri = vim.uri_from_bufnr(txt)
  -- Once the server has the buffer, not the file on disk.
  local read = H.wait_for("the server to see notes.txt open", function()
    local response = agent:call("verbatim/read", { uri = txt_uri })
    return response.result and response.result.source == "editor" and response.result or nil
  end)
  local plain = agent:call("verbatim/strReplace", {
    uri = txt_uri,
    oldStr = "hello",
    newStr = "hello, world",
    baseRev = read.rev,
    summary = "Greet the world",
    diagnostics = true,
  })
  H.eq(nil, plain.error)
  H.eq("unavailable", plain.result.diagnostics.status, vim.inspect(plain.result.diagnostics))
  H.eq({}, plain.result.diagnostics.introduced)
end)

H.test("a language server that stays silent: timedOut, never a clean bill", function()
  local root = H.workspace({ ["quiet.txt"] = "one\ntwo\n" })
  local s_buf, client = H.edit(root .. "/quiet.txt")
  local silent = vim.lsp.start(
    { name = "silent", cmd = H.fake_server({ textDocumentSync = 2 }), root_dir = root },
    { bufnr = s_buf }
  )
  H.wait_for("the silent server to attach", function()
    local c = silent and vim.lsp.get_client_by_id(silent)
    return c and c.initialized and vim.lsp.buf_is_attached(s_buf, silent)
  end)
  local agent = H.agent(client, "timeout-agent")
  local uri = vim.uri_from_bufnr(s_buf)
  local read = H.read_until(agent, uri)
  local response = agent:call("verbatim/strReplace", {
    uri = uri,
    oldStr = "two",
    newStr = "2",
    baseRev = read.rev,
    summary = "Digits",
    diagnostics = true,
    diagnosticsTimeoutMs = 600,
  })
  H.eq(nil, response.error)
  local d = response.result.diagnostics
  H.eq("timedOut", d.status, vim.inspect(d))
  H.eq({}, d.introduced)
  H.truthy(type(d.note) == "string" and d.note ~= "", "a note says the list is incomplete")
  H.note("the note: " .. d.note)
  vim.lsp.stop_client(silent --[[@as integer]], true)
end)

H.test("disable stops recording diagnostic changes; enable starts again", function()
  local buf = api.nvim_create_buf(false, true)
  local ns = api.nvim_create_namespace("verbatim-test-disable")
  diagnostics.disable()
  vim.diagnostic.set(
    ns,
    buf,
    { { lnum = 0, col = 0, message = "x", severity = vim.diagnostic.severity.ERROR } }
  )
  H.eq(nil, diagnostics.changes[buf], "nothing is recorded once disabled")
  diagnostics.enable()
  vim.diagnostic.set(
    ns,
    buf,
    { { lnum = 0, col = 0, message = "y", severity = vim.diagnostic.severity.ERROR } }
  )
  H.truthy(diagnostics.changes[buf] ~= nil, "recorded again once enabled")
  api.nvim_buf_delete(buf, { force = true })
end)
