#!/usr/bin/env python3
"""End to end: the own edit tools of GitHub Copilot CLI, opencode, Factory Droid and Qwen
Code reviewed in a real Neovim 0.11 before they write, through what
`verbatim setup AGENT --write` installs and nothing else (Copilot's and Droid's hooks in
the user's settings, opencode's plugin, Qwen Code's hook). The real CLIs from npm
(tests/agents/install.sh), each driven by the scripted Chat Completions model
(model_protocols.py) on 127.0.0.1. The sibling of e2e_hooks.py (Codex, Claude Code,
Gemini CLI), whose Neovim and reviewer it shares.

    tests/agents/e2e_hooks_chat.py [--only SUBSTRING] [--keep]

Cases (what each proves), for each agent:
- its string-replacement tool on a file whose buffer has an unsaved line, Neovim
  confirm: while the review waits the disk is unchanged and there is one review; the
  person keeps one hunk and leaves the other out with a reason; the disk then holds
  exactly the kept hunk, the buffer that plus the unsaved line (still modified), no
  second review, and the model's next request carries the reason;
- its whole-file tool (and apply_patch where the agent offers it) rejected, or partly
  kept, with a reason: nothing (or exactly the kept part) written, the reason reaches
  the model;
- no editor: the agent writes as it would without Verbatim.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import e2e_agents as harness  # noqa: E402
from e2e_agents import NODE, agent_bin, check, mismatches, read, requests, setup_ok, wait_until, write  # noqa: E402
from e2e_hooks import EIGHT, EIGHT_UNSAVED, neovim, person  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
BOTH_ENDS = EIGHT.replace("first", "FIRST").replace("eighth", "EIGHTH")
TWO_HUNKS = "*** Begin Patch\n*** Update File: b.txt\n@@\n-first\n+FIRST\n@@\n-eighth\n+EIGHTH\n*** End Patch\n"
# Copilot unpacks itself (about 235 MB) into its cache on its first start: once for all cases.
COPILOT_CACHE = os.path.join(REPO, ".agents", "copilot-cache")


def prepare(case):
    case.xdg_runtime = os.path.join(case.root, "xdg")
    os.makedirs(case.xdg_runtime, mode=0o700)


def agent_env(case, **extra):
    """The agent's environment: the editor's runtime directory (so the hook finds Neovim), XDG dirs in HOME."""
    home = case.home
    return case.env(XDG_RUNTIME_DIR=case.xdg_runtime, VERBATIM_RUNTIME_DIR=None,
                    XDG_CONFIG_HOME=os.path.join(home, ".config"), XDG_DATA_HOME=os.path.join(home, ".local/share"),
                    XDG_STATE_HOME=os.path.join(home, ".local/state"), **extra)


def chat_turns(log):
    return [record for record in requests(log) if record["kind"] == "chat"]


def told(log):
    """What the model was sent in its last conversation request."""
    return json.dumps(chat_turns(log)[-1]["body"])


def run_agent(case, agent, port, prompt, model=None):
    """Sets the agent up with `verbatim setup AGENT --write` (plus what points it at the
    scripted model) and runs it once; returns the completed process."""
    env = agent_env(case)
    setup_ok(case, agent, "--write", env=env)
    if agent == "copilot":
        env.update(COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{port}/v1", COPILOT_PROVIDER_API_KEY="k",
                   COPILOT_MODEL=model or "claude-sonnet-4.5", COPILOT_OFFLINE="true", COPILOT_AUTO_UPDATE="false",
                   COPILOT_HOME=os.path.join(case.home, ".copilot"), XDG_CACHE_HOME=COPILOT_CACHE)
        command = [agent_bin("copilot"), "-p", prompt, "--allow-all-tools", "--trust-folder"]
    elif agent == "opencode":
        config = os.path.join(case.home, ".config/opencode/opencode.json")
        model = model or "m"
        write(config, json.dumps({
            "provider": {"fake": {"npm": "@ai-sdk/openai-compatible",
                                  "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "k"},
                                  "models": {model: {"tool_call": True, "limit": {"context": 100000, "output": 8000}}}}},
            "model": f"fake/{model}", "small_model": f"fake/{model}", "autoupdate": False, "share": "disabled"}))
        env.update(OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1",
                   OPENCODE_DISABLE_DEFAULT_PLUGINS="1", OPENCODE_DISABLE_LSP_DOWNLOAD="1", OPENCODE_DISABLE_SHARE="1")
        command = [agent_bin("opencode"), "run", "--format", "json", prompt]
    elif agent == "droid":
        settings_path = os.path.join(case.home, ".factory/settings.json")
        settings = json.loads(read(settings_path))
        settings["customModels"] = [{"model": "m", "baseUrl": f"http://127.0.0.1:{port}/v1", "apiKey": "k",
                                     "provider": "generic-chat-completion-api", "maxOutputTokens": 8000}]
        write(settings_path, json.dumps(settings))
        command = [agent_bin("droid"), "exec", "-m", "custom:m", "--auto", "low", prompt]
    else:
        settings_path = os.path.join(case.home, ".qwen/settings.json")
        settings = json.loads(read(settings_path)) if os.path.exists(settings_path) else {}
        settings.update({"security": {"auth": {"selectedType": "openai"}}, "privacy": {"usageStatisticsEnabled": False},
                         "telemetry": {"enabled": False}, "general": {"disableAutoUpdate": True},
                         "memory": {"enableManagedAutoMemory": False}})
        write(settings_path, json.dumps(settings))
        env.update(OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="k", OPENAI_MODEL="qwen3-coder-plus")
        command = [NODE, agent_bin("qwen-code"), prompt, "--auth-type", "openai", "--approval-mode", "auto-edit",
                   "--output-format", "json"]
    done = subprocess.run(command, cwd=case.project, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=300)
    check(done.returncode == 0, f"{agent} exited {done.returncode}: {done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done


def replace_call(agent, path, old, new):
    """The agent's own string-replacement tool call (after a read where the agent wants one)."""
    if agent == "copilot":
        return [{"tool_call": {"name": "edit", "input": {"path": path, "old_str": old, "new_str": new}}}]
    if agent == "opencode":
        return [{"tool_call": {"name": "read", "input": {"filePath": path}}},
                {"tool_call": {"name": "edit", "input": {"filePath": path, "oldString": old, "newString": new}}}]
    if agent == "droid":
        return [{"tool_call": {"name": "Read", "input": {"file_path": path}}},
                {"tool_call": {"name": "Edit", "input": {"file_path": path, "old_str": old, "new_str": new}}}]
    return [{"tool_call": {"name": "read_file", "input": {"file_path": path}}},
            {"tool_call": {"name": "edit", "input": {"file_path": path, "old_string": old, "new_string": new}}}]


