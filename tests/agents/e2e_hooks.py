#!/usr/bin/env python3
"""End to end: each agent's OWN edit tool reviewed in a real Neovim 0.11 before it writes,
through the agent's pre-write hook (`verbatim hook AGENT`), installed by
`verbatim setup AGENT --write` and nothing else. The real CLIs from npm (Codex, Claude
Code, Gemini CLI), each driven by a scripted model on 127.0.0.1.

    tests/agents/e2e_hooks.py [--only SUBSTRING] [--keep]

Needs what tests/agents/e2e_agents.py needs (it shares its harness). Prints one
`ok`/`not ok` line per case and `N passed, N failed`; exits 1 if any failed.

Cases (what each proves):
- codex exec, Neovim confirm: an apply_patch of two hunks to a file whose buffer has
  an unsaved line. While the review waits the disk is unchanged; the person keeps one
  hunk and leaves the other out with a reason. The disk then holds exactly the disk text
  plus the kept hunk, the buffer that plus the unsaved line, still modified, no second
  review, and the model's next request carries the person's reason.
- codex exec, a full rejection: nothing written, the reason in the model's next request.
- the Codex TUI under tmux (setup's recorded trust: no "Hooks need review"): a rejection
  with a reason; nothing written, the reason in the model's next request.
- codex exec, a patch that adds a file and updates another: one review, both written.
- codex exec, Neovim auto (Codex never asks, the editor does not either): the change
  lands in the live buffer at once, merged over the unsaved line, and on disk.
- codex exec, no editor: the hook gives no decision, Codex writes as it would alone.
- claude -p --permission-mode acceptEdits, Neovim confirm: its Edit reviewed, one hunk
  left out with a reason; the model reads the reason, the disk holds the kept hunk.
- claude -p --permission-mode acceptEdits, Neovim auto (neither asks): the Edit lands in
  the live buffer at once, over the unsaved line, and on disk; nothing waits.
- claude interactive (tmux), default mode, connected to Neovim as its IDE: exactly one
  review (the hook's: its allow skips Claude Code's prompt, so no openDiff), no prompt in
  the terminal, the reason in the model's next request.
- gemini -p --yolo, Neovim confirm: its replace rejected with a reason; nothing written,
  the model reads the reason.
- gemini -p --yolo, Neovim confirm: one hunk of its replace kept; the disk holds it, and
  the model reads the reason (through the AfterTool hook setup installs).
- three agents and the person, then undo (issue 33): Codex's apply_patch (its hook) changes
  b.txt and c.txt, the person types in b.txt, Claude Code's Edit (its hook) and an agent on
  Verbatim's own socket (the CLI, as the MCP server does) change them too; Codex's turn,
  taken from `verbatim log --json`, is reverted from Neovim (`verbatim/revert` by the
  plugin's client) and reviewed there: only Codex's lines go back, everything else stays;
  the revert of the revert brings them back.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import claude_tmux  # noqa: E402
import e2e_agents as harness  # noqa: E402
from e2e_agents import (BASE_PATH, CLAUDE_ENV, CODEX_CONFIG, GEMINI_SETTINGS, NODE, Failure, Neovim,  # noqa: E402
                        agent_bin, check, mismatches, read, requests, setup_ok, wait_until, write)

NVIM_EXTRA = r"""
function e2e.accept_all()
  local item = require("verbatim.queue").items[1]
  return require("verbatim.queue").accept(item)
end
function e2e.reject(reason)
  local item = require("verbatim.queue").items[1]
  require("verbatim.queue").reject(item, reason)
  return true
end
function e2e.modified(path)
  return vim.bo[vim.fn.bufnr(path)].modified
