---@brief
--- :checkhealth verbatim

local M = {}

--- Where Claude Code looks for lock files (docs/protocol.md, "The endpoint
--- and the lock file").
---@return string
local function lock_dir()
  local base = vim.env.CLAUDE_CONFIG_DIR
  if not base or base == "" then
    base = vim.fs.joinpath(vim.uv.os_homedir() or "~", ".claude")
  end
  return vim.fs.joinpath(base, "ide")
end

--- Reports whether a client's server serves Claude Code, and how a `claude`
--- finds it.
---@param client vim.lsp.Client
function M.check_claude_code(client)
  local health = vim.health
  local claude_code = require("verbatim.claude_code")
  local port = claude_code.ports[client.id]
  if not port then
    if require("verbatim.config").options.claude_code then
      health.warn("Claude Code: this server does not serve it", {
        "A verbatim binary built before Claude Code's IDE protocol: update it",
      })
    else
      health.info("Claude Code: off (claude_code = false)")
    end
    return
  end
  health.ok(string.format("Claude Code: port %d", port))
  local lock = vim.fs.joinpath(lock_dir(), port .. ".lock")
  if vim.uv.fs_stat(lock) then
    health.ok("lock file (claude --ide and /ide find it): " .. lock)
  else
    health.warn("no lock file at " .. lock, {
      "claude --ide and /ide will not find this Neovim; a claude started in :terminal still connects",
    })
  end
  if claude_code.env_port() == port then
    health.info(
      string.format(
        "terminals started from Neovim get %s=%d and %s=true: a claude started there connects by itself",
        claude_code.ENV_PORT,
        port,
        claude_code.ENV_ENABLE
      )
    )
  end
end

--- Whether the client's server serves Gemini CLI's and Qwen Code's IDE
--- companion interface, and what terminals started here get.
---@param client vim.lsp.Client
function M.check_gemini_cli(client)
  local health = vim.health
  local env = require("verbatim.gemini_cli").envs[client.id]
  if not env then
    if require("verbatim.config").options.gemini_cli then
      health.warn(
        "Gemini CLI / Qwen Code: this server does not serve their IDE companion interface",
        {
          "A verbatim binary built before it: update it",
        }
      )
    else
      health.info("Gemini CLI / Qwen Code: off (gemini_cli = false)")
    end
    return
  end
  health.ok(
    string.format(
      "Gemini CLI / Qwen Code: IDE companion on http://127.0.0.1:%s/mcp",
      env.GEMINI_CLI_IDE_SERVER_PORT
    )
  )
  health.info(
    "terminals started from Neovim get GEMINI_CLI_IDE_* and QWEN_CODE_IDE_*: a gemini or qwen started there "
      .. "connects by itself with IDE mode on (/ide enable)"
  )
end

function M.check()
  local health = vim.health
  local config = require("verbatim.config")
  local protocol = require("verbatim.protocol")

  health.start("verbatim: Neovim")
  local v = vim.version()
  local version = string.format("%d.%d.%d", v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.11") == 1 then
    health.ok("Neovim " .. version)
  else
    health.error("Neovim " .. version .. " is too old", { "Verbatim needs Neovim 0.11 or newer" })
  end
  if require("verbatim").did_setup then
    health.ok("setup() was called (review = " .. config.options.review .. ")")
  else
    health.warn("setup() was not called", { 'Add require("verbatim").setup() to your config' })
  end

  health.start("verbatim: server binary")
  local exe = config.options.cmd[1]
  local path = vim.fn.exepath(exe)
  if path == "" then
    health.error(
      string.format("%q not found", exe),
      { "Build or install the verbatim binary, or set `cmd` in setup()" }
    )
  else
    health.ok("found " .. path)
    local result = vim.system({ path, "--version" }, { text = true }):wait(3000)
    local out = vim.trim((result.stdout or "") .. (result.stderr or ""))
    if result.code == 0 and out ~= "" then
      health.ok("version: " .. out)
    else
      health.warn(
        string.format("`%s --version` failed (exit %s): %s", path, tostring(result.code), out)
      )
    end
  end

  health.start("verbatim: servers")
  local lsp = require("verbatim.lsp")
  local clients = lsp.clients()
  if #clients == 0 then
    health.info("no server running (it starts with the first file buffer)")
  end
  -- A health report is read once it is complete, so this one waits.
  local statuses
  lsp.fetch_statuses(function(fresh)
    statuses = fresh
  end, 1000)
  vim.wait(1500, function()
    return statuses ~= nil
  end)
  statuses = statuses or lsp.statuses
  for _, client in ipairs(clients) do
    local status = statuses[client.id]
    health.ok(string.format("server for %s (client %d)", client.root_dir or "?", client.id))
    M.check_claude_code(client)
    M.check_gemini_cli(client)
    if status then
      health.ok("agent socket: " .. tostring(status.socket))
      -- The server decides where discovery files go (docs/protocol.md,
      -- "Discovery"); its answer is shown rather than re-derived here.
      health.info(
        "runtime directory (agents find servers here): "
          .. vim.fs.dirname(tostring(status.discoveryFile))
      )
      health.info("discovery file: " .. tostring(status.discoveryFile))
      health.info(string.format("%d agent(s) connected", #(status.agents or {})))
    else
      health.warn("the server did not answer " .. protocol.methods.status)
    end
  end
  local log = config.log_path()
  health.info("server log: " .. (log or "stderr, in Neovim's LSP log (:LspLog)"))
end

return M