def write_call(agent, path, content, over=False):
    """The agent's own whole-file tool call (`over` an existing file: after a read where the agent wants one)."""
    name, args = {"copilot": ("create", {"path": path, "file_text": content}),
                  "opencode": ("write", {"filePath": path, "content": content}),
                  "droid": ("Create", {"file_path": path, "content": content}),
                  "qwen-code": ("write_file", {"file_path": path, "content": content})}[agent]
    read_first = replace_call(agent, path, "", "")[:-1] if over else []
    return read_first + [{"tool_call": {"name": name, "input": args}}]


def partly_kept(case, agent, steps, model=None):
    """The file open with an unsaved line; the agent changes both ends; the person keeps
    the first hunk and leaves the second out with a reason."""
    prepare(case)
    b = case.path("b.txt")
    write(b, EIGHT)
    nvim = neovim(case, ["b.txt"], "confirm")
    check(nvim.lua(f"return e2e.set_text({json.dumps(b)}, {json.dumps(EIGHT_UNSAVED)})"), "b.txt has unsaved changes")
    seen = {}

    def while_waiting():
        seen["disk"] = read(b)
        time.sleep(0.3)
        seen["pending"] = nvim.lua("return e2e.pending()")

    thread, errors = person(nvim, lambda: nvim.lua('return e2e.accept_leaving_out(2, "eighth stays lower case")'),
                            then=while_waiting)
    port, log = case.model(steps(b) + [{"text": "Done."}], module="model_protocols.py")
    run_agent(case, agent, port, "Shout the ends of b.txt", model)
    thread.join(5)
    check(not errors, f"the reviewer: {errors}")
    check(seen.get("disk") == EIGHT, f"the disk while the review waited: {seen.get('disk')!r}")
    check(seen.get("pending") == 1, f"one review: {seen.get('pending')}")
    kept = EIGHT.replace("first", "FIRST")
    check(read(b) == kept, f"the disk holds exactly the kept hunk: {read(b)!r}")
    wait_until(lambda: nvim.buffer("b.txt") == EIGHT_UNSAVED.replace("first", "FIRST"), "the buffer with the kept hunk")
    check(nvim.lua(f"return e2e.modified({json.dumps(b)})"), "the buffer is still modified (the unsaved line)")
    time.sleep(1.5)  # a second review would come from the disk watcher within its debounce
    check(nvim.lua("return e2e.pending()") == 0, f"no second review of {agent}'s write")
    check(not mismatches(log), f"{mismatches(log)}")
    check("eighth stays lower case" in told(log), f"the model's next request carries the reason: {told(log)[-3000:]}")