end
"""

EIGHT = "first\nsecond\nthird\nfourth\nfifth\nsixth\nseventh\neighth\n"
# The person's unsaved line sits away from both hunks.
EIGHT_UNSAVED = "first\nsecond\nthird\nfourth\nmine, unsaved\nfifth\nsixth\nseventh\neighth\n"
TWO_HUNKS = "*** Begin Patch\n*** Update File: b.txt\n@@\n-first\n+FIRST\n@@\n-eighth\n+EIGHTH\n*** End Patch\n"


def neovim(case, files, review):
    nvim = Neovim(case, files, review=review,
                  env={"VERBATIM_RUNTIME_DIR": None, "XDG_RUNTIME_DIR": case.xdg_runtime})
    nvim.lua(NVIM_EXTRA.replace("\n", " ") + " return true")
    return nvim


def codex_case(case):
    case.codex_home = os.path.join(case.root, "codex-home")
    case.xdg_runtime = os.path.join(case.root, "xdg")
    os.makedirs(case.xdg_runtime, mode=0o700)


def codex_env(case, port, model=None):
    config = CODEX_CONFIG.format(port=port)
    if model:
        config = config.replace('model = "gpt-5.5"', f'model = "{model}"')
    write(os.path.join(case.codex_home, "config.toml"), config)
    return case.env(CODEX_HOME=case.codex_home, SCRIPTED_KEY="any", XDG_RUNTIME_DIR=case.xdg_runtime,
                    VERBATIM_RUNTIME_DIR=None)


def codex_exec(case, script, prompt="patch b.txt"):
    """Sets Codex up with `verbatim setup codex --user --write` (the hook and its trust
    included) and runs `codex exec`; returns (model log, completed process)."""
    port, log = case.model(script, module="model_protocols.py")
    env = codex_env(case, port)
    setup_ok(case, "codex", "--user", "--write", env=env)
    done = subprocess.run([agent_bin("codex"), "exec", "--skip-git-repo-check", prompt], cwd=case.project, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    check(done.returncode == 0, f"codex exec exited {done.returncode}: {done.stdout[-3000:]}{done.stderr[-3000:]}")
    check(not mismatches(log), f"{mismatches(log)}\n{done.stderr[-3000:]}")
    return log, done


def person(nvim, act, then=None):
    """A reviewer in another thread: waits for the review, checks `then`, acts."""
    errors = []

    def run():
        try:
            wait_until(lambda: nvim.lua("return e2e.pending()") > 0, "the change offered for review", timeout=120)
            if then:
                then()
            act()
        except Exception as error:  # noqa: BLE001 - reported by the case
            errors.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, errors


def last_request_text(log):
    """The body of the model's last conversation request (side requests, such as a title, left out)."""
    turns = [record for record in requests(log) if record["kind"] != "responses_side"]
    return json.dumps(turns[-1]["body"])


def case_codex_partial(case):
    codex_case(case)
    b = case.path("b.txt")
    write(b, EIGHT)
    nvim = neovim(case, ["b.txt"], "confirm")
    check(nvim.lua(f"return e2e.set_text({json.dumps(b)}, {json.dumps(EIGHT_UNSAVED)})"), "b.txt has unsaved changes")
    seen = {}

    def disk_unchanged():
        seen["disk"] = read(b)
        seen["pending"] = nvim.lua("return e2e.pending()")

    thread, errors = person(nvim, lambda: nvim.lua('return e2e.accept_leaving_out(2, "eighth stays lower case")'),
                            then=disk_unchanged)
    log, _ = codex_exec(case, [
        {"custom_tool_call": {"name": "apply_patch", "input": TWO_HUNKS}},
        {"text": "Done."},
    ])
    thread.join(5)
    check(not errors, f"the reviewer: {errors}")
    check(seen.get("disk") == EIGHT, f"the disk while the review waited: {seen.get('disk')!r}")
    check(seen.get("pending") == 1, f"one review: {seen.get('pending')}")
    check(read(b) == EIGHT.replace("first", "FIRST"), f"the disk: {read(b)!r}")
    wait_until(lambda: nvim.buffer("b.txt") == EIGHT_UNSAVED.replace("first", "FIRST"), "the buffer with the kept hunk")
    check(nvim.lua(f"return e2e.modified({json.dumps(b)})"), "the buffer is still modified (the unsaved line)")
    time.sleep(1.5)  # a second review would come from the disk watcher within its debounce
    check(nvim.lua("return e2e.pending()") == 0, "no second review of Codex's write")
    told = last_request_text(log)
    check("Their reason: eighth stays lower case" in told and "+EIGHTH" in told,
          "the model's next request carries the reason and the left-out hunk")


