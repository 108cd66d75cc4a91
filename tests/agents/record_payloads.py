#!/usr/bin/env python3
"""Records what the real GitHub Copilot CLI, opencode, Factory Droid and Qwen Code
hand their pre-write hook (or plugin) for each of their file-writing tools, driven
by the scripted Chat Completions model (model_protocols.py), into
server/tests/fixtures/hooks/<agent>/<tool>.json: the payloads the Rust tests of each
agent module (server/src/frontend/agents/) read.

    python3 tests/agents/record_payloads.py [copilot opencode droid qwen-code]

Each run has a fresh HOME and XDG dirs under a temporary folder and a project with
a.txt; the hook is a shell command that saves its stdin and answers nothing, so the
agent goes on. Paths of the temporary folder are replaced by /project in the
fixtures (the tests put their own files there).
"""

import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
FIXTURES = REPO / "server" / "tests" / "fixtures" / "hooks"
DISK = "first\nsecond\nthird\n"
PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-second\n+SECOND\n*** End Patch\n"


def binary(agent):
    out = subprocess.run([str(HERE / "install.sh"), "--print-bin", agent], check=True, capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def start_model(folder, steps):
    script = folder / "script.json"
    script.write_text(json.dumps(steps))
    port_file = folder / "port"
    process = subprocess.Popen([sys.executable, str(HERE / "model_protocols.py"), "--script", str(script),
                                "--log", str(folder / "requests.jsonl"), "--port-file", str(port_file)])
    for _ in range(200):
        if port_file.exists():
            return process, int(port_file.read_text())
        time.sleep(0.05)
    raise SystemExit("the scripted model did not start")


def recorder(folder):
    """A hook command that saves its stdin as the next numbered file, answers nothing."""
    out = folder / "payloads"
    out.mkdir()
    script = folder / "record.sh"
    script.write_text(f'#!/bin/sh\ncat > "{out}/$(date +%s%N).json"\n')
    script.chmod(0o755)
    return str(script), out


def environment(home):
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "LANG": "C.UTF-8",
           "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
           "XDG_STATE_HOME": str(home / ".local/state"), "XDG_CACHE_HOME": str(home / ".cache"),
           "TMPDIR": str(home / "tmp")}
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def run(command, env, cwd, timeout=240):
    done = subprocess.run(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-3000:], file=sys.stderr)
    return done


def copilot(folder, project, home, port, hook_command, model="claude-sonnet-4.5"):
    copilot_home = home / ".copilot"
    copilot_home.mkdir(parents=True, exist_ok=True)
    (copilot_home / "settings.json").write_text(json.dumps({"hooks": {
        "preToolUse": [{"type": "command", "bash": hook_command, "timeoutSec": 30}],
        "postToolUse": [{"type": "command", "bash": hook_command, "timeoutSec": 30}]}}))
    env = environment(home) | {"COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{port}/v1",
                               "COPILOT_PROVIDER_API_KEY": "k", "COPILOT_MODEL": model, "COPILOT_OFFLINE": "true",
                               "COPILOT_AUTO_UPDATE": "false", "COPILOT_HOME": str(copilot_home)}
    return run([binary("copilot"), "-p", "edit the files", "--allow-all-tools", "--trust-folder"], env, project)


OPENCODE_PLUGIN = """
import { appendFileSync } from "node:fs";
const out = process.env.RECORD_DIR;
export const Record = async (ctx) => ({
  "tool.execute.before": async (input, output) => {
    appendFileSync(`${out}/${Date.now()}-${input.callID}-before.json`, JSON.stringify({event: "tool.execute.before", input, args: output.args, directory: ctx.directory, worktree: ctx.worktree}));
  },
  "tool.execute.after": async (input, output) => {
    appendFileSync(`${out}/${Date.now()}-${input.callID}-after.json`, JSON.stringify({event: "tool.execute.after", input, output}));
  },
});
"""


def opencode(folder, project, home, port, out, model="m"):
    config = home / ".config" / "opencode"
    (config / "plugin").mkdir(parents=True, exist_ok=True)
    (config / "plugin" / "record.js").write_text(OPENCODE_PLUGIN)
    (config / "opencode.json").write_text(json.dumps({
        "provider": {"fake": {"npm": "@ai-sdk/openai-compatible",
                              "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "k"},
                              "models": {model: {"tool_call": True, "limit": {"context": 100000, "output": 8000}}}}},
        "model": f"fake/{model}", "small_model": f"fake/{model}", "autoupdate": False, "share": "disabled"}))
    env = environment(home) | {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
                               "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                               "OPENCODE_DISABLE_SHARE": "1", "RECORD_DIR": str(out)}
    return run([binary("opencode"), "run", "--format", "json", "edit the files"], env, project)


def droid(folder, project, home, port, hook_command):
    factory = home / ".factory"
    factory.mkdir(parents=True, exist_ok=True)
    group = [{"matcher": "Edit|Create|MultiEdit|ApplyPatch", "hooks": [{"type": "command", "command": hook_command}]}]
    (factory / "settings.json").write_text(json.dumps({
        "customModels": [{"model": "m", "baseUrl": f"http://127.0.0.1:{port}/v1", "apiKey": "k",
                          "provider": "generic-chat-completion-api", "maxOutputTokens": 8000}],
        "hooks": {"PreToolUse": group, "PostToolUse": group}}))
    return run([binary("droid"), "exec", "-m", "custom:m", "--auto", "low", "edit the files"], environment(home), project)


def qwen(folder, project, home, port, hook_command):
    qwen_dir = home / ".qwen"
    qwen_dir.mkdir(parents=True, exist_ok=True)
    (qwen_dir / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "openai"}}, "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False}, "general": {"disableAutoUpdate": True},
        "memory": {"enableManagedAutoMemory": False},
        "hooks": {"PreToolUse": [{"matcher": "edit|write_file",
                                  "hooks": [{"type": "command", "command": hook_command, "timeout": 30}]}]}}))
    env = environment(home) | {"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "k",
                               "OPENAI_MODEL": "qwen3-coder-plus"}
    return run(["node", binary("qwen-code"), "edit the files", "--auth-type", "openai", "--approval-mode", "auto-edit",
                "--output-format", "json"], env, project)


