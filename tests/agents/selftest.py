#!/usr/bin/env python3
"""Proves the harness against the real Claude Code CLI: interactive claude
under tmux, a scripted model whose first step calls Write, and the terminal's
own permission prompt answered by keys.

    python3 tests/agents/selftest.py [--repeat N] [--keep]

Cases (each in a fresh temporary project and HOME):
- accept: default permission mode; the prompt "Do you want to create
  hello.txt?" is answered with "1" (Yes); the file appears and the next model
  request carries its tool_result.
- reject-with-feedback: the same prompt answered with Down Down Tab, a reason,
  Enter ("No, and tell Claude what to do differently"); nothing is written and
  the model is told the reason.
- accept-edits: through the CLI subcommands (as a Node test would call them)
  and `start --command` (claude found on PATH), with --permission-mode
  acceptEdits: no prompt at all.
- ide openDiff: fake_ide.py plays the IDE (lock file, --ide); the Write is
  sent to openDiff, the IDE answers FILE_SAVED with a line of its own, and
  Claude Code writes the IDE's contents and tells the model so.

It installs what it needs first (install.sh) and ends with "N passed, N failed".
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ beside the sources

import claude_tmux  # noqa: E402

CLI = [sys.executable, os.path.join(HERE, "claude_tmux.py")]
CONTENT = "hello from the scripted model\n"


def write_script(path):
    return [
        {"text": "I will create hello.txt.",
         "tool_use": {"name": "Write", "input": {"file_path": path, "content": CONTENT}}},
        {"expect": "File created successfully", "text": "Created hello.txt."},
    ]


def tool_result(request, tool_use_id):
    """The tool_result block for tool_use_id in a logged request, or None."""
    for message in request["body"]["messages"]:
        if message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id:
                    return block
    return None


def check(condition, message, session):
    if not condition:
        raise claude_tmux.HarnessError(session.diagnose(message))


def case_accept(project, keep):
    target = os.path.join(project, "hello.txt")
    with claude_tmux.Session.start(cwd=project, script=write_script(target)) as claude:
        claude.send_text("Create hello.txt")
        claude.answer(["1"], r"Do you want to create hello\.txt\?")
        claude.wait_until(lambda: os.path.exists(target), what=f"{target} to be written")
        request = claude.wait_request(count=2)
        result = tool_result(request, "toolu_01")
        check(result is not None, "the second request carries no tool_result for toolu_01", claude)
        check("File created successfully" in result["content"], f"tool_result: {result}", claude)
        claude.wait_for(r"Created hello\.txt\.")
        check(open(target).read() == CONTENT, f"{target} holds {open(target).read()!r}", claude)
        check(not claude.mismatches(), "the model's expectations failed", claude)
        if keep:
            claude.stop(keep=True)


def case_reject_with_feedback(project, keep):
    target = os.path.join(project, "hello.txt")
    script = write_script(target)
    script[1] = {"expect": "the user said:\nuse greeting.txt", "text": "Understood."}
    with claude_tmux.Session.start(cwd=project, script=script) as claude:
        claude.send_text("Create hello.txt")
        claude.answer(["Down", "Down"], r"Do you want to create hello\.txt\?")
        claude.wait_for(r"(?m)^ ❯ 3\. No$")
        claude.send_keys("Tab")
        claude.wait_for(r"❯ 3\. No, and tell Claude what to do differently")
        claude.send_text("use greeting.txt instead")
        request = claude.wait_request(count=2)
        result = tool_result(request, "toolu_01")
        check(result is not None and result.get("is_error") is True,
              f"expected an error tool_result, got {result}", claude)
        check(result["content"].startswith("The user doesn't want to proceed with this tool use."),
              f"tool_result: {result}", claude)
        claude.wait_for(r"Understood\.")
        check(not os.path.exists(target), f"{target} was written", claude)
        check(not claude.mismatches(), "the model's expectations failed", claude)
        if keep:
            claude.stop(keep=True)


def case_accept_edits_cli(project, keep):
    """Drives the session through the CLI, as the Node tests will."""
    target = os.path.join(project, "hello.txt")
    name = f"selftest-{os.getpid()}-cli"
    script_path = os.path.join(project, "..", "script.json")
    with open(script_path, "w") as f:
        json.dump(write_script(target), f)

    def cli(*args):
        result = subprocess.run([*CLI, *args], capture_output=True, text=True)
        if result.returncode != 0:
            raise claude_tmux.HarnessError(
                f"claude_tmux.py {' '.join(args[:2])} failed:\n{result.stderr}")
        return result.stdout

    state = json.loads(cli("start", "--name", name, "--cwd", project, "--script", script_path,
                           "--command", "claude --permission-mode acceptEdits"))
    try:
        cli("wait-for", "--name", name, "--regex", claude_tmux.READY_REGEX)
        cli("send", "--name", name, "--text", "Create hello.txt")
        cli("wait-for", "--name", name, "--regex", r"Created hello\.txt\.")
        request = json.loads(cli("wait-request", "--name", name, "--count", "2"))
        session = claude_tmux.Session(state)
        result = tool_result(request, "toolu_01")
        check(result is not None and "File created successfully" in result["content"],
              f"tool_result: {result}", session)
        check("Do you want" not in cli("capture", "--name", name),
              "acceptEdits still asked for permission", session)
        check(open(target).read() == CONTENT, f"{target} holds {open(target).read()!r}", session)
        status = json.loads(cli("status", "--name", name))
        check(not status["mismatches"], "the model's expectations failed", session)
    finally:
        cli("stop", "--name", name, *(["--keep"] if keep else []))


def case_ide_open_diff(project, keep):
    """fake_ide.py as the IDE: the Write goes to openDiff, the IDE saves it with a
    change of its own, and Claude Code writes the IDE's contents."""
    target = os.path.join(project, "hello.txt")
    root = os.path.dirname(project)
    home, ide_log, port_file = (os.path.join(root, n) for n in ("home", "ide.jsonl", "ide.port"))
    os.makedirs(home)
    script = write_script(target)
    script[1] = {"expect": "The user modified your proposed content before accepting it",
                 "text": "Created hello.txt."}
    ide = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_ide.py"), "--home", home,
                            "--workspace", project, "--log", ide_log, "--port-file", port_file,
                            "--open-diff", "modify"])

    def ide_messages():
        if not os.path.exists(ide_log):
            return []
        with open(ide_log) as f:
            return [r["message"] for r in map(json.loads, f) if r["what"] == "in"]

    def tool_calls(name):
        return [m["params"]["arguments"] for m in ide_messages()
                if m.get("method") == "tools/call" and m["params"]["name"] == name]

    try:
        with claude_tmux.Session.start(cwd=project, home=home, script=script,
                                       claude_args=["--ide"]) as claude:
            # A prompt sent before Claude Code counts the IDE as connected is
            # answered without it.
            claude.wait_until(lambda: any(m.get("method") == "prompts/list"
                                          for m in ide_messages()), what="the IDE handshake")
            claude.wait_ide("Fake IDE")
            claude.send_text("Create hello.txt")
            claude.wait_until(lambda: tool_calls("close_tab"), what="close_tab after openDiff")
            claude.wait_for(r"Created hello\.txt\.")
            diff = tool_calls("openDiff")
            check(diff and diff[0]["old_file_path"] == target
                  and diff[0]["new_file_path"] == target
                  and diff[0]["new_file_contents"] == CONTENT, f"openDiff calls: {diff}", claude)
            written = open(target).read()
            check(written == CONTENT + "added in the IDE\n", f"{target} holds {written!r}", claude)
            check(not claude.mismatches(), "the model's expectations failed", claude)
            if keep:
                claude.stop(keep=True)
    finally:
        ide.terminate()
        ide.wait()


CASES = [("accept", case_accept), ("reject-with-feedback", case_reject_with_feedback),
         ("accept-edits (CLI, --command)", case_accept_edits_cli),
         ("ide openDiff (fake_ide.py)", case_ide_open_diff)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1, help="run every case N times")
    parser.add_argument("--keep", action="store_true", help="keep the state directories")
    args = parser.parse_args()

    subprocess.run([os.path.join(HERE, "install.sh")], check=True)
    passed = failed = 0
    started = time.monotonic()
    for round_number in range(1, args.repeat + 1):
        for name, case in CASES:
            root = tempfile.mkdtemp(prefix="verbatim-selftest-")
            project = os.path.join(root, "project")
            os.makedirs(project)
            case_started = time.monotonic()
            try:
                case(project, args.keep)
            except claude_tmux.HarnessError as error:
                failed += 1
                print(f"FAIL {name} (round {round_number}):\n{error}\n", flush=True)
            else:
                passed += 1
                print(f"ok   {name} (round {round_number}) "
                      f"{time.monotonic() - case_started:.1f}s", flush=True)
            finally:
                if not args.keep:
                    shutil.rmtree(root, ignore_errors=True)
    print(f"total {time.monotonic() - started:.1f}s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