def case_codex_rejected(case):
    codex_case(case)
    b = case.path("b.txt")
    write(b, EIGHT)
    nvim = neovim(case, ["b.txt"], "confirm")
    thread, errors = person(nvim, lambda: nvim.lua('return e2e.reject("not this file, use c.txt")'))
    log, _ = codex_exec(case, [
        {"custom_tool_call": {"name": "apply_patch", "input": TWO_HUNKS}},
        {"expect": ["The person rejected this change in the editor: not this file, use c.txt"], "text": "Understood."},
    ])
    thread.join(5)
    check(not errors, f"the reviewer: {errors}")
    check(read(b) == EIGHT, f"nothing written: {read(b)!r}")
    check(nvim.buffer("b.txt") == EIGHT, f"the buffer: {nvim.buffer('b.txt')!r}")


def case_codex_two_files_one_review(case):
    codex_case(case)
    b = case.path("b.txt")
    write(b, EIGHT)
    nvim = neovim(case, ["b.txt"], "confirm")
    patch = ("*** Begin Patch\n*** Add File: c.txt\n+brand new\n*** Update File: b.txt\n@@\n-first\n+FIRST\n"
             "*** End Patch\n")
    counts = {}

    def count():
        time.sleep(0.5)
        counts["pending"] = nvim.lua("return e2e.pending()")

    thread, errors = person(nvim, lambda: nvim.lua("return e2e.accept_all()"), then=count)
    codex_exec(case, [
        {"custom_tool_call": {"name": "apply_patch", "input": patch}},
        {"text": "Both done."},
    ])
    thread.join(5)
    check(not errors, f"the reviewer: {errors}")
    check(counts.get("pending") == 1, f"one review for both files: {counts.get('pending')}")
    check(read(b) == EIGHT.replace("first", "FIRST"), f"b.txt: {read(b)!r}")
    check(read(case.path("c.txt")) == "brand new\n", f"c.txt: {read(case.path('c.txt'))!r}")


def case_codex_auto(case):
    codex_case(case)
    b = case.path("b.txt")
    write(b, EIGHT)
    nvim = neovim(case, ["b.txt"], "auto")
    check(nvim.lua(f"return e2e.set_text({json.dumps(b)}, {json.dumps(EIGHT_UNSAVED)})"), "b.txt has unsaved changes")
    codex_exec(case, [
        {"custom_tool_call": {"name": "apply_patch", "input": TWO_HUNKS}},
        {"expect": ["Success"], "text": "Done."},
    ])
    expected = EIGHT.replace("first", "FIRST").replace("eighth", "EIGHTH")
    check(read(b) == expected, f"the disk: {read(b)!r}")
    wait_until(lambda: nvim.buffer("b.txt") == EIGHT_UNSAVED.replace("first", "FIRST").replace("eighth", "EIGHTH"),
               "the change in the buffer, over the unsaved line")
    check(nvim.lua(f"return e2e.modified({json.dumps(b)})"), "the buffer is still modified")


def case_codex_no_editor(case):
    codex_case(case)
    b = case.path("b.txt")
    write(b, EIGHT)
    _, done = codex_exec(case, [
        {"custom_tool_call": {"name": "apply_patch", "input": TWO_HUNKS}},
        {"expect": ["Success"], "text": "Done."},
    ])
    check("hook: PreToolUse Completed" in done.stderr, f"the hook ran: {done.stderr[-2000:]}")
    check(read(b) == EIGHT.replace("first", "FIRST").replace("eighth", "EIGHTH"), f"the disk: {read(b)!r}")