def rejected(case, agent, steps, reason="not this file", model=None, name="c.txt", before=None):
    prepare(case)
    target = case.path(name)
    if before is not None:
        write(target, before)
    write(case.path("b.txt"), EIGHT)
    nvim = neovim(case, ["b.txt"], "confirm")
    thread, errors = person(nvim, lambda: nvim.lua(f"return e2e.reject({json.dumps(reason)})"))
    port, log = case.model(steps(target) + [{"text": "Understood."}], module="model_protocols.py")
    run_agent(case, agent, port, f"Write {name}", model)
    thread.join(5)
    check(not errors, f"the reviewer: {errors}")
    if before is None:
        check(not os.path.exists(target), f"nothing written: {name} exists")
    else:
        check(read(target) == before, f"nothing written: {read(target)!r}")
    check(reason in told(log), f"the model's next request carries the reason: {told(log)[-3000:]}")


def no_editor(case, agent, model=None):
    prepare(case)
    b = case.path("b.txt")
    write(b, EIGHT)
    port, log = case.model(replace_call(agent, b, "eighth", "EIGHTH") + [{"text": "Done."}],
                           module="model_protocols.py")
    started = time.monotonic()
    run_agent(case, agent, port, "Shout eighth", model)
    check(read(b) == EIGHT.replace("eighth", "EIGHTH"), f"{agent} wrote as usual: {read(b)!r} "
          f"({time.monotonic() - started:.1f} s)")


def cases_of(agent):
    replace_both = lambda b: replace_call(agent, b, EIGHT, BOTH_ENDS)  # noqa: E731
    out = [
        (f"{agent}, Neovim confirm: its replacement tool, one hunk kept, one left out with a reason",
         lambda case: partly_kept(case, agent, replace_both)),
        (f"{agent}, Neovim confirm: its whole-file tool rejected with a reason, nothing written",
         lambda case: rejected(case, agent, lambda c: write_call(agent, c, "brand new\n"))),
    ]
    if agent != "copilot":
        # Copilot's create makes only new files (over an existing one it fails by itself).
        out.append((f"{agent}, Neovim confirm: its whole-file tool over an open file, one hunk kept",
                    lambda case: partly_kept(case, agent, lambda b: write_call(agent, b, BOTH_ENDS, over=True))))
    out += [
        (f"{agent}, no editor: it writes as usual", lambda case: no_editor(case, agent)),
    ]
    if agent == "copilot":
        out.append(("copilot (gpt-5.4), Neovim confirm: apply_patch, one hunk kept, one left out with a reason",
                    lambda case: partly_kept(case, agent, lambda b: [
                        {"custom_tool_call": {"name": "apply_patch", "input": TWO_HUNKS}}], model="gpt-5.4")))
    if agent == "opencode":
        out.append(("opencode (gpt-5), Neovim confirm: apply_patch, one hunk kept, one left out with a reason",
                    lambda case: partly_kept(case, agent, lambda b: [
                        {"tool_call": {"name": "apply_patch", "input": {"patchText": TWO_HUNKS}}}], model="gpt-5")))
    return out


CASES = [case for agent in ("copilot", "opencode", "droid", "qwen-code") for case in cases_of(agent)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="run only the cases whose name contains this")
    parser.add_argument("--keep", action="store_true", help="keep every case's directory")
    args = parser.parse_args()
    harness.install_neovim()
    for agent in ("copilot", "opencode", "droid", "qwen-code"):
        agent_bin(agent)
    return harness.run_cases("e2e_hooks_chat", CASES, args, case_dir=lambda index, _run: f"chat{index}")


if __name__ == "__main__":
    sys.exit(main())
