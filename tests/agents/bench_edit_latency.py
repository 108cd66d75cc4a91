#!/usr/bin/env python3
"""Measures, inside the real Claude Code (`claude -p`, scripted model), the time of
one edit tool call on a 10,000-line file: from the model's tool_use (the moment the
model server answered the request) to Claude Code's next request, which carries the
tool's result. Built-in Edit against Verbatim's str_replace, each with no editor and
with the file open in Neovim 0.11 (the plugin in auto mode).

    tests/agents/bench_edit_latency.py [--edits 10] [--runs 3]

Prints one line per configuration: median, min and max milliseconds over every edit
of every run (the first edit of a run included). Built-in Edit runs with
--permission-mode acceptEdits (else -p refuses it); Verbatim's headless edits need
`verbatim setup claude-code --trust-headless` (else it refuses to write unreviewed).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import e2e_agents as e2e  # noqa: E402

LINES = 10_000


def big_file():
    return "".join(f"line {n:05d}: the quick brown fox jumps over the lazy dog\n" for n in range(1, LINES + 1))


def script(tool, path, edits):
    """Read, then `edits` edits spread over the file, then a last text."""
    steps = []
    if tool == "Edit":
        steps.append({"tool_use": {"name": "Read", "input": {"file_path": path, "limit": 20}}})
    else:
        steps.append({"tool_use": {"name": "mcp__verbatim__read_file", "input": {"path": path}}})
    for index in range(edits):
        line = 1 + (index * (LINES - 1)) // max(edits - 1, 1)
        old = f"line {line:05d}: the quick"
        new = f"line {line:05d}: the QUICK"
        if tool == "Edit":
            call = {"name": "Edit", "input": {"file_path": path, "old_string": old, "new_string": new}}
        else:
            call = {"name": "mcp__verbatim__str_replace",
                    "input": {"path": path, "old_str": old, "new_str": new, "summary": f"Edit line {line}"}}
        steps.append({"tool_use": call})
    steps.append({"text": "Done."})
    return steps


def run_once(tool, with_editor, edits, keep):
    case = e2e.Case(f"bench-{tool}", keep)
    failed = True
    try:
        path = case.path("big.txt")
        e2e.write(path, big_file())
        nvim = e2e.Neovim(case, ["big.txt"], review="auto") if with_editor else None
        e2e.setup_ok(case, "claude-code", "--trust-headless", "--write")
        port, log = case.model(script(tool, path, edits))
        env = case.env(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", **e2e.CLAUDE_ENV)
        done = subprocess.run([e2e.agent_bin("claude-code"), "-p", "Edit big.txt", "--output-format", "json",
                               "--permission-mode", "acceptEdits"], cwd=case.project, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
        e2e.check(done.returncode == 0, f"claude -p exited {done.returncode}: {done.stdout[-1500:]}")
        main = e2e.requests(log, "main")
        results = e2e.anthropic_results(log)
        e2e.check(len(results) == edits + 1 and not any(is_error for is_error, _ in results),
                  f"expected {edits + 1} successful tool results: {results}")
        # Request k answered with edit k's tool_use; request k+1 carries its result.
        times = [record["time"] for record in main]
        per_edit = [(times[k + 1] - times[k]) * 1000 for k in range(1, edits + 1)]
        expected = big_file()
        for index in range(edits):
            line = 1 + (index * (LINES - 1)) // max(edits - 1, 1)
            expected = expected.replace(f"line {line:05d}: the quick", f"line {line:05d}: the QUICK")
        if nvim and tool != "Edit":
            e2e.check(nvim.buffer("big.txt") == expected, "every edit in the buffer")
        else:
            e2e.check(e2e.read(path) == expected, "every edit on disk")
        failed = False
        return per_edit
    finally:
        case.close(failed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    subprocess.run([os.path.join(HERE, "install.sh")], check=True)
    rows = []
    for tool, with_editor, label in [("Edit", False, "built-in Edit, no editor"),
                                     ("Edit", True, "built-in Edit, file open in Neovim (auto)"),
                                     ("str_replace", False, "Verbatim str_replace, headless"),
                                     ("str_replace", True, "Verbatim str_replace, Neovim (auto)")]:
        samples = []
        for _ in range(args.runs):
            samples.extend(run_once(tool, with_editor, args.edits, args.keep))
        rows.append((label, statistics.median(samples), min(samples), max(samples), len(samples)))
        print(f"{label:45s} median {rows[-1][1]:7.1f} ms  min {rows[-1][2]:7.1f}  max {rows[-1][3]:7.1f}  "
              f"(n={len(samples)})", flush=True)
    print(json.dumps([dict(zip(("config", "median_ms", "min_ms", "max_ms", "n"), row)) for row in rows]))


if __name__ == "__main__":
    sys.exit(main())
