#!/usr/bin/env python3
"""What the pre-write hook costs, in a real Neovim 0.11 with the plugin (BENCHMARKS.md):

- hook started → review on screen: from the moment `verbatim hook AGENT` is started with
  the agent's edit of one hunk (Codex's `apply_patch`; Copilot's, opencode's, Droid's
  and Qwen Code's string replacement, in each one's own input shape), to the moment the
  plugin's review queue holds the edit
  (stamped in Neovim by the queue's on_change callback, wall clock);
- the person's decision → the hook's answer written: from the moment the accept runs in
  Neovim to the moment the hook process has written its answer and exited;
- the hook's whole cost when no editor serves the file.

    tests/agents/bench_hook.py [--runs N] [--agent codex|copilot|opencode|droid|qwen-code]

Uses $VERBATIM_BIN (default: the debug build) and the Neovim the e2e tests install.
Wall-clock stamps of two processes on one machine: good to a fraction of a millisecond.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import e2e_agents as harness  # noqa: E402
from e2e_agents import VERBATIM, Case, Neovim, wait_until, write  # noqa: E402

STAMP = r"""
_G.bench = { shown = {} }
require("verbatim.queue").on_change(function()
  local n = #require("verbatim.queue").items
  if n > 0 and not bench.shown[n] then
    local sec, usec = vim.uv.gettimeofday()
    bench.shown[n] = sec + usec / 1e6
  end
end)
function bench.accept()
  local item = require("verbatim.queue").items[1]
  local sec, usec = vim.uv.gettimeofday()
  bench.decided = sec + usec / 1e6
  require("verbatim.queue").accept(item)
  return bench.decided
end
"""


def hook_input(agent, path, cwd, line):
    """The agent's hook input for an edit of one line, as the agent sends it (opencode: as its plugin does)."""
    old, new = f"\n{line}\n", f"\n{line} changed\n"
    if agent == "copilot":
        return json.dumps({"sessionId": "bench", "timestamp": 1, "cwd": cwd, "toolName": "edit",
                           "toolArgs": {"path": path, "old_str": old, "new_str": new}})
    claude_shaped = {"session_id": "bench", "cwd": cwd, "hook_event_name": "PreToolUse"}
    if agent == "opencode":
        return json.dumps(claude_shaped | {"hook_event_name": "tool.execute.before", "tool_name": "edit",
                                           "tool_use_id": "call_1",
                                           "tool_input": {"filePath": path, "oldString": old, "newString": new}})
    if agent == "droid":
        return json.dumps(claude_shaped | {"permission_mode": "auto-low", "tool_name": "Edit",
                                           "tool_input": {"file_path": path, "old_str": old, "new_str": new}})
    if agent == "qwen-code":
        return json.dumps(claude_shaped | {"permission_mode": "auto-edit", "tool_name": "edit",
                                           "tool_input": {"file_path": path, "old_string": old, "new_string": new}})
    patch = f"*** Begin Patch\n*** Update File: {os.path.basename(path)}\n@@\n-{line}\n+{line} changed\n*** End Patch\n"
    return json.dumps(claude_shaped | {"turn_id": "t", "permission_mode": "bypassPermissions",
                                       "tool_name": "apply_patch", "tool_input": {"command": patch}})


def run_in_editor(agent, lines, runs):
    case = Case(f"benchhook{lines}", keep=False)
    try:
        name = "big.txt"
        text = "".join(f"line {i}\n" for i in range(1, lines + 1))
        write(case.path(name), text)
        nvim = Neovim(case, [name], review="confirm")
        nvim.lua(STAMP.replace("\n", " ") + " return true")
        shown, answered = [], []
        for run in range(runs):
            target = f"line {lines // 2 + run}"
            started = time.time()
            hook = subprocess.Popen([VERBATIM, "hook", agent], cwd=case.project, env=case.env(),
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            hook.stdin.write(hook_input(agent, case.path(name), case.project, target))
            hook.stdin.close()
            wait_until(lambda: nvim.lua("return bench.shown[1] ~= nil"), "the review on screen", timeout=30)
            # As strings: json_encode rounds a float of ten digits before the point.
            on_screen = float(nvim.lua('return string.format("%.6f", bench.shown[1])'))
            decided = float(nvim.lua('return string.format("%.6f", bench.accept())'))
            out = hook.stdout.read()
            hook.wait(timeout=30)
            done = time.time()
            if '"allow"' not in out:
                raise SystemExit(f"unexpected hook answer: {out!r} {hook.stderr.read()!r}")
            shown.append((on_screen - started) * 1000)
            answered.append((done - decided) * 1000)
            nvim.lua("bench.shown = {} return true")
            # The agent writes what it was allowed to, as Codex would.
            current = open(case.path(name)).read()
            write(case.path(name), current.replace(f"{target}\n", f"{target} changed\n", 1))
            time.sleep(0.3)
        return shown, answered
    finally:
        case.close(False)


def run_without_editor(agent, runs):
    case = Case("benchhooknone", keep=False)
    try:
        write(case.path("a.txt"), "".join(f"line {i}\n" for i in range(1, 1001)))
        costs = []
        for _ in range(runs):
            started = time.perf_counter()
            done = subprocess.run([VERBATIM, "hook", agent], cwd=case.project, env=case.env(),
                                  input=hook_input(agent, case.path("a.txt"), case.project, "line 500"),
                                  capture_output=True, text=True)
            costs.append((time.perf_counter() - started) * 1000)
            if done.stdout or done.returncode != 0:
                raise SystemExit(f"expected no decision: {done.stdout!r} {done.returncode}")
        return costs
    finally:
        case.close(False)


def describe(values):
    return f"median {statistics.median(values):.1f} ms, p90 {sorted(values)[int(len(values) * 0.9) - 1]:.1f} ms"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--agent", default="codex", choices=["codex", "copilot", "opencode", "droid", "qwen-code"])
    args = parser.parse_args()
    harness.install_neovim()
    print(f"# {VERBATIM}, verbatim hook {args.agent}, {args.runs} runs each")
    for lines in (1000, 10000):
        shown, answered = run_in_editor(args.agent, lines, args.runs)
        print(f"Neovim, {lines} lines: hook started → review on screen: {describe(shown)}")
        print(f"Neovim, {lines} lines: decision → hook's answer written: {describe(answered)}")
    print(f"no editor: the hook's whole cost: {describe(run_without_editor(args.agent, args.runs))}")


if __name__ == "__main__":
    main()