def steps_for(agent, project, variant):
    a, new = str(project / "a.txt"), str(project / "new.txt")
    if agent == "copilot" and variant == "patch":
        return [{"custom_tool_call": {"name": "apply_patch", "input": PATCH}}, {"text": "Done."}]
    if agent == "copilot":
        return [{"tool_call": {"name": "edit", "input": {"path": a, "old_str": "second", "new_str": "SECOND"}}},
                {"tool_call": {"name": "create", "input": {"path": new, "file_text": "hello\n"}}}, {"text": "Done."}]
    if agent == "opencode" and variant == "patch":
        return [{"tool_call": {"name": "apply_patch", "input": {"patchText": PATCH}}}, {"text": "Done."}]
    if agent == "opencode":
        return [{"tool_call": {"name": "read", "input": {"filePath": a}}},
                {"tool_call": {"name": "edit", "input": {"filePath": a, "oldString": "second", "newString": "SECOND"}}},
                {"tool_call": {"name": "write", "input": {"filePath": new, "content": "hello\n"}}}, {"text": "Done."}]
    if agent == "droid":
        return [{"tool_call": {"name": "Read", "input": {"file_path": a}}},
                {"tool_call": {"name": "Edit", "input": {"file_path": a, "old_str": "second", "new_str": "SECOND"}}},
                {"tool_call": {"name": "Create", "input": {"file_path": new, "content": "hello\n"}}}, {"text": "Done."}]
    return [{"tool_call": {"name": "read_file", "input": {"file_path": a}}},
            {"tool_call": {"name": "edit", "input": {"file_path": a, "old_string": "second", "new_string": "SECOND"}}},
            {"tool_call": {"name": "write_file", "input": {"file_path": new, "content": "hello\n"}}}, {"text": "Done."}]


def record(agent, variant=""):
    with tempfile.TemporaryDirectory(prefix=f"verbatim-record-{agent}-") as scratch:
        folder = pathlib.Path(scratch)
        project, home = folder / "project", folder / "home"
        project.mkdir()
        home.mkdir()
        (project / "a.txt").write_text(DISK)
        hook_command, out = recorder(folder)
        model, port = start_model(folder, steps_for(agent, project, variant))
        try:
            if agent == "copilot":
                done = copilot(folder, project, home, port, hook_command,
                               "gpt-5.4" if variant == "patch" else "claude-sonnet-4.5")
            elif agent == "opencode":
                done = opencode(folder, project, home, port, out, "gpt-5" if variant == "patch" else "m")
            elif agent == "droid":
                done = droid(folder, project, home, port, hook_command)
            else:
                done = qwen(folder, project, home, port, hook_command)
        finally:
            model.send_signal(signal.SIGTERM)
            model.wait()
        target = FIXTURES / agent
        target.mkdir(parents=True, exist_ok=True)
        kept = 0
        for path in sorted(out.iterdir()):
            text = path.read_text().replace(str(project), "/project").replace(str(home), "/home/person")
            text = text.replace(str(folder), "/tmp/scratch")
            payload = json.loads(text)
            name = payload_name(agent, payload)
            if name is None:
                continue
            (target / f"{name}.json").write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
            kept += 1
        print(f"{agent}{' ' + variant if variant else ''}: exit {done.returncode}, {kept} payloads, "
              f"a.txt now {(project / 'a.txt').read_text()!r}")


def payload_name(agent, payload):
    """The fixture's name: event and tool, for the file-writing tools only."""
    if agent == "copilot":
        tool = payload.get("toolName")
        event = "post" if "toolResult" in payload else "pre"
    elif agent == "opencode":
        tool = payload["input"].get("tool")
        event = "after" if payload["event"] == "tool.execute.after" else "before"
    else:
        tool = payload.get("tool_name")
        event = payload.get("hook_event_name", "")
    if tool in (None, "read", "Read", "read_file", "view", "report_intent"):
        return None
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"{event}-{tool}")


def main():
    agents = sys.argv[1:] or ["copilot", "opencode", "droid", "qwen-code"]
    for agent in agents:
        record(agent)
        if agent in ("copilot", "opencode"):
            record(agent, "patch")


if __name__ == "__main__":
    main()