def case_claude_accept_edits_partial(case):
    case.xdg_runtime = os.path.join(case.root, "xdg")
    os.makedirs(case.xdg_runtime, mode=0o700)
    b = case.path("b.txt")
    write(b, EIGHT)
    nvim = neovim(case, ["b.txt"], "confirm")
    setup_ok(case, "claude-code", "--write", env=case.env(XDG_RUNTIME_DIR=case.xdg_runtime, VERBATIM_RUNTIME_DIR=None))
    thread, errors = person(nvim, lambda: nvim.lua('return e2e.accept_leaving_out(1, "keep first as it is")'))
    port, log = case.model([
        {"tool_use": {"name": "Read", "input": {"file_path": b}}},
        {"tool_use": {"name": "Edit", "input": {"file_path": b, "old_string": EIGHT, "new_string":
                                                EIGHT.replace("first", "FIRST").replace("eighth", "EIGHTH")}}},
        {"text": "Done."},
    ])
    env = case.env(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", XDG_RUNTIME_DIR=case.xdg_runtime,
                   VERBATIM_RUNTIME_DIR=None, **CLAUDE_ENV)
    done = subprocess.run([agent_bin("claude-code"), "-p", "Edit b.txt", "--output-format", "json",
                           "--permission-mode", "acceptEdits"], cwd=case.project, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    thread.join(5)
    check(not errors, f"the reviewer: {errors}")
    check(done.returncode == 0, f"claude -p exited {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    check(not mismatches(log), f"{mismatches(log)}")
    check("Their reason: keep first as it is" in json.dumps(requests(log)[-1]["body"]),
          "the model's next request carries the reason")
    check(read(b) == EIGHT.replace("eighth", "EIGHTH"), f"the disk holds the kept hunk only: {read(b)!r}")
    wait_until(lambda: nvim.buffer("b.txt") == EIGHT.replace("eighth", "EIGHTH"), "the buffer")
    time.sleep(1.5)
    check(nvim.lua("return e2e.pending()") == 0, "no second review of Claude Code's write")


def case_gemini_yolo_rejected(case):
    case.xdg_runtime = os.path.join(case.root, "xdg")
    os.makedirs(case.xdg_runtime, mode=0o700)
    write(os.path.join(case.home, ".gemini/settings.json"), json.dumps(GEMINI_SETTINGS))
    b = case.path("b.txt")
    write(b, EIGHT)
    nvim = neovim(case, ["b.txt"], "confirm")
    env = case.env(XDG_RUNTIME_DIR=case.xdg_runtime, VERBATIM_RUNTIME_DIR=None)
    setup_ok(case, "gemini-cli", "--trust", "--write", env=env)
    thread, errors = person(nvim, lambda: nvim.lua('return e2e.reject("second must stay as it is")'))
    port, log = case.model([
        {"tool_call": {"name": "replace", "input": {"file_path": b, "instruction": "Shout second",
                                                    "old_string": "second", "new_string": "SECOND"}}},
        {"expect": ["The person rejected this change in the editor: second must stay as it is"], "text": "OK."},
    ], module="model_protocols.py")
    env = case.env(GEMINI_API_KEY="any", GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{port}", REMOTE_CONTAINERS="true",
                   XDG_RUNTIME_DIR=case.xdg_runtime, VERBATIM_RUNTIME_DIR=None)
    done = subprocess.run([NODE, agent_bin("gemini-cli"), "-p", "Shout second in b.txt", "--yolo"], cwd=case.project,
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    thread.join(5)
    check(not errors, f"the reviewer: {errors}")
    check(done.returncode == 0, f"gemini -p exited {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    check(not mismatches(log), f"{mismatches(log)}")
    check(read(b) == EIGHT, f"nothing written: {read(b)!r}")


def case_gemini_yolo_partial(case):
    case.xdg_runtime = os.path.join(case.root, "xdg")
    os.makedirs(case.xdg_runtime, mode=0o700)
    write(os.path.join(case.home, ".gemini/settings.json"), json.dumps(GEMINI_SETTINGS))
    b = case.path("b.txt")
    write(b, EIGHT)
    nvim = neovim(case, ["b.txt"], "confirm")
    env = case.env(XDG_RUNTIME_DIR=case.xdg_runtime, VERBATIM_RUNTIME_DIR=None)
    setup_ok(case, "gemini-cli", "--trust", "--write", env=env)
    thread, errors = person(nvim, lambda: nvim.lua('return e2e.accept_leaving_out(2, "eighth stays lower case")'))
    new = EIGHT.replace("first", "FIRST").replace("eighth", "EIGHTH")
    port, log = case.model([
        {"tool_call": {"name": "replace", "input": {"file_path": b, "instruction": "Shout the ends",
                                                    "old_string": EIGHT, "new_string": new}}},
        {"expect": ["Their reason: eighth stays lower case", "+EIGHTH"], "text": "OK."},
    ], module="model_protocols.py")
    env = case.env(GEMINI_API_KEY="any", GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{port}", REMOTE_CONTAINERS="true",
                   XDG_RUNTIME_DIR=case.xdg_runtime, VERBATIM_RUNTIME_DIR=None)
    done = subprocess.run([NODE, agent_bin("gemini-cli"), "-p", "Shout the ends of b.txt", "--yolo"],
                          cwd=case.project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300)
    thread.join(5)
    check(not errors, f"the reviewer: {errors}")
    check(done.returncode == 0, f"gemini -p exited {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    check(not mismatches(log), f"{mismatches(log)}")
    check(read(b) == EIGHT.replace("first", "FIRST"), f"the disk holds the kept hunk only: {read(b)!r}")
    wait_until(lambda: nvim.buffer("b.txt") == EIGHT.replace("first", "FIRST"), "the buffer")
    time.sleep(1.5)
    check(nvim.lua("return e2e.pending()") == 0, "no second review of Gemini CLI's write")


def case_claude_accept_edits_auto(case):
    case.xdg_runtime = os.path.join(case.root, "xdg")
    os.makedirs(case.xdg_runtime, mode=0o700)
    b = case.path("b.txt")
    write(b, EIGHT)
    nvim = neovim(case, ["b.txt"], "auto")
    check(nvim.lua(f"return e2e.set_text({json.dumps(b)}, {json.dumps(EIGHT_UNSAVED)})"), "b.txt has unsaved changes")
    setup_ok(case, "claude-code", "--write", env=case.env(XDG_RUNTIME_DIR=case.xdg_runtime, VERBATIM_RUNTIME_DIR=None))
    port, log = case.model([
        {"tool_use": {"name": "Read", "input": {"file_path": b}}},
        {"tool_use": {"name": "Edit", "input": {"file_path": b, "old_string": "eighth", "new_string": "EIGHTH"}}},
        {"expect": ["updated successfully"], "text": "Done."},
    ])
    env = case.env(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", XDG_RUNTIME_DIR=case.xdg_runtime,
                   VERBATIM_RUNTIME_DIR=None, **CLAUDE_ENV)
    done = subprocess.run([agent_bin("claude-code"), "-p", "Edit b.txt", "--output-format", "json",
                           "--permission-mode", "acceptEdits"], cwd=case.project, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    check(done.returncode == 0, f"claude -p exited {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    check(not mismatches(log), f"{mismatches(log)}")
    check(read(b) == EIGHT.replace("eighth", "EIGHTH"), f"the disk: {read(b)!r}")
    wait_until(lambda: nvim.buffer("b.txt") == EIGHT_UNSAVED.replace("eighth", "EIGHTH"),
               "the change in the live buffer at once, over the unsaved line")
    check(nvim.lua(f"return e2e.modified({json.dumps(b)})"), "the buffer is still modified")
    check(nvim.lua("return e2e.pending()") == 0, "nothing waits for review")


def case_claude_interactive_ide_one_review(case):
    case.xdg_runtime = os.path.join(case.root, "xdg")
    os.makedirs(case.xdg_runtime, mode=0o700)
    b = case.path("b.txt")
    write(b, EIGHT)
    nvim = neovim(case, ["b.txt"], "confirm")
    setup_ok(case, "claude-code", "--write", env=case.env(XDG_RUNTIME_DIR=case.xdg_runtime, VERBATIM_RUNTIME_DIR=None))
    script = [
        {"tool_use": {"name": "Read", "input": {"file_path": b}}},
        {"tool_use": {"name": "Edit", "input": {"file_path": b, "old_string": EIGHT, "new_string":
                                                EIGHT.replace("first", "FIRST").replace("eighth", "EIGHTH")}}},
        {"text": "Done."},
    ]
    env = {"XDG_RUNTIME_DIR": case.xdg_runtime, "VERBATIM_STATE_DIR": case.state,
           "PATH": f"{case.bin}:{os.path.dirname(agent_bin('claude-code'))}:{BASE_PATH}", "ENABLE_TOOL_SEARCH": "false"}
    session = claude_tmux.Session.start(cwd=case.project, script=script, env=env, home=case.home,
                                        binary=agent_bin("claude-code"), claude_args=["--ide"],
                                        name=f"vbhook-{os.getpid()}")
    case.cleanups.append(session.stop)
    session.wait_ide("Neovim (Verbatim)", timeout=30)
    session.send_text("Shout the ends of b.txt")
    wait_until(lambda: nvim.lua("return e2e.pending()") > 0, "the review", timeout=60)
    time.sleep(1.0)  # an openDiff as well would be a second review by now
    check(nvim.lua("return e2e.pending()") == 1, "one review, not the hook's and openDiff's")
    nvim.lua('return e2e.accept_leaving_out(1, "first stays lower case")')
    session.wait_for(r"Done\.", timeout=60)
    screen = session.capture(history=True)
    check("Do you want to make this edit" not in screen, f"Claude Code asked in the terminal too:\n{screen}")
    log = read(os.path.join(case.root, "verbatim-lsp.log"))
    check("openDiff" not in log, "no openDiff: the hook's allow skipped Claude Code's prompt")
    told = json.dumps(session.requests("main")[-1]["body"])
    check("Their reason: first stays lower case" in told, "the model's next request carries the reason")
    check(read(b) == EIGHT.replace("eighth", "EIGHTH"), f"the disk holds the kept hunk only: {read(b)!r}")
    check(not session.mismatches(), f"{session.mismatches()}")


class Tmux:
    """A program in its own tmux server (`tmux -L NAME`), driven by keys and read by screen."""

    def __init__(self, name, cwd, env, program):
        self.name = name
        subprocess.run(["tmux", "-L", name, "new-session", "-d", "-s", "main", "-x", "120", "-y", "40", "-c", cwd,
                        "env", "-i", *[f"{key}={value}" for key, value in env.items()], *program], check=True)

    def screen(self):
        return subprocess.run(["tmux", "-L", self.name, "capture-pane", "-p", "-t", "main"],
                              capture_output=True, text=True).stdout

    def keys(self, *keys):
        subprocess.run(["tmux", "-L", self.name, "send-keys", "-t", "main", *keys], check=True)

    def text(self, text):
        subprocess.run(["tmux", "-L", self.name, "send-keys", "-t", "main", "-l", text], check=True)

    def stop(self):
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True)


def stop_codex_daemons(codex_home):
    """The TUI leaves a managed `codex app-server` running after it exits: stop the ones of this CODEX_HOME."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read().split(b"\0")
        except OSError:
            continue
        if f"CODEX_HOME={codex_home}".encode() in environ:
            try:
                os.kill(int(pid), 15)
            except OSError:
                pass


def case_codex_tui_rejected(case):
    codex_case(case)
    b = case.path("b.txt")
    write(b, EIGHT)
    nvim = neovim(case, ["b.txt"], "confirm")
    port, log = case.model([
        {"custom_tool_call": {"name": "apply_patch", "input": TWO_HUNKS}},
        {"text": "Understood, I leave b.txt alone."},
    ], module="model_protocols.py")
    # The newest model: the TUI announces no newer one to switch to.
    env = codex_env(case, port, model="gpt-6.2-sol")
    env["TERM"] = "xterm-256color"
    setup_ok(case, "codex", "--user", "--write", env=env)
    tui = Tmux(f"vbcodex-{os.getpid()}", case.project, env, [agent_bin("codex")])
    case.cleanups.append(lambda: stop_codex_daemons(case.codex_home))
    case.cleanups.append(tui.stop)

    def ready():
        screen = tui.screen()
        check("Hooks need review" not in screen, f"setup recorded the hook's trust, yet Codex asks:\n{screen}")
        return "Ask Codex to do anything" in screen

    wait_until(ready, "Codex's prompt", timeout=60)
    tui.text("patch b.txt")
    wait_until(lambda: "patch b.txt" in tui.screen(), "the prompt typed")
    # Codex's TUI takes an Enter that closely follows a burst of typed keys for
    # part of a paste (a newline; its window is about 120 ms): the echo shows the
    # last key was read, so an Enter sent this long after it is a submission.
    time.sleep(0.3)
    tui.keys("Enter")
    thread, errors = person(nvim, lambda: nvim.lua('return e2e.reject("b.txt is frozen this week")'))
    try:
        wait_until(lambda: "leave b.txt alone" in tui.screen(), "Codex's answer after the rejection", timeout=120)
    except Failure as failure:
        raise Failure(f"{failure}; the screen:\n{tui.screen()}") from None
    thread.join(5)
    check(not errors, f"the reviewer: {errors}")
    told = last_request_text(log)
    check("The person rejected this change in the editor: b.txt is frozen this week" in told,
          "the model's next request carries the reason")
    check(read(b) == EIGHT, f"nothing written: {read(b)!r}")


def cli(case, *args):
    env = case.env(XDG_RUNTIME_DIR=case.xdg_runtime, VERBATIM_RUNTIME_DIR=None)
    return subprocess.run([harness.VERBATIM, *args], cwd=case.project, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


REVERT_FROM_NEOVIM = """
local client = vim.lsp.get_clients({ name = "verbatim" })[1]
e2e.reverted = nil
client:request("verbatim/revert", PARAMS, function(err, result) e2e.reverted = { err = err, result = result } end)
return true
"""


def revert_in_neovim(nvim, params):
    """Asks for a revert through the plugin's own client, accepts its review, returns the result."""
    nvim.lua(REVERT_FROM_NEOVIM.replace("PARAMS", f"vim.json.decode({json.dumps(json.dumps(params))})").replace("\n", " "))
    wait_until(lambda: nvim.lua("return e2e.pending()") > 0, "the revert offered for review", timeout=60)
    nvim.lua("return e2e.accept_all()")
    wait_until(lambda: nvim.lua("return e2e.reverted ~= nil"), "the revert's answer", timeout=60)
    answer = nvim.lua("return e2e.reverted")
    check(not answer.get("err"), f"the revert failed: {answer}")
    return answer["result"]


def case_three_agents_and_a_turn_reverted(case):
    codex_case(case)
    b, c = case.path("b.txt"), case.path("c.txt")
    write(b, EIGHT)
    # Lines one apart: changes to touching lines are one region (diff3), a conflict.
    write(c, "alpha\nbeta\nmiddle\ngamma\n")
    nvim = neovim(case, ["b.txt", "c.txt"], "auto")
    patch = ("*** Begin Patch\n*** Update File: b.txt\n@@\n-first\n+FIRST\n*** Update File: c.txt\n@@\n-beta\n+BETA\n"
             "*** End Patch\n")
    codex_exec(case, [{"custom_tool_call": {"name": "apply_patch", "input": patch}},
                      {"expect": ["Success"], "text": "Done."}])
    wait_until(lambda: nvim.buffer("b.txt").startswith("FIRST\n"), "Codex's change in the buffer")
    # The person types in b.txt: an unsaved line of their own.
    typed = nvim.buffer("b.txt").replace("fourth\n", "fourth\nmine, typed\n")
    check(nvim.lua(f"return e2e.set_text({json.dumps(b)}, {json.dumps(typed)})"), "b.txt has the person's line")
    setup_ok(case, "claude-code", "--write", env=case.env(XDG_RUNTIME_DIR=case.xdg_runtime, VERBATIM_RUNTIME_DIR=None))
    port, log = case.model([
        {"tool_use": {"name": "Read", "input": {"file_path": b}}},
        {"tool_use": {"name": "Edit", "input": {"file_path": b, "old_string": "eighth", "new_string": "EIGHTH"}}},
        {"expect": ["updated successfully"], "text": "Done."},
    ])
    env = case.env(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", XDG_RUNTIME_DIR=case.xdg_runtime,
                   VERBATIM_RUNTIME_DIR=None, **CLAUDE_ENV)
    done = subprocess.run([agent_bin("claude-code"), "-p", "Edit b.txt", "--output-format", "json",
                           "--permission-mode", "acceptEdits"], cwd=case.project, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    check(done.returncode == 0, f"claude -p exited {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    wait_until(lambda: "EIGHTH" in nvim.buffer("b.txt"), "Claude Code's change in the buffer")
    edited = cli(case, "edit", "c.txt", "--old", "gamma", "--new", "GAMMA", "-m", "Shout gamma", "--agent", "mcp-agent",
                 "--turn", "mcp-1")
    check(edited.returncode == 0, f"verbatim edit: {edited.stdout}{edited.stderr}")
    wait_until(lambda: nvim.buffer("c.txt") == "alpha\nBETA\nmiddle\nGAMMA\n", "the third agent's change in the buffer")

    logged = cli(case, "log", "--json", "--all", "-n", "50")
    entries = [json.loads(line) for line in logged.stdout.splitlines() if line.strip()]
    codex = [entry for entry in entries if entry["agent"].lower().startswith("codex") and entry["outcome"] == "applied"]
    check(codex, f"Codex's write in the journal: {entries}")
    turn = codex[0]["turn"]
    result = revert_in_neovim(nvim, {"turn": turn})
    check(result["outcome"] == "applied", f"the revert: {result}")
    b_after = EIGHT.replace("fourth\n", "fourth\nmine, typed\n").replace("eighth", "EIGHTH")
    wait_until(lambda: nvim.buffer("b.txt") == b_after, f"b.txt without Codex's line: {nvim.buffer('b.txt')!r}")
    wait_until(lambda: nvim.buffer("c.txt") == "alpha\nbeta\nmiddle\nGAMMA\n", "c.txt without Codex's line")

    again = revert_in_neovim(nvim, {"ids": [result["writeId"]]})
    check(again["outcome"] == "applied", f"the revert of the revert: {again}")
    wait_until(lambda: nvim.buffer("b.txt") == b_after.replace("first", "FIRST"), "Codex's line back in b.txt")
    wait_until(lambda: nvim.buffer("c.txt") == "alpha\nBETA\nmiddle\nGAMMA\n", "Codex's line back in c.txt")


CASES = [
    ("codex exec, Neovim confirm: one hunk kept, one left out with a reason", case_codex_partial),
    ("codex exec, Neovim confirm: rejected with a reason, nothing written", case_codex_rejected),
    ("codex TUI (tmux), Neovim confirm: rejected with a reason, nothing written", case_codex_tui_rejected),
    ("codex exec: a patch that adds a file and updates another is one review", case_codex_two_files_one_review),
    ("codex exec, Neovim auto: lands in the live buffer at once", case_codex_auto),
    ("codex exec, no editor: no decision, Codex writes as usual", case_codex_no_editor),
    ("claude -p acceptEdits, Neovim confirm: its Edit reviewed, the reason reaches the model",
     case_claude_accept_edits_partial),
    ("claude -p acceptEdits, Neovim auto: neither asks, the Edit lands in the live buffer at once",
     case_claude_accept_edits_auto),
    ("claude interactive (default mode) connected as IDE: one review, by the hook, the reason reaches the model",
     case_claude_interactive_ide_one_review),
    ("gemini -p --yolo, Neovim confirm: its replace rejected, the reason reaches the model", case_gemini_yolo_rejected),
    ("gemini -p --yolo, Neovim confirm: one hunk kept, the reason reaches the model (AfterTool)",
     case_gemini_yolo_partial),
    ("three agents and the person, then Codex's turn reverted from Neovim and the revert reverted",
     case_three_agents_and_a_turn_reverted),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="run only the cases whose name contains this")
    parser.add_argument("--keep", action="store_true", help="keep every case's directory")
    args = parser.parse_args()
    harness.install_neovim()
    subprocess.run([os.path.join(HERE, "install.sh"), "--all"], check=True)
    return harness.run_cases("e2e_hooks", CASES, args)


if __name__ == "__main__":
    sys.exit(main())
